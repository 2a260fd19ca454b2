"""The legacy consumer's default ``range`` strategy (``kafka.consumer.RangeAssignor``, 0.10.0.1).

Per topic, the partitions are cut into contiguous ranges over the string-sorted consumer threads, the
first ``P mod T`` threads getting one more; current ownership is never considered.
"""

from __future__ import annotations

from dataclasses import dataclass

from zkconsumer.assignors.legacy_threads import legacy_result, thread_layout
from zkconsumer.assignors.model import AssignmentInput, AssignmentResult, Family
from zkconsumer.types import TopicPartition


@dataclass(frozen=True, slots=True)
class LegacyRangeAssignor:
    name: str = "legacy-range"
    family: Family = "legacy"

    def assign(self, request: AssignmentInput) -> AssignmentResult:
        layout = thread_layout(request)
        assignment: dict[str, list[TopicPartition]] = {}
        for topic in sorted(layout.threads_by_topic, key=layout.sort_key):
            threads = layout.threads_by_topic[topic]
            count = request.partition_count(topic)
            per_thread, extra = divmod(count, len(threads))
            start = 0
            for index, thread in enumerate(threads):
                size = per_thread + (1 if index < extra else 0)
                if size:
                    assignment.setdefault(thread, []).extend(
                        TopicPartition(topic, p) for p in range(start, start + size)
                    )
                start += size
        return legacy_result(self.name, layout, assignment)
