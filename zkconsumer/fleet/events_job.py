"""``zkconsumer analyze events``: the rebalance figures of JSON-line event files, computed by Spark per member.

Spark reads the files as text, numbers the lines in file order (``seq``: it breaks timestamp ties as the timeline
does) and takes each line's consumer id with a regular expression (under a third of the JVM's work of parsing the
line as JSON, ``get_json_object``; see below for when it is wrong). One hash exchange on the consumer id brings each
member's lines to one task (no sort in the JVM); the task (``mapInArrow``) orders its lines by member and ``seq``
with Arrow and computes its members' figures without Python code per line: the members whose events have the
regular shape over columns (:mod:`zkconsumer.fleet.event_columns`: Arrow's JSON reader with a schema, array
operations), every other member by :func:`zkconsumer.fleet.events.member_figures` (the rebalance timeline's parsing)
on its lines; the tables are the same either way. It writes the rows itself, in member order, as its own Parquet
file of each table ``members``, ``rebalances`` and ``steps`` (pyarrow; a file per task, written under a hidden name
and renamed, so a task run again replaces its file and a reader never sees half of one). Back to Spark comes one row
per task: its totals, its steps per duration bucket, the span of its stop-the-world, and the page's lists as far as
its own rows go (its :data:`LONGEST_ROWS` longest stops of the world, its :data:`CONFLICT_MEMBERS` members with most
conflicts: bounded, whatever the input); the driver adds up and merges those few rows, in one order whichever task
finished first. The rest of the page's figures (the steps' quantiles, the stop-the-world chart) are one Spark query
over the tables just written, read with the schema the tasks wrote them with (no job reading the files' footers), a
few dozen rows collected.

Writing from the task rather than through Spark's writer spares the JVM the rows' conversion, a cached copy of
them and three passes over it: about 12 of the JVM's 27 CPU-seconds on a million events. It asks the same of the
output directory as the rest of the command does: the driver creates and renames it, so on a cluster it is on a
file system every executor mounts.

The regular expression takes the first ``"consumer_id": "..."`` of a line, which is the event's own except in a
line that nests another object with that key before it. Every task checks each member's parsed events against the
key it was grouped by; should any line be another consumer's, the tables are thrown away and the job runs again
grouping by the parsed JSON (``get_json_object``), so the figures never depend on the shortcut.

Directories are searched at every depth, and a file found there whose first lines are no events is skipped and named
(:mod:`zkconsumer.fleet.event_files`). Lines that are not events are counted (on the page, and in the summary the
command prints) and skipped; lines of events without a consumer id are grouped together and only counted. No event
of any member at all is an error, and nothing is left behind (:mod:`zkconsumer.fleet.job_output`). A task holds its
own members' lines at once, so the number of tasks grows with the input (:data:`BYTES_PER_TASK`), never below the
cores.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.events.rebalance_steps import STEPS
from zkconsumer.fleet.event_columns import ColumnFigures, ColumnMember, column_figures
from zkconsumer.fleet.event_files import find_event_files
from zkconsumer.fleet.events import MemberFigures, MemberRow, RebalanceRow, StepRow, member_figures
from zkconsumer.fleet.job_output import check_inputs, check_output, staged_directory
from zkconsumer.fleet.pages import (
    DURATION_BUCKETS,
    EventsSummary,
    EventsTotals,
    StepTotals,
    duration_bucket_index,
    events_page,
    warm_up_charts,
)
from zkconsumer.fleet.task_files import (
    TaskFiles,
    collect_results,
    keep_tables,
    read_table,
    task_directory,
    task_result,
)

#: the connector's order of the steps (two share number 2, two number 9)
_STEP_ORDER = {step.name: index for index, step in enumerate(STEPS)}
STOP_THE_WORLD_POINTS = 120  # time buckets of the stop-the-world chart
CONFLICT_MEMBERS = 30
LONGEST_ROWS = 15
BYTES_PER_TASK = 16 << 20  # of event lines per task: a task holds its members' lines in memory at once; smaller
#: tasks even out the cores' shares (hashing deals members unevenly) and keep each heap small
MEMBERS_PER_WRITE = 256  # members whose rows a task writes at once
#: the first consumer id of a line, quoted (a JSON string with no escapes: ids are group, host, time and a UUID)
CONSUMER_ID_PATTERN = r'"consumer_id"\s*:\s*"([^"\\]*)"'
TABLES: tuple[tuple[str, type], ...] = (("members", MemberRow), ("rebalances", RebalanceRow), ("steps", StepRow))
_BUCKET_LABELS = [label for label, _ in DURATION_BUCKETS]


@dataclass(frozen=True, slots=True)
class TaskTotals:
    """What one task found, added up on the driver: a few rows whatever the size of the input."""

    events: int = 0
    broken: int = 0
    ignored: int = 0  # events of no consumer
    foreign: int = 0  # events grouped under another consumer's id
    members: int = 0
    rebalances: int = 0
    completed: int = 0
    attempts: int = 0
    failed_attempts: int = 0
    conflicts: int = 0
    stop_the_world_ms: float = 0.0
    buckets: tuple[int, ...] = (0,) * len(DURATION_BUCKETS)  # steps per DURATION_BUCKETS bucket
    first_stop: float | None = None  # seconds since the epoch of the earliest rebalance with a finished gap
    last_stop: float | None = None
    #: the LONGEST_ROWS rebalances with the longest stop-the-world, in :func:`longest_order` (rows of the rebalances
    #: table as Arrow reads them, times in microseconds since the epoch: what JSON carries to the driver)
    longest: tuple[dict[str, Any], ...] = ()
    #: the CONFLICT_MEMBERS members with the most ownership conflicts (consumer id, conflicts), most first, ties in
    #: consumer id order; members without any are not listed
    conflict_members: tuple[tuple[str, int], ...] = ()

    def plus(self, other: TaskTotals) -> TaskTotals:
        sums = {f.name: getattr(self, f.name) + getattr(other, f.name) for f in dataclasses.fields(self)
                if f.name not in _NOT_ADDED}
        return TaskTotals(**sums, buckets=tuple(a + b for a, b in zip(self.buckets, other.buckets, strict=True)),
                          first_stop=_extreme(min, self.first_stop, other.first_stop),
                          last_stop=_extreme(max, self.last_stop, other.last_stop),
                          longest=_first(LONGEST_ROWS, longest_order, self.longest, other.longest),
                          conflict_members=_first(CONFLICT_MEMBERS, conflict_order, self.conflict_members,
                                                  other.conflict_members))

    @classmethod
    def from_result(cls, found: dict[str, Any]) -> TaskTotals:
        """A task's totals from what JSON made of them on the way to the driver."""
        return cls(**{**found, "buckets": tuple(found["buckets"]), "longest": tuple(found["longest"]),
                      "conflict_members": tuple((member, count) for member, count in found["conflict_members"])})


_NOT_ADDED = ("buckets", "first_stop", "last_stop", "longest", "conflict_members")


def _first(count: int, order: Callable[[Any], Any], *lists: tuple[Any, ...]) -> tuple[Any, ...]:
    """The first ``count`` of the items of ``lists`` (each already in ``order``) in ``order``."""
    present = [items for items in lists if items]
    if len(present) <= 1:
        return present[0][:count] if present else ()
    return tuple(sorted((item for items in present for item in items), key=order)[:count])


def longest_order(row: dict[str, Any]) -> tuple[Any, ...]:
    """The order of the longest rebalances: stop-the-world descending, a NaN first (as Spark orders a descending
    column), ties by consumer id and rebalance id: the same rows whatever the tasks and the order they finish in."""
    stop = row["stop_the_world_ms"]
    nan = math.isnan(stop)
    return (not nan, 0.0 if nan else -stop, row["consumer_id"], row["rebalance_id"])


def conflict_order(member: tuple[str, int]) -> tuple[int, str]:
    """The order of the members with conflicts: most first, ties by consumer id (Spark's order of the page's list)."""
    return (-member[1], member[0])


def _extreme(pick: Callable[..., float], *values: float | None) -> float | None:
    present = [v for v in values if v is not None]
    return pick(present) if present else None


def figures_totals(figures: list[MemberFigures]) -> TaskTotals:
    """The totals of some members' figures. Pure."""
    total = TaskTotals()
    for f in figures:
        member = f.member
        buckets = [0] * len(DURATION_BUCKETS)
        for step in f.steps:
            buckets[duration_bucket_index(step.duration_ms)] += 1
        stopped = [r.started_at.timestamp() for r in f.rebalances
                   if r.stop_the_world_ms is not None and r.started_at is not None]
        total = total.plus(TaskTotals(
            events=f.events, broken=f.broken, ignored=f.events if f.consumer_id is None else 0, foreign=f.foreign,
            members=0 if member is None else 1,
            **({} if member is None else {name: getattr(member, name) for name in _MEMBER_SUMS}),
            buckets=tuple(buckets), first_stop=_extreme(min, *stopped), last_stop=_extreme(max, *stopped)))
    return total


_MEMBER_SUMS = ("rebalances", "completed", "attempts", "failed_attempts", "conflicts", "stop_the_world_ms")


def member_task(tables: str) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The task of ``mapInArrow``: one partition of the exchange in (every line of the members hashed to it: a
    member's lines are all here), its tables written under ``tables``, one row of totals out."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        table = _table(pa, batches)
        if table.num_rows == 0:
            return
        # the lines in member and file order: the members' ids sorted once each, the lines by number
        encoded = table.column("consumer_id").combine_chunks().fill_null("").dictionary_encode()
        names = encoded.dictionary.to_pylist()
        rank = np.empty(len(names), dtype=np.int64)
        rank[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
        member = rank[encoded.indices.to_numpy(zero_copy_only=False)]
        order = np.lexsort((table.column("seq").to_numpy(), member))
        counts = np.bincount(member, minlength=len(names))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        keys = [name or None for name in sorted(names)]
        values = table.column("value").combine_chunks().take(pa.array(order))
        del table, encoded
        regular = column_figures(keys, starts, values)
        bounds = [*starts.tolist(), len(values)]
        with TaskFiles(TABLES, Path(tables)) as files:
            totals, chunk_totals, chunk = TaskTotals(), TaskTotals(), _Chunk(files, regular)
            for index, key in enumerate(keys):
                found = regular.members.get(key) if key is not None else None
                if found is None:
                    figures = member_figures(key, values.slice(bounds[index], bounds[index + 1] - bounds[index])
                                             .to_pylist())
                    chunk.add_figures(figures)
                    chunk_totals = chunk_totals.plus(figures_totals([figures]))
                else:
                    chunk.add_columns(found)
                    chunk_totals = chunk_totals.plus(_column_totals(found))
                if (index + 1) % MEMBERS_PER_WRITE == 0:
                    totals = totals.plus(chunk_totals).plus(chunk.write())
                    chunk_totals, chunk = TaskTotals(), _Chunk(files, regular)
            totals = totals.plus(chunk_totals).plus(chunk.write())
        yield task_result(dataclasses.asdict(totals))

    return run


def _column_totals(found: ColumnMember) -> TaskTotals:
    member = found.member
    return TaskTotals(events=member.events, members=1, **{name: getattr(member, name) for name in _MEMBER_SUMS},
                      buckets=found.buckets, first_stop=_extreme(min, *found.stopped),
                      last_stop=_extreme(max, *found.stopped))


class _Chunk:
    """The rows of up to ``MEMBERS_PER_WRITE`` members, in member order, whichever way each was computed; written as
    one row group per table."""

    def __init__(self, files: TaskFiles, regular: ColumnFigures) -> None:
        self.files, self.regular = files, regular
        self.members: list[MemberRow] = []
        self.pieces: dict[str, list[Any]] = {"rebalances": [], "steps": []}
        self.runs: dict[str, list[int] | None] = {"rebalances": None, "steps": None}  # rows of the last members

    def add_columns(self, found: ColumnMember) -> None:
        self.members.append(found.member)
        for name, (start, stop) in (("rebalances", found.rebalance_rows), ("steps", found.step_rows)):
            run = self.runs[name]
            if start == stop:
                continue
            if run is not None and run[1] == start:
                run[1] = stop
            else:
                self._close(name)
                self.runs[name] = [start, stop]

    def add_figures(self, figures: MemberFigures) -> None:
        if figures.member is not None:
            self.members.append(figures.member)
        for name, rows in (("rebalances", figures.rebalances), ("steps", figures.steps)):
            if rows:
                self._close(name)
                self.pieces[name].append(self.files.batch(name, rows))

    def _close(self, name: str) -> None:
        run = self.runs[name]
        if run is not None:
            table = self.regular.rebalances if name == "rebalances" else self.regular.steps
            self.pieces[name].extend(table.slice(run[0], run[1] - run[0]).to_batches())
            self.runs[name] = None

    def write(self) -> TaskTotals:
        """Write the rows; what the page lists of them (the longest rebalances, the members with most conflicts)."""
        import pyarrow as pa

        self.files.write("members", self.members)
        longest: tuple[dict[str, Any], ...] = ()
        for name, pieces in self.pieces.items():
            self._close(name)
            if pieces:
                table = pa.Table.from_batches(pieces).combine_chunks()
                self.files.write_table(name, table)
                if name == "rebalances":
                    longest = longest_rebalances(table)
        conflicts = sorted(((m.consumer_id, m.conflicts) for m in self.members if m.conflicts > 0),
                           key=conflict_order)
        return TaskTotals(longest=longest, conflict_members=tuple(conflicts[:CONFLICT_MEMBERS]))


def longest_rebalances(rebalances: Any) -> tuple[dict[str, Any], ...]:
    """The ``LONGEST_ROWS`` rebalances of an Arrow table of them with the longest finished stop-the-world, in
    :func:`longest_order`, their times as microseconds since the epoch."""
    import pyarrow as pa
    import pyarrow.compute as pc

    stop = rebalances.column("stop_the_world_ms")
    stopped = rebalances.filter(pc.and_(pc.is_valid(stop), pc.is_valid(rebalances.column("started_at"))))
    if not stopped.num_rows:
        return ()
    keys = stopped.select(["stop_the_world_ms", "consumer_id", "rebalance_id"]).append_column(
        "nan", pc.is_nan(stopped.column("stop_the_world_ms")))
    order = pc.sort_indices(keys, [("nan", "descending"), ("stop_the_world_ms", "descending"),
                                   ("consumer_id", "ascending"), ("rebalance_id", "ascending")])
    top = stopped.take(order[:LONGEST_ROWS])
    for index, field in enumerate(top.schema):
        if pa.types.is_timestamp(field.type):
            top = top.set_column(index, field.name, top.column(index).cast(pa.int64()))
    return tuple(top.to_pylist())


def _table(pa: Any, batches: Iterator[Any]) -> Any:
    collected = list(batches)
    if not collected:
        return pa.table({"value": pa.array([], pa.string()), "seq": pa.array([], pa.int64()),
                         "consumer_id": pa.array([], pa.string())})
    return pa.Table.from_batches(collected)


def run_events_job(spark: Any, paths: list[str], output: str) -> EventsSummary:
    """Analyse the event files ``paths`` (files, and directories searched at every depth for event files:
    :mod:`zkconsumer.fleet.event_files`) into ``output`` (a directory that must not exist); the page's summary."""
    from pyspark.sql import functions as F

    check_inputs(paths, "events path")
    check_output(output)
    found = find_event_files(paths)
    skipped = tuple(str(p) for p in found.skipped)
    if not found.read:
        raise UsageError(f"{' '.join(paths)}: no event files" + (f" ({len(skipped)} files without events)"
                                                                  if skipped else ""))
    files = [str(p) for p in found.read]
    size = sum(p.stat().st_size for p in found.read)
    tasks = max(spark.sparkContext.defaultParallelism, math.ceil(size / BYTES_PER_TASK), 1)
    charts = threading.Thread(target=warm_up_charts, name="warm-up-charts", daemon=True)
    charts.start()  # while the driver waits for Spark: the page's charts are drawn right after it
    try:
        with staged_directory(output) as staging:
            tables = task_directory(staging)
            totals = _member_tables(spark, files, tasks, F.regexp_extract("value", CONSUMER_ID_PATTERN, 1), tables)
            if totals.foreign:  # a line grouped under another consumer: group by the parsed JSON instead
                shutil.rmtree(tables)
                tables = task_directory(staging)
                totals = _member_tables(spark, files, tasks, F.get_json_object("value", "$.consumer_id"), tables)
            keep_tables(tables, TABLES, staging)
            if not totals.members:
                what = f"{totals.events} events, none of a consumer" if totals.events else "no events"
                broken = f", {totals.broken} broken lines" if totals.broken else ""
                raise UsageError(f"{' '.join(paths)}: {what}{broken}")
            summary = dataclasses.replace(events_summary(spark, staging, tuple(paths), totals), skipped_files=skipped)
            charts.join()  # no timeout: one small chart drawn in memory, nothing it could wait for
            (staging / "summary.html").write_text(events_page(summary), encoding="utf-8")
    finally:
        # no timeout, as above; on a failure too: no warm-up left drawing beside a later page (matplotlib's style is
        # global)
        charts.join()
    return summary


def _member_tables(spark: Any, paths: list[str], tasks: int, key: Any, tables: Path) -> TaskTotals:
    """The tables written under ``tables`` by the tasks, the lines grouped by ``key``; the tasks' totals added."""
    from pyspark.sql import functions as F

    lines = spark.read.text(paths).withColumn("seq", F.monotonically_increasing_id()).withColumn("consumer_id", key)
    total = TaskTotals()
    for found in collect_results(lines.repartition(tasks, "consumer_id"), member_task(str(tables))):
        total = total.plus(TaskTotals.from_result(found))
    return total


def events_summary(spark: Any, tables: Path, inputs: tuple[str, ...], found: TaskTotals) -> EventsSummary:
    """The page's figures: what the tasks counted and listed (the totals, the duration buckets, the stop-the-world
    span, the longest rebalances, the members with most conflicts), and in one Spark query over the tables just
    written (small: a row per rebalance and step) the steps' quantiles and the stop-the-world chart's points."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import TimestampType

    totals = EventsTotals(found.members, found.rebalances, found.completed, found.attempts, found.failed_attempts,
                          found.conflicts, found.stop_the_world_ms, found.events, found.broken, found.ignored)
    # one aggregation over both tables: a row per step name (kind 0) and one per time bucket (kind 1)
    duration, stop = F.col("duration_ms"), F.col("stop_the_world_ms")
    steps = read_table(spark, tables / "steps", StepRow)
    rows = steps.select(F.lit(0).alias("kind"), "step", "step_number", duration, F.lit(None).cast("long").alias("i"),
                        F.lit(None).cast("double").alias("stop_the_world_ms"))
    width = 0.0
    if found.first_stop is not None and found.last_stop is not None:
        first = found.first_stop
        width = max((found.last_stop - first) / STOP_THE_WORLD_POINTS, 1e-3)
        index = F.floor((F.col("started_at").cast("double") - F.lit(first)) / F.lit(width))
        stopped = read_table(spark, tables / "rebalances", RebalanceRow).where(
            stop.isNotNull() & F.col("started_at").isNotNull())
        rows = rows.unionByName(stopped.select(
            F.lit(1).alias("kind"), F.lit(None).cast("string").alias("step"),
            F.lit(None).cast("long").alias("step_number"), F.lit(None).cast("double").alias("duration_ms"),
            index.alias("i"), stop))
    found_rows = rows.groupBy("kind", "step", "i").agg(
        F.min("step_number").alias("number"), F.count("*").alias("count"),
        F.percentile_approx(duration, [0.5, 0.95], 1000).alias("q"), F.max(duration).alias("max"),
        F.max(stop).alias("stop_max"), F.avg(stop).alias("stop_mean")).collect()
    per_step = [r for r in found_rows if r["kind"] == 0]
    step_totals = tuple(sorted((StepTotals(r["step"], int(r["number"]), int(r["count"]), float(r["q"][0]),
                                           float(r["q"][1]), float(r["max"])) for r in per_step),
                               key=lambda s: (s.step_number, _STEP_ORDER.get(s.step, len(_STEP_ORDER)), s.step)))
    points = tuple((round(int(r["i"]) * width, 3), float(r["stop_max"]), float(r["stop_mean"]))
                   for r in sorted((r for r in found_rows if r["kind"] == 1), key=lambda r: r["i"]))
    durations_found = tuple(zip(_BUCKET_LABELS, found.buckets, strict=True))
    timestamp = TimestampType()  # the rows' times as Spark's collect() gives a timestamp column's
    longest = tuple(RebalanceRow(**{**row, "started_at": timestamp.fromInternal(row["started_at"]),
                                    "ended_at": timestamp.fromInternal(row["ended_at"])}) for row in found.longest)
    return EventsSummary(inputs, totals, step_totals, durations_found, points, found.conflict_members, longest)
