"""``zkconsumer analyze fleet``: the per-group analysis of a fleet snapshot, run by Spark on its executors.

Spark reads the snapshot's JSON lines as text and deals them round-robin to as many tasks as there are cores (a
snapshot of 10,000 groups is one 18 MB file, which Spark would otherwise read as one task; more tasks than cores
only add each task's start to the critical path, and thousands of groups per task even out their sizes); each task
decodes its lines and runs :func:`zkconsumer.fleet.analysis.analyze_group` on each (``mapInArrow``: Arrow batches in
and out, the project's own assignors on the executors), one output row per group with its strategies nested. That
result is persisted once and written twice, as Parquet ``groups`` and, exploded, ``strategies``; the page's totals
are observed while the tables are written (``Observation``: aggregates computed by the writing tasks, no pass of
their own), and the groups needing attention are one more small query. Nothing collects the fleet on the driver.

A line that is not a group record is counted (``broken_lines`` on the page) and left out; a snapshot with no group
at all is an error, and nothing is left behind (:mod:`zkconsumer.spark.job_output`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError, ZkConsumerError
from zkconsumer.fleet.analysis import MODERN_STRATEGIES, GroupAnalysis, GroupRow, StrategyRow, analyze_group
from zkconsumer.fleet.pages import SIZE_BUCKETS, FleetSummary, FleetTotals, StrategyTotals, fleet_page
from zkconsumer.fleet.snapshot import OFFSETS_STORAGES, decode
from zkconsumer.spark.job_output import check_inputs, check_output, input_files, staged_directory
from zkconsumer.spark.row_schema import arrow_fields, arrow_lists, arrow_structs, names, spark_ddl, spark_struct

ATTENTION_ROWS = 25
LEGACY_TODAY = "legacy (today)"
BYTES_PER_TASK = 2 << 20  # a small snapshot is not cut finer than this: a task costs tens of milliseconds


def output_ddl() -> str:
    return f"{spark_ddl(GroupRow)}, `strategies` array<{spark_struct(StrategyRow)}>, `error` string"


def analyze_lines(lines: list[str | None]) -> tuple[list[GroupAnalysis], list[str]]:
    """The analyses of the records among ``lines``, and what was wrong with each line that is not one. Pure."""
    done: list[GroupAnalysis] = []
    errors: list[str] = []
    for line in lines:
        if line is None or not line.strip():
            continue
        try:
            done.append(analyze_group(decode(line)))
        except ZkConsumerError as exc:  # SnapshotFormatError, or an AssignmentError of a record that decodes
            errors.append(str(exc))
    return done, errors


def _analyze_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """On an executor: Arrow batches of snapshot lines in, batches of analysed groups out."""
    import pyarrow as pa

    schema = pa.schema([*arrow_fields(pa, GroupRow), pa.field("strategies", pa.list_(pa.struct(
        arrow_fields(pa, StrategyRow)))), pa.field("error", pa.string())])
    for batch in batches:
        done, errors = analyze_lines(batch.column(0).to_pylist())
        if not done and not errors:
            continue
        groups = arrow_structs(pa, GroupRow, [a.group for a in done] + [None] * len(errors))
        yield pa.RecordBatch.from_arrays([
            *groups.flatten(),
            arrow_lists(pa, StrategyRow, [a.strategies for a in done] + [None] * len(errors)),
            pa.array([None] * len(done) + errors, type=pa.string()),
        ], schema=schema)


def run_fleet_job(spark: Any, snapshots: list[str], output: str) -> FleetSummary:
    """Analyse ``snapshots`` into ``output`` (a directory that must not exist); the page's summary."""
    from pyspark import StorageLevel
    from pyspark.sql import Observation
    from pyspark.sql import functions as F  # noqa: N812 - Spark's own spelling

    check_inputs(snapshots, "snapshot")
    check_output(output)
    size = sum(p.stat().st_size for given in snapshots for p in input_files(Path(given)))
    if size == 0:
        raise UsageError(f"snapshot {' '.join(snapshots)} is empty")
    parallelism = max(spark.sparkContext.defaultParallelism, 1)
    tasks = min(max(math.ceil(size / BYTES_PER_TASK), 1), parallelism)
    lines = spark.read.text(snapshots).repartition(tasks)
    analysed = lines.mapInArrow(_analyze_batches, output_ddl()).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        with staged_directory(output) as staging:
            fleet, strategy_figures = Observation("fleet"), Observation("strategies")
            observed = analysed.observe(fleet, *_totals_columns())
            good = observed.where(F.col("error").isNull())
            good.select(*[F.col(f"`{n}`") for n in names(GroupRow)]).write.parquet(str(staging / "groups"))
            totals, storage, sizes = _totals(fleet.get)
            if totals.groups == 0:
                why = f" ({totals.broken_lines} lines, none a group record)" if totals.broken_lines else ""
                raise UsageError(f"snapshot {' '.join(snapshots)} holds no group{why}")
            cached = analysed.where(F.col("error").isNull())
            (cached.select(F.explode("strategies").alias("s")).select("s.*")
             .observe(strategy_figures, *_strategy_columns()).write.parquet(str(staging / "strategies")))
            summary = FleetSummary(tuple(snapshots), totals, storage, sizes, _strategy_totals(strategy_figures.get),
                                   _attention(cached))
            (staging / "summary.html").write_text(fleet_page(summary), encoding="utf-8")
    finally:
        analysed.unpersist()
    return summary


def _count_if(condition: Any, alias: str) -> Any:
    from pyspark.sql import functions as F  # noqa: N812

    return F.sum(F.when(condition, 1).otherwise(0)).alias(alias)


_SUMS = ("members", "threads", "partitions", "unowned", "dead_owners", "owned_twice", "misassigned", "malformed")


def _totals_columns() -> list[Any]:
    """Fleet totals, groups per offsets storage and per size bucket, as aggregates observed while ``groups`` is
    written (no pass of their own)."""
    from pyspark.sql import functions as F  # noqa: N812

    members = F.col("members")
    buckets, lower = [], 0
    for index, (_label, bound) in enumerate(SIZE_BUCKETS):
        buckets.append(_count_if((members > lower) & (members <= bound), f"size_{index}"))
        lower = bound
    return [
        F.count(F.col("group")).alias("groups"), F.count(F.col("error")).alias("broken"),
        *[F.sum(c).alias(c) for c in _SUMS],
        _count_if(~F.col("consistent"), "inconsistent"), _count_if(F.col("attention") > 0, "needing_attention"),
        *[_count_if(F.col("offsets_storage") == name, f"storage_{name}") for name in OFFSETS_STORAGES],
        *buckets,
    ]


def _totals(row: dict[str, Any]) -> tuple[FleetTotals, tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    totals = FleetTotals(**{k: int(row[k] or 0) for k in ["groups", *_SUMS, "inconsistent", "needing_attention"]},
                         broken_lines=int(row["broken"] or 0))
    storage = tuple(sorted(((name, int(row[f"storage_{name}"] or 0)) for name in OFFSETS_STORAGES),
                           key=lambda pair: -pair[1]))
    sizes = tuple((label, int(row[f"size_{i}"] or 0)) for i, (label, _) in enumerate(SIZE_BUCKETS))
    return totals, storage, sizes


#: the rows of the strategies' table: each group's legacy strategy (range or round-robin) is one row, "today"
_STRATEGY_NAMES = (LEGACY_TODAY, *MODERN_STRATEGIES)


def _strategy_columns() -> list[Any]:
    """Per strategy (a fixed few: the analysis runs the same ones on every group), its totals as conditional
    aggregates observed while ``strategies`` is written."""
    from pyspark.sql import functions as F  # noqa: N812

    ok = F.col("error").isNull()
    columns = []
    for index, name in enumerate(_STRATEGY_NAMES):
        mine = F.col("family") == "legacy" if name == LEGACY_TODAY else F.col("strategy") == name
        good = mine & ok
        columns += [
            _count_if(mine, f"rows_{index}"),
            _count_if(good, f"groups_{index}"),
            _count_if(mine & ~ok, f"errors_{index}"),
            F.avg(F.when(good, F.col("spread"))).alias(f"mean_spread_{index}"),
            _count_if(good & (F.col("spread") > 1), f"uneven_groups_{index}"),
            _count_if(good & (F.col("idle_members") > 0), f"groups_with_idle_{index}"),
            F.sum(F.when(mine, F.col("idle_members"))).alias(f"idle_members_{index}"),
            F.sum(F.when(mine, F.col("moved_partitions"))).alias(f"moved_partitions_{index}"),
            F.sum(F.when(mine, F.col("revoked_first"))).alias(f"revoked_first_{index}"),
        ]
    return columns


def _strategy_totals(row: dict[str, Any]) -> tuple[StrategyTotals, ...]:
    return tuple(
        StrategyTotals(name, int(row[f"groups_{i}"]), int(row[f"errors_{i}"]), float(row[f"mean_spread_{i}"] or 0.0),
                       int(row[f"uneven_groups_{i}"]), int(row[f"groups_with_idle_{i}"]),
                       int(row[f"idle_members_{i}"] or 0), int(row[f"moved_partitions_{i}"] or 0),
                       None if row[f"revoked_first_{i}"] is None else int(row[f"revoked_first_{i}"]))
        for i, name in enumerate(_STRATEGY_NAMES) if row[f"rows_{i}"])


def _attention(groups: Any) -> tuple[GroupRow, ...]:
    from pyspark.sql import functions as F  # noqa: N812

    wanted = groups.where(F.col("attention") > 0).select(*[F.col(f"`{n}`") for n in names(GroupRow)])
    return tuple(GroupRow(**r.asDict()) for r in wanted.orderBy(F.desc("attention"), F.desc("partitions"), "group")
                 .limit(ATTENTION_ROWS).collect())
