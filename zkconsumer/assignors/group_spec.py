"""What KIP-848's server-side assignors are given, in the coordinator's own terms, and the bridge from a
scenario to it.

A group coordinator calls :func:`~zkconsumer.assignors.consumer_uniform.uniform_assign` or
:func:`~zkconsumer.assignors.consumer_range.range_assign` with a :class:`GroupSpec` built from its
state: its members in the order its members map iterates, each with its subscribed topic ids and its
current target assignment in their sets' iteration order, and the partition count of every subscribed
topic. The helpers here compute those Java iteration orders from insertion orders, which is all a
coordinator (or a scenario) knows: :func:`members_map_order` for the members map,
:func:`subscribed_ids_order` for a subscription, :func:`target_from_record` for a target assignment as
its record lists it.

The scenario bridge (:func:`group_spec_of`) reads a member's ``owned`` as its current target
assignment, listed as the coordinator's target-assignment record lists it: topics in order of first
appearance, each topic's partitions in the order given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from zkconsumer.assignors.java_hash_map import (
    JavaHashMap,
    capacity_for_collection,
    integer_set_order,
    string_set_order,
)
from zkconsumer.assignors.model import AssignmentError, AssignmentInput, AssignmentResult, Family, modern_result
from zkconsumer.assignors.topic_ids import Uuid, compare_uuids, generated_topic_id, uuid_hash
from zkconsumer.types import TopicPartition

TopicAssignment = tuple[tuple[Uuid, tuple[int, ...]], ...]
"""A member's partitions per topic id, in the iteration order of its ``Map<Uuid, Set<Integer>>``."""

TargetAssignment = dict[str, dict[Uuid, frozenset[int]]]
"""The new target assignment: every member of the spec, each with its partitions per topic id."""


@dataclass(frozen=True, slots=True)
class SpecMember:
    """One member as ``GroupSpec.memberSubscription``/``memberAssignment`` show it to the assignor.

    ``subscription_size`` is what the subscription's ``size()`` reports: Kafka's ``TopicIds`` counts the
    subscribed names, resolvable or not, and a ``HashSet`` copied from it is sized by that count (``None``:
    as many as ``subscribed``).
    """

    member_id: str
    subscribed: tuple[Uuid, ...]
    target: TopicAssignment = ()
    instance_id: str | None = None
    subscription_size: int | None = None


@dataclass(frozen=True, slots=True)
class GroupSpec:
    """``members`` in ``GroupSpec.memberIds()`` order; ``partitions`` the count of every subscribed topic;
    ``homogeneous`` as the coordinator decides it, on topic names: every member subscribes to the same
    names (see :func:`is_homogeneous`)."""

    members: tuple[SpecMember, ...]
    partitions: Mapping[Uuid, int]
    homogeneous: bool

    def __post_init__(self) -> None:
        if not isinstance(self.partitions, MappingProxyType):
            object.__setattr__(self, "partitions", MappingProxyType(dict(self.partitions)))
        if not isinstance(self.members, tuple):
            object.__setattr__(self, "members", tuple(self.members))

    def partition_count(self, topic_id: Uuid) -> int:
        """Kafka fails the assignment when a subscribed topic has no metadata; so does this."""
        count = self.partitions.get(topic_id)
        if count is None:
            raise AssignmentError(f"members are subscribed to topic {topic_id} which has no metadata")
        return count


def is_homogeneous(subscriptions: Iterable[Iterable[str]]) -> bool:
    """``ModernGroup.subscriptionType``: every member subscribes to exactly the same topic names."""
    distinct = {frozenset(names) for names in subscriptions}
    return len(distinct) <= 1


def members_map_order(member_ids: Sequence[str]) -> list[str]:
    """Member ids in the order a ``new HashMap<>()`` filled in this order iterates them."""
    return string_set_order(member_ids, from_collection=False)


def subscribed_ids_order(topic_names: Sequence[str], topic_ids: Mapping[str, Uuid]) -> tuple[Uuid, ...]:
    """A member's subscribed topic ids in iteration order: its names are a ``new HashSet<>(list)`` in the
    order the member sent them, walked and resolved to ids, names without an id left out."""
    return tuple(topic_ids[name] for name in string_set_order(topic_names) if name in topic_ids)


def target_from_record(pairs: Sequence[tuple[Uuid, Sequence[int]]]) -> TopicAssignment:
    """``Assignment.fromRecord``: topic ids into a default ``HashMap`` in record order, each topic's
    partitions a ``new HashSet<>(list)``."""
    if len(pairs) == 1:  # one topic, one order: no map to build (a coordinator does this per member per target)
        topic_id, numbers = pairs[0]
        return ((topic_id, tuple(integer_set_order(numbers))),)
    topics = JavaHashMap[Uuid](uuid_hash, compare_uuids)
    partitions: dict[Uuid, Sequence[int]] = {}
    for topic_id, numbers in pairs:
        if topic_id in partitions:
            raise AssignmentError(f"topic {topic_id} appears twice in one target assignment")
        topics.put(topic_id)
        partitions[topic_id] = numbers
    return tuple((topic_id, tuple(integer_set_order(partitions[topic_id]))) for topic_id in topics.in_order())


def hash_set_order_of_ids(member: SpecMember) -> list[Uuid]:
    """``new HashSet<>(member's subscribed ids)``: the order the uniform assignor walks a homogeneous
    group's topics."""
    size = len(member.subscribed) if member.subscription_size is None else member.subscription_size
    capacity = capacity_for_collection(size)
    return JavaHashMap[Uuid](uuid_hash, compare_uuids, capacity).put_all(member.subscribed).in_order()


# -- the scenario bridge -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScenarioSpec:
    spec: GroupSpec
    topic_of: Mapping[Uuid, str]


def topic_ids_of(request: AssignmentInput) -> dict[str, Uuid]:
    """Every topic in the metadata with its id: the scenario's, else :func:`generated_topic_id`."""
    ids = {topic: request.topic_ids.get(topic) or generated_topic_id(topic) for topic in request.partitions}
    seen: dict[Uuid, str] = {}
    for topic, topic_id in ids.items():
        if topic_id in seen:
            raise AssignmentError(f"topics {seen[topic_id]!r} and {topic!r} have the same topic id {topic_id}")
        seen[topic_id] = topic
    return ids


def group_spec_of(request: AssignmentInput) -> ScenarioSpec:
    """The coordinator's view of a scenario: members entered into the members map in the order listed,
    ``owned`` as the current target assignment, topics with partitions resolved to their ids (Kafka has
    no topic without partitions, and a name it does not know resolves to no id)."""
    ids = {topic: uuid for topic, uuid in topic_ids_of(request).items() if request.partition_count(topic) > 0}
    holder: dict[TopicPartition, str] = {}
    by_id: dict[str, SpecMember] = {}
    for member in request.members:
        record: dict[Uuid, list[int]] = {}
        for tp in member.owned:
            if tp.topic not in ids or not 0 <= tp.partition < request.partition_count(tp.topic):
                continue
            if tp in holder:
                raise AssignmentError(
                    f"{tp} is in the target assignment of both {holder[tp]!r} and {member.member_id!r}: "
                    "a target assignment gives each partition to one member"
                )
            holder[tp] = member.member_id
            record.setdefault(ids[tp.topic], []).append(tp.partition)
        by_id[member.member_id] = SpecMember(
            member_id=member.member_id,
            subscribed=subscribed_ids_order(member.subscription, ids),
            target=target_from_record(list(record.items())),
            instance_id=member.group_instance_id,
            subscription_size=len(member.subscription),
        )
    order = members_map_order([m.member_id for m in request.members])
    spec = GroupSpec(
        members=tuple(by_id[member_id] for member_id in order),
        partitions={ids[topic]: request.partition_count(topic) for topic in ids},
        homogeneous=is_homogeneous(m.subscription for m in request.members),
    )
    return ScenarioSpec(spec, MappingProxyType({uuid: topic for topic, uuid in ids.items()}))


@dataclass(frozen=True, slots=True)
class ServerSideAssignor:
    """A server-side assignor behind the one :class:`~zkconsumer.assignors.model.Assignor` interface: the
    scenario read as the coordinator's state (:func:`group_spec_of`), ``target`` run on it, and the new
    target assignment given back in topic names, each member's partitions in (topic, partition) order."""

    name: str
    target: Callable[[GroupSpec], TargetAssignment]
    family: Family = "modern"

    def assign(self, request: AssignmentInput) -> AssignmentResult:
        scenario = group_spec_of(request)
        assignment = {
            member_id: sorted(
                TopicPartition(scenario.topic_of[topic_id], partition)
                for topic_id, partitions in topics.items()
                for partition in partitions
            )
            for member_id, topics in self.target(scenario.spec).items()
        }
        return modern_result(self.name, request.members, assignment)
