"""One member's way from its current assignment to its target assignment, as Kafka's ``CurrentAssignmentBuilder``
reconciles it: a pure function of the member's reconciliation state, the group's target for it, who holds which
partition, and what the member reports owning.

The rule that keeps a partition from being owned twice: a member first gives up (revokes) what is no longer in its
target, staying at its epoch in UNREVOKED_PARTITIONS until it reports not owning them; only then does it move to the
target epoch, and of its new partitions it is given only those no other member holds (assigned or still to revoke);
the others it waits for in UNRELEASED_PARTITIONS, picking them up on a later heartbeat once they are free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.front.consumer_group_messages import NO_PARTITIONS, MemberState, Partitions

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
              owned: Partitions | None) -> Reconciliation:
    """The member's next reconciliation state (``CurrentAssignmentBuilder.build``)."""
    if member.state is MemberState.STABLE:
        if member.member_epoch == target_epoch:
            return member
        return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned)
    if member.state is MemberState.UNREVOKED_PARTITIONS:
        if owns_any(owned, member.pending_revocation):
            return member
        return _next(member, member.member_epoch + 1, target_epoch, target, partition_epoch, owned)
    return _next(member, member.member_epoch, target_epoch, target, partition_epoch, owned)


def _next(member: Reconciliation, member_epoch: int, target_epoch: int, target: Partitions,
          partition_epoch: PartitionEpoch, owned: Partitions | None) -> Reconciliation:
    """``computeNextAssignment``."""
    assigned: dict[Uuid, frozenset[int]] = {}
    revoking: dict[Uuid, frozenset[int]] = {}
    pending: dict[Uuid, frozenset[int]] = {}
    unreleased = False
    for topic_id in dict.fromkeys([*target, *member.assigned]):
        wanted = target.get(topic_id, frozenset())
        current = member.assigned.get(topic_id, frozenset())
        kept = current & wanted
        to_revoke = current - kept
        free = frozenset(p for p in wanted - kept if partition_epoch(topic_id, p) == FREE)
        unreleased = unreleased or len(free) < len(wanted - kept)
        for part, values in ((assigned, kept), (revoking, to_revoke), (pending, free)):
            if values:
                part[topic_id] = values

    if revoking and owns_any(owned, revoking):
        return replace(member.with_epoch(member_epoch), state=MemberState.UNREVOKED_PARTITIONS, assigned=assigned,
                       pending_revocation=revoking)
    for topic_id, numbers in pending.items():
        assigned[topic_id] = assigned.get(topic_id, frozenset()) | numbers
    state = MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE
    return replace(member.with_epoch(target_epoch), state=state, assigned=assigned, pending_revocation=NO_PARTITIONS)
