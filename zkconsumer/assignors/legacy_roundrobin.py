"""The legacy consumer's ``roundrobin`` strategy (``kafka.consumer.RoundRobinAssignor``, 0.10.0.1).

All partitions are sorted by the Java ``hashCode`` of their string form, a deliberate pseudo-random
order that spreads each topic over the threads, and dealt to the string-sorted threads in a circle.
0.10.0.1 only allows this when every consumer subscribes to the same topics with one stream count per
consumer, and fails the rebalance otherwise; we raise :class:`AssignmentError` naming the offenders.

Differences from Kafka, all in cases Kafka leaves to chance:

* Partitions with equal hashes are ordered by (topic, partition); Kafka's stable sort keeps the order of
  a Scala hash map of topics there.
* The relaxed rule of 0.10.2+ (KAFKA-2434: unsubscribed threads are skipped instead of failing) is not
  emulated: each 0.10.2 consumer deals only its own topics, so consumers with different subscriptions
  compute different, conflicting assignments, which no single global answer can reproduce.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from zkconsumer.assignors.java_hash import java_string_hash
from zkconsumer.assignors.legacy_threads import legacy_result, thread_layout
from zkconsumer.assignors.model import AssignmentError, AssignmentInput, AssignmentResult, Family
from zkconsumer.types import TopicPartition

# What TopicAndPartition.toString returned, and so what was hashed: "[topic,partition]" up to 0.11,
# "topic-partition" from 1.0 (TopicAndPartition became an alias of TopicPartition).
HashFormat = Literal["bracket", "dash"]
HASH_FORMATS: tuple[HashFormat, ...] = ("bracket", "dash")


@dataclass(frozen=True, slots=True)
class LegacyRoundRobinAssignor:
    hash_format: HashFormat = "bracket"
    name: str = "legacy-roundrobin"
    family: Family = "legacy"

    def assign(self, request: AssignmentInput) -> AssignmentResult:
        check_identical_subscriptions(request)
        layout = thread_layout(request)
        assignment: dict[str, list[TopicPartition]] = {}
        if not layout.threads_by_topic:
            return legacy_result(self.name, layout, assignment)
        threads = next(iter(layout.threads_by_topic.values()))
        ordered = hash_ordered_partitions(request, sorted(layout.threads_by_topic, key=layout.sort_key),
                                          self.hash_format)
        for index, tp in enumerate(ordered):
            assignment.setdefault(threads[index % len(threads)], []).append(tp)
        return legacy_result(self.name, layout, assignment)


def hash_ordered_partitions(
    request: AssignmentInput, topics: list[str], hash_format: HashFormat = "bracket"
) -> list[TopicPartition]:
    """Partitions of ``topics`` in ascending signed ``String.hashCode`` order of their string form."""
    keyed: list[tuple[int, int, int, str]] = []
    for rank, topic in enumerate(topics):
        if hash_format == "bracket":
            prefix, suffix = java_string_hash(f"[{topic},"), "]"
        else:
            prefix, suffix = java_string_hash(f"{topic}-"), ""
        for p in range(request.partition_count(topic)):
            keyed.append((java_string_hash(f"{p}{suffix}", prefix), rank, p, topic))
    keyed.sort()
    return [TopicPartition(topic, p) for _, _, p, topic in keyed]


def check_identical_subscriptions(request: AssignmentInput) -> None:
    """Kafka's ``require``: every topic must be consumed by exactly the same set of threads.

    That holds when each consumer with a subscription subscribes to all of the group's topics and uses
    one stream count for all of them; a consumer subscribing to nothing adds no thread anywhere and is
    allowed, as in Kafka.
    """
    all_topics = {t for m in request.members for t, n in m.stream_counts.items() if n > 0}
    problems = []
    for member in request.members:
        counts = {t: n for t, n in member.stream_counts.items() if n > 0}
        if not counts:
            continue
        missing = sorted(all_topics - counts.keys())
        if missing:
            problems.append(f"{member.member_id} does not subscribe to {', '.join(missing)}")
        if len(set(counts.values())) > 1:
            shown = ", ".join(f"{t}: {n}" for t, n in sorted(counts.items()))
            problems.append(f"{member.member_id} has different stream counts ({shown})")
    if problems:
        raise AssignmentError(
            "legacy-roundrobin needs every consumer to subscribe to the same topics with one stream count "
            "per consumer (Kafka 0.10.0.1 fails the rebalance otherwise): " + "; ".join(problems)
        )
