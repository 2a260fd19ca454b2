"""The streaming source's planner against the real ZooKeeper and broker, where a partition's offset lies beyond the
true end of its log (the broker lost it, the topic was recreated): reset by ``auto.offset.reset`` with one warning
once a second look at least 3 s after the first finds it there again, as the connector's fetchers do
(tests/consumer/test_past_log_end.py), whether the offset is the group's, read when the query starts, or the
source's own position; meanwhile the partition is not read; the next commit writes the new offset."""

from __future__ import annotations

import time

import pytest
from structlog.testing import capture_logs
from support import mirrored_topic, produce, wait_for

from zkconsumer.kafka.past_end import CONFIRM_S, PastEndLooks
from zkconsumer.spark.offsets import OffsetRange, SourceOffset
from zkconsumer.spark.options import parse_options
from zkconsumer.spark.stream_source import StreamPlanner
from zkconsumer.types import TopicPartition
from zkconsumer.zk import paths

BEYOND = 50  # far beyond the three messages the log holds


def resets(events) -> list[tuple]:
    return [(e["log_level"], e["partition"], e["reason"], e["policy"], e["old_offset"], e["new_offset"])
            for e in events if e["event"] == "spark.offset_reset"]


@pytest.mark.parametrize("policy", ["smallest", "largest"])
def test_an_offset_past_the_log_end_resets_once_and_is_committed(zk, kafka_zk, bootstrap_servers, topic_name,
                                                                  policy):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic, [b"old0", b"old1", b"old2"], partition=0)
    group = f"spark-past-end-{policy}"
    offset_path = paths.GroupTopicDirs(group, topic=topic).offset_path(0)
    zk.create(offset_path, str(BEYOND).encode(), makepath=True)
    tp, reset_to = TopicPartition(topic, 0), 0 if policy == "smallest" else 4  # largest: the end when it applies
    planner = StreamPlanner(parse_options({"zookeeper.connect": kafka_zk, "group.id": group, "topics": topic,
                                           "membership": "none", "auto.offset.reset": policy}))
    try:
        with capture_logs() as events:
            # the group's offset, read when the query starts: a first look, the partition left without a position
            initial = planner.initial_offset()
            assert SourceOffset.from_json(initial).positions == {}
            assert resets(events) == []
            produce(bootstrap_servers, topic, [b"new0"], partition=0)
            first_look = time.monotonic()
            end = wait_for(lambda: (lambda e: e if e != initial else None)(planner.latest_offset(initial, None)))
            assert time.monotonic() - first_look >= CONFIRM_S  # the second look, at least 3 s after the first
            assert resets(events) == [("warning", 0, "past_log_end", policy, BEYOND, reset_to)]
            ranges = [p.task.range for p in planner.partitions(initial, end)]
            assert ranges == ([OffsetRange(topic, 0, 0, 4)] if policy == "smallest" else [])
            planner.latest_offset(end, None)  # the batch done: committed, backwards over the group's stale offset
            assert int(zk.get(offset_path)[0]) == 4
            assert len(resets(events)) == 1

            # the source's own position beyond the log's end (its checkpoint outlived the log)
            del events[:]
            behind = SourceOffset({tp: BEYOND}).to_json()
            assert planner.latest_offset(behind, None) == behind  # a first look: kept, nothing read
            assert resets(events) == []
            first_look = time.monotonic()
            end = wait_for(lambda: (lambda e: e if e != behind else None)(planner.latest_offset(behind, None)))
            assert time.monotonic() - first_look >= CONFIRM_S
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


def test_a_position_past_the_end_is_confirmed_by_a_second_look_at_the_same_position_later():
    looks, tp = PastEndLooks(confirm_s=3.0), TopicPartition("t", 0)
    assert not looks.confirmed(tp, 50, now=10.0)  # the first look
    assert not looks.confirmed(tp, 50, now=12.9) and looks.waiting() == {tp}  # too soon: still waiting
    assert looks.confirmed(tp, 50, now=13.0) and looks.waiting() == frozenset()
    assert not looks.confirmed(tp, 50, now=13.1)  # confirmed once: a later finding starts over
    assert not looks.confirmed(tp, 60, now=20.0)  # another position: a first look again
    looks.forget(tp)  # found within the log meanwhile
    assert not looks.confirmed(tp, 60, now=30.0) and looks.confirmed(tp, 60, now=33.5)
