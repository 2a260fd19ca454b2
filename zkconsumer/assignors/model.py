"""The values every assignor takes and returns.

One input shape serves both families so that a single scenario can be run under the legacy (per thread)
and the modern (per member) assignors side by side: a member carries both the legacy static subscription
(``streams``) and the modern one (``topics``), and each family reads the one it understands, falling back
to the other exactly as the scenario format describes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal, Protocol, TypeVar

from zkconsumer.assignors.java_hash import java_key_for
from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.errors import UsageError
from zkconsumer.types import TopicPartition

Family = Literal["legacy", "modern"]

_EMPTY: Mapping = MappingProxyType({})


class AssignmentError(UsageError):
    """The input cannot be assigned by this strategy (Kafka would fail the rebalance too)."""


@dataclass(frozen=True, slots=True)
class Member:
    """One group member: a legacy consumer (whose threads get the work) or a modern consumer.

    ``topics``/``streams`` are ``None`` when the scenario did not give them, so that each family can tell
    "not given" (fall back to the other) from "subscribes to nothing".
    """

    member_id: str
    topics: tuple[str, ...] | None = None
    streams: Mapping[str, int] | None = None
    owned: tuple[TopicPartition, ...] = ()
    generation: int | None = None
    group_instance_id: str | None = None

    def __post_init__(self) -> None:
        if self.streams is not None and not isinstance(self.streams, MappingProxyType):
            object.__setattr__(self, "streams", MappingProxyType(dict(self.streams)))
        if self.topics is not None and not isinstance(self.topics, tuple):
            object.__setattr__(self, "topics", tuple(self.topics))
        if not isinstance(self.owned, tuple):
            object.__setattr__(self, "owned", tuple(self.owned))

    @property
    def subscription(self) -> tuple[str, ...]:
        """The modern subscription; a legacy-only member subscribes to the topics it has streams for."""
        if self.topics is not None:
            return self.topics
        if self.streams is not None:
            return tuple(self.streams)
        return ()

    @property
    def stream_counts(self) -> Mapping[str, int]:
        """The legacy static subscription; a modern-only member runs one stream per topic."""
        if self.streams is not None:
            return self.streams
        if self.topics is not None:
            return MappingProxyType(dict.fromkeys(self.topics, 1))
        return _EMPTY


@dataclass(frozen=True, slots=True)
class AssignmentInput:
    """Topic metadata plus the group's members, as the group leader sees them when it assigns.

    ``topic_ids`` (Kafka ``Uuid``s) matter only to the server-side assignors, which order topics by them;
    a topic without one gets a stable generated id (see ``assignors.topic_ids``).
    """

    partitions: Mapping[str, int]
    members: tuple[Member, ...]
    topic_ids: Mapping[str, Uuid] = field(default_factory=lambda: _EMPTY)

    def __post_init__(self) -> None:
        if not isinstance(self.partitions, MappingProxyType):
            object.__setattr__(self, "partitions", MappingProxyType(dict(self.partitions)))
        if not isinstance(self.topic_ids, MappingProxyType):
            object.__setattr__(self, "topic_ids", MappingProxyType(dict(self.topic_ids)))
        if not isinstance(self.members, tuple):
            object.__setattr__(self, "members", tuple(self.members))
        seen: set[str] = set()
        for member in self.members:
            if member.member_id in seen:
                raise AssignmentError(f"member {member.member_id!r} appears twice")
            seen.add(member.member_id)
        for topic, count in self.partitions.items():
            if count < 0:
                raise AssignmentError(f"topic {topic!r} has a negative partition count ({count})")

    def partition_count(self, topic: str) -> int:
        """Partitions of a topic; a topic missing from metadata has none, as in Kafka."""
        return self.partitions.get(topic, 0)


@dataclass(frozen=True, slots=True)
class AssignmentResult:
    """What one strategy decided.

    ``assignment`` maps every owner (a thread id for legacy strategies, a member id for modern ones) to
    its partitions in the order Kafka's assignor lists them; ``owner_member`` folds owners back into
    members. ``transferring`` maps each partition that changes hands and must first be revoked by a
    previous owner to its new owner; the cooperative assignor leaves those partitions out of
    ``assignment`` for this round.
    """

    strategy: str
    family: Family
    assignment: Mapping[str, tuple[TopicPartition, ...]]
    owner_member: Mapping[str, str]
    transferring: Mapping[TopicPartition, str] = field(default_factory=lambda: _EMPTY)

    def by_member(self, members: tuple[Member, ...]) -> dict[str, tuple[TopicPartition, ...]]:
        """Partitions per member (threads folded into their consumer), every member present."""
        folded: dict[str, list[TopicPartition]] = {m.member_id: [] for m in members}
        for owner, partitions in self.assignment.items():
            folded[self.owner_member[owner]].extend(partitions)
        return {member: tuple(sorted(parts)) for member, parts in folded.items()}


class Assignor(Protocol):
    """The one interface of every strategy, legacy or modern; implementations are pure."""

    @property
    def name(self) -> str: ...

    @property
    def family(self) -> Family: ...

    def assign(self, request: AssignmentInput) -> AssignmentResult: ...


def member_info_order(members: tuple[Member, ...]) -> list[Member]:
    """Kafka's ``MemberInfo`` order: static members by instance id first, then dynamic ones by member id.

    Range and round-robin deal partitions in this order, which is what keeps a static member's partitions
    stable across restarts that change its member id.
    """
    return static_first([(m.group_instance_id, m.member_id, m) for m in members])


T = TypeVar("T")


def static_first(members: Iterable[tuple[str | None, str, T]]) -> list[T]:
    """Members given as (instance id or ``None``, member id, member): static ones by instance id, then
    dynamic ones by member id, in Java string order. The client-side ``MemberInfo`` order and the server-side
    range assignor's member sort are both this."""
    entries = list(members)
    key = java_key_for([instance or member_id for instance, member_id, _ in entries])
    static = sorted((e for e in entries if e[0] is not None), key=lambda e: key(str(e[0])))
    dynamic = sorted((e for e in entries if e[0] is None), key=lambda e: key(e[1]))
    return [member for _, _, member in static + dynamic]


def subscriber_positions(ordered: list[Member]) -> dict[str, list[int]]:
    """Per topic, the positions in ``ordered`` of its subscribers (each topic once per member)."""
    positions: dict[str, list[int]] = {}
    for index, member in enumerate(ordered):
        for topic in dict.fromkeys(member.subscription):
            positions.setdefault(topic, []).append(index)
    return positions


def modern_result(
    strategy: str,
    members: tuple[Member, ...],
    assignment: Mapping[str, list[TopicPartition]] | Mapping[str, tuple[TopicPartition, ...]],
    transferring: Mapping[TopicPartition, str] = _EMPTY,
) -> AssignmentResult:
    """Package a per-member assignment; every member is an owner of its own, present even when idle."""
    return AssignmentResult(
        strategy=strategy,
        family="modern",
        assignment=MappingProxyType({m.member_id: tuple(assignment.get(m.member_id, ())) for m in members}),
        owner_member=MappingProxyType({m.member_id: m.member_id for m in members}),
        transferring=MappingProxyType(dict(transferring)),
    )
