"""The bridge's pure plan: the rules that are awkward to provoke on a one-broker cluster."""

from __future__ import annotations

from zkconsumer.bridge.plan import BrokerZnode, StateZnode, TopicZnode, ZkView, plan
from zkconsumer.kafka.metadata import BrokerMeta, ClusterSnapshot, PartitionMeta, TopicMeta
from zkconsumer.zk import cluster

OURS, THEIRS = 0x1, 0x2


def snapshot(topics: dict[str, TopicMeta] | None = None, brokers=(1,), unsettled=frozenset(), controller=1):
    return ClusterSnapshot({b: BrokerMeta(b, f"h{b}", 9092) for b in brokers}, topics or {}, controller, unsettled)


def registered(*ids: int, owner: int = OURS) -> dict[int, BrokerZnode]:
    return {i: BrokerZnode(cluster.BrokerInfo(i, f"h{i}", 9092, (cluster.BrokerEndpoint("PLAINTEXT", f"h{i}", 9092),)),
                           owner) for i in ids}


def view(brokers=None, topics=None) -> ZkView:
    return ZkView(OURS, brokers if brokers is not None else registered(1), topics or {}, OURS, 1)


def topic_meta(name: str, leaders: dict[int, int]) -> TopicMeta:
    return TopicMeta(name, {p: PartitionMeta(p, leader, (leader,), (leader,)) for p, leader in leaders.items()})


def topic_znode(name: str, leaders: dict[int, int], states: dict[int, int] | None = None) -> TopicZnode:
    states = leaders if states is None else states
    return TopicZnode(
        cluster.TopicAssignment(name, {p: (leader,) for p, leader in leaders.items()}), 3,
        {p: StateZnode(cluster.PartitionState(leader, 2, 1, (leader,)), 5) for p, leader in states.items()},
    )


def events(changes) -> list[tuple]:
    return [(c.event, *c.fields.values()) for c in changes]


def test_in_sync_means_no_changes():
    assert plan(snapshot({"t": topic_meta("t", {0: 1})}), view(topics={"t": topic_znode("t", {0: 1})}),
                frozenset({"t"}), "1") == []


def test_a_topic_being_deleted_or_created_is_left_alone():
    changes = plan(snapshot(unsettled=frozenset({"t"})), view(topics={"t": topic_znode("t", {0: 1})}),
                   frozenset({"t"}), "1")
    assert changes == []


def test_only_our_own_registrations_are_removed():
    brokers = {**registered(2), **registered(3, owner=THEIRS), **registered(1)}
    assert events(plan(snapshot(), view(brokers=brokers), frozenset(), "1")) == [("bridge.broker_unregistered", 2)]


def test_a_replica_move_is_a_topic_update_without_new_states():
    changes = plan(snapshot({"t": topic_meta("t", {0: 1})}, brokers=(1, 2)),
                   view(brokers=registered(1, 2), topics={"t": topic_znode("t", {0: 2}, {0: 1})}), frozenset(), "1")
    assert [c.event for c in changes] == ["bridge.topic_updated"]
    assert changes[0].new_states == {}


def test_a_listed_partition_without_state_gets_one():
    znode = topic_znode("t", {0: 1, 1: 1}, states={0: 1})
    changes = plan(snapshot({"t": topic_meta("t", {0: 1, 1: 1})}), view(topics={"t": znode}), frozenset(), "1")
    assert events(changes) == [("bridge.partition_state_created", "t", 1, 1, 0)]


def test_a_controller_elected_by_another_session_is_kept():
    theirs = ZkView(OURS, registered(1), {}, THEIRS, 9)
    assert plan(snapshot(), theirs, frozenset(), "1") == []
    none = ZkView(OURS, registered(1), {}, None, None, has_controller_epoch=False)
    [change] = plan(snapshot(), none, frozenset(), "1")
    assert change.event == "bridge.controller_elected" and change.create_epoch
    assert change.data == b'{"version":1,"brokerid":1,"timestamp":"1"}'
