"""``zkconsumer analyze events``: the rebalance figures of JSON-line event files, computed by Spark per member.

Spark reads the files as text; the JVM pulls each line's ``consumer_id`` (``get_json_object``: no Python per line),
and the lines are grouped by it, so each member's events meet on one executor, in file order (a sequence number
taken when the files were read breaks timestamp ties as the timeline does). There
:func:`zkconsumer.fleet.events.member_figures` (the rebalance timeline's parsing, on one member's lines) makes the
member's rows; ``applyInArrow`` returns them as one row per member with its rebalances and steps nested. That result
is persisted once and written three times, as Parquet ``members``, ``rebalances`` and ``steps``; the page's figures
are Spark aggregates over the tables, a few dozen rows collected.

Lines that are not events are counted (on the page, and in the summary the command prints) and skipped; lines of
events without a consumer id are grouped together and only counted. No event of any member at all is an error, and
nothing is left behind (:mod:`zkconsumer.spark.job_output`).
"""

from __future__ import annotations

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
from zkconsumer.spark.job_output import check_inputs, check_output, staged_directory
from zkconsumer.spark.row_schema import arrow_fields, as_dicts, spark_struct

#: the connector's order of the steps (two share number 2, two number 9)
_STEP_ORDER = {step.name: index for index, step in enumerate(STEPS)}
STOP_THE_WORLD_POINTS = 120  # time buckets of the stop-the-world chart
CONFLICT_MEMBERS = 30
LONGEST_ROWS = 15


def output_ddl() -> str:
    return (f"`key` string, `events` bigint, `broken` bigint, `member` {spark_struct(MemberRow)}, "
            f"`rebalances` array<{spark_struct(RebalanceRow)}>, `steps` array<{spark_struct(StepRow)}>")


def _member_table(table: Any) -> Any:
    """On an executor: one member's lines (an Arrow table: ``consumer_id``, ``seq``, ``value``) to its one row."""
    import pyarrow as pa

    ordered = table.sort_by("seq")
    key = ordered.column("consumer_id")[0].as_py() if ordered.num_rows else None
    figures = member_figures(key, ordered.column("value").to_pylist())
    schema = pa.schema([
        pa.field("key", pa.string()), pa.field("events", pa.int64()), pa.field("broken", pa.int64()),
        pa.field("member", pa.struct(arrow_fields(pa, MemberRow))),
        pa.field("rebalances", pa.list_(pa.struct(arrow_fields(pa, RebalanceRow)))),
        pa.field("steps", pa.list_(pa.struct(arrow_fields(pa, StepRow)))),
    ])
    member = None if figures.member is None else as_dicts([figures.member])[0]
    return pa.Table.from_pydict({
        "key": [key], "events": [figures.events], "broken": [figures.broken], "member": [member],
        "rebalances": [as_dicts(figures.rebalances)], "steps": [as_dicts(figures.steps)],
    }, schema=schema)


def run_events_job(spark: Any, paths: list[str], output: str) -> EventsSummary:
    """Analyse the event files ``paths`` into ``output`` (a directory that must not exist); the page's summary."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F  # noqa: N812 - Spark's own spelling

    check_inputs(paths, "events path")
    check_output(output)
    lines = (spark.read.text(paths).withColumn("seq", F.monotonically_increasing_id())
             .withColumn("consumer_id", F.get_json_object("value", "$.consumer_id")))
    members = (lines.groupBy("consumer_id").applyInArrow(_member_table, output_ddl())
               .persist(StorageLevel.MEMORY_AND_DISK))
    try:
        counts = members.agg(F.sum("events").alias("events"), F.sum("broken").alias("broken"),
                             F.count("member").alias("members"),
                             F.sum(F.when(F.col("key").isNull(), F.col("events")).otherwise(0)).alias("ignored"),
                             ).first()
        if not counts["members"]:
            seen = int(counts["events"] or 0)
            what = f"{seen} events, none of a consumer" if seen else "no events"
            broken = f", {int(counts['broken'])} broken lines" if counts["broken"] else ""
            raise UsageError(f"{' '.join(paths)}: {what}{broken}")
        with staged_directory(output) as staging:
            found = members.where(F.col("member").isNotNull())
            member_rows = found.select("member.*")
            rebalances = found.select(F.explode("rebalances").alias("r")).select("r.*")
            steps = found.select(F.explode("steps").alias("s")).select("s.*")
            member_rows.write.parquet(str(staging / "members"))
            rebalances.write.parquet(str(staging / "rebalances"))
            steps.write.parquet(str(staging / "steps"))
            summary = events_summary(spark, staging, tuple(paths), int(counts["events"] or 0),
                                     int(counts["broken"] or 0), int(counts["ignored"] or 0))
            (staging / "summary.html").write_text(events_page(summary), encoding="utf-8")
    finally:
        members.unpersist()
    return summary


def events_summary(spark: Any, tables: Any, inputs: tuple[str, ...], events: int, broken: int,
                   ignored: int) -> EventsSummary:
    """The page's figures, aggregated by Spark over the tables just written (small: a row per member, rebalance,
    step)."""
    from pyspark.sql import functions as F  # noqa: N812

    members = spark.read.parquet(str(tables / "members"))
    rebalances = spark.read.parquet(str(tables / "rebalances"))
    steps = spark.read.parquet(str(tables / "steps"))
    m = members.agg(F.count("*").alias("members"), F.sum("rebalances").alias("rebalances"),
                    F.sum("completed").alias("completed"), F.sum("attempts").alias("attempts"),
                    F.sum("failed_attempts").alias("failed_attempts"), F.sum("conflicts").alias("conflicts"),
                    F.sum("stop_the_world_ms").alias("stop_the_world_ms")).first()
    totals = EventsTotals(int(m["members"]), int(m["rebalances"] or 0), int(m["completed"] or 0),
                          int(m["attempts"] or 0), int(m["failed_attempts"] or 0), int(m["conflicts"] or 0),
                          float(m["stop_the_world_ms"] or 0.0), events, broken, ignored)
    duration = F.col("duration_ms")
    quantiles = F.percentile_approx(duration, [0.5, 0.95], 1000)
    bucket = F.lit(DURATION_BUCKETS[-1][0])
    for label, bound in reversed(DURATION_BUCKETS[:-1]):
        bucket = F.when(duration < bound, F.lit(label)).otherwise(bucket)
    per_step = steps.groupBy("step").agg(F.min("step_number").alias("number"), F.count("*").alias("count"),
                                         quantiles.alias("q"), F.max(duration).alias("max")).collect()
    step_totals = tuple(sorted((StepTotals(r["step"], int(r["number"]), int(r["count"]), float(r["q"][0]),
                                           float(r["q"][1]), float(r["max"])) for r in per_step),
                               key=lambda s: (s.step_number, _STEP_ORDER.get(s.step, len(_STEP_ORDER)), s.step)))
    found = {r["bucket"]: int(r["count"]) for r in steps.groupBy(bucket.alias("bucket")).count().collect()}
    durations = tuple((label, found.get(label, 0)) for label, _ in DURATION_BUCKETS)

    stopped = rebalances.where(F.col("stop_the_world_ms").isNotNull() & F.col("started_at").isNotNull())
    seconds = F.col("started_at").cast("double")
    span = stopped.agg(F.min(seconds).alias("first"), F.max(seconds).alias("last")).first()
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
    return EventsSummary(inputs, totals, step_totals, durations, points, conflicts, longest)

