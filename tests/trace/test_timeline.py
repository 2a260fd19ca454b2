"""The rebalance timeline model (:mod:`zkconsumer.trace.timeline`) and its text and HTML renderings, on the
recorded three-member run in ``tests/data/sample-events.jsonl`` and on small hand-written traces. Expected times
are computed from the raw JSON lines here, not from the model, so a wrong model cannot agree with itself."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta

import pytest
from support import SAMPLE_EVENTS

from zkconsumer.events.rebalance_steps import BY_EVENT, STEPS
from zkconsumer.trace.timeline import (
    BROKEN_LINES_KEPT,
    build_timeline,
    parse_timestamp,
    read_events,
    rebalance_rounds,
)
from zkconsumer.trace.timeline_html import render_html, render_svg
from zkconsumer.trace.timeline_text import render_text
from zkconsumer.trace.words import fmt_ms

SAMPLE = SAMPLE_EVENTS
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def raw_sample() -> list[dict]:
    return [json.loads(line) for line in SAMPLE.read_text().splitlines() if line.strip()]


def ts(value: str) -> datetime:
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)


def find(raw: list[dict], **match) -> dict:
    hits = [e for e in raw if all(e.get(k) == v for k, v in match.items())]
    assert len(hits) == 1, (match, len(hits))
    return hits[0]


@pytest.fixture(scope="module")
def sample():
    return build_timeline(read_events(SAMPLE.read_text().splitlines()))


def seconds(timeline, value: str) -> float:
    return (ts(value) - timeline.origin).total_seconds()


def line(name: str, at: float, **fields) -> str:
    """One event line at ``at`` seconds after T0."""
    stamp = (T0 + timedelta(seconds=at)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return json.dumps({**fields, "event": name, "level": fields.pop("level", "info"), "timestamp": stamp})


def step(name: str, at: float, consumer: str, rid: int, attempt: int = 1, ms: float = 1.0, **fields) -> str:
    return line(f"rebalance.{name}", at, consumer_id=consumer, group="g", rebalance_id=rid, attempt=attempt,
                step=BY_EVENT[f"rebalance.{name}"].number, duration_ms=ms, **fields)


def p(partition: int, thread: str | None = None, topic: str = "t") -> dict:
    return {"topic": topic, "partition": partition, **({"thread": thread} if thread else {})}


def full_attempt(at: float, consumer: str, rid: int, attempt: int = 1, claimed=(), conflicts=(), released=(),
                 restart: bool = True) -> list[str]:
    """The steps of one attempt, 10 ms apart from ``at``, each lasting 2 ms."""
    names = ["read_cluster", "stop_fetchers", "commit_offsets", "release", "assign", "fetch_offsets",
             "build_registry", "claim"] + (["start_fetchers"] if restart else [])
    extra = {"release": {"released": list(released)},
             "claim": {"claimed": list(claimed), "already_ours": [], "conflicts": list(conflicts)}}
    return [step(n, at + 0.01 * (i + 1), consumer, rid, attempt, 2.0, **extra.get(n, {})) for i, n in enumerate(names)]


def build(lines: list[str]):
    return build_timeline(read_events(lines))


# --- reading ------------------------------------------------------------------------------------------------------


def test_the_sample_reads_whole():
    log = read_events(SAMPLE.read_text().splitlines())
    assert (len(log.events), log.broken, log.broken_lines) == (199, 0, ())
    assert log.events[0].name == "consumer.connected" and log.events[0].consumer_id == "gs2_c1"


def test_broken_lines_are_counted_with_their_numbers_and_blank_lines_ignored():
    lines = [
        line("consumer.connected", 0, consumer_id="c1"),  # 1: good
        "not json",  # 2
        "",  # 3: blank, not counted
        "[1, 2]",  # 4: JSON, not an object
        json.dumps({"timestamp": "2026-01-02T03:04:05.000000Z"}),  # 5: no event
        json.dumps({"event": "x", "timestamp": "yesterday"}),  # 6: bad timestamp
        json.dumps({"event": "x", "timestamp": 1735787045}),  # 7: not a string
        "   ",  # 8: blank
        json.dumps({"event": "", "timestamp": "2026-01-02T03:04:05Z"}),  # 9: empty name
        line("consumer.registered", 1, consumer_id="c1"),  # 10: good
        '{"event": "x", "timestamp": "2026-01-02T03:04:05Z"',  # 11: truncated
    ]
    log = read_events(lines)
    assert [e.line for e in log.events] == [1, 10]
    assert log.broken == 7  # lines 2, 4, 5, 6, 7, 9 and 11
    assert log.broken_lines == (2, 4, 5, 6, 7)[:BROKEN_LINES_KEPT]
    assert build_timeline(log).skipped_lines == 7


@pytest.mark.parametrize(("text", "expected"), [
    ("2026-11-21T21:12:00.928083Z", datetime(2026, 11, 21, 21, 12, 0, 928083, tzinfo=UTC)),
    ("2026-11-21T21:12:00Z", datetime(2026, 11, 21, 21, 12, 0, tzinfo=UTC)),
    ("2026-11-21T21:12:00.5Z", datetime(2026, 11, 21, 21, 12, 0, 500000, tzinfo=UTC)),
    ("2026-11-21T23:12:00.123+02:00", datetime(2026, 11, 21, 21, 12, 0, 123000, tzinfo=UTC)),
    ("2026-11-21T21:12:00.123456789", datetime(2026, 11, 21, 21, 12, 0, 123456, tzinfo=UTC)),
    ("2026-11-21 21:12:00.5z", datetime(2026, 11, 21, 21, 12, 0, 500000, tzinfo=UTC)),  # RFC 3339's spellings
    ("2026-13-21T21:12:00Z", None),
    ("0001-01-01T00:00:00+01:00", None),  # before the year 1 in UTC
    ("21:12:00", None),
    (None, None),
])
def test_a_timestamp_reads_as_utc_to_the_microsecond_or_as_missing(text, expected):
    assert parse_timestamp(text) == expected


# --- the recorded run ---------------------------------------------------------------------------------------------


def test_lanes_in_order_of_first_appearance_and_counts(sample):
    raw = raw_sample()
    assert [lane.consumer_id for lane in sample.lanes] == ["gs2_c1", "gs2_c2", "gs2_c3"]
    assert sample.origin == ts(raw[0]["timestamp"])
    assert sample.fetcher_events == sum(1 for e in raw if e["event"].startswith(("fetcher", "leader_finder")))
    assert sample.partitions == tuple(("sample", n) for n in range(4))
    assert [len(lane.rebalances) for lane in sample.lanes] == [4, 2, 3]
    assert sample.lane("gs2_c1").lives[-1].ended_by == "shutdown"
    assert sample.lane("gs2_c2").lives[-1].ended_by is None  # SIGKILLed: it never said anything again


def test_steps_are_blocks_ending_at_their_event(sample):
    raw = raw_sample()
    event = find(raw, consumer_id="gs2_c1", rebalance_id=2, event="rebalance.stop_fetchers")
    blocks = [s for s in sample.rebalance("gs2_c1", 2).steps if s.name == "stop_fetchers"]
    assert len(blocks) == 1
    block = blocks[0]
    assert block.end == pytest.approx(seconds(sample, event["timestamp"]), abs=1e-9)
    assert block.start == pytest.approx(block.end - 0.07268, abs=1e-9)
    assert (block.number, block.title, block.duration_ms) == (2, "stop fetchers", 72.68)
    titles = [s.title for s in sample.rebalance("gs2_c1", 1).steps]
    assert titles == [s.title for s in STEPS if not s.name.startswith("listener")]


def test_gap_runs_from_stop_fetchers_start_to_start_fetchers_end(sample):
    raw = raw_sample()
    stop = find(raw, consumer_id="gs2_c1", rebalance_id=2, event="rebalance.stop_fetchers")
    restart = find(raw, consumer_id="gs2_c1", rebalance_id=2, event="rebalance.start_fetchers")
    expected_ms = ((ts(restart["timestamp"]) - ts(stop["timestamp"])).total_seconds() * 1000
                   + stop["duration_ms"])
    gap = sample.rebalance("gs2_c1", 2).gap
    assert gap is not None and gap.finished and gap.ended_by == "restart"
    assert gap.duration_ms == pytest.approx(expected_ms, abs=1e-3)
    assert gap.duration_ms == pytest.approx(83.523, abs=1e-3)


def test_a_failed_attempt_stays_inside_the_gap(sample):
    raw = raw_sample()
    first_stop = find(raw, consumer_id="gs2_c2", rebalance_id=1, attempt=1, event="rebalance.stop_fetchers")
    restart = find(raw, consumer_id="gs2_c2", rebalance_id=1, attempt=2, event="rebalance.start_fetchers")
    gap = sample.rebalance("gs2_c2", 1).gap
    assert gap.start == pytest.approx(seconds(sample, first_stop["timestamp"]) - first_stop["duration_ms"] / 1000)
    assert gap.end == pytest.approx(seconds(sample, restart["timestamp"]))
    assert gap.duration_ms > 300  # the 300 ms backoff is part of it


def test_c3s_first_rebalance_needed_two_attempts_after_a_conflict(sample):
    rebalance = sample.rebalance("gs2_c3", 1)
    assert rebalance.outcome == "completed" and rebalance.cause == "initial"
    assert [(a.number, a.outcome, a.reason, a.backoff_ms) for a in rebalance.attempts] == [
        (1, "failed", "ownership conflict", 300.0), (2, "completed", None, None)]
    assert [m.kind for m in rebalance.marks] == ["conflict", "attempt_failed"]
    assert rebalance.conflicts == 2
    assert {(c["partition"], c["holder"]) for c in rebalance.marks[0].fields["conflicts"]} == {
        (2, "gs2_c2-0"), (3, "gs2_c2-0")}
    assert [r.topic + "-" + str(r.partition) + "@" + str(r.thread) for r in rebalance.owned] == [
        "sample-2@gs2_c3-0", "sample-3@gs2_c3-1"]


def test_the_killed_members_ownership_ends_when_c3_claims_it(sample):
    raw = raw_sample()
    claim = find(raw, consumer_id="gs2_c3", rebalance_id=2, event="rebalance.claim")
    claimed_at = seconds(sample, claim["timestamp"])
    owners = sample.owners("sample", 1)
    c2 = [o for o in owners if o.consumer_id == "gs2_c2"]
    c3 = [o for o in owners if o.consumer_id == "gs2_c3"]
    assert len(c2) == 1 and len(c3) == 1
    assert (c2[0].thread, c2[0].ended_by, c2[0].successor) == ("gs2_c2-0", "taken_over", "gs2_c3")
    assert c2[0].end == pytest.approx(claimed_at) and c3[0].start == pytest.approx(claimed_at)
    assert c3[0].thread == "gs2_c3-0"
    # Released partitions end at the release; the shut-down member's at its shutdown.
    release = find(raw, consumer_id="gs2_c1", rebalance_id=2, event="rebalance.release")
    first = sample.owners("sample", 2)[0]
    assert (first.consumer_id, first.ended_by) == ("gs2_c1", "released")
    assert first.end == pytest.approx(seconds(sample, release["timestamp"]))
    last_p0 = sample.owners("sample", 0)[-1]
    shutdown = find(raw, consumer_id="gs2_c1", event="consumer.shutdown")
    assert (last_p0.consumer_id, last_p0.ended_by) == ("gs2_c1", "shutdown")
    assert last_p0.end == pytest.approx(seconds(sample, shutdown["timestamp"]))
    # Nobody owns two stretches of one partition at once.
    for topic, partition in sample.partitions:
        stretches = sample.owners(topic, partition)
        for before, after in zip(stretches, stretches[1:], strict=False):
            assert before.end is not None and before.end <= after.start


def test_an_interrupted_rebalance_is_not_counted_in_the_totals(sample):
    last = sample.rebalance("gs2_c3", 3)
    assert last.outcome == "unfinished"
    assert last.gap is not None and not last.gap.finished and last.gap.ended_by == "shutdown"
    summary = sample.lane("gs2_c3").summary()
    assert (summary.rebalances, summary.completed, summary.attempts, summary.failed_attempts, summary.unfinished) == (
        3, 2, 4, 2, 1)
    finished = [r.gap.duration_ms for r in sample.lane("gs2_c3").rebalances[:2]]
    assert summary.stop_the_world_ms == pytest.approx(sum(finished))
    assert (summary.longest_gap_ms, summary.longest_gap_rebalance) == (pytest.approx(max(finished)), 1)


def test_rounds_group_the_rebalances_that_overlap(sample):
    rounds = rebalance_rounds(sample)
    assert [[(r.consumer_id, r.rebalance_id) for r in rnd.rebalances] for rnd in rounds] == [
        [("gs2_c1", 1)],
        [("gs2_c1", 2), ("gs2_c2", 1)],
        [("gs2_c1", 3), ("gs2_c2", 2), ("gs2_c3", 1)],
        [("gs2_c3", 2), ("gs2_c1", 4)],
        [("gs2_c3", 3)],
    ]


# --- hand-written traces ------------------------------------------------------------------------------------------


def test_sigkill_ownership_lasts_until_someone_else_claims():
    lines = [
        line("demo.scene", 0, scene=1, title="two members", note="c1 starts first"),
        line("demo.member_started", 0.1, consumer_id="g_c1", pid=11, streams=1),
        line("rebalance.started", 0.2, consumer_id="g_c1", group="g", rebalance_id=1, cause="initial"),
        *full_attempt(0.2, "g_c1", 1, claimed=[p(0, "g_c1-0"), p(1, "g_c1-0")]),
        line("rebalance.completed", 0.35, consumer_id="g_c1", group="g", rebalance_id=1, attempts=1,
             duration_ms=150, owned=[p(0, "g_c1-0"), p(1, "g_c1-0")]),
        line("demo.member_killed", 2.0, consumer_id="g_c1", pid=11, signal="SIGKILL"),
        line("demo.member_started", 3.0, consumer_id="g_c2", pid=12, streams=2),
        line("rebalance.started", 12.0, consumer_id="g_c2", group="g", rebalance_id=1, cause="initial"),
        *full_attempt(12.0, "g_c2", 1, claimed=[p(0, "g_c2-0"), p(1, "g_c2-1")]),
        line("rebalance.completed", 12.15, consumer_id="g_c2", group="g", rebalance_id=1, attempts=1,
             owned=[p(0, "g_c2-0"), p(1, "g_c2-1")]),
    ]
    timeline = build(lines)
    assert timeline.origin == T0
    claim_at = 12.08  # the eighth step of the attempt that starts at 12.0
    first = [o for o in timeline.ownership if o.consumer_id == "g_c1"]
    assert [(o.partition, o.ended_by, o.successor) for o in first] == [(0, "taken_over", "g_c2"),
                                                                       (1, "taken_over", "g_c2")]
    assert all(o.end == pytest.approx(claim_at) for o in first)
    assert [(o.partition, o.thread, o.end) for o in timeline.ownership if o.consumer_id == "g_c2"] == [
        (0, "g_c2-0", None), (1, "g_c2-1", None)]
    lane = timeline.lane("g_c1")
    assert [(life.ended_by, round(life.end - life.start, 6)) for life in lane.lives] == [("killed", 1.9)]
    assert [m.kind for m in timeline.markers] == ["scene", "member_started", "member_killed", "member_started"]
    assert [lane.consumer_id for lane in timeline.lanes] == ["g_c1", "g_c2"]


def test_session_expiry_drops_ownership_and_is_marked():
    lines = [
        line("rebalance.started", 0, consumer_id="c1", rebalance_id=1, cause="initial"),
        *full_attempt(0, "c1", 1, claimed=[p(0, "c1-0")]),
        line("rebalance.completed", 0.1, consumer_id="c1", rebalance_id=1, attempts=1, owned=[p(0, "c1-0")]),
        line("zookeeper.session_lost", 5, consumer_id="c1", level="warning"),
        line("session.expired", 6, consumer_id="c1", dropped=[p(0, "c1-0")], level="warning"),
    ]
    timeline = build(lines)
    (owner,) = timeline.ownership
    assert (owner.ended_by, owner.end) == ("session_expired", pytest.approx(6.0))
    assert [m.kind for m in timeline.lane("c1").marks] == ["session_lost", "session_expired"]


def test_a_member_cut_off_too_long_is_marked_and_says_what_it_stopped_fetching():
    lines = [
        line("rebalance.started", 0, consumer_id="c1", rebalance_id=1, cause="initial"),
        *full_attempt(0, "c1", 1, claimed=[p(0, "c1-0")]),
        line("rebalance.completed", 0.1, consumer_id="c1", rebalance_id=1, attempts=1, owned=[p(0, "c1-0")]),
        line("zookeeper.suspended", 5, consumer_id="c1", level="warning"),
        line("zookeeper.suspended_too_long", 6.4, consumer_id="c1", suspended_ms=1400.0, chunks_dropped=2,
             owned=[p(0, "c1-0")], level="warning"),
    ]
    timeline = build(lines)
    assert [m.kind for m in timeline.lane("c1").marks] == ["suspended", "suspended_too_long"]
    text = "\n".join(render_text(timeline))
    assert "cut off from ZooKeeper for 1400 ms: stopped fetching c1-0: t-0" in text, text


def test_a_failed_rebalance_is_retried_and_its_gap_ends_at_the_next_restart():
    lines = [
        line("rebalance.started", 0, consumer_id="c1", rebalance_id=1, cause="initial"),
        *full_attempt(0, "c1", 1, restart=False, conflicts=[{**p(0), "holder": "c2-0"}]),
        line("rebalance.attempt_failed", 0.1, consumer_id="c1", rebalance_id=1, attempt=1,
             reason="ownership conflict", backoff_ms=200, level="warning"),
        line("rebalance.failed", 0.3, consumer_id="c1", rebalance_id=1, attempts=1, background=True,
             duration_ms=300, failures_in_a_row=1, level="error"),
        line("rebalance.retrying_after_failure", 0.31, consumer_id="c1", failures_in_a_row=1, level="error"),
        line("rebalance.started", 1.0, consumer_id="c1", rebalance_id=2, cause="retry_after_failure"),
        *full_attempt(1.0, "c1", 2, claimed=[p(0, "c1-0")]),
        line("rebalance.completed", 1.1, consumer_id="c1", rebalance_id=2, attempts=1, owned=[p(0, "c1-0")]),
    ]
    timeline = build(lines)
    failed, retry = timeline.lane("c1").rebalances
    assert (failed.outcome, retry.outcome, retry.cause) == ("failed", "completed", "retry_after_failure")
    assert [m.kind for m in timeline.lane("c1").marks] == ["conflict", "attempt_failed", "rebalance_failed",
                                                           "retrying"]
    assert failed.gap is not None and not failed.gap.finished and failed.gap.ended_by == "later_restart"
    assert failed.gap.end == pytest.approx(retry.gap.end)  # the retry's start_fetchers
    summary = timeline.lane("c1").summary()
    assert (summary.unfinished, summary.conflicts, summary.failed_attempts) == (1, 1, 1)
    assert summary.stop_the_world_ms == pytest.approx(retry.gap.duration_ms)


def restart_raised(rid: int = 1) -> list[str]:
    """Rebalance ``rid`` of c1, whose first attempt got as far as restarting the fetchers, and that raised."""
    return [
        line("rebalance.started", 0, consumer_id="c1", rebalance_id=rid, cause="initial"),
        *full_attempt(0, "c1", rid, restart=False, claimed=[p(0, "c1-0")]),
        step("start_fetchers", 0.1, "c1", rid, 1, level="warning", error="RuntimeError: boom"),
        line("rebalance.attempt_failed", 0.11, consumer_id="c1", rebalance_id=rid, attempt=1,
             reason="RuntimeError: boom", backoff_ms=200, level="warning"),
    ]


def test_a_step_that_raised_is_failed_and_a_failed_restart_does_not_end_the_gap():
    lines = [
        *restart_raised(),
        *full_attempt(0.5, "c1", 1, attempt=2, claimed=[p(0, "c1-0")]),
        line("rebalance.completed", 0.6, consumer_id="c1", rebalance_id=1, attempts=2, owned=[p(0, "c1-0")]),
    ]
    timeline = build(lines)
    (rebalance,) = timeline.lane("c1").rebalances
    restarts = [s for s in rebalance.steps if s.name == "start_fetchers"]
    assert [(s.attempt, s.failed) for s in restarts] == [(1, True), (2, False)]
    assert rebalance.gap is not None and rebalance.gap.finished
    assert rebalance.gap.end == pytest.approx(restarts[1].end)  # attempt 2's restart, not the one that raised
    assert any("FAILED: RuntimeError: boom" in text for text in render_text(timeline))


def test_a_rebalance_whose_restart_raised_stays_stopped_until_a_later_restart():
    lines = [
        *restart_raised(),
        line("rebalance.failed", 0.3, consumer_id="c1", rebalance_id=1, attempts=1, background=True,
             duration_ms=300, failures_in_a_row=1, level="error"),
        line("rebalance.started", 1.0, consumer_id="c1", rebalance_id=2, cause="retry_after_failure"),
        *full_attempt(1.0, "c1", 2, claimed=[p(0, "c1-0")]),
        line("rebalance.completed", 1.1, consumer_id="c1", rebalance_id=2, attempts=1, owned=[p(0, "c1-0")]),
    ]
    failed, retry = build(lines).lane("c1").rebalances
    assert failed.gap is not None and failed.gap.ended_by == "later_restart"
    assert failed.gap.end == pytest.approx(retry.gap.end)  # the retry's restart: the one that raised ended nothing


def test_unknown_events_are_harmless():
    lines = [
        line("bridge.znode_written", 0, path="/brokers/ids/1"),  # no consumer: ignored
        line("rebalance.started", 0, consumer_id="c1", rebalance_id=1, cause="initial"),
        line("rebalance.shiny_new_step", 0.05, consumer_id="c1", rebalance_id=1, attempt=1, step=10,
             duration_ms=3.0),
        line("rebalance.something", 0.06, consumer_id="c1", rebalance_id=1, weird=[1, 2]),
        line("whatever.happened", 0.07, consumer_id="c1", level="warning"),
        step("claim", 0.08, "c1", 1, claimed="not a list", conflicts={"no": "list"}, already_ours=[1, "x", None]),
        step("stop_fetchers", 0.09, "c1", 1, ms=True),  # a bool is no duration
        line("demo.confetti", 0.1, colour="gold"),
        line("fetcher.started", 0.11, consumer_id="c1", thread="t", broker="b"),
    ]
    timeline = build(lines)
    (rebalance,) = timeline.lane("c1").rebalances
    assert [(s.name, s.known, s.number, s.title) for s in rebalance.steps] == [
        ("shiny_new_step", False, 10, "shiny new step"), ("claim", True, 8, "claim ownership"),
        ("stop_fetchers", True, 2, "stop fetchers")]
    assert rebalance.steps[2].duration_ms == 0.0
    assert (timeline.ignored_events, timeline.fetcher_events, timeline.ownership) == (1, 1, ())
    assert [m.name for m in timeline.markers] == ["demo.confetti"]
    assert any("warning: whatever.happened" in text for text in render_text(timeline))
    assert 'data-consumer="c1"' in render_html(timeline)


def test_ownership_seen_only_in_completed_and_a_consumer_run_twice():
    lines = [
        line("rebalance.completed", 1, consumer_id="c1", rebalance_id=3, attempts=1, owned=[p(0, "c1-0")]),
        line("consumer.shutdown", 2, consumer_id="c1", duration_ms=5),
        line("consumer.connected", 3, consumer_id="c1"),
        line("rebalance.started", 3.1, consumer_id="c1", rebalance_id=1, cause="initial"),
        *full_attempt(3.1, "c1", 1, claimed=[p(0, "c1-0")]),
        line("rebalance.completed", 3.2, consumer_id="c1", rebalance_id=1, attempts=1, owned=[p(0, "c1-0")]),
    ]
    timeline = build(lines)
    lane = timeline.lane("c1")
    assert [life.ended_by for life in lane.lives] == ["shutdown", None]
    assert [r.rebalance_id for r in lane.rebalances] == [3, 1]
    assert [(o.start, o.ended_by) for o in timeline.ownership] == [(0.0, "shutdown"), (pytest.approx(2.18), None)]


def test_a_trace_without_consumer_events_renders_as_empty():
    timeline = build([line("bridge.started", 0)])
    assert timeline.empty and timeline.ignored_events == 1
    assert render_text(timeline) == ["(no consumer or demo event in this trace)"]
    assert "No consumer or demo event" in render_html(timeline)


# --- renderings ---------------------------------------------------------------------------------------------------


def test_text_timeline_of_the_sample(sample):
    lines = render_text(sample)
    assert not any("fetcher_manager" in text or "leader_finder" in text for text in lines)
    conflict = [text for text in lines if "CONFLICT" in text]
    assert conflict and conflict[0].split()[:3] == ["+3.041s", "gs2_c2", "!!"]
    assert any("took over sample-1 from gs2_c2-0" in text for text in lines)
    assert any(text.strip().startswith("+3.104s  gs2_c1  rebalance 2 (members_changed): completed in 1 attempt")
               and "stop-the-world 83.5 ms" in text and "owns gs2_c1-0: sample-0, sample-1" in text
               for text in lines)
    assert any("[r2 a1] 2 stop fetchers (72.7 ms)" in text for text in lines)
    summary = lines[lines.index("=== summary ==="):]
    assert any(text.startswith("gs2_c2: 2 rebalances (3 attempts, 1 failed, 2 conflicts)") for text in summary)
    assert all(text.isascii() for text in lines)
    assert render_text(read_events(SAMPLE.read_text().splitlines())) == lines


def test_text_markers_are_headings():
    lines = render_text(read_events([
        line("demo.scene", 0, scene=2, title="A member dies", note="kill -9"),
        line("consumer.connected", 0.5, consumer_id="c1", zookeeper="zk:1", session_id="0x1"),
        line("demo.partitions_added", 1, topic="t", before=4, after=6),
    ]))
    assert lines[1:5] == ["", "=== +0.000s  scene 2: A member dies ===", "    kill -9",
                          "   +0.500s  c1  connected to ZooKeeper zk:1 (session 0x1)"]
    assert "=== +1.000s  t: partitions 4 -> 6 ===" in lines


def test_html_page_of_the_sample(sample):
    page = render_html(sample, title="sample")
    for lane in sample.lanes:
        assert f'<g class="lane" data-consumer="{lane.consumer_id}">' in page
        assert f'<tr data-consumer="{lane.consumer_id}">' in page
    for gap_ms in (sample.rebalance("gs2_c1", 2).gap.duration_ms, sample.rebalance("gs2_c3", 1).gap.duration_ms):
        assert f">{fmt_ms(gap_ms)}</text>" in page
    for s in STEPS:
        assert f"{s.number} {s.title}</text>" in page
    assert page.count('class="mark" data-kind="conflict"') >= 2
    assert page.count('<section class="round"') == 5
    assert page.count('<g class="partition"') == 4
    assert page.count("<script>") == 1 and 'document.body.dataset.rendered = "ok"' in page


def test_html_names_no_url_and_escapes_every_string():
    evil = 'c"><script>alert(1)</script>'
    lines = [
        line("demo.scene", 0, scene=1, title="<b>bold</b> & 'quoted'", note="<img src=x onerror=alert(1)>"),
        line("rebalance.started", 0, consumer_id=evil, group="<g>", rebalance_id=1, cause="<cause>"),
        *full_attempt(0, evil, 1, claimed=[p(0, "<thread>", topic="<topic>")]),
        line("rebalance.completed", 0.1, consumer_id=evil, rebalance_id=1, attempts=1,
             owned=[p(0, "<thread>", topic="<topic>")]),
        line("rebalance.error", 0.2, consumer_id=evil, error="x\x01</title><script>", level="error"),
    ]
    timeline = build(lines)
    page = render_html(timeline, title="<title>")
    assert "<script>alert" not in page and "<b>bold" not in page and "<img" not in page
    assert "<thread>" not in page and "<topic>" not in page and "<cause>" not in page and "</title><script>" not in page
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &#x27;quoted&#x27;" in page
    assert 'data-consumer="c&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"' in page
    assert page.count("<script>") == 1
    assert not re.search(r'https?:|//[a-z]|@import|<link|<img|<iframe|\ssrc="', page, re.IGNORECASE)
    assert set(re.findall(r"url\((.)", page)) <= {"#"}
    assert set(re.findall(r'href="(.)', page)) <= {"#"}


def test_standalone_svg_is_well_formed_xml(sample):
    svg = render_svg(sample)
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    lanes = [g.get("data-consumer") for g in root.iter(f"{ns}g") if g.get("class") == "lane"]
    assert lanes == ["gs2_c1", "gs2_c2", "gs2_c3"]
    markers = build([line("demo.scene", 0, scene=1, title="t & <u>"), line("consumer.connected", 1, consumer_id="c")])
    assert ET.fromstring(render_svg(markers)).find(f".//{ns}g[@class='marker']") is not None


def test_demo_settled_is_a_marker_and_member_output_a_mark_on_its_lane():
    lines = [
        line("demo.member_started", 0, consumer_id="d_c1", pid=7, streams=1),
        line("consumer.connected", 0.1, consumer_id="d_c1", session_id="0x1"),
        line("demo.member_output", 0.5, consumer_id="d_c1", line="Traceback (most recent call last):"),
        line("demo.settled", 1, scene=2, valid=True, owners=[p(0, "d_c1-0")]),
        line("demo.settled", 2, scene=3, valid=False, owners=[]),
        line("demo.member_output", 3, line="no consumer: a marker after all"),
    ]
    timeline = build(lines)
    assert [m.kind for m in timeline.lane("d_c1").marks] == ["member_output"]
    assert [m.name for m in timeline.markers] == ["demo.member_started", "demo.settled", "demo.settled",
                                                  "demo.member_output"]
    text = render_text(timeline)
    assert "   +0.500s  d_c1  !! printed: Traceback (most recent call last):" in text
    assert "=== +1.000s  scene 2 settled, verified ===" in text and "    owners: d_c1-0: t-0" in text
    assert "=== +2.000s  scene 3 settled, NOT valid ===" in text
    assert 'class="mark" data-kind="member_output"' in render_html(timeline)


def test_a_settled_marker_whose_verdict_is_not_a_bool_has_none():
    timeline = build([line("demo.settled", 0, scene=1, valid=[1]), line("demo.settled", 1, scene=2, valid="yes")])
    assert "=== +0.000s  scene 1 settled ===" in render_text(timeline)
    assert ">scene 2 settled</text>" in render_svg(timeline) and "scene 1 settled" in render_html(timeline)


def test_a_burst_of_marks_is_one_symbol_with_every_line_in_its_tooltip():
    lines = [line("consumer.connected", 0, consumer_id="c1", session_id="0x1")]
    lines += [line("demo.member_output", 5 + i / 1000, consumer_id="c1", line=f"frame {i}") for i in range(30)]
    lines.append(line("consumer.shutdown", 30, consumer_id="c1"))
    timeline = build(lines)
    assert len(timeline.lane("c1").marks) == 30
    assert sum("!! printed: frame" in text for text in render_text(timeline)) == 30
    svg = render_svg(timeline)
    assert svg.count('data-kind="member_output" data-count="30"') == 1
    assert svg.count('data-kind="member_output"') == 1 + 1  # the symbol and its legend entry
    assert "printed: frame 11" in svg and "printed: frame 12" not in svg and "(+18 more)" in svg


def test_a_grown_topic_s_marker_is_written_as_short_writes_the_topic():
    """A comparison's drawing leaves its protocol's one topic out (``short``): the growth then reads
    ``partitions 4 -> 6``, short enough to be placed whole beside the scene's own label."""
    from zkconsumer.trace.timeline import Marker
    from zkconsumer.trace.timeline_html import _shortened
    from zkconsumer.trace.words import describe_marker

    grown = Marker(1.0, "demo.partitions_added", {"topic": "demo-range-a1", "before": 4, "after": 6})
    label, _ = describe_marker(grown)
    assert label == "demo-range-a1: partitions 4 -> 6"
    assert _shortened(grown, label, lambda name: "" if name == "demo-range-a1" else name) == "partitions 4 -> 6"
    assert _shortened(grown, label, lambda name: name.upper()) == "DEMO-RANGE-A1: partitions 4 -> 6"
    started = Marker(0.5, "demo.member_started", {"consumer_id": "g_m1"})
    assert _shortened(started, describe_marker(started)[0], lambda name: name.removeprefix("g_")).startswith("m1 ")
