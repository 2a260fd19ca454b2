"""``zkconsumer analyze fleet``: the per-group analysis of a fleet snapshot, run by Spark on its executors.

Spark reads the snapshot's JSON lines as text and deals them round-robin to a few tasks per core (a snapshot of
10,000 groups is one 18 MB file, which Spark would otherwise cut into two uneven halves; groups differ in cost, and
several smaller tasks even out the cores' shares). Each task (``mapInArrow``) decodes its lines, runs
:func:`zkconsumer.fleet.analysis.analyze_group` on each (the project's own assignors on the executors), writes the
rows itself as its own Parquet file of ``groups`` and of ``strategies`` (:mod:`zkconsumer.fleet.task_files`), and
returns one row: its counts for the page's totals, which the driver adds up, and its own first groups needing
attention, of which the driver keeps the first (the fleet's first are among the tasks' first). Nothing collects the
fleet on the driver, and the JVM never handles a row of the tables.

A line that is not a group record is counted (``broken_lines`` on the page) and left out; a snapshot with no group
at all is an error, and nothing is left behind (:mod:`zkconsumer.fleet.job_output`).
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError, ZkConsumerError
from zkconsumer.fleet.analysis import MODERN_STRATEGIES, GroupAnalysis, GroupRow, StrategyRow, analyze_group
from zkconsumer.fleet.job_output import check_inputs, check_output, input_files, staged_directory
from zkconsumer.fleet.pages import SIZE_BUCKETS, FleetSummary, FleetTotals, StrategyTotals, fleet_page, size_bucket
from zkconsumer.fleet.snapshot import OFFSETS_STORAGES, decode
from zkconsumer.fleet.task_files import TaskFiles, collect_results, keep_tables, task_directory, task_result

ATTENTION_ROWS = 25
LEGACY_TODAY = "legacy (today)"
BYTES_PER_TASK = 2 << 20  # a small snapshot is not cut finer than this: a task costs tens of milliseconds
TASKS_PER_CORE = 4
TABLES: tuple[tuple[str, type], ...] = (("groups", GroupRow), ("strategies", StrategyRow))
#: the rows of the strategies' table: each group's legacy strategy (range or round-robin) is one row, "today"
_STRATEGY_NAMES = (LEGACY_TODAY, *MODERN_STRATEGIES)
_SUMS = ("members", "threads", "partitions", "unowned", "dead_owners", "owned_twice", "misassigned", "malformed")


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


def group_counts(done: list[GroupAnalysis], broken: int = 0) -> Counter[str]:
    """The page's counts of some analysed groups, as a flat counter (tasks' counters add up to the fleet's). Pure.

    Keys: the fleet totals by name, ``storage:<name>``, ``size:<label>`` and ``<strategy index>:<figure>``."""
    counts: Counter[str] = Counter(broken=broken)
    for analysis in done:
        row = analysis.group
        counts["groups"] += 1
        for name in _SUMS:
            counts[name] += getattr(row, name)
        counts["inconsistent"] += not row.consistent
        counts["needing_attention"] += row.attention > 0
        counts[f"storage:{row.offsets_storage}"] += 1
        if row.members > 0:  # a group of no members (all registrations gone) is in no size bucket
            counts[f"size:{size_bucket(row.members)}"] += 1
        for s in analysis.strategies:
            index = 0 if s.family == "legacy" else _STRATEGY_NAMES.index(s.strategy)
            good = s.error is None
            for figure, value in (("rows", 1), ("groups", good), ("errors", not good),
                                  ("spread", s.spread if good else 0), ("uneven", good and s.spread > 1),
                                  ("with_idle", good and s.idle_members > 0), ("idle", s.idle_members),
                                  ("moved", s.moved_partitions), ("revoked", s.revoked_first or 0),
                                  ("revoked_rows", s.revoked_first is not None)):
                counts[f"{index}:{figure}"] += value
    return counts


def first_needing_attention(rows: Iterable[GroupRow]) -> list[GroupRow]:
    """The groups to look at first among ``rows``: most attention, then most partitions, then by name. Pure."""
    wanted = (row for row in rows if row.attention > 0)
    return heapq.nsmallest(ATTENTION_ROWS, wanted, key=lambda row: (-row.attention, -row.partitions, row.group))


def fleet_task(tables: str) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """The task of ``mapInArrow``: Arrow batches of snapshot lines in, the tables written under ``tables``, one row
    out: its counts and its first groups needing attention."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        counts: Counter[str] = Counter()
        attention: list[GroupRow] = []
        with TaskFiles(TABLES, Path(tables)) as files:
            for batch in batches:
                done, errors = analyze_lines(batch.column(0).to_pylist())
                files.write("groups", [a.group for a in done])
                files.write("strategies", [s for a in done for s in a.strategies])
                counts.update(group_counts(done, len(errors)))
                attention = first_needing_attention([*attention, *(a.group for a in done)])
        yield task_result({"counts": counts, "attention": [dataclasses.asdict(row) for row in attention]})

    return run


def run_fleet_job(spark: Any, snapshots: list[str], output: str) -> FleetSummary:
    """Analyse ``snapshots`` into ``output`` (a directory that must not exist); the page's summary."""
    check_inputs(snapshots, "snapshot")
    check_output(output)
    size = sum(p.stat().st_size for given in snapshots for p in input_files(Path(given)))
    if size == 0:
        raise UsageError(f"snapshot {' '.join(snapshots)} is empty")
    cores = max(spark.sparkContext.defaultParallelism, 1)
    tasks = min(max(math.ceil(size / BYTES_PER_TASK), cores), TASKS_PER_CORE * cores)
    with staged_directory(output) as staging:
        counts: Counter[str] = Counter()
        attention: list[GroupRow] = []
        tables = task_directory(staging)
        for found in collect_results(spark.read.text(snapshots).repartition(tasks), fleet_task(str(tables))):
            counts.update(found["counts"])
            attention = first_needing_attention([*attention, *(GroupRow(**r) for r in found["attention"])])
        keep_tables(tables, TABLES, staging)
        totals = FleetTotals(**{k: counts[k] for k in ["groups", *_SUMS, "inconsistent", "needing_attention"]},
                             broken_lines=counts["broken"])
        if totals.groups == 0:
            why = f" ({totals.broken_lines} lines, none a group record)" if totals.broken_lines else ""
            raise UsageError(f"snapshot {' '.join(snapshots)} holds no group{why}")
        storage = tuple(sorted(((name, counts[f"storage:{name}"]) for name in OFFSETS_STORAGES),
                               key=lambda pair: -pair[1]))
        sizes = tuple((label, counts[f"size:{label}"]) for label, _ in SIZE_BUCKETS)
        summary = FleetSummary(tuple(snapshots), totals, storage, sizes, _strategy_totals(counts), tuple(attention))
        (staging / "summary.html").write_text(fleet_page(summary), encoding="utf-8")
    return summary


def _strategy_totals(counts: Counter[str]) -> tuple[StrategyTotals, ...]:
    return tuple(
        StrategyTotals(name, counts[f"{i}:groups"], counts[f"{i}:errors"],
                       counts[f"{i}:spread"] / counts[f"{i}:groups"] if counts[f"{i}:groups"] else 0.0,
                       counts[f"{i}:uneven"], counts[f"{i}:with_idle"], counts[f"{i}:idle"], counts[f"{i}:moved"],
                       counts[f"{i}:revoked"] if counts[f"{i}:revoked_rows"] else None)
        for i, name in enumerate(_STRATEGY_NAMES) if counts[f"{i}:rows"])
