"""Dense integer ids for the partitions an assignment is about.

The sticky assignors shuffle tens of thousands of partitions; plain ints in lists and sets are several
times cheaper than hashing (topic, partition) objects at every step. Ids follow (topic, partition)
order with topics in Java string order, so sorting ids is sorting partitions the way Kafka's
``TopicPartition`` comparators do.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from zkconsumer.assignors.java_hash import java_sorted
from zkconsumer.assignors.model import AssignmentInput
from zkconsumer.types import TopicPartition


@dataclass(frozen=True, slots=True)
class PartitionSpace:
    topics: tuple[str, ...]
    base: dict[str, int]
    counts: dict[str, int]
    topic_index: list[int]
    number: list[int]
    _objects: list[TopicPartition | None] = field(default_factory=list, repr=False)

    @classmethod
    def of(cls, request: AssignmentInput) -> PartitionSpace:
        """Topics somebody subscribes to and that have partitions: Kafka's ``partitionsPerTopic``."""
        subscribed = {t for m in request.members for t in m.subscription}
        topics = tuple(java_sorted(t for t in subscribed if request.partition_count(t) > 0))
        base: dict[str, int] = {}
        counts: dict[str, int] = {}
        topic_index: list[int] = []
        number: list[int] = []
        for index, topic in enumerate(topics):
            count = request.partition_count(topic)
            base[topic] = len(number)
            counts[topic] = count
            topic_index.extend([index] * count)
            number.extend(range(count))
        return cls(topics, base, counts, topic_index, number, [None] * len(number))

    @property
    def size(self) -> int:
        return len(self.number)

    def ids_of_topic(self, index: int) -> range:
        topic = self.topics[index]
        return range(self.base[topic], self.base[topic] + self.counts[topic])

    def id_of(self, tp: TopicPartition) -> int | None:
        """The id of a partition, or ``None`` when its topic is not in play or the number is out of range."""
        start = self.base.get(tp.topic)
        if start is None or not 0 <= tp.partition < self.counts[tp.topic]:
            return None
        return start + tp.partition

    def partition(self, pid: int) -> TopicPartition:
        tp = self._objects[pid]
        if tp is None:
            tp = TopicPartition(self.topics[self.topic_index[pid]], self.number[pid])
            self._objects[pid] = tp
        return tp

    def partitions(self, pids: list[int]) -> list[TopicPartition]:
        return [self.partition(pid) for pid in pids]
