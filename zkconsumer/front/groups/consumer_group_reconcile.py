"""One member's way from its current assignment to its target assignment, as Kafka 4.2's ``CurrentAssignmentBuilder``
reconciles it: a pure function of the member's reconciliation state, the group's target for it, who holds which
partition, what the member subscribes to, and what it reports owning.

The rule that keeps a partition from being owned twice: a member first gives up (revokes) what is no longer in its
target, staying at its epoch in UNREVOKED_PARTITIONS until it reports not owning them; only then does it move to the
target epoch, and of its new partitions it is given only those no other member holds (assigned or still to revoke);
the others it waits for in UNRELEASED_PARTITIONS, picking them up on a later heartbeat once they are free.

Kafka 4.2's refinements of 4.0's builder are in: partitions of topics the member no longer subscribes to are revoked
at once, even before a new target exists, and never assigned (KAFKA-19431); a partition the member itself still has to
revoke does not count as held by another (KAFKA-19449); and leaving UNREVOKED_PARTITIONS for UNREVOKED_PARTITIONS keeps
the member's epoch, so a partition is only ever owned by one member at any one epoch (KAFKA-19974).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace

from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.front.groups.consumer_group_messages import MemberState, Partitions

#: what ``partition_epoch`` answers for a partition no member holds
FREE = -1

PartitionEpoch = Callable[[Uuid, int], int]
"""The epoch of the member holding a partition (assigned or pending revocation), or :data:`FREE`."""


@dataclass(frozen=True)
class Reconciliation:
    """A member's reconciliation state (the fields of Kafka's ``ConsumerGroupMember`` that reconciliation moves)."""

    state: MemberState = MemberState.STABLE
    member_epoch: int = 0
    previous_member_epoch: int = 0
    assigned: Partitions = field(default_factory=dict)
    pending_revocation: Partitions = field(default_factory=dict)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == target_epoch

    def held(self) -> set[tuple[Uuid, int]]:
        """Every partition this member holds: assigned or still to revoke."""
        return {(t, p) for part in (self.assigned, self.pending_revocation) for t, ps in part.items() for p in ps}

    def with_epoch(self, epoch: int) -> Reconciliation:
        """``updateMemberEpoch``: the old epoch becomes the previous one."""
        return replace(self, member_epoch=epoch, previous_member_epoch=self.member_epoch)


def owns_any(owned: Partitions | None, partitions: Partitions) -> bool:
    """Whether the member still reports owning any of ``partitions``; a member that reported nothing is assumed to."""
    if owned is None:
        return True
    return any(partitions.get(topic_id, frozenset()) & numbers for topic_id, numbers in owned.items())


def reconcile(member: Reconciliation, target_epoch: int, target: Partitions, partition_epoch: PartitionEpoch,
              owned: Partitions | None, subscribed: Collection[Uuid] | None = None,
              subscription_changed: bool = False) -> Reconciliation:
    """The member's next reconciliation state (``CurrentAssignmentBuilder.build``). ``subscribed``: the topic ids the
    member subscribes to now (``None``: every topic of its assignment and target); ``subscription_changed``: it changed
    them on this heartbeat."""
    step = _Step(member, target_epoch, target, partition_epoch, owned,
                 None if subscribed is None else frozenset(subscribed))
    if member.state is MemberState.STABLE:
        if member.member_epoch != target_epoch:
            return step.next_assignment(member.member_epoch)
        return step.drop_unsubscribed(member.member_epoch) if subscription_changed else member
    if member.state is MemberState.UNREVOKED_PARTITIONS and owns_any(owned, member.pending_revocation):
        return step.drop_unsubscribed(member.member_epoch) if subscription_changed else member
    return step.next_assignment(member.member_epoch)


@dataclass(frozen=True)
class _Step:
    member: Reconciliation
    target_epoch: int
    target: Partitions
    partition_epoch: PartitionEpoch
    owned: Partitions | None
    subscribed: frozenset[Uuid] | None

    def is_subscribed(self, topic_id: Uuid) -> bool:
        return self.subscribed is None or topic_id in self.subscribed

    def drop_unsubscribed(self, member_epoch: int) -> Reconciliation:
        """``updateCurrentAssignment``: without a new target, revoke the partitions of topics no longer subscribed."""
        member = self.member
        gone = {t: ps for t, ps in member.assigned.items() if not self.is_subscribed(t)}
        if not gone:
            return member
        assigned = {t: ps for t, ps in member.assigned.items() if t not in gone}
        revoking = dict(member.pending_revocation)
        for topic_id, numbers in gone.items():
            revoking[topic_id] = revoking.get(topic_id, frozenset()) | numbers
        if owns_any(self.owned, revoking):
            return replace(member.with_epoch(member_epoch), state=MemberState.UNREVOKED_PARTITIONS, assigned=assigned,
                           pending_revocation=revoking)
        return replace(member.with_epoch(member_epoch), assigned=assigned)

    def next_assignment(self, member_epoch: int) -> Reconciliation:
        """``computeNextAssignment``."""
        member = self.member
        assigned: dict[Uuid, frozenset[int]] = {}
        revoking: dict[Uuid, frozenset[int]] = {}
        pending: dict[Uuid, frozenset[int]] = {}
        unreleased = False
        for topic_id in dict.fromkeys([*self.target, *member.assigned]):
            wanted = self.target.get(topic_id, frozenset()) if self.is_subscribed(topic_id) else frozenset()
            current = member.assigned.get(topic_id, frozenset())
            kept = current & wanted
            mine = member.pending_revocation.get(topic_id, frozenset())
            free = frozenset(p for p in wanted - kept if self.partition_epoch(topic_id, p) == FREE or p in mine)
            unreleased = unreleased or len(free) < len(wanted - kept)
            for part, values in ((assigned, kept), (revoking, current - kept), (pending, free)):
                if values:
                    part[topic_id] = values

        if revoking and owns_any(self.owned, revoking):
            return replace(member.with_epoch(member_epoch), state=MemberState.UNREVOKED_PARTITIONS, assigned=assigned,
                           pending_revocation=revoking)
        for topic_id, numbers in pending.items():
            assigned[topic_id] = assigned.get(topic_id, frozenset()) | numbers
        state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
        return replace(member.with_epoch(self.target_epoch), state=state, assigned=assigned, pending_revocation={})
