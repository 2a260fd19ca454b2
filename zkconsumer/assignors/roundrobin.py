"""The modern client-side ``roundrobin`` assignor (``org.apache.kafka.clients.consumer.RoundRobinAssignor``).

Partitions of all subscribed topics (topics by name, partitions ascending) are dealt to the members in
``MemberInfo`` order by a circular iterator that skips members not subscribed to the partition's topic.
It ignores owned partitions and generations, as Kafka's does.
"""

from __future__ import annotations

from bisect import bisect_left
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
class RoundRobinAssignor:
    name: str = "roundrobin"
    family: Family = "modern"

    def assign(self, request: AssignmentInput) -> AssignmentResult:
        ordered = member_info_order(request.members)
        # Positions (in the circle) of each topic's subscribers: finding the next subscriber is then a
        # bisection instead of Kafka's step-by-step skipping, with the same result.
        positions = subscriber_positions(ordered)
        assignment: dict[str, list[TopicPartition]] = {}
        cursor = 0
        for topic in sorted(positions, key=java_key_for(positions)):
            candidates = positions[topic]
            for p in range(request.partition_count(topic)):
                at = bisect_left(candidates, cursor)
                index = candidates[at] if at < len(candidates) else candidates[0]
                assignment.setdefault(ordered[index].member_id, []).append(TopicPartition(topic, p))
                cursor = (index + 1) % len(ordered)
        return modern_result(self.name, request.members, assignment)
