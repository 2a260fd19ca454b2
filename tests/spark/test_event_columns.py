"""``analyze events`` computes the members whose events have the regular shape over Arrow columns
(:mod:`zkconsumer.fleet.event_columns`) and leaves the others to the timeline (``member_figures``): the tables must be
the timeline's, row for row, whichever way a member went. Compared here with the reference computation (the lines
grouped by consumer id, ``member_figures`` on each member) on the recorded run, on fuzzed copies of it (pure, many
examples), and through Spark on both."""

from __future__ import annotations

import dataclasses
import json
import random
import re
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fuzzing import FUZZ, JSON_VALUES
from hypothesis import given
from hypothesis import strategies as st
from support import SAMPLE_EVENTS

from zkconsumer.fleet.event_columns import grouped_column_figures
from zkconsumer.fleet.events import member_figures
from zkconsumer.fleet.events_job import CONSUMER_ID_PATTERN, run_events_job

LINES = SAMPLE_EVENTS.read_text().splitlines()
SAMPLE = [json.loads(line) for line in LINES]
_KEY = re.compile(CONSUMER_ID_PATTERN)


def by_member(lines: list[str]) -> dict[str | None, list[str]]:
    """The lines grouped as the job's exchange groups them (the first consumer id of a line, ``None`` for none)."""
    found: dict[str | None, list[str]] = defaultdict(list)
    for line in lines:
        match = _KEY.search(line)
        found[match[1] if match and match[1] else None].append(line)
    return found


def reference(lines: list[str]) -> dict[str, list]:
    """Today's tables: ``member_figures`` on each member's lines."""
    tables: dict[str, list] = {"members": [], "rebalances": [], "steps": []}
    for key, mine in by_member(lines).items():
        figures = member_figures(key, mine)
        if figures.member is not None:
            tables["members"].append(dataclasses.asdict(figures.member))
        tables["rebalances"] += [dataclasses.asdict(r) for r in figures.rebalances]
        tables["steps"] += [dataclasses.asdict(s) for s in figures.steps]
    return tables


def columns(lines: list[str]) -> tuple[dict[str, list], int]:
    """The tables as the tasks make them: the regular members over columns, the others by ``member_figures``; and
    how many members went the columns' way."""
    grouped = by_member(lines)
    found = grouped_column_figures(grouped)
    tables: dict[str, list] = {"members": [dataclasses.asdict(m.member) for m in found.members.values()],
                               "rebalances": found.rebalances.to_pylist(), "steps": found.steps.to_pylist()}
    for key in grouped:
        if key is None or key not in found.members:
            figures = member_figures(key, grouped[key])
            if figures.member is not None:
                tables["members"].append(dataclasses.asdict(figures.member))
            tables["rebalances"] += [dataclasses.asdict(r) for r in figures.rebalances]
            tables["steps"] += [dataclasses.asdict(s) for s in figures.steps]
    return tables, len(found.members)


def normal(rows: list[dict]) -> list[str]:
    """Rows comparable whatever made them, sorted: datetimes as ISO text (in UTC), a float column's ``0`` (a sum of
    nothing) as ``0.0``, as Parquet holds it."""
    def value(v: object) -> object:
        if isinstance(v, datetime):
            return v.astimezone(UTC).isoformat()
        return float(v) if v == 0 and type(v) is int else v

    return sorted(repr({k: value(v) for k, v in row.items()}) for row in rows)


def same(found: dict[str, list], expected: dict[str, list], what: str = "") -> None:
    for table in ("members", "rebalances", "steps"):
        assert normal(found[table]) == normal(expected[table]), (what, table)


def test_a_step_of_millions_of_years_leaves_its_rebalance_without_a_date_and_the_rest_as_it_was():
    events = [dict(e) for e in SAMPLE]
    corrupt = next(e for e in events if e["event"] == "rebalance.assign")
    corrupt["duration_ms"] = 1e17  # reaches before the year 1
    lines = [json.dumps(e) for e in events]
    found, regular = columns(lines)
    assert regular == 2  # that member falls back to the timeline's figures, which no longer overflow
    expected = reference(lines)
    same(found, expected)
    undated = [r for r in expected["rebalances"] if r["consumer_id"] == corrupt["consumer_id"]
               and r["rebalance_id"] == corrupt["rebalance_id"]]
    assert [r["started_at"] for r in undated] == [None]


def _spoil(kind: str) -> list[str]:
    """The recorded run with one line the columns could read otherwise than Python's json and the timeline do."""
    events = [dict(e) for e in SAMPLE]
    completed = next(i for i, e in enumerate(events) if e["event"] == "rebalance.completed")
    if kind == "attempts at the null's value":
        events[completed]["attempts"] = -(2**62) - 1
    elif kind == "step at the null's value":
        events[completed].update(step=-(2**63), duration_ms=12345.678)
    elif kind == "a duration beyond every float":
        next(e for e in events if e["event"] == "rebalance.assign")["duration_ms"] = 10**400
    lines = [json.dumps(e) for e in events]
    first_of_c2 = next(i for i, e in enumerate(events) if e["consumer_id"] == "gs2_c2")
    if kind == "a byte-order mark":
        lines[first_of_c2] = "\ufeff" + lines[first_of_c2]
        lines.append("starting up...")  # a line that is no JSON: each member parsed on its own
    elif kind == "nesting a thousand deep":
        lines[first_of_c2] = lines[first_of_c2][:-1] + ', "deep": ' + "[" * 1000 + "]" * 1000 + "}"
    elif kind == "an integer of 5,000 digits":
        lines[first_of_c2] = lines[first_of_c2][:-1] + ', "big": ' + "1" * 5000 + "}"
    return lines


@pytest.mark.parametrize("kind", ["attempts at the null's value", "step at the null's value",
                                  "a duration beyond every float", "a byte-order mark", "nesting a thousand deep",
                                  "an integer of 5,000 digits"])
def test_lines_the_columns_could_read_otherwise_give_the_timelines_figures(kind):
    lines = _spoil(kind)
    found, regular = columns(lines)
    assert regular == 2, kind  # the member with that line went the timeline's way
    same(found, reference(lines), kind)


def test_the_recorded_run_goes_the_columns_way_with_the_timelines_figures():
    found, regular = columns(LINES)
    assert regular == 3  # every member of a real run
    expected = reference(LINES)
    assert len(expected["steps"]) == 94
    same(found, expected)


@pytest.mark.parametrize(("name", "regular"), [
    ("rebalance.error", 3), ("rebalance.retrying_after_failure", 3), ("session.expired", 3), ("rebalance.triggered", 3),
    ("demo.member_output", 3), ("zookeeper.suspended", 3), ("offsets.committed", 3),
    ("rebalance.failed", 2), ("rebalance.no_brokers", 2), ("rebalance.a_later_step", 2), ("demo.member_killed", 2),
])
def test_which_events_leave_a_member_to_the_timeline_is_the_roles_table(name, regular):
    """An event whose role changes no rebalance (zkconsumer/trace/roles.py: LANE_ONLY, or no role and a name that
    cannot matter) keeps its member on the columns; one of another role, a later version's step or a demo marker
    leaves it to the timeline; the tables are the timeline's either way."""
    events = [dict(e) for e in SAMPLE]
    at = next(i for i, e in enumerate(events) if e["event"] == "rebalance.claim" and e["consumer_id"] == "gs2_c2")
    events.insert(at + 1, {**events[at], "event": name, "conflicts": []})
    lines = [json.dumps(e) for e in events]
    found, count = columns(lines)
    assert count == regular, name
    same(found, reference(lines), name)


#: what a writer other than the connector, or a broken one, could put in a field the figures read
ODD = st.sampled_from([
    None, 0, -1, 1, 2, 3.0, 1.5, True, "1", "", "x", [], [1], {}, 1e13, -1e13, 2**70, float("nan"), float("inf"),
    "2026-11-21T21:12:00Z", "2026-02-30T21:12:00.1Z", "2026-11-21 21:12:00.5Z", "2026-11-21T21:12:00.1234567Z",
    "2026-11-21T21:12:00.5+01:00", "1960-01-01T00:00:00Z", "rebalance.failed", "rebalance.started",
    "rebalance.triggered", "rebalance.claim", "demo.member_output", "fetcher.started", "gs2_c1", "gs2_c3",
    [{"topic": "sample", "partition": 0}], [{"topic": "sample"}, {"partition": 1}, 7],
])
FIELDS = st.sampled_from(["event", "timestamp", "rebalance_id", "attempt", "step", "duration_ms", "cause",
                          "attempts", "members", "owned", "conflicts", "group", "consumer_id", "error", "claimed"])


@st.composite
def fuzzed_run(draw: st.DrawFn) -> list[str]:
    """The recorded run with a few lines spoiled, moved or doubled: most members still regular, some not."""
    events = [dict(e) for e in SAMPLE]
    for _ in range(draw(st.integers(0, 4))):
        event = events[draw(st.integers(0, len(events) - 1))]
        how = draw(st.integers(0, 5))
        if how == 0:
            event[draw(FIELDS)] = draw(st.one_of(ODD, JSON_VALUES))
        elif how == 1:
            event.pop(draw(FIELDS), None)
        elif how == 2:  # a line out of order
            a, b = draw(st.integers(0, len(events) - 1)), draw(st.integers(0, len(events) - 1))
            if "timestamp" in events[a] and "timestamp" in events[b]:
                events[a]["timestamp"], events[b]["timestamp"] = events[b]["timestamp"], events[a]["timestamp"]
        elif how == 3:
            events.insert(draw(st.integers(0, len(events))), dict(event))
        elif how == 4 and isinstance(event.get("timestamp"), str):
            event["timestamp"] = event["timestamp"][:-1] + draw(st.sampled_from(["", "z", "+00:00", "0Z"]))
        elif how == 5:
            # up to millions of years: a corrupt figure reaching outside the calendar, which has no date
            event["duration_ms"] = draw(st.one_of(st.floats(-1e17, 1e17), st.sampled_from([float("nan"),
                                                                                        float("inf"), 1e17])))
    lines = [json.dumps(e) for e in events]
    for _ in range(draw(st.integers(0, 2))):  # spellings the columns cannot read
        index = draw(st.integers(0, len(lines) - 1))
        lines[index] = draw(st.sampled_from([
            lines[index].replace('"event"', '"\\u0065vent"'), lines[index][:-1] + ', "error": null}',
            lines[index][:-1] + ', "attempt": 2}', lines[index][:-1] + ', "x": NaN}', lines[index][:40],
            lines[index] + " {}"]))
    return lines


@FUZZ
@given(fuzzed_run())
def test_fuzzed_runs_give_the_timelines_tables(lines):
    expected = reference(lines)  # a step of millions of years too: no date for its start, no crash
    found, _ = columns(lines)
    same(found, expected)


def written(out: Path) -> dict[str, list]:
    import pyarrow.parquet as pq

    return {table: pq.read_table(out / table).to_pylist() for table in ("members", "rebalances", "steps")}


def test_the_job_writes_the_timelines_tables(spark, tmp_path):
    """Through Spark: the recorded run, and a fuzzed copy of it (lines spoiled, moved, broken) beside it."""
    rng = random.Random(7)
    spoiled = []
    for event in SAMPLE * 3:
        event = {**event, "consumer_id": f"{event['consumer_id']}-{rng.randint(0, 3)}"}
        if rng.random() < 0.05:
            event[rng.choice(["rebalance_id", "attempt", "duration_ms", "cause", "timestamp", "members", "owned",
                              "event"])] = rng.choice([None, "1", 1.5, -1, [], {}, "x", 2**40, 2**70, True])
        spoiled.append(json.dumps(event))
    spoiled += ["starting up...", '{"consumer_id": "gs2_c1-0", "event": ', '{"event": "x", "timestamp": "2026"}']
    started = next(e for e in SAMPLE if e["event"] == "rebalance.started")
    spoiled.append(json.dumps({**started, "consumer_id": "gs2_c1-0", "rebalance_id": 2**70}))  # beyond any column
    # a line the job's shortcut groups under another member (it is grouped again by its JSON), and one of no member
    claim = next(i for i, e in enumerate(SAMPLE) if e["event"] == "rebalance.claim" and e["consumer_id"] == "gs2_c2")
    tricky = [*LINES, '{"event": "x", "timestamp": "2026-11-21T21:12:00Z"}']
    plain = list(tricky)
    tricky[claim] = json.dumps({"peer": {"consumer_id": "gs2_c3"}, **SAMPLE[claim]})
    for name, lines, expected in (("run", LINES, LINES), ("fuzzed", spoiled, spoiled), ("tricky", tricky, plain)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        run_events_job(spark, [str(path)], str(tmp_path / name))
        found = written(tmp_path / name)
        same(found, reference(expected), name)
        assert found["steps"], name


@pytest.mark.parametrize("kind", ["string", "large_string", "string_view"])
def test_lines_holding_a_text_are_those_arrow_matches(kind):
    """The columns look for ``\\u`` and ``"error"`` in the lines' bytes at once; a line holds one only when it lies
    within the line (not across two), on a slice of an array as on a whole one, and past many occurrences too."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from zkconsumer.fleet.event_columns import _contains

    kind = getattr(pa, kind)()  # a view is read as large strings
    lines = ['{"a": "x\\', 'u"}', "", '{"error": 1}', '"err', 'or"', '{"b": "\\u00e9"}', "\\u", "plain", '"error"']
    cases = [pa.array(lines, kind), pa.array(["pad", *lines, "pad"], kind).slice(1, len(lines)),
             pa.array(lines * 40, kind), pa.array([], kind)]
    for array in cases:
        for needle in (b"\\u", b'"error"'):
            expected = pc.match_substring(array.cast(pa.large_string()), needle.decode()).to_numpy(
                zero_copy_only=False)
            assert _contains(pa, pc, array, needle).tolist() == expected.tolist(), (needle, len(array))
    assert _contains(pa, pc, cases[0], b"\\u").tolist() == [False, False, False, False, False, False, True, True,
                                                              False, False]
