"""Whose owned partitions still count, once conflicting claims are settled (``allSubscriptionsEqual``).

Members report what they owned and in which generation; two members of one generation claiming a
partition both lose it (it then counts as transferring), otherwise the higher generation keeps it.
Kafka visits members in ``HashMap`` order, which decides the outcome when three members claim one
partition, so that order is emulated here (see :mod:`zkconsumer.assignors.sticky` for the caveats).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from zkconsumer.assignors.java_hash import java_hashmap_order, java_key_for
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.assignors.partition_space import PartitionSpace

NO_GENERATION = -1


@dataclass(frozen=True, slots=True)
class Ownership:
    """Who still validly owns what once conflicting claims are settled (``allSubscriptionsEqual``)."""

    order: tuple[str, ...]
    owned: Mapping[str, list[int]]
    multiply_claimed: frozenset[int]
    all_equal: bool


def generation_of(member: Member) -> int:
    return NO_GENERATION if member.generation is None else member.generation


def hashmap_member_order(request: AssignmentInput) -> tuple[str, ...]:
    ids = [m.member_id for m in request.members]
    return tuple(java_hashmap_order(sorted(ids, key=java_key_for(ids))))


def resolve_ownership(request: AssignmentInput, space: PartitionSpace) -> Ownership:
    """Settle claims the way Kafka does, visiting members in ``HashMap`` order.

    Two members of the same generation claiming a partition both lose it (it is then "transferring");
    otherwise the higher generation keeps it. Visiting order matters when three members claim one
    partition, hence the emulated order.
    """
    members = {m.member_id: m for m in request.members}
    order = hashmap_member_order(request)
    first = set(request.members[0].subscription) if request.members else set()
    all_equal = all(set(m.subscription) == first for m in request.members)
    owned: dict[str, dict[int, None]] = {}
    claimant: dict[int, str] = {}
    multiply_claimed: set[int] = set()
    for member_id in order:
        member = members[member_id]
        generation = generation_of(member)
        mine: dict[int, None] = {}
        owned[member_id] = mine
        for tp in member.owned:
            pid = space.id_of(tp)
            if pid is None or pid in mine:
                continue
            other = claimant.get(pid)
            if other is None:
                mine[pid] = None
                claimant[pid] = member_id
                continue
            other_generation = generation_of(members[other])
            if generation == other_generation:
                multiply_claimed.add(pid)
                owned[other].pop(pid, None)
                claimant[pid] = member_id
            elif generation > other_generation:
                mine[pid] = None
                owned[other].pop(pid, None)
                claimant[pid] = member_id
    return Ownership(
        order=order,
        owned=MappingProxyType({m: list(parts) for m, parts in owned.items()}),
        multiply_claimed=frozenset(multiply_claimed),
        all_equal=all_equal,
    )
