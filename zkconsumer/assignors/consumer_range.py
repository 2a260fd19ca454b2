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

from zkconsumer.assignors.group_spec import GroupSpec, TargetAssignment
from zkconsumer.assignors.model import static_first
from zkconsumer.assignors.topic_ids import Uuid


def range_assign(spec: GroupSpec) -> TargetAssignment:
    """The new target assignment of every member of ``spec`` (which ones is not a matter of map order)."""
    ordered = static_first((m.instance_id, m.member_id, m) for m in spec.members)
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
