"""Scenarios of Kafka's own ``GroupMetadataManagerTest`` (group-coordinator, Kafka 4.x) replayed on the consumer group
coordinator, with the test's mock assignor (it answers the assignment the scenario prepared). Kafka's test starts from
a group already at epoch 10; here the group is built by joins, so its epochs are counted from what that takes."""

from __future__ import annotations

from dataclasses import dataclass, field

from test_consumer_group import GROUP, Driver, tid, tps

from zkconsumer.assignors.group_spec import GroupSpec, TargetAssignment
from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.front.groups.consumer_group import ConsumerGroupConfig
from zkconsumer.front.groups.consumer_group_messages import (
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupState,
    ErrorCode,
    MemberState,
)

FOO, BAR = tid("foo"), tid("bar")


@dataclass
class PreparedAssignor:
    """``MockPartitionAssignor``: whatever assignment was prepared last."""

    prepared: dict[str, dict[Uuid, frozenset[int]]] = field(default_factory=dict)

    def __call__(self, spec: GroupSpec, /) -> TargetAssignment:
        return {m.member_id: dict(self.prepared.get(m.member_id, {})) for m in spec.members}


def foo_bar(foo: tuple[int, ...], bar: tuple[int, ...]) -> dict[Uuid, frozenset[int]]:
    return {**tps("foo", *foo), **tps("bar", *bar)} if bar else tps("foo", *foo)


def heartbeat(d: Driver, member_id: str, epoch: int, owned: dict[Uuid, frozenset[int]] | None = None,
              ) -> ConsumerGroupHeartbeatResponse:
    return d.send(ConsumerGroupHeartbeat(GROUP, member_id, epoch, owned=owned))


def expect(response: ConsumerGroupHeartbeatResponse, epoch: int,
           assignment: dict[Uuid, frozenset[int]] | None) -> None:
    assert response.error_code == ErrorCode.none
    assert (response.member_epoch, response.heartbeat_interval_ms) == (epoch, 5_000)
    assert response.assignment == assignment


def test_reconciliation_process() -> None:
    """``testReconciliationProcess``: a third member joins a stable group of two; each gives up partitions before the
    newcomer gets them, one heartbeat at a time."""
    assignor = PreparedAssignor()
    d = Driver(ConsumerGroupConfig(assignors=("range",)), topics={"foo": 6, "bar": 3}, assignors={"range": assignor})
    assignor.prepared = {"member-1": foo_bar((0, 1, 2), (0, 1)), "member-2": foo_bar((3, 4, 5), (2,))}
    for member_id in ("member-1", "member-2"):
        d.join(member_id, ("foo", "bar"), assignor="range", rebalance_timeout_ms=5_000)
    d.settle()
    assert d.state() == ConsumerGroupState.STABLE
    e = d.coordinator.group_epoch_of(GROUP)  # Kafka's test: 10

    assignor.prepared = {"member-1": foo_bar((0, 1), (0,)), "member-2": foo_bar((2, 3), (2,)),
                         "member-3": foo_bar((4, 5), (1,))}
    # member 3 joins: a new target; it gets nothing yet, all its partitions being owned by others
    expect(d.join("member-3", ("foo", "bar"), assignor="range", rebalance_timeout_ms=5_000), e + 1, {})
    assert d.rec_state("member-3") == MemberState.UNRELEASED_PARTITIONS
    assert d.state() == ConsumerGroupState.RECONCILING

    # members 1 and 2 stay at their epoch and are told what they keep
    expect(heartbeat(d, "member-1", e), e, foo_bar((0, 1), (0,)))
    assert d.rec_state("member-1") == MemberState.UNREVOKED_PARTITIONS
    expect(heartbeat(d, "member-2", e), e, foo_bar((3,), (2,)))
    assert d.rec_state("member-2") == MemberState.UNREVOKED_PARTITIONS
    # member 3 still waits: no assignment in the answer
    expect(heartbeat(d, "member-3", e + 1), e + 1, None)
    assert d.rec_state("member-3") == MemberState.UNRELEASED_PARTITIONS

    # member 1 acknowledges the revocation by reporting what it still owns
    expect(heartbeat(d, "member-1", e, foo_bar((0, 1), (0,))), e + 1, None)
    assert d.rec_state("member-1") == MemberState.STABLE
    # member 2 heartbeats without acknowledging: nothing moves
    expect(heartbeat(d, "member-2", e), e, None)
    assert d.rec_state("member-2") == MemberState.UNREVOKED_PARTITIONS
    # member 3 gets what member 1 released, and waits on the rest
    expect(heartbeat(d, "member-3", e + 1), e + 1, tps("bar", 1))
    assert d.rec_state("member-3") == MemberState.UNRELEASED_PARTITIONS
    expect(heartbeat(d, "member-3", e + 1), e + 1, None)
    assert d.state() == ConsumerGroupState.RECONCILING

    # member 2 acknowledges: it moves on and gets foo-2, which member 1 released
    expect(heartbeat(d, "member-2", e, foo_bar((3,), (2,))), e + 1, foo_bar((2, 3), (2,)))
    assert d.rec_state("member-2") == MemberState.STABLE
    assert d.state() == ConsumerGroupState.RECONCILING
    # member 3 gets the rest and the group is stable
    expect(heartbeat(d, "member-3", e + 1, tps("bar", 1)), e + 1, foo_bar((4, 5), (1,)))
    assert d.rec_state("member-3") == MemberState.STABLE
    assert d.state() == ConsumerGroupState.STABLE
    assert {FOO, BAR} == set(d.coordinator.target_of(GROUP, "member-3"))
