"""The streaming source's planner against the real ZooKeeper and broker, where a partition's offset lies beyond the
true end of its log (the broker lost it, the topic was recreated): reset by ``auto.offset.reset`` with one warning
when a second look 3 s after the first, within the same planning, finds it there again, as the connector's fetchers
do (tests/consumer/test_past_log_end.py), whether the offset is the group's, read when the query starts, or the
source's own position; the next commit writes the new offset. A position the log has reached by the second look
stands."""

from __future__ import annotations

import threading
import time

import pytest
from structlog.testing import capture_logs
from support import mirrored_topic, produce, wait_for
from time_scale import bounded

from zkconsumer.kafka.past_end import CONFIRM_S, still_past_end
from zkconsumer.spark.offsets import OffsetRange, SourceOffset
from zkconsumer.spark.options import parse_options
from zkconsumer.spark.stream_source import StreamPlanner
from zkconsumer.types import TopicPartition
from zkconsumer.zk import paths

BEYOND = 50  # far beyond the three messages the log holds


def resets(events) -> list[tuple]:
    return [(e["log_level"], e["partition"], e["reason"], e["policy"], e["old_offset"], e["new_offset"])
            for e in events if e["event"] == "spark.offset_reset"]


def seen(events) -> list[list[tuple]]:
    return [[(p["partition"], p["position"], p["log_end"]) for p in e["partitions"]]
            for e in events if e["event"] == "spark.past_end_seen"]


@pytest.mark.parametrize("policy", ["smallest", "largest"])
def test_an_offset_past_the_log_end_resets_once_and_is_committed(zk, kafka_zk, bootstrap_servers, topic_name,
                                                                  policy):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic, [b"old0", b"old1", b"old2"], partition=0)
    group = f"spark-past-end-{policy}"
    offset_path = paths.GroupTopicDirs(group, topic=topic).offset_path(0)
    zk.create(offset_path, str(BEYOND).encode(), makepath=True)
    tp, reset_to = TopicPartition(topic, 0), 0 if policy == "smallest" else 3
    planner = StreamPlanner(parse_options({"zookeeper.connect": kafka_zk, "group.id": group, "topics": topic,
                                           "membership": "none", "auto.offset.reset": policy}))
    try:
        with capture_logs() as events:
            # the group's offset, read when the query starts: reset after a second look, within the same call
            began = time.monotonic()
            initial = planner.initial_offset()
            assert time.monotonic() - began >= CONFIRM_S
            assert seen(events) == [[(0, BEYOND, 3)]]
            assert SourceOffset.from_json(initial).positions == {tp: reset_to}
            assert resets(events) == [("warning", 0, "past_log_end", policy, BEYOND, reset_to)]
            produce(bootstrap_servers, topic, [b"new0"], partition=0)
            end = planner.latest_offset(initial, None)
            assert planner.partitions(initial, end)[0].task.range == OffsetRange(topic, 0, reset_to, 4)
            planner.latest_offset(end, None)  # the batch done: committed, backwards over the group's stale offset
            assert int(zk.get(offset_path)[0]) == 4
            assert len(resets(events)) == 1 and len(seen(events)) == 1

            # the source's own position beyond the log's end (its checkpoint outlived the log)
            del events[:]
            behind = SourceOffset({tp: BEYOND}).to_json()
            began = time.monotonic()
            end = planner.latest_offset(behind, None)
            assert time.monotonic() - began >= CONFIRM_S
            assert seen(events) == [[(0, BEYOND, 4)]]
            moved_to = 0 if policy == "smallest" else 4
            assert resets(events) == [("warning", 0, "past_log_end", policy, BEYOND, moved_to)]
            ranges = [p.task.range for p in planner.partitions(behind, end)]
            assert ranges == ([OffsetRange(topic, 0, 0, 4)] if policy == "smallest" else [])
            assert SourceOffset.from_json(end).positions == {tp: 4}
            assert planner.latest_offset(end, None) == end  # nothing new: no batch, and no second warning
            assert len(resets(events)) == 1
            assert int(zk.get(offset_path)[0]) == 4
    finally:
        planner.stop()


def test_a_position_the_log_reaches_by_the_second_look_stands(zk, kafka_zk, bootstrap_servers, topic_name):
    """As on Kafka when a new leader's high watermark trails: past the end at the first look, within the log at the
    second (the messages arrived meanwhile), so nothing is reset and the batch reads from the position."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic, [b"old0", b"old1", b"old2"], partition=0)
    tp = TopicPartition(topic, 0)
    planner = StreamPlanner(parse_options({"zookeeper.connect": kafka_zk, "group.id": "spark-past-end-reached",
                                           "topics": topic, "membership": "none", "auto.offset.reset": "smallest"}))
    try:
        with capture_logs() as events:
            initial = planner.initial_offset()
            assert SourceOffset.from_json(initial).positions == {tp: 0}  # no offset of the group: smallest
            ahead = SourceOffset({tp: 5}).to_json()

            def catch_up() -> None:  # once the first look has been taken: the log grows past the position
                wait_for(lambda: seen(events))
                produce(bootstrap_servers, topic, [b"m3", b"m4", b"m5", b"m6"], partition=0)

            producer = threading.Thread(target=catch_up)
            producer.start()
            end = planner.latest_offset(ahead, None)
            producer.join(bounded(30))
            assert seen(events) == [[(0, 5, 3)]] and resets(events) == []
            assert [p.task.range for p in planner.partitions(ahead, end)] == [OffsetRange(topic, 0, 5, 7)]
    finally:
        planner.stop()


def test_a_position_past_the_end_at_both_looks_is_confirmed():
    t0, t1, t2 = (TopicPartition("t", p) for p in range(3))
    first = {t0: 50, t1: 50, t2: 50}
    assert still_past_end(first, {t0: 3, t1: 60}) == {t0}  # t1 reached meanwhile; t2's end unread: not confirmed
    assert still_past_end({}, {t0: 3}) == frozenset()
