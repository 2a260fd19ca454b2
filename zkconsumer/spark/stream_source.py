"""``spark.readStream.format("zkconsumer")``: placeholder until the streaming source lands (issue 14)."""

from __future__ import annotations

from pyspark.sql.datasource import DataSource


class ZkConsumerDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return "zkconsumer"
