"""The group snapshot parses a topic znode once per content, for every topic a subscription follows: a wildcard over
many topics reads each one's same bytes at every rebalance attempt."""

from __future__ import annotations

from zkconsumer.group import snapshot
from zkconsumer.zk.cluster import TopicAssignment, encode_topic


def topic_bytes(partitions: int) -> bytes:
    return encode_topic(TopicAssignment("t", {p: (0,) for p in range(partitions)}))


def test_every_topic_s_parse_is_kept_however_many_topics_are_read():
    contents = {f"topic-{i}": topic_bytes(3 + i % 5) for i in range(200)}
    first = {topic: snapshot._partition_ids(topic, data) for topic, data in contents.items()}
    for topic, data in contents.items():  # read again: the same answer, not parsed again
        assert snapshot._partition_ids(topic, bytes(data)) is first[topic]


def test_a_changed_topic_is_parsed_again():
    assert snapshot._partition_ids("grown", topic_bytes(3)) == (0, 1, 2)
    assert snapshot._partition_ids("grown", topic_bytes(5)) == (0, 1, 2, 3, 4)
