"""The modern ``cooperative-sticky`` assignor and the two-phase rebalance it drives.

Same target as ``sticky``, but a partition that must change hands is left out of the new owner's list
for this round (Kafka's ``adjustAssignment``): its old owner sees it missing, revokes it and rejoins, and
the follow-up rebalance hands it over. So no partition is ever revoked by one member and assigned to
another in the same round, which is what lets every other partition keep flowing during a rebalance.
:func:`cooperative_rounds` plays those rounds out, the way ``CooperativeStickyAssignorTest`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from zkconsumer.assignors.model import AssignmentInput, AssignmentResult, Family, modern_result
from zkconsumer.assignors.sticky import sticky_target
from zkconsumer.assignors.sticky_ownership import generation_of
from zkconsumer.types import TopicPartition

# Kafka's own tests accept up to four follow-up rebalances; one is what the algorithm needs.
MAX_ROUNDS = 5


@dataclass(frozen=True, slots=True)
class CooperativeStickyAssignor:
    name: str = "cooperative-sticky"
    family: Family = "modern"

    def assign(self, request: AssignmentInput) -> AssignmentResult:
        assignment, transferring = sticky_target(request)
        withheld = {
            member: tuple(tp for tp in partitions if transferring.get(tp) != member)
            for member, partitions in assignment.items()
        }
        return modern_result(self.name, request.members, withheld, transferring)


@dataclass(frozen=True, slots=True)
class CooperativeRound:
    """One rebalance of the cooperative protocol, as the members experience it."""

    assignment: AssignmentResult
    revoked: tuple[tuple[TopicPartition, str], ...]
    added: tuple[tuple[TopicPartition, str], ...]


def cooperative_rounds(request: AssignmentInput, max_rounds: int = MAX_ROUNDS) -> tuple[CooperativeRound, ...]:
    """Rebalance until nobody has to revoke anything; each member then reports what it was given."""
    assignor = CooperativeStickyAssignor()
    rounds: list[CooperativeRound] = []
    current = request
    for _ in range(max_rounds):
        result = assignor.assign(current)
        revoked: list[tuple[TopicPartition, str]] = []
        added: list[tuple[TopicPartition, str]] = []
        for member in current.members:
            owned = set(member.owned)
            mine = result.assignment[member.member_id]
            revoked.extend((tp, member.member_id) for tp in sorted(owned.difference(mine)))
            added.extend((tp, member.member_id) for tp in sorted(set(mine) - owned))
        rounds.append(CooperativeRound(result, tuple(sorted(revoked)), tuple(sorted(added))))
        if not revoked:
            break
        generation = max(generation_of(m) for m in current.members) + 1
        current = replace(
            current,
            members=tuple(
                replace(m, owned=result.assignment[m.member_id], generation=generation) for m in current.members
            ),
        )
    return tuple(rounds)
