"""KIP-848's server-side ``range`` assignor (``consumer-range``), as Kafka 4.x's group coordinator runs it
(``org.apache.kafka.coordinator.group.assignor.RangeAssignor``).

Members are sorted, static members first by instance id, then dynamic ones by member id (Java string
order), and each topic's partitions are cut into contiguous ranges over its subscribers in that order,
the first ``partitions % subscribers`` getting one more. A homogeneous group whose topics have equal
partition counts is therefore co-partitioned: a member gets the same partition numbers of every topic.
The current target assignment is ignored entirely: nothing is sticky except through the sort order,
which is why static members, whose instance ids survive restarts, keep their ranges. The hash order
of the coordinator's maps never reaches the result.
"""

from __future__ import annotations

from dataclasses import dataclass

from zkconsumer.assignors.group_spec import GroupSpec, SpecMember, TargetAssignment, group_spec_of, scenario_result
from zkconsumer.assignors.java_hash import java_key_for
from zkconsumer.assignors.model import AssignmentInput, AssignmentResult, Family
from zkconsumer.assignors.topic_ids import Uuid


@dataclass(frozen=True, slots=True)
class ConsumerRangeAssignor:
    name: str = "consumer-range"
    family: Family = "modern"

    def assign(self, request: AssignmentInput) -> AssignmentResult:
        scenario = group_spec_of(request)
        return scenario_result(self.name, request, scenario, range_assign(scenario.spec))


def range_assign(spec: GroupSpec) -> TargetAssignment:
    """The new target assignment of every member of ``spec`` (which ones is not a matter of map order)."""
    ordered = _sorted_members(spec.members)
    subscribers: dict[Uuid, list[str]] = {}
    for member in ordered:
        for topic_id in dict.fromkeys(member.subscribed):
            spec.partition_count(topic_id)
            subscribers.setdefault(topic_id, []).append(member.member_id)
    result: TargetAssignment = {m.member_id: {} for m in spec.members}
    for topic_id, members in subscribers.items():
        quota, extra = divmod(spec.partition_count(topic_id), len(members))
        start = 0
        for position, member_id in enumerate(members):
            end = start + quota + (position < extra)
            if end > start:
                result[member_id][topic_id] = frozenset(range(start, end))
            start = end
    return result


def _sorted_members(members: tuple[SpecMember, ...]) -> list[SpecMember]:
    key = java_key_for([m.instance_id or m.member_id for m in members])
    static = sorted((m for m in members if m.instance_id is not None), key=lambda m: key(str(m.instance_id)))
    dynamic = sorted((m for m in members if m.instance_id is None), key=lambda m: key(m.member_id))
    return static + dynamic
