"""The modern ``sticky`` assignor (eager) and the logic it shares with ``cooperative-sticky``.

A port of Kafka 3.8+'s ``AbstractStickyAssignor``: claims of owned partitions are resolved by generation,
then, when every member subscribes to the same topics, the "constrained" builder keeps up to the quota
of each member's owned partitions and deals the rest round robin; otherwise the "general" builder
(:mod:`zkconsumer.assignors.sticky_general`) keeps everything still subscribed and rebalances.
The data structures are ours (dense partition ids, heaps); the decisions are Kafka's, including the
Java ``HashMap`` iteration order over member ids that decides which members keep the limited
"max quota" slots, so results match Kafka's list for list.

Differences from Kafka:

* Racks (KIP-881 rack-aware sticky assignment) are not modelled: scenarios carry no racks, which is the
  case where Kafka runs exactly this code.
* Within a ``HashMap`` bucket Kafka keeps the order in which the JoinGroup response listed members; we
  use member id order there (only members whose hashes collide in the table are affected).
* Kafka decides "all subscriptions are equal" by comparing every member with the first non-empty one,
  so a member subscribing to nothing that happens to come first is taken into the constrained builder
  and handed partitions it never subscribed to. We compare all subscriptions, so such a group takes the
  general path and every assignment stays valid.
* Owned partitions of topics that are no longer in play, numbers past the topic's partition count and
  repeated entries are dropped before anything else (Kafka trusts its members' lists).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from zkconsumer.assignors.java_hash import java_key_for
from zkconsumer.assignors.model import AssignmentInput, AssignmentResult, Family, modern_result
from zkconsumer.assignors.partition_space import PartitionSpace
from zkconsumer.assignors.sticky_general import general_assign
from zkconsumer.assignors.sticky_ownership import Ownership, resolve_ownership
from zkconsumer.types import TopicPartition


@dataclass(frozen=True, slots=True)
class StickyOutcome:
    """The sticky target assignment; ``transferring`` is ``None`` when the general builder ran, as in Kafka."""

    assignment: Mapping[str, tuple[TopicPartition, ...]]
    transferring: Mapping[TopicPartition, str] | None
    constrained: bool


def constrained_assign(
    space: PartitionSpace, ownership: Ownership, key: Callable[[str], str | bytes]
) -> tuple[dict[str, list[int]], dict[int, str]]:
    """``ConstrainedAssignmentBuilder``: everyone subscribes to everything, so quotas are global."""
    total = space.size
    consumers = len(ownership.order)
    min_quota, expected_over_min = divmod(total, consumers)
    max_quota = min_quota + (1 if expected_over_min else 0)
    over_min = 0
    topic_index, number = space.topic_index, space.number
    n_topics = len(space.topics)
    multi = ownership.multiply_claimed

    assignment: dict[str, list[int]] = {}
    assigned = bytearray(total)
    revoked: set[int] = set()
    under_min: list[str] = []
    exactly_min: list[str] = []

    for member_id in ownership.order:
        # Kept partitions are the first ones by (partition number, topic): KAFKA-16277 (3.8).
        mine = sorted(
            (pid for pid in ownership.owned[member_id] if pid not in multi),
            key=lambda pid: number[pid] * n_topics + topic_index[pid],
        )
        if len(mine) < min_quota:
            kept = mine
            under_min.append(member_id)
        elif len(mine) >= max_quota and over_min < expected_over_min:
            over_min += 1
            if over_min == expected_over_min:
                exactly_min.clear()
            kept = mine[:max_quota]
            revoked.update(mine[max_quota:])
        else:
            kept = mine[:min_quota]
            revoked.update(mine[min_quota:])
            if over_min < expected_over_min:
                exactly_min.append(member_id)
        assignment[member_id] = kept
        for pid in kept:
            assigned[pid] = 1

    under_min.sort(key=key)
    exactly_min.sort(key=key)
    waiting = deque(exactly_min)
    transferring: dict[int, str] = {}
    position = 0  # Kafka walks under_min with an iterator that removes members once they reach min quota
    for pid in (pid for pid in range(total) if not assigned[pid]):
        if position < len(under_min):
            member_id = under_min[position]
            position += 1
        elif under_min:
            member_id = under_min[0]
            position = 1
        elif waiting:
            member_id = waiting.popleft()
        else:
            raise AssertionError("sticky: no unfilled member left for an unassigned partition")
        mine = assignment[member_id]
        mine.append(pid)
        if pid in revoked or pid in multi:
            transferring[pid] = member_id
        if len(mine) == min_quota:
            position -= 1
            del under_min[position]
            waiting.append(member_id)
    return assignment, transferring


def sticky_assign(request: AssignmentInput) -> StickyOutcome:
    space = PartitionSpace.of(request)
    ownership = resolve_ownership(request, space)
    key = java_key_for([m.member_id for m in request.members])
    if not request.members:
        return StickyOutcome(MappingProxyType({}), MappingProxyType({}), True)
    if ownership.all_equal:
        assignment, moving = constrained_assign(space, ownership, key)
        transferring: Mapping[TopicPartition, str] | None = MappingProxyType(
            {space.partition(pid): member for pid, member in moving.items()}
        )
    else:
        assignment = general_assign(request, space, ownership, key)
        transferring = None
    return StickyOutcome(
        assignment=MappingProxyType(
            {m.member_id: tuple(space.partitions(assignment[m.member_id])) for m in request.members}
        ),
        transferring=transferring,
        constrained=ownership.all_equal,
    )


def sticky_target(request: AssignmentInput) -> tuple[Mapping[str, tuple[TopicPartition, ...]],
                                                      Mapping[TopicPartition, str]]:
    """The sticky assignment and its transfers, computed as ``added & revoked`` where Kafka leaves them null."""
    outcome = sticky_assign(request)
    transferring = outcome.transferring
    if transferring is None:
        transferring = added_and_revoked(request, outcome.assignment)
    return outcome.assignment, transferring


def added_and_revoked(
    request: AssignmentInput, assignment: Mapping[str, tuple[TopicPartition, ...]]
) -> dict[TopicPartition, str]:
    """Partitions newly given to one member while some member gives them up: they must wait a round."""
    added: dict[TopicPartition, str] = {}
    revoked: set[TopicPartition] = set()
    for member in request.members:
        owned = set(member.owned)
        mine = assignment.get(member.member_id, ())
        added.update((tp, member.member_id) for tp in mine if tp not in owned)
        revoked.update(owned.difference(mine))
    return {tp: owner for tp, owner in added.items() if tp in revoked}


@dataclass(frozen=True, slots=True)
class StickyAssignor:
    name: str = "sticky"
    family: Family = "modern"

    def assign(self, request: AssignmentInput) -> AssignmentResult:
        assignment, transferring = sticky_target(request)
        return modern_result(self.name, request.members, assignment, transferring)
