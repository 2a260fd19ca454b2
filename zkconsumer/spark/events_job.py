"""``zkconsumer analyze events``: the rebalance figures of JSON-line event files, computed by Spark per member.

Spark reads the files as text; the JVM pulls each line's ``consumer_id`` (``get_json_object``: no Python per line)
and numbers the lines in file order (``seq``: it breaks timestamp ties as the timeline does). One hash exchange on
the consumer id brings each member's lines to one task (no sort in the JVM); the task (``mapInArrow``) orders its
lines by member and ``seq`` with Arrow and runs :func:`zkconsumer.fleet.events.member_figures` (the rebalance
timeline's parsing) on each member's run of lines: one row per member, its rebalances and steps nested. That result
is persisted once and written three times, as Parquet ``members``, ``rebalances`` and ``steps``; the totals, the
duration buckets and the stop-the-world span are observed while the tables are written (``Observation``: no pass of
their own), and the rest of the page's figures are Spark aggregates over the small tables just written, a few dozen
rows collected. A task holds its own members' lines at once, so the number of tasks grows with the input
(:data:`BYTES_PER_TASK`), never below the cores.

Lines that are not events are counted (on the page, and in the summary the command prints) and skipped; lines of
events without a consumer id are grouped together and only counted. No event of any member at all is an error, and
nothing is left behind (:mod:`zkconsumer.spark.job_output`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from zkconsumer.consumer.rebalance_steps import STEPS
from zkconsumer.errors import UsageError
from zkconsumer.fleet.events import MemberRow, RebalanceRow, StepRow, member_figures
from zkconsumer.fleet.pages import (
    DURATION_BUCKETS,
    EventsSummary,
    EventsTotals,
    StepTotals,
    events_page,
)
from zkconsumer.spark.job_output import check_inputs, check_output, input_files, staged_directory
from zkconsumer.spark.row_schema import arrow_fields, arrow_lists, arrow_structs, spark_struct

#: the connector's order of the steps (two share number 2, two number 9)
_STEP_ORDER = {step.name: index for index, step in enumerate(STEPS)}
STOP_THE_WORLD_POINTS = 120  # time buckets of the stop-the-world chart
CONFLICT_MEMBERS = 30
LONGEST_ROWS = 15
BYTES_PER_TASK = 64 << 20  # of event lines per task: a task holds its members' lines in memory at once
MEMBERS_PER_BATCH = 256  # members per Arrow batch a task returns


def output_ddl() -> str:
    return (f"`key` string, `events` bigint, `broken` bigint, `member` {spark_struct(MemberRow)}, "
            f"`rebalances` array<{spark_struct(RebalanceRow)}>, `steps` array<{spark_struct(StepRow)}>")


def _member_batches(batches: Iterator[Any]) -> Iterator[Any]:
    """On an executor: one partition of the exchange (every line of the members hashed to it: a member's lines are
    all here) in, one row per member out, its rebalances and steps nested. The lines are put in member and file
    order by Arrow (no Python object per line but the line itself, which keeps Python's collector off a heap of
    tuples) and each member's run of lines goes to :func:`member_figures`."""
    import pyarrow as pa

    table = _table(pa, batches)
    if table.num_rows == 0:
        return
    ordered = table.sort_by([("consumer_id", "ascending"), ("seq", "ascending")])
    del table
    keys = ordered.column("consumer_id").to_pylist()
    values = ordered.column("value").to_pylist()
    del ordered
    figures = []
    start = 0
    for key, run in itertools.groupby(keys):
        count = sum(1 for _ in run)
        figures.append(member_figures(key, values[start:start + count]))
        start += count
    del keys, values
    schema = _output_schema(pa)
    for first in range(0, len(figures), MEMBERS_PER_BATCH):
        chunk = figures[first:first + MEMBERS_PER_BATCH]
        yield pa.RecordBatch.from_arrays([
            pa.array([f.consumer_id for f in chunk], type=pa.string()),
            pa.array([f.events for f in chunk], type=pa.int64()),
            pa.array([f.broken for f in chunk], type=pa.int64()),
            arrow_structs(pa, MemberRow, [f.member for f in chunk]),
            arrow_lists(pa, RebalanceRow, [f.rebalances for f in chunk]),
            arrow_lists(pa, StepRow, [f.steps for f in chunk]),
        ], schema=schema)


def _table(pa: Any, batches: Iterator[Any]) -> Any:
    collected = list(batches)
    if not collected:
        return pa.table({"value": pa.array([], pa.string()), "seq": pa.array([], pa.int64()),
                         "consumer_id": pa.array([], pa.string())})
    return pa.Table.from_batches(collected)


def _output_schema(pa: Any) -> Any:
    return pa.schema([
        pa.field("key", pa.string()), pa.field("events", pa.int64()), pa.field("broken", pa.int64()),
        pa.field("member", pa.struct(arrow_fields(pa, MemberRow))),
        pa.field("rebalances", pa.list_(pa.struct(arrow_fields(pa, RebalanceRow)))),
        pa.field("steps", pa.list_(pa.struct(arrow_fields(pa, StepRow)))),
    ])


def run_events_job(spark: Any, paths: list[str], output: str) -> EventsSummary:
    """Analyse the event files ``paths`` into ``output`` (a directory that must not exist); the page's summary."""
    from pyspark import StorageLevel
    from pyspark.sql import Observation
    from pyspark.sql import functions as F  # noqa: N812 - Spark's own spelling

    check_inputs(paths, "events path")
    check_output(output)
    size = sum(p.stat().st_size for given in paths for p in input_files(Path(given)))
    tasks = max(spark.sparkContext.defaultParallelism, math.ceil(size / BYTES_PER_TASK), 1)
    lines = (spark.read.text(paths).withColumn("seq", F.monotonically_increasing_id())
             .withColumn("consumer_id", F.get_json_object("value", "$.consumer_id")))
    members = (lines.repartition(tasks, "consumer_id").mapInArrow(_member_batches, output_ddl())
               .persist(StorageLevel.MEMORY_AND_DISK))
    try:
        with staged_directory(output) as staging:
            counts, durations, span = Observation("lines"), Observation("durations"), Observation("span")
            member = F.col("member")
            observed = members.observe(
                counts, F.sum("events").alias("events"), F.sum("broken").alias("broken"),
                F.count(member).alias("members"),
                F.sum(F.when(F.col("key").isNull(), F.col("events")).otherwise(0)).alias("ignored"),
                *[F.sum(f"member.{name}").alias(name) for name in _MEMBER_SUMS])
            observed.where(member.isNotNull()).select("member.*").write.parquet(str(staging / "members"))
            seen = counts.get
            if not seen["members"]:
                events = int(seen["events"] or 0)
                what = f"{events} events, none of a consumer" if events else "no events"
                broken = f", {int(seen['broken'])} broken lines" if seen["broken"] else ""
                raise UsageError(f"{' '.join(paths)}: {what}{broken}")
            found = members.where(member.isNotNull())
            stopped = F.col("stop_the_world_ms").isNotNull() & F.col("started_at").isNotNull()
            seconds = F.col("started_at").cast("double")
            (found.select(F.explode("rebalances").alias("r")).select("r.*")
             .observe(span, F.min(F.when(stopped, seconds)).alias("first"),
                      F.max(F.when(stopped, seconds)).alias("last"))
             .write.parquet(str(staging / "rebalances")))
            (found.select(F.explode("steps").alias("s")).select("s.*")
             .observe(durations, *_duration_buckets()).write.parquet(str(staging / "steps")))
            summary = events_summary(spark, staging, tuple(paths), seen, durations.get, span.get)
            (staging / "summary.html").write_text(events_page(summary), encoding="utf-8")
    finally:
        members.unpersist()
    return summary


_MEMBER_SUMS = ("rebalances", "completed", "attempts", "failed_attempts", "conflicts", "stop_the_world_ms")


def _duration_buckets() -> list[Any]:
    """Steps per DURATION_BUCKETS bucket (the first whose bound is above the duration, else the last), counted while
    ``steps`` is written."""
    from pyspark.sql import functions as F  # noqa: N812

    def below(index: int) -> Any:
        return F.coalesce(F.col("duration_ms") < DURATION_BUCKETS[index][1], F.lit(False))

    last = len(DURATION_BUCKETS) - 1
    inside = [below(0), *[below(i) & ~below(i - 1) for i in range(1, last)], ~below(last - 1)]
    return [F.sum(F.when(condition, 1).otherwise(0)).alias(f"bucket_{i}") for i, condition in enumerate(inside)]


def events_summary(spark: Any, tables: Any, inputs: tuple[str, ...], counts: dict[str, Any],
                   durations: dict[str, Any], span: dict[str, Any]) -> EventsSummary:
    """The page's figures: the totals, the duration buckets and the stop-the-world span observed while the tables
    were written, the rest aggregated by Spark over the tables just written (small: a row per member, rebalance,
    step)."""
    from pyspark.sql import functions as F  # noqa: N812

    members = spark.read.parquet(str(tables / "members"))
    rebalances = spark.read.parquet(str(tables / "rebalances"))
    steps = spark.read.parquet(str(tables / "steps"))
    totals = EventsTotals(int(counts["members"]), int(counts["rebalances"] or 0), int(counts["completed"] or 0),
                          int(counts["attempts"] or 0), int(counts["failed_attempts"] or 0),
                          int(counts["conflicts"] or 0), float(counts["stop_the_world_ms"] or 0.0),
                          int(counts["events"] or 0), int(counts["broken"] or 0), int(counts["ignored"] or 0))
    duration = F.col("duration_ms")
    quantiles = F.percentile_approx(duration, [0.5, 0.95], 1000)
    per_step = steps.groupBy("step").agg(F.min("step_number").alias("number"), F.count("*").alias("count"),
                                         quantiles.alias("q"), F.max(duration).alias("max")).collect()
    step_totals = tuple(sorted((StepTotals(r["step"], int(r["number"]), int(r["count"]), float(r["q"][0]),
                                           float(r["q"][1]), float(r["max"])) for r in per_step),
                               key=lambda s: (s.step_number, _STEP_ORDER.get(s.step, len(_STEP_ORDER)), s.step)))
    durations_found = tuple((label, int(durations[f"bucket_{i}"] or 0))
                            for i, (label, _) in enumerate(DURATION_BUCKETS))

    stopped = rebalances.where(F.col("stop_the_world_ms").isNotNull() & F.col("started_at").isNotNull())
    seconds = F.col("started_at").cast("double")
    points: tuple[tuple[float, float, float], ...] = ()
    if span["first"] is not None:
        first, width = float(span["first"]), max((float(span["last"]) - float(span["first"])) / STOP_THE_WORLD_POINTS,
                                                 1e-3)
        index = F.floor((seconds - F.lit(first)) / F.lit(width))
        rows = stopped.groupBy(index.alias("i")).agg(F.max("stop_the_world_ms").alias("max"),
                                                     F.avg("stop_the_world_ms").alias("mean")).orderBy("i").collect()
        points = tuple((round(int(r["i"]) * width, 3), float(r["max"]), float(r["mean"])) for r in rows)
    conflicts = tuple((r["consumer_id"], int(r["conflicts"])) for r in members.where(F.col("conflicts") > 0)
                      .orderBy(F.desc("conflicts"), "consumer_id").limit(CONFLICT_MEMBERS).collect())
    longest = tuple(RebalanceRow(**r.asDict()) for r in stopped.orderBy(F.desc("stop_the_world_ms"))
                    .limit(LONGEST_ROWS).collect())
    return EventsSummary(inputs, totals, step_totals, durations_found, points, conflicts, longest)

