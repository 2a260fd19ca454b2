"""Consumer threads of the legacy ZooKeeper consumer, the unit its assignors hand partitions to.

A legacy consumer registers a stream count per topic and thread ``<consumerIdString>-<n>`` consumes
stream ``n``; Kafka orders thread ids as plain strings (``ConsumerThreadId.compare``), so ``c-10`` comes
before ``c-2`` and a consumer with ten or more streams does not get contiguous ranges in numeric order.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from zkconsumer.assignors.java_hash import java_key_for
from zkconsumer.assignors.model import AssignmentInput, AssignmentResult
from zkconsumer.types import TopicPartition, thread_id


@dataclass(frozen=True, slots=True)
class ThreadLayout:
    """Every thread of the group and, per topic, its consumer threads in Kafka's order."""

    owner_member: Mapping[str, str]
    threads_by_topic: Mapping[str, tuple[str, ...]]
    sort_key: Callable[[str], str | bytes]


def thread_layout(request: AssignmentInput) -> ThreadLayout:
    owner_member: dict[str, str] = {}
    by_topic: dict[str, list[str]] = {}
    for member in request.members:
        for topic, count in member.stream_counts.items():
            if count <= 0:
                continue
            threads = [thread_id(member.member_id, n) for n in range(count)]
            by_topic.setdefault(topic, []).extend(threads)
            for thread in threads:
                owner_member[thread] = member.member_id
    key = java_key_for(list(owner_member) + list(by_topic))
    ordered_owners = sorted(owner_member, key=key)
    return ThreadLayout(
        owner_member=MappingProxyType({t: owner_member[t] for t in ordered_owners}),
        threads_by_topic=MappingProxyType({t: tuple(sorted(ts, key=key)) for t, ts in by_topic.items()}),
        sort_key=key,
    )


def legacy_result(
    strategy: str, layout: ThreadLayout, assignment: Mapping[str, list[TopicPartition]]
) -> AssignmentResult:
    """Every thread is an owner, present even when it gets nothing (its stream just blocks in Kafka)."""
    return AssignmentResult(
        strategy=strategy,
        family="legacy",
        assignment=MappingProxyType({t: tuple(assignment.get(t, ())) for t in layout.owner_member}),
        owner_member=layout.owner_member,
    )
