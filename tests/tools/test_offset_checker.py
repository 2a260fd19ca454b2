"""What the offset checker makes of the znodes it read, without a server: the partitions of a deleted topic taken
from the group's own znodes, a malformed topic not mistaken for a deleted one, offsets unknown, "none" (-1) and
malformed, owners, and who is registered. ``groups describe`` and the Spark table both build on this."""

from __future__ import annotations

from types import MappingProxyType

from zkconsumer.group.snapshot import GroupSnapshot, MalformedZnode
from zkconsumer.group.topic_count import parse_registration
from zkconsumer.tools.offset_checker import deleted_topics, group_offsets, group_partitions, registered_members
from zkconsumer.types import TopicPartition

REGISTRATION = b'{"version":1,"subscription":{"live":1},"pattern":"static","timestamp":"1"}'


def snapshot() -> GroupSnapshot:
    return GroupSnapshot(
        "g",
        MappingProxyType({"g_a": parse_registration("g_a", REGISTRATION, "/consumers/g/ids/g_a")}),
        ("bad", "live"),
        MappingProxyType({"bad": (), "gone": (), "live": (0, 1)}),
        (MalformedZnode("/brokers/topics/bad", "is not valid JSON"),
         MalformedZnode("/consumers/g/ids/g_broken", "is not valid JSON")),
    )


def test_partitions_of_live_deleted_and_malformed_topics():
    group = snapshot()
    assert deleted_topics(group) == ["gone"]  # "bad" is listed and malformed, not deleted
    partitions, warnings = group_partitions(group, {"gone": [0, 3]})
    assert partitions == [TopicPartition("gone", 0), TopicPartition("gone", 3),
                          TopicPartition("live", 0), TopicPartition("live", 1)]
    assert [w.path for w in warnings] == ["/brokers/topics/bad", "/consumers/g/ids/g_broken", "/brokers/topics/gone"]
    assert "topic deleted?" in warnings[-1].problem
    assert group_partitions(group, {"gone": []})[1] == list(group.malformed)  # nothing seen: no rows, no warning


def test_offsets_owners_and_members():
    group = snapshot()
    tps = [TopicPartition("live", p) for p in range(4)]
    offsets = group_offsets(group, tps, [], {tps[0]: b"12\n", tps[1]: b"-1", tps[2]: b"x"},
                            {tps[0]: b"g_a-0", tps[1]: b"", tps[3]: b"g_\xffold-0"})
    assert [(r.offset, r.owner, r.lag) for r in offsets.rows] == [
        (12, "g_a-0", None), (-1, None, None), (None, None, None), (None, "g_\ufffdold-0", None)]
    assert [w.path for w in offsets.warnings] == ["/consumers/g/offsets/live/2"]
    assert offsets.members == registered_members(group) == ("g_a", "g_broken")
