"""The rebalance plan (step 5, ``rebalance.assign``) as a pure function of a group snapshot, and the snapshot reader
against a real ZooKeeper with registrations other tools wrote, malformed ones included."""

from __future__ import annotations

import pytest

from zkconsumer.consumer.rebalance_plan import NotRegisteredError, group_decision, plan_rebalance
from zkconsumer.group.snapshot import GroupSnapshot, read_group_snapshot
from zkconsumer.group.topic_count import TopicCount, Whitelist
from zkconsumer.types import TopicPartition


def snapshot(members: dict[str, TopicCount], partitions: dict[str, int]) -> GroupSnapshot:
    return GroupSnapshot("g", members, tuple(sorted(partitions)), {t: tuple(range(n)) for t, n in partitions.items()})


def test_range_gives_each_member_its_share_and_everyone_the_same_global_map():
    members = {c: TopicCount.static(c, {"t": 2}) for c in ("g_c1", "g_c2")}
    snap = snapshot(members, {"t": 5})
    one, two = plan_rebalance(snap, "g_c1"), plan_rebalance(snap, "g_c2")
    assert dict(one.assignment) == {TopicPartition("t", 0): "g_c1-0", TopicPartition("t", 1): "g_c1-0",
                                    TopicPartition("t", 2): "g_c1-1"}
    assert dict(two.assignment) == {TopicPartition("t", 3): "g_c2-0", TopicPartition("t", 4): "g_c2-1"}
    assert one.global_assignment == two.global_assignment
    assert dict(one.global_assignment["t"]) == {0: "g_c1-0", 1: "g_c1-0", 2: "g_c1-1", 3: "g_c2-0", 4: "g_c2-1"}
    assert dict(one.my_threads) == {"t": ("g_c1-0", "g_c1-1")}


def test_an_empty_subscription_owns_nothing_and_changes_nothing():
    members = {"g_a": TopicCount.static("g_a", {"t": 1}), "g_b": TopicCount.static("g_b", {})}
    snap = snapshot(members, {"t": 2})
    assert plan_rebalance(snap, "g_b").assignment == {}
    assert set(plan_rebalance(snap, "g_a").assignment) == {TopicPartition("t", 0), TopicPartition("t", 1)}


def test_roundrobin_over_wildcard_members_expands_against_the_snapshot_topics():
    members = {c: TopicCount.wildcard(c, Whitelist("t.*"), 1) for c in ("g_c1", "g_c2", "g_c3")}
    snap = snapshot(members, {"topic1": 12, "other": 3})
    plans = [plan_rebalance(snap, c, "roundrobin") for c in members]
    # roundrobin deals in Java String.hashCode order: 10, 11, 0..9 to c1, c2, c3
    assert plans[0].global_assignment["topic1"][10] == "g_c1-0"
    assert plans[0].global_assignment["topic1"][11] == "g_c2-0"
    assert plans[0].global_assignment["topic1"][0] == "g_c3-0"
    assert "other" not in plans[0].global_assignment
    assert sum(len(p.assignment) for p in plans) == 12


def test_a_consumer_missing_from_the_snapshot_cannot_plan():
    with pytest.raises(NotRegisteredError, match="g_gone"):
        plan_rebalance(snapshot({}, {"t": 1}), "g_gone")


def test_snapshot_skips_malformed_registrations_and_topics(zk):
    zk.create("/consumers/g/ids/g_good", b'{"version":1,"subscription":{"t":1,"bad":1},"pattern":"static",'
                                         b'"timestamp":"1"}', makepath=True)
    zk.create("/consumers/g/ids/g_pykafka", b"t", makepath=True)  # a bare topic name, as pykafka wrote
    zk.create("/consumers/g/ids/g_spaced", b'{ "pattern":"static", "subscription":{ "t": 1 }, "timestamp":"1", '
                                           b'"version":1 }', makepath=True)  # 0.8.0's format is fine
    zk.create("/brokers/topics/t", b'{"version":1,"partitions":{"0":[1],"1":[1]}}', makepath=True)
    zk.create("/brokers/topics/bad", b"garbage", makepath=True)
    snap = read_group_snapshot(zk, "g")
    assert list(snap.members) == ["g_good", "g_spaced"]
    assert snap.partitions == {"t": (0, 1), "bad": ()}
    assert sorted(m.path for m in snap.malformed) == ["/brokers/topics/bad", "/consumers/g/ids/g_pykafka"]
    plan = plan_rebalance(snap, "g_good")
    assert dict(plan.assignment) == {TopicPartition("t", 0): "g_good-0"}


def test_members_reading_the_same_group_share_one_decision_and_each_takes_its_own_share():
    """Twenty members of one process reading the same group compute the group's decision once (every partition's
    thread), not once each; each plan is still its own share, and the shares cover the topic once."""
    members = {f"g_m{n:02d}": TopicCount.static(f"g_m{n:02d}", {"t": 1}) for n in range(20)}
    snap = snapshot(members, {"t": 10_000})
    group_decision.cache_clear()
    plans = [plan_rebalance(snap, c) for c in members]
    assert group_decision.cache_info().misses == 1 and group_decision.cache_info().hits == 19
    assert [list(p.assignment.values())[:1] for p in plans] == [[f"{c}-0"] for c in members]
    assert [min(p.assignment).partition for p in plans] == list(range(0, 10_000, 500))
    assert sorted(tp for p in plans for tp in p.assignment) == [TopicPartition("t", n) for n in range(10_000)]
    assert all(p.global_assignment is plans[0].global_assignment for p in plans)
    # a different reading (one member fewer) is a different decision
    fewer = snapshot({c: tc for c, tc in members.items() if c != "g_m19"}, {"t": 10_000})
    assert len(plan_rebalance(fewer, "g_m00").assignment) == 527
    assert group_decision.cache_info().misses == 2
