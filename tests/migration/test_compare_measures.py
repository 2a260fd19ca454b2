"""The comparison's measures (:mod:`zkconsumer.migration.measures`) on hand-made event sequences: pauses, moves,
rebalances and deliveries, per scene and in all, to the millisecond."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from zkconsumer.migration.measures import Delivery, Produced, measure
from zkconsumer.trace.timeline import read_events

pytestmark = pytest.mark.migration

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
TOPIC = "t"


def line(second: float, name: str, **fields) -> str:
    stamp = (T0 + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return json.dumps({"event": name, "timestamp": stamp, **fields})


def owned(member: str, *partitions: int) -> list[dict]:
    return [{"topic": TOPIC, "partition": p, "thread": member} for p in partitions]


def story() -> list[str]:
    """m1 alone; m2 joins (eager: m1 stops everything); m3 joins (cooperative: m1 gives up partition 0 only);
    m2 is killed; then the run drains and m3 shuts down (not counted)."""
    return [
        line(0.0, "demo.scene", scene=1, title="one"),
        line(0.5, "rebalance.started", consumer_id="m1", rebalance_id=1),
        line(1.0, "rebalance.completed", consumer_id="m1", rebalance_id=1, owned=owned("m1", 0, 1)),
        line(2.0, "demo.scene", scene=2, title="two"),
        line(2.9, "rebalance.started", consumer_id="m1", rebalance_id=2),
        line(3.1, "rebalance.stop_fetchers", consumer_id="m1", rebalance_id=2, step=2, duration_ms=100.0),
        line(3.2, "rebalance.release", consumer_id="m1", rebalance_id=2, released=owned("m1", 0, 1)),
        line(3.5, "rebalance.completed", consumer_id="m1", rebalance_id=2, owned=owned("m1", 0)),
        line(3.6, "rebalance.started", consumer_id="m2", rebalance_id=1),
        line(4.0, "rebalance.completed", consumer_id="m2", rebalance_id=1, owned=owned("m2", 1)),
        line(5.0, "demo.scene", scene=3, title="three"),
        line(5.9, "rebalance.started", consumer_id="m1", rebalance_id=3),
        line(6.0, "rebalance.release", consumer_id="m1", rebalance_id=3, released=owned("m1", 0)),
        line(6.0, "rebalance.completed", consumer_id="m1", rebalance_id=3, owned=[]),
        line(6.1, "rebalance.started", consumer_id="m3", rebalance_id=1),
        line(6.25, "rebalance.completed", consumer_id="m3", rebalance_id=1, owned=owned("m3", 0)),
        line(7.0, "demo.scene", scene=4, title="four"),
        line(7.0, "demo.member_killed", consumer_id="m2", signal="SIGKILL"),
        line(8.9, "rebalance.started", consumer_id="m3", rebalance_id=2),
        line(9.0, "rebalance.completed", consumer_id="m3", rebalance_id=2, owned=owned("m3", 0, 1)),
        line(10.0, "demo.draining"),
        line(10.5, "consumer.shutting_down", consumer_id="m3"),
    ]


PRODUCED = [Produced("a", 0, 1), Produced("b", 1, 1), Produced("c", 0, 2), Produced("d", 1, 3), Produced("e", 1, 4)]
DELIVERED = [Delivery("m1", 0, 0, "a"), Delivery("m1", 1, 0, "b"), Delivery("m2", 1, 0, "b"),
             Delivery("m1", 0, 1, "c"), Delivery("m3", 1, 1, "e")]  # b twice, d never


def test_pauses_run_from_the_last_stop_to_the_next_start():
    result = measure("p", read_events(story()).events, PRODUCED, DELIVERED, TOPIC)
    pauses = [(p.partition, round(p.start, 3), round(p.end, 3), p.before, p.after, p.scene) for p in result.pauses
              if p.end is not None]
    assert pauses == [
        (0, 3.0, 3.5, "m1", "m1", 2),  # stop_fetchers began 100 ms before its event
        (1, 3.0, 4.0, "m1", "m2", 2),
        (0, 6.0, 6.25, "m1", "m3", 3),  # a cooperative release: partition 1 (m2's) never paused
        (1, 7.0, 9.0, "m2", "m3", 4),  # killed: nobody fetches it until m3 takes it
    ]
    assert len(result.pauses) == 4  # the shutdown after draining is not a pause


def test_figures_per_scene_and_in_all():
    result = measure("p", read_events(story()).events, PRODUCED, DELIVERED, TOPIC)
    total = result.total
    assert (total.produced, total.delivered, total.lost, total.duplicates) == (5, 4, 1, 1)
    assert total.partition_seconds_paused == pytest.approx(3.75)
    assert total.max_pause_ms == 2000.0
    assert (total.moved_partitions, total.paused_partitions, total.rebalances) == (3, 2, 4)
    by_scene = {s.scene: s.figures for s in result.scenes}
    assert [by_scene[n].moved_partitions for n in (1, 2, 3, 4)] == [0, 1, 1, 1]
    assert [by_scene[n].rebalances for n in (1, 2, 3, 4)] == [1, 1, 1, 1]
    assert [by_scene[n].partition_seconds_paused for n in (1, 2, 3, 4)] == pytest.approx([0, 1.5, 0.25, 2.0])
    assert [by_scene[n].max_pause_ms for n in (1, 2, 3, 4)] == [0.0, 1000.0, 250.0, 2000.0]
    assert [(by_scene[n].produced, by_scene[n].lost, by_scene[n].duplicates) for n in (1, 2, 3, 4)] == [
        (2, 0, 1), (1, 0, 0), (1, 1, 0), (1, 0, 0)]
    # settled: scene 2 at m2's completion (4.0 - 2.0), scene 4 when m3 took partition 1 (9.0 - 7.0)
    assert by_scene[2].settle_ms == pytest.approx(2000.0) and by_scene[4].settle_ms == pytest.approx(2000.0)


def test_a_member_that_died_is_reported_and_its_partitions_pause_until_the_end():
    events = story()[:10] + [line(4.5, "demo.member_died", consumer_id="m2", returncode=-11),
                             line(6.0, "demo.scene", scene=3, title="three")]
    result = measure("p", read_events(events).events, [], [], TOPIC)
    assert [(f.member, f.returncode) for f in result.failures] == [("m2", -11)]
    unfinished = [p for p in result.pauses if p.end is None]
    assert [(p.partition, p.before, p.start) for p in unfinished] == [(1, "m2", pytest.approx(4.5))]
    assert result.end == pytest.approx(6.0)
    assert result.total.max_pause_ms == pytest.approx(1500.0)  # counted up to the last event


def test_a_member_that_died_of_a_fatal_error_is_reported_with_librdkafka_s_words():
    reason = "ConsumerGroupHeartbeat fatal error: Broker: Group id not found"
    events = story()[:10] + [line(4.4, "consumer.fatal_error", consumer_id="m2", group_protocol="consumer",
                                  bootstrap="b:9092", code="_FATAL", reason=reason),
                             line(4.5, "demo.member_died", consumer_id="m2", returncode=4)]
    result = measure("p", read_events(events).events, [], [], TOPIC)
    assert [(f.member, f.returncode, f.reason) for f in result.failures] == [("m2", 4, reason)]


def test_other_topics_and_no_events_at_all():
    stranger = [line(0.0, "rebalance.completed", consumer_id="m1", owned=[{"topic": "other", "partition": 0}])]
    result = measure("p", read_events(stranger).events, [], [], TOPIC)
    assert result.pauses == () and result.total.moved_partitions == 0
    empty = measure("p", (), [Produced("a", 0, 1)], [], TOPIC)
    assert (empty.total.produced, empty.total.lost, empty.scenes) == (1, 1, ())


def test_downtime_is_the_time_no_partition_is_fetched_at_all():
    """Scene 2's eager stop leaves nothing fetched for 0.5 s; scene 3's release and scene 4's kill leave the other
    partition fetched. A cutover (every member stopped, the modern ones started later) is down from the last stop
    to the first start; the run's start, before anything was fetched, is not downtime."""
    result = measure("p", read_events(story()).events, PRODUCED, DELIVERED, TOPIC)
    assert result.total.downtime_ms == pytest.approx(500.0)
    assert [s.figures.downtime_ms for s in result.scenes] == pytest.approx([0.0, 500.0, 0.0, 0.0])
    cutover = [
        line(0.0, "demo.scene", scene=1, title="legacy"),
        line(1.0, "rebalance.completed", consumer_id="a", owned=owned("a", 0)),
        line(1.2, "rebalance.completed", consumer_id="b", owned=owned("b", 1)),
        line(3.0, "demo.scene", scene=2, title="cutover"),
        line(3.1, "consumer.shutting_down", consumer_id="a"),
        line(3.4, "consumer.shutting_down", consumer_id="b"),
        # b's rebalance under way when it was told to stop completes during its shutdown: it fetches until it exits
        line(3.5, "rebalance.completed", consumer_id="b", owned=owned("b", 0, 1)),
        line(3.6, "demo.member_stopped", consumer_id="b"),
        line(5.0, "rebalance.completed", consumer_id="a", owned=owned("a", 1)),
        line(5.5, "rebalance.completed", consumer_id="b", owned=owned("b", 0)),
        line(6.0, "demo.draining"),
    ]
    moved = measure("p", read_events(cutover).events, [], [], TOPIC)
    assert moved.total.downtime_ms == pytest.approx(1500.0)  # 3.4 to 3.5, then 3.6 to 5.0
    assert [s.figures.downtime_ms for s in moved.scenes] == pytest.approx([0.0, 1500.0])
