"""Spark sources over ZooKeeper groups (PySpark's Python Data Source API, PySpark 4.0-4.2).

* ``zkconsumer`` (streaming): a Structured Streaming source that is a member of a legacy ZooKeeper group.
* ``zkconsumer_groups`` (batch): every group of an ensemble as a table of offsets and lag.

PySpark is an extra (``pip install 'zkconsumer[spark]'``): the rest of the package never imports this
subpackage, and importing it without PySpark fails with a message naming the extra.
"""

from __future__ import annotations

from typing import Any


def _require_pyspark() -> None:
    try:
        import pyspark.sql.datasource  # noqa: F401
    except ModuleNotFoundError as exc:  # pragma: no cover - depends on the environment
        from zkconsumer.errors import MissingExtraError

        raise (MissingExtraError.of(exc, what="zkconsumer.spark") or exc) from exc


def register(spark: Any) -> None:
    """Register both sources on ``spark`` (a SparkSession), so ``format("zkconsumer")`` and
    ``format("zkconsumer_groups")`` resolve. Registration pickles the classes to the JVM: call it once per session."""
    _require_pyspark()
    from zkconsumer.spark.groups_source import GroupsDataSource
    from zkconsumer.spark.stream_source import ZkConsumerDataSource

    spark.dataSource.register(ZkConsumerDataSource)
    spark.dataSource.register(GroupsDataSource)


__all__ = ["register"]
