"""``analyze events`` on Spark (the shared local[2] session): the recorded three-member run
(tests/data/sample-events.jsonl) plus broken lines, its tables against figures read off the log by hand, the page in
a browser, and a path with no events."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest
from browser import assert_offline, dump_dom
from migration_layout import NOT_EVENTS, migration_output

from zkconsumer.errors import UsageError
from zkconsumer.fleet.events import RebalanceRow
from zkconsumer.fleet.events_job import (
    CONSUMER_ID_PATTERN,
    LONGEST_ROWS,
    STOP_THE_WORLD_POINTS,
    TaskTotals,
    longest_order,
    longest_rebalances,
    run_events_job,
)
from zkconsumer.fleet.pages import DURATION_BUCKETS, duration_bucket
from zkconsumer.fleet.row_schema import arrow_structs

SAMPLE = Path(__file__).parent.parent / "data" / "sample-events.jsonl"


@pytest.mark.browser
def test_sample_run_tables_and_page(spark, tmp_path):
    from pyspark.sql import functions as F

    logs = tmp_path / "logs"
    logs.mkdir()
    lines = SAMPLE.read_text().splitlines()
    # the run split over two files, with a stray print, a truncated line and an event of no member
    (logs / "a.jsonl").write_text("\n".join(lines[:100]) + "\nstarting up...\n")
    (logs / "b.jsonl").write_text("\n".join(lines[100:]) + '\n{"event": "x", "timestamp": "2026-11-21T21:12:00Z"}'
                                  + '\n{"consumer_id": "gs2_c1", "event": \n')
    out = tmp_path / "out"

    summary = run_events_job(spark, [str(logs)], str(out))

    members = {r["consumer_id"]: r for r in spark.read.parquet(str(out / "members")).collect()}
    assert sorted(members) == ["gs2_c1", "gs2_c2", "gs2_c3"]
    # gs2_c2: two rebalances, the first took two attempts after an ownership conflict over 2 partitions
    c2 = members["gs2_c2"]
    assert (c2["rebalances"], c2["completed"], c2["attempts"], c2["failed_attempts"], c2["conflicts"]) == (
        2, 2, 3, 1, 2)
    assert (members["gs2_c1"]["rebalances"], members["gs2_c3"]["rebalances"]) == (4, 3)

    rows = spark.read.parquet(str(out / "rebalances")).collect()
    rebalances = {(r["consumer_id"], r["rebalance_id"]): r for r in rows}
    assert len(rebalances) == 9
    first = rebalances[("gs2_c2", 1)]
    assert (first["attempts"], first["retries"], first["conflicts"], first["members"]) == (2, 1, 2, 2)
    # stop-the-world: stop_fetchers of attempt 1 began at 21:12:03.xx, start_fetchers of attempt 2 ended 322 ms later
    assert first["stop_the_world_ms"] == pytest.approx(322.434, abs=0.01)
    # gs2_c1's first rebalance took all 4 partitions; its second gave 2 of them up
    assert (rebalances[("gs2_c1", 1)]["partitions_moved"], rebalances[("gs2_c1", 2)]["partitions_released"]) == (4, 2)
    last = rebalances[("gs2_c3", 3)]  # cut short by the shutdown: its stop is not counted
    assert (last["outcome"], last["stop_the_world_ms"]) == ("unfinished", None)

    steps = spark.read.parquet(str(out / "steps"))
    assert steps.count() == 94
    # the duration buckets are counted while the steps are written: the same as bucketing the table's rows
    by_bucket = Counter(duration_bucket(r["duration_ms"]) for r in steps.collect())
    assert dict(summary.durations) == {label: by_bucket.get(label, 0) for label, _ in DURATION_BUCKETS}
    assert steps.where("consumer_id = 'gs2_c2' and rebalance_id = 1 and attempt = 2").count() == 9  # every step

    t = summary.totals
    assert (t.members, t.rebalances, t.completed, t.attempts, t.failed_attempts, t.conflicts) == (3, 9, 8, 11, 3, 4)
    assert (t.events, t.broken_lines, t.ignored_events) == (200, 2, 1)
    assert [s.step for s in summary.steps][:2] == ["read_cluster", "stop_fetchers"]
    assert dict(summary.conflicts) == {"gs2_c2": 2, "gs2_c3": 2}
    assert summary.longest[0].stop_the_world_ms == pytest.approx(324.57, abs=0.01)
    # the tasks' lists are what Spark's query over the tables gives (the sample's stops have no ties), row for row
    stopped = spark.read.parquet(str(out / "rebalances")).where(
        "stop_the_world_ms is not null and started_at is not null")
    assert summary.longest == tuple(RebalanceRow(**r.asDict()) for r in stopped.orderBy(
        stopped["stop_the_world_ms"].desc()).limit(LONGEST_ROWS).collect())
    # the one query over both tables gives what a query over each gives: the steps' quantiles, the chart's points
    by_step = {r["step"]: r for r in steps.groupBy("step").agg(
        F.count("*").alias("count"), F.percentile_approx("duration_ms", [0.5, 0.95], 1000).alias("q"),
        F.max("duration_ms").alias("max")).collect()}
    assert [(s.count, s.p50_ms, s.p95_ms, s.max_ms) for s in summary.steps] == [
        (r["count"], *r["q"], r["max"]) for r in (by_step[s.step] for s in summary.steps)]
    assert len(by_step) == len(summary.steps) > 0
    times = [r["started_at"].timestamp() for r in stopped.collect()]
    width = max((max(times) - min(times)) / STOP_THE_WORLD_POINTS, 1e-3)
    index = F.floor((stopped["started_at"].cast("double") - F.lit(min(times))) / F.lit(width))
    assert summary.stop_the_world == tuple((round(r["i"] * width, 3), r["max"], r["mean"]) for r in stopped.groupBy(
        index.alias("i")).agg(F.max("stop_the_world_ms").alias("max"), F.avg("stop_the_world_ms").alias("mean"))
        .orderBy("i").collect())
    assert len(summary.stop_the_world) > 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["logs", "out"]

    assert_offline((out / "summary.html").read_text())
    body = re.search(r"<body[^>]*>", dump_dom(out / "summary.html"))[0]
    assert 'data-rendered="ok"' in body and 'data-charts="4"' in body, body


def test_the_tasks_lists_merge_in_one_order_whatever_the_tasks():
    """Each task lists its longest rebalances and its members with most conflicts; the driver merges the lists. Ties
    go by consumer id (then rebalance id), a NaN stop first as Spark orders it, so the page does not depend on which
    task finished first; a task's list is the same order's head of its rows."""
    import pyarrow as pa

    def rebalance(member: str, rebalance_id: int, stop: float | None) -> RebalanceRow:
        return RebalanceRow(member, "g", rebalance_id, None, "completed", None if stop is None else datetime.now(UTC),
                            None, None, None, 1, 0, 0, 0, stop, None, None, None)

    rows = [rebalance(f"c{i % 7}", i, float(i % 4)) for i in range(40)] + [
        rebalance("c9", 1, math.nan), rebalance("c0", 99, None)]
    table = pa.Table.from_batches([pa.RecordBatch.from_struct_array(arrow_structs(pa, RebalanceRow, rows))])
    stopped = [(r.consumer_id, r.rebalance_id) for r in sorted(
        (r for r in rows if r.stop_the_world_ms is not None), key=lambda r: longest_order(dataclasses.asdict(r)))]
    tasks = [longest_rebalances(table.slice(start, 14)) for start in (0, 14, 28)]
    assert tasks[0] == tuple(sorted(tasks[0], key=longest_order)) and len(tasks[0]) <= LONGEST_ROWS
    merged = [TaskTotals(longest=tasks[a]).plus(TaskTotals(longest=tasks[b])).plus(TaskTotals(longest=tasks[c]))
              for a, b, c in itertools.permutations(range(3))]
    assert all(m == merged[0] for m in merged)
    first = merged[0].longest
    assert len(first) == LONGEST_ROWS and math.isnan(first[0]["stop_the_world_ms"])
    assert [(r["consumer_id"], r["rebalance_id"]) for r in first[1:4]] == [("c0", 7), ("c0", 35), ("c1", 15)]
    assert [(r["consumer_id"], r["rebalance_id"]) for r in first] == stopped[:LONGEST_ROWS]

    conflicts = [TaskTotals(conflict_members=(("b", 3), ("c", 1))), TaskTotals(conflict_members=(("a", 3),))]
    assert (conflicts[0].plus(conflicts[1]).conflict_members == conflicts[1].plus(conflicts[0]).conflict_members
            == (("a", 3), ("b", 3), ("c", 1)))


def test_a_line_the_shortcut_would_misgroup_is_grouped_by_its_json(spark, tmp_path):
    """The tasks group lines by a regular expression on the first consumer id of a line; a line nesting another
    consumer's id before its own would go to that consumer. The job notices (a member's lines holding another's
    event) and runs again on the parsed JSON: the figures are those of the plain log."""
    lines = SAMPLE.read_text().splitlines()
    tricky = []
    for line in lines:
        event = json.loads(line)
        if event.get("event") == "rebalance.claim" and event.get("consumer_id") == "gs2_c2":
            line = json.dumps({"peer": {"consumer_id": "gs2_c3"}, **event})
            assert re.search(CONSUMER_ID_PATTERN, line)[1] == "gs2_c3"  # the shortcut is wrong on it
        tricky.append(line)
    assert tricky != lines
    (tmp_path / "plain.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "tricky.jsonl").write_text("\n".join(tricky) + "\n")

    plain = run_events_job(spark, [str(tmp_path / "plain.jsonl")], str(tmp_path / "plain"))
    found = run_events_job(spark, [str(tmp_path / "tricky.jsonl")], str(tmp_path / "tricky"))

    assert found.totals == plain.totals and found.steps == plain.steps and found.conflicts == plain.conflicts
    for table in ("members", "rebalances", "steps"):
        rows = [sorted(map(str, spark.read.parquet(str(tmp_path / name / table)).collect()))
                for name in ("plain", "tricky")]
        assert rows[0] == rows[1] and rows[0], table


def test_a_migration_comparison_directory_is_read_at_every_depth(spark, tmp_path):
    """``analyze events DIR`` on a comparison's output: the events in ``<protocol>/events.jsonl`` are analysed, and
    the report, the produced and delivered lists and the members' stderr logs are skipped and named, not counted as
    broken lines."""
    top = migration_output(tmp_path / "compare")

    summary = run_events_job(spark, [str(top)], str(tmp_path / "out"))

    t = summary.totals
    assert (t.members, t.rebalances, t.events, t.broken_lines) == (3, 9, len(SAMPLE.read_text().splitlines()), 0)
    assert sorted(str(Path(p).relative_to(top)) for p in summary.skipped_files) == sorted(NOT_EVENTS)


def test_a_path_with_no_events_leaves_nothing(spark, tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text('not an event\n{"event": "startup", "timestamp": "2026-11-21T21:12:00Z"}\n')
    with pytest.raises(UsageError, match=r"1 events, none of a consumer, 1 broken lines"):
        run_events_job(spark, [str(path)], str(tmp_path / "out"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.jsonl"]
