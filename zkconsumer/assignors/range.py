"""The modern client-side ``range`` assignor (``org.apache.kafka.clients.consumer.RangeAssignor``).

Per topic, contiguous ranges over that topic's subscribers in ``MemberInfo`` order, the first
``P mod C`` of them getting one more. It ignores owned partitions and generations, as Kafka's does, and
so is balanced per topic rather than over the group.

Difference from Kafka: the rack-aware variant (KIP-881, used only when consumers set ``client.rack`` and
replicas sit on a subset of racks) is not modelled; scenarios carry no racks, which is the case where
Kafka runs exactly this code. Each member's list is in topic name order where Kafka's follows its
``HashMap`` of topics: the same partitions, possibly listed in another order.
"""

from __future__ import annotations

from dataclasses import dataclass

from zkconsumer.assignors.java_hash import java_key_for
from zkconsumer.assignors.model import (
    AssignmentInput,
    AssignmentResult,
    Family,
    member_info_order,
    modern_result,
    subscriber_positions,
)
from zkconsumer.types import TopicPartition


@dataclass(frozen=True, slots=True)
class RangeAssignor:
    name: str = "range"
    family: Family = "modern"

    def assign(self, request: AssignmentInput) -> AssignmentResult:
        ordered = member_info_order(request.members)
        subscribers = subscriber_positions(ordered)
        assignment: dict[str, list[TopicPartition]] = {}
        for topic in sorted(subscribers, key=java_key_for(subscribers)):
            count = request.partition_count(topic)
            consumers = [ordered[i].member_id for i in subscribers[topic]]
            per_member, extra = divmod(count, len(consumers))
            start = 0
            for index, member_id in enumerate(consumers):
                size = per_member + (1 if index < extra else 0)
                assignment.setdefault(member_id, []).extend(
                    TopicPartition(topic, p) for p in range(start, start + size)
                )
                start += size
        return modern_result(self.name, request.members, assignment)
