"""Event lines for the trace tools, fuzzed: any lines read to an EventLog (broken ones counted), and the timeline
is built and drawn from whatever events they hold, whatever their fields' types: the members' events and a group
coordinator's."""

from __future__ import annotations

import json

from coordinator_trace import classic_story, consumer_story
from fuzzing import FUZZ, JSON_VALUES, NASTY_TEXT
from hypothesis import example, given
from hypothesis import strategies as st
from support import SAMPLE_EVENTS

from zkconsumer.trace.timeline import build_timeline, read_events
from zkconsumer.trace.timeline_html import render_svg
from zkconsumer.trace.timeline_text import render_text

SAMPLE = [json.loads(line) for line in SAMPLE_EVENTS.read_text().splitlines()[:400] if line.strip()]
SAMPLE += [json.loads(line) for line in classic_story(members=False) + consumer_story()]


def spoiled(index: int, key: str, value: object) -> str:
    event = dict(SAMPLE[index % len(SAMPLE)])
    fields = sorted(event)
    event[fields[index % len(fields)] if key == "" else key] = value
    return json.dumps(event)


LINES = st.lists(st.one_of(
    st.integers(0, 10_000).map(lambda i: json.dumps(SAMPLE[i % len(SAMPLE)])),
    st.builds(spoiled, st.integers(0, 10_000),
              st.sampled_from(["", "event", "timestamp", "consumer_id", "partitions", "owned", "rebalance_id",
                               "duration_ms", "topic", "partition", "assignment", "step", "group", "member_id",
                               "client_id", "generation", "group_epoch", "from", "to", "members", "leader",
                               "old_member_id", "new_member_id", "reason"]), JSON_VALUES),
    NASTY_TEXT, st.text(max_size=20),
), max_size=12)


@FUZZ
@given(LINES)
@example([spoiled(44, "duration_ms", 63930892324022.0)])  # a step of 2,000 years: its block began before the year 1
def test_any_event_lines_read_and_build_a_timeline(lines):
    log = read_events(lines)
    assert len(log.events) + log.broken <= len(lines)
    timeline = build_timeline(log)
    render_svg(timeline)
    render_text(timeline)
