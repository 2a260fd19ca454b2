"""The group coordinator's lane (:mod:`zkconsumer.trace.coordinator`) and how the renderings draw and tell it, from
hand-made coordinator events as the front logs them (:mod:`coordinator_trace`). Expected times come from the event
lines' own times, not from the model."""

from __future__ import annotations

import html
import json
import re
import xml.etree.ElementTree as ET

import pytest
from coordinator_trace import (
    IDS,
    classic,
    classic_story,
    consumer,
    consumer_story,
    driven_classic_story,
    driven_consumer_story,
    joined,
    line,
    state,
)

from zkconsumer.trace.timeline import build_timeline, read_events
from zkconsumer.trace.timeline_html import render_html, render_legend_svg, render_svg
from zkconsumer.trace.timeline_text import render_text
from zkconsumer.trace.vocabulary import (
    COORDINATOR_EVENTS,
    COORDINATOR_MARK_EVENTS,
    COORDINATOR_MARK_KINDS,
    GROUP_STATES,
    state_colour,
)


def build(lines: list[str]):
    return build_timeline(read_events(lines))


def lane_of(timeline, group: str = "g"):
    [lane] = [c for c in timeline.coordinators if c.group == group]
    return lane


# --- the model --------------------------------------------------------------------------------------------------


def test_the_classic_story_states_rounds_and_marks():
    timeline = build(classic_story())
    lane = lane_of(timeline)
    assert (lane.protocol, lane.start, lane.end, lane.events) == ("classic", 0.0, timeline.end, 30)
    assert [(s.state, s.start, s.end, s.epoch) for s in lane.states] == [
        ("Empty", 0.0, 0.01, None),
        ("PreparingRebalance", 0.01, 6.01, 0),
        ("CompletingRebalance", 6.01, 6.03, 1),
        ("Stable", 6.03, 10.0, 1),
        ("PreparingRebalance", 10.0, 10.25, 1),
        ("CompletingRebalance", 10.25, 10.27, 2),
        ("Stable", 10.27, 16.0, 2),
        ("PreparingRebalance", 16.0, 16.3, 2),
        ("CompletingRebalance", 16.3, 16.32, 3),
        ("Stable", 16.32, 19.0, 3),
        ("PreparingRebalance", 19.0, timeline.end, 3),
    ]
    rounds = [(r.start, r.end, r.epoch, r.previous, r.members, r.ended_by) for r in lane.rounds]
    assert rounds == [
        (0.01, 6.01, 1, 0, ("g_m1", "g_m2"), "completed"),
        (10.0, 10.25, 2, 1, ("g_m1", "g_m2", "g_m3"), "completed"),
        (16.0, 16.3, 3, 2, ("g_m1", "g_m3"), "completed"),
        (19.0, timeline.end, None, 3, ("g_m1",), "trace_end"),  # g_m3 left: the members at its start
    ]
    first = lane.rounds[0]
    assert (first.reason, first.leader, first.chosen_protocol, first.delay_ms, first.extensions) == (
        "member g_m1 joined", "g_m1", "range", 3000, 1)
    assert lane.rounds[1].delay_ms == 300000 and lane.rounds[1].extensions == 0
    assert [(m.kind, m.time, m.member) for m in lane.marks] == [
        ("joined", 0.01, "g_m1"), ("joined", 0.5, "g_m2"), ("assignment", 6.03, None), ("joined", 10.0, "g_m3"),
        ("assignment", 10.27, None), ("expired", 16.0, "g_m2"), ("assignment", 16.32, None), ("left", 19.0, "g_m3"),
    ]
    assert lane.member_name(IDS["g_m2"]) == "g_m2" and lane.member_name("someone-else") == "someone-else"
    assert timeline.ignored_events == 0
    # the members' lanes are theirs as ever, beside it
    assert [m.consumer_id for m in timeline.lanes] == ["g_m1", "g_m2", "g_m3"]


def test_the_kip848_story_rounds_are_group_epochs_until_stable():
    lane = lane_of(build(consumer_story()), "k")
    assert lane.protocol == "consumer"
    assert [(s.state, s.start, s.end) for s in lane.states] == [
        ("Empty", 0.0, 0.0), ("Assigning", 0.0, 0.0), ("Reconciling", 0.0, 0.1), ("Stable", 0.1, 6.0),
        ("Reconciling", 6.0, 8.0), ("Stable", 8.0, 13.0),
    ]  # times from the lane's first event, which is the trace's origin here
    assert [(r.start, r.end, r.epoch, r.members, r.ended_by) for r in lane.rounds] == [
        (0.0, pytest.approx(0.1), 1, ("k_m1",), "completed"),
        (6.0, 8.0, 2, ("k_m1", "k_m2"), "completed"),
    ]
    assert [(m.kind, m.member) for m in lane.marks] == [
        ("joined", "k_m1"), ("assignment", None), ("joined", "k_m2"), ("assignment", None), ("fenced", "k_m2")]


def test_the_front_coordinators_own_events_make_their_lanes():
    """The pure coordinators of :mod:`zkconsumer.front`, driven through a small story, logged as the edge logs them:
    every event they emit is one the trace reads, and the lanes tell the story."""
    lines = driven_classic_story() + driven_consumer_story()
    assert {json.loads(x)["event"] for x in lines} <= COORDINATOR_EVENTS
    timeline = build(lines)
    assert timeline.ignored_events == 0
    classic_lane, consumer_lane = lane_of(timeline, "g"), lane_of(timeline, "k")
    assert [(r.start, r.end, r.epoch, r.members, r.ended_by) for r in classic_lane.rounds] == [
        (0.0, 6.0, 1, ("g_m1", "g_m2"), "completed"),  # the initial delay, extended once by g_m2's join
        (15.0, 15.25, 2, ("g_m1", "g_m2", "g_m3"), "completed"),  # as soon as every member rejoined
        (20.0, 20.0, None, ("g_m1", "g_m2"), "trace_end"),
    ]
    assert classic_lane.rounds[0].extensions == 1
    assert [m.kind for m in classic_lane.marks] == ["joined", "joined", "assignment", "joined", "assignment", "left"]
    assert [s.state for s in classic_lane.states][:4] == [
        "Empty", "PreparingRebalance", "CompletingRebalance", "Stable"]
    assert [(r.start, r.end, r.epoch, r.members) for r in consumer_lane.rounds] == [
        (1.0, 1.0, 2, ("k_m1",)), (7.0, 8.0, 3, ("k_m1", "k_m2")), (14.0, 15.0, 4, ("k_m1",))]  # new group: epoch 1
    assert all(r.completed for r in consumer_lane.rounds)
    assert [s.state for s in consumer_lane.states] == [
        "Empty", "Stable", "Reconciling", "Stable", "Assigning", "Stable"]


def test_a_kip848_round_completes_only_at_its_epoch_or_later():
    lines = [
        consumer("epoch_bumped", 0, **{"from": 4, "to": 5}),
        consumer("state_changed", 1, group_epoch=4, **{"from": "ASSIGNING", "to": "STABLE"}),  # an older epoch
        consumer("state_changed", 2, group_epoch=5, **{"from": "STABLE", "to": "RECONCILING"}),
        consumer("state_changed", 3, group_epoch=5, **{"from": "RECONCILING", "to": "STABLE"}),
    ]
    [rnd] = lane_of(build(lines), "k").rounds
    assert (rnd.start, rnd.end, rnd.epoch, rnd.previous, rnd.ended_by) == (0.0, 3.0, 5, 4, "completed")


def test_a_kip848_round_in_a_group_that_stays_stable_ends_when_every_member_reached_its_epoch():
    """No state change tells it: the group never left Stable (one member, nothing to revoke)."""
    lines = [
        consumer("member_joined", 0, member_id="a", client_id="k_a"),
        consumer("member_joined", 0, member_id="b", client_id="k_b"),
        consumer("member_epoch_advanced", 0, member_id="a", **{"from": 0, "to": 1}),
        consumer("member_epoch_advanced", 0, member_id="b", **{"from": 0, "to": 1}),
        consumer("state_changed", 0, group_epoch=1, **{"from": "Empty", "to": "Stable"}),
        consumer("member_left", 1, member_id="b"),
        consumer("epoch_bumped", 1, **{"from": 1, "to": 2}),
        consumer("member_epoch_advanced", 2, member_id="a", **{"from": 1, "to": 2}),
        consumer("member_left", 3, member_id="a", temporary=True),  # a static member's -2: still a member
        consumer("epoch_bumped", 4, **{"from": 2, "to": 3}),
        consumer("member_epoch_advanced", 5, member_id="a", **{"from": 2, "to": 3}),
    ]
    rounds = lane_of(build(lines), "k").rounds
    assert [(r.start, r.end, r.epoch, r.members, r.ended_by) for r in rounds] == [
        (1.0, 2.0, 2, ("k_a",), "completed"), (4.0, 5.0, 3, ("k_a",), "completed")]


@pytest.mark.parametrize(("ending", "ended_by"), [
    ([state(2, "PreparingRebalance", "Empty", 0)], "emptied"),
    ([classic("deleted", 2)], "deleted"),
    ([classic("round_started", 2, generation=0, reason="again")], "superseded"),
])
def test_how_a_classic_round_ends_without_completing(ending, ended_by):
    lines = [classic("round_started", 0, generation=0, reason="r", rebalance_timeout_ms=1000),
             classic("round_postponed", 1, rebalance_timeout_ms=1000), *ending]
    lane = lane_of(build(lines))
    first = lane.rounds[0]
    assert (first.start, first.end, first.ended_by, first.postponed) == (0.0, 2.0, ended_by, 1)
    assert not first.completed
    if ended_by == "deleted":
        assert lane.states[-1].state == "Dead"


def test_a_static_member_replaced_is_fenced_and_its_successor_keeps_its_name():
    lines = [
        joined(0, "g_m1"),
        classic("static_member_replaced", 1, group_instance_id="i1", old_member_id=IDS["g_m1"],
                new_member_id="new-id"),
        classic("round_started", 2, generation=1, reason="r"),
        classic("round_completed", 3, generation=2, protocol="range", leader="new-id", members=["new-id"]),
    ]
    lane = lane_of(build(lines))
    assert [(m.kind, m.member) for m in lane.marks] == [("joined", "g_m1"), ("fenced", "g_m1")]
    assert lane.rounds[0].members == ("g_m1",) and lane.rounds[0].leader == "g_m1"


def test_members_sharing_a_client_id_are_told_apart():
    """librdkafka's default client id is ``rdkafka`` for every member; a consumer joining again gets a new member id."""
    lines = [
        classic("member_joined", 0, member_id="rdkafka-1111", client_id="rdkafka"),
        classic("member_joined", 0, member_id="rdkafka-2222", client_id="rdkafka"),
        classic("member_joined", 0, member_id="solo-3333", client_id="solo"),
        classic("round_started", 0, generation=0, reason="r"),
        classic("round_completed", 1, generation=1, protocol="range", leader="rdkafka-2222",
                members=["rdkafka-1111", "rdkafka-2222", "solo-3333"]),
        classic("member_left", 2, member_id="rdkafka-1111"),
    ]
    timeline = build(lines)
    lane = lane_of(timeline)
    assert lane.rounds[0].members == ("rdkafka#1111", "rdkafka#2222", "solo")
    assert lane.rounds[0].leader == "rdkafka#2222"
    assert [m.member for m in lane.marks] == ["rdkafka#1111", "rdkafka#2222", "solo", "rdkafka#1111"]
    assert any(t.endswith("member left: rdkafka#1111") for t in render_text(timeline))


def test_the_state_before_the_first_change_is_its_from():
    """A trace that begins in the middle of a group's life: the first change's ``from`` fills the band before it."""
    lines = [line("rebalance.started", 0, consumer_id="c1", rebalance_id=1), joined(1, "g_m3"),
             state(2, "Stable", "PreparingRebalance", 4), line("consumer.connected", 3, consumer_id="c1")]
    lane = lane_of(build(lines))
    assert [(s.state, s.start, s.end, s.epoch) for s in lane.states] == [
        ("Stable", 1.0, 2.0, None), ("PreparingRebalance", 2.0, 3.0, 4)]
    assert lane.start == 1.0


def test_a_coordinator_event_before_the_members_sets_the_origin():
    lines = [classic("created", 0), line("consumer.connected", 1.5, consumer_id="c1")]
    timeline = build(lines)
    assert timeline.lanes[0].start == 1.5 and lane_of(timeline).start == 0.0


def test_a_trace_of_only_coordinator_events_is_drawn_and_told():
    timeline = build(classic_story(members=False))
    assert not timeline.empty and not timeline.lanes and len(timeline.coordinators) == 1
    text = render_text(timeline)
    assert text[0].endswith("0 consumers, 1 group coordinator, 0 markers (0 fetcher events not shown)")
    assert any(t.startswith("coordinator g (classic): 4 rounds, 1 not completed; longest round to generation 1")
               for t in text)
    ET.fromstring(render_svg(timeline))
    page = render_html(timeline)
    assert '<g class="coordinator" data-group="g" data-protocol="classic">' in page
    assert "Above the consumers, 1 coordinator lane, one per group: the group&#39;s state as a band" in page
    assert "coordinator lane" not in render_html(build([x for x in classic_story() if '"front.' not in x]))


@pytest.mark.parametrize("name", sorted(COORDINATOR_EVENTS))
def test_each_coordinator_event_lands_on_its_groups_lane(name):
    """One event of each kind the trace reads: it makes its group's lane, is told in the text, and draws a mark
    exactly when it is a mark's event."""
    fields = {"member_id": "m-id", "old_member_id": "m-id", "new_member_id": "n-id", "generation": 1,
              "group_epoch": 1, "from": "Stable", "to": "PreparingRebalance", "members": ["m-id"],
              "partitions": [{"topic": "t", "partition": 0}]}
    timeline = build([line(name, 0, group="g", **fields)])
    lane = lane_of(timeline)
    assert lane.events == 1 and timeline.ignored_events == 0
    assert [m.kind for m in lane.marks] == ([COORDINATOR_MARK_EVENTS[name]] if name in COORDINATOR_MARK_EVENTS
                                            else [])
    [told] = [t for t in render_text(timeline) if t.strip().startswith("+0.000s  coordinator g")]
    assert told.split("coordinator g", 1)[1].strip()
    svg = render_svg(timeline)
    assert svg.count('<g class="coordinator-mark"') == len(lane.marks)


@pytest.mark.parametrize("event", [
    line("front.group.a_later_event", 0, group="g", member_id="m"),
    line("front.consumer_group.member_reconciled", 0, group="g", member_id="m"),
    line("front.started", 0, listen="127.0.0.1:9092", upstream=["127.0.0.1:9093"]),
    line("front.connection_closed", 0, reason="client closed", connection=3),
    line("front.groups.member_joined", 0, group="g", member_id="m"),
])
def test_other_front_events_are_ignored(event):
    lines = classic_story(members=False)
    with_it = build([*lines, event])
    assert with_it.ignored_events == 1
    assert with_it.coordinators == build(lines).coordinators
    assert not build([event]).coordinators


@pytest.mark.parametrize("value", [None, 5, -1.5, True, "", [], {}, ["x"], {"a": 1}, "x" * 300])
def test_malformed_fields_do_not_crash(value):
    """Every field the trace reads, set to a value of another type, in every coordinator event."""
    keys = ["group", "member_id", "old_member_id", "new_member_id", "client_id", "generation", "group_epoch", "from",
            "to", "members", "leader", "protocol", "reason", "initial_delay_ms", "rebalance_timeout_ms", "delay_ms",
            "remaining_ms", "partitions", "protocols", "cause", "member_epoch", "assignor", "session_timeout_ms"]
    lines = [line(name, i / 10, group="g", **{key: value for key in keys if key != "group"})
             for i, name in enumerate(sorted(COORDINATOR_EVENTS))]
    lines += [line(name, 5, **{key: value for key in keys}) for name in sorted(COORDINATOR_EVENTS)]
    timeline = build(lines)
    ET.fromstring(render_svg(timeline))
    render_html(timeline)
    render_text(timeline)
    assert all(isinstance(r.members, tuple) for c in timeline.coordinators for r in c.rounds)


# --- the drawing ------------------------------------------------------------------------------------------------


def test_the_lane_is_drawn_above_the_members_with_its_states_rounds_and_marks():
    timeline = build(classic_story() + consumer_story())
    svg = render_svg(timeline)
    root = ET.fromstring(svg)
    ns = {"s": "http://www.w3.org/2000/svg"}
    groups = [(g.get("class"), g.get("data-group") or g.get("data-consumer"))
              for g in root.findall("s:g", ns) if g.get("class") in ("coordinator", "lane")]
    assert groups == [("coordinator", "g"), ("coordinator", "k"), ("lane", "g_m1"), ("lane", "g_m2"),
                      ("lane", "g_m3")]
    for lane in timeline.coordinators:
        drawn = root.find(f"s:g[@data-group='{lane.group}']", ns)
        states = drawn.findall("s:g[@class='state']", ns)
        assert [s.get("data-state") for s in states] == [s.state for s in lane.states]
        assert all(s.find("s:rect", ns).get("fill") == state_colour(s.get("data-state")) for s in states)
        rounds = drawn.findall("s:g[@class='coordinator-round']", ns)
        assert [r.get("data-outcome") for r in rounds] == [r.ended_by for r in lane.rounds]
    # the first round is wide enough for its generation and members; the tooltips say every field
    assert ">gen 1: g_m1, g_m2</text>" in svg
    assert "round to generation 1: +0.010s to +6.010s (6000 ms); completed; reason member g_m1 joined" in svg
    assert "member joined: g_m1 (member id g_m1-6f1d; session 45.0 s; protocols range, roundrobin) [" in svg
    assert "session_timeout_ms=45000" in svg and "at_ms=10" in svg
    assert "Stable (generation 1), +6.030s to +10.000s" in svg
    # the legend names every state, the round and every coordinator mark
    for kind in GROUP_STATES:
        assert f'data-state="{kind.state}"><title>{html.escape(kind.meaning)}</title>' in svg
    for mark in COORDINATOR_MARK_KINDS:
        assert f'class="legend-coordinator-mark" data-kind="{mark.kind}"' in svg
        assert f'fill="{mark.symbol.colour}"' in svg or f'stroke="{mark.symbol.colour}"' in svg


def test_without_coordinator_events_nothing_of_it_is_drawn():
    lines = classic_story()
    members_only = [x for x in lines if not json.loads(x)["event"].startswith("front.")]
    svg = render_svg(build(members_only))
    assert "coordinator" not in svg
    assert "coordinator" not in "\n".join(render_text(build(members_only)))


def test_the_legend_alone_and_an_overview_without_it():
    timeline = build(classic_story())
    full, bare = render_svg(timeline, standalone=False), render_svg(timeline, standalone=False, legend=False)
    assert full.count('<g class="legend">') == 1 and '<g class="legend">' not in bare
    height = float(re.search(r'height="([\d.]+)"', full)[1])
    assert float(re.search(r'height="([\d.]+)"', bare)[1]) < height
    # the same lanes either way
    assert re.findall(r'<g class="(?:coordinator|lane)"[^>]*>', full) == re.findall(
        r'<g class="(?:coordinator|lane)"[^>]*>', bare)
    legend = render_legend_svg()
    assert legend.startswith('<svg class="legend-drawing"') and legend.count('<g class="legend">') == 1
    assert "legend-coordinator" not in legend and "legend-coordinator" in render_legend_svg(coordinator=True)
    ET.fromstring(render_legend_svg(coordinator=True, standalone=True))
