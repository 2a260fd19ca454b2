"""``zkconsumer analyze fleet``: the per-group analysis of a fleet snapshot, run by Spark on its executors.

Spark reads the snapshot's JSON lines as text and spreads them over its tasks (a round-robin repartition: a
snapshot of 10,000 groups is one 20 MB file, which Spark would otherwise read as one task); each task decodes its
lines and runs :func:`zkconsumer.fleet.analysis.analyze_group` on each (``mapInArrow``: Arrow batches in and out,
the project's own assignors on the executors), one output row per group with its strategies nested. That result is
persisted once and written twice, as Parquet ``groups`` and, exploded, ``strategies``; the page's figures are Spark
aggregates over it, a few dozen rows collected. Nothing collects the fleet on the driver.

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
from zkconsumer.spark.job_output import check_inputs, check_output, staged_directory
from zkconsumer.spark.row_schema import arrow_fields, as_dicts, names, spark_ddl, spark_struct

ATTENTION_ROWS = 25
LEGACY_TODAY = "legacy (today)"
TASKS_PER_CORE = 3  # tasks per core for a big snapshot: big groups are not spread evenly by line
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
    group_names = names(GroupRow)
    for batch in batches:
        done, errors = analyze_lines(batch.column(0).to_pylist())
        if not done and not errors:
            continue
        columns: dict[str, list[Any]] = {name: [getattr(a.group, name) for a in done] + [None] * len(errors)
                                         for name in group_names}
        columns["strategies"] = [as_dicts(a.strategies) for a in done] + [None] * len(errors)
        columns["error"] = [None] * len(done) + errors
        yield pa.RecordBatch.from_pydict(columns, schema=schema)


def run_fleet_job(spark: Any, snapshots: list[str], output: str) -> FleetSummary:
    """Analyse ``snapshots`` into ``output`` (a directory that must not exist); the page's summary."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F  # noqa: N812 - Spark's own spelling

    check_inputs(snapshots, "snapshot")
    check_output(output)
    size = sum(p.stat().st_size for given in snapshots for p in _files(Path(given)))
    if size == 0:
        raise UsageError(f"snapshot {' '.join(snapshots)} is empty")
    parallelism = max(spark.sparkContext.defaultParallelism, 1)
    tasks = min(max(math.ceil(size / BYTES_PER_TASK), parallelism), parallelism * TASKS_PER_CORE)
    lines = spark.read.text(snapshots).repartition(tasks)
    analysed = lines.mapInArrow(_analyze_batches, output_ddl()).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        totals, storage, sizes = _totals(analysed)
        if totals.groups == 0:
            why = f" ({totals.broken_lines} lines, none a group record)" if totals.broken_lines else ""
            raise UsageError(f"snapshot {' '.join(snapshots)} holds no group{why}")
        with staged_directory(output) as staging:
            good = analysed.where(F.col("error").isNull())
            groups = good.select(*[F.col(f"`{n}`") for n in names(GroupRow)])
            groups.write.parquet(str(staging / "groups"))
            good.select(F.explode("strategies").alias("s")).select("s.*").write.parquet(str(staging / "strategies"))
            summary = FleetSummary(tuple(snapshots), totals, storage, sizes, _strategy_totals(good),
                                   _attention(groups))
            (staging / "summary.html").write_text(fleet_page(summary), encoding="utf-8")
    finally:
        analysed.unpersist()
    return summary


def _files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    return [p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))]


def _totals(analysed: Any) -> tuple[FleetTotals, tuple[tuple[str, int], ...], tuple[tuple[str, int], ...]]:
    """Fleet totals, groups per offsets storage and per size bucket: one Spark aggregation, one row."""
    from pyspark.sql import functions as F  # noqa: N812

    def count_if(condition: Any, alias: str) -> Any:
        return F.sum(F.when(condition, 1).otherwise(0)).alias(alias)

    sums = ["members", "threads", "partitions", "unowned", "dead_owners", "owned_twice", "misassigned", "malformed"]
    members = F.col("members")
    buckets, lower = [], 0
    for index, (_label, bound) in enumerate(SIZE_BUCKETS):
        buckets.append(count_if((members > lower) & (members <= bound), f"size_{index}"))
        lower = bound
    row = analysed.agg(
        F.count(F.col("group")).alias("groups"), F.count(F.col("error")).alias("broken"),
        *[F.sum(c).alias(c) for c in sums],
        count_if(~F.col("consistent"), "inconsistent"), count_if(F.col("attention") > 0, "needing_attention"),
        *[count_if(F.col("offsets_storage") == name, f"storage_{name}") for name in OFFSETS_STORAGES],
        *buckets,
    ).first()
    totals = FleetTotals(**{k: int(row[k] or 0) for k in ["groups", *sums, "inconsistent", "needing_attention"]},
                         broken_lines=int(row["broken"]))
    storage = tuple(sorted(((name, int(row[f"storage_{name}"] or 0)) for name in OFFSETS_STORAGES),
                           key=lambda pair: -pair[1]))
    sizes = tuple((label, int(row[f"size_{i}"] or 0)) for i, (label, _) in enumerate(SIZE_BUCKETS))
    return totals, storage, sizes


def _strategy_totals(analysed: Any) -> tuple[StrategyTotals, ...]:
    from pyspark.sql import functions as F  # noqa: N812

    ok = F.col("error").isNull()
    # the legacy strategy is each group's own (range or round-robin): one row for "today"
    name = F.when(F.col("family") == "legacy", F.lit(LEGACY_TODAY)).otherwise(F.col("strategy")).alias("strategy")
    rows = analysed.select(F.explode("strategies").alias("s")).select("s.*").groupBy(name).agg(
        F.sum(F.when(ok, 1).otherwise(0)).alias("groups"),
        F.sum(F.when(~ok, 1).otherwise(0)).alias("errors"),
        F.avg(F.when(ok, F.col("spread"))).alias("mean_spread"),
        F.sum(F.when(ok & (F.col("spread") > 1), 1).otherwise(0)).alias("uneven_groups"),
        F.sum(F.when(ok & (F.col("idle_members") > 0), 1).otherwise(0)).alias("groups_with_idle"),
        F.sum("idle_members").alias("idle_members"),
        F.sum("moved_partitions").alias("moved_partitions"),
        F.sum("revoked_first").alias("revoked_first"),
    ).collect()
    order = {name: i for i, name in enumerate((LEGACY_TODAY, *MODERN_STRATEGIES))}
    return tuple(sorted((
        StrategyTotals(r["strategy"], int(r["groups"]), int(r["errors"]), float(r["mean_spread"] or 0.0),
                       int(r["uneven_groups"]), int(r["groups_with_idle"]), int(r["idle_members"] or 0),
                       int(r["moved_partitions"] or 0),
                       None if r["revoked_first"] is None else int(r["revoked_first"]))
        for r in rows), key=lambda s: (order.get(s.strategy, len(order)), s.strategy)))


def _attention(groups: Any) -> tuple[GroupRow, ...]:
    from pyspark.sql import functions as F  # noqa: N812

    return tuple(GroupRow(**r.asDict()) for r in groups.where(F.col("attention") > 0)
                 .orderBy(F.desc("attention"), F.desc("partitions"), "group").limit(ATTENTION_ROWS).collect())
