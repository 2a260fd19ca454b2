"""``spark.read.format("zkconsumer_groups")``: placeholder until the groups table lands (issue 14)."""

from __future__ import annotations

from pyspark.sql.datasource import DataSource


class GroupsDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "zkconsumer_groups"
