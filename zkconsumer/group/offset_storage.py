"""Where a group's offsets go and come from: ``offsets.storage`` and ``dual.commit.enabled``, as Kafka 0.10.0.1's
``ZookeeperConsumerConnector`` combined its two stores.

* ``zookeeper``: the offset znodes only (:class:`~zkconsumer.group.offset_store.ZooKeeperOffsetStore`).
* ``kafka``: a commit goes to Kafka first (:class:`~zkconsumer.group.kafka_offset_store.KafkaOffsetStore`); with
  dual commit, then to ZooKeeper for each partition Kafka took, and only those: a partition Kafka did not take
  keeps its old offset in both stores. Offsets are read from Kafka; with dual commit they are the larger of
  ZooKeeper's and Kafka's for each partition, which is what makes a group safe while its members are bounced one by
  one from ZooKeeper storage to Kafka storage: a member still on ZooKeeper storage commits only to ZooKeeper, and a
  member on Kafka storage that takes over its partition starts from that newer offset.

With dual commit, a partition whose offset cannot be used in one store (a malformed znode, a malformed offset in
Kafka) starts from the other store's; it is left out only when neither has a usable one.

Every commit result lists, store by store and in the order written, what went where (:class:`StoreWrite`), so the
connector's offset events can say which store each one is about (their ``store`` field).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from zkconsumer.errors import ZkConsumerError
from zkconsumer.group.kafka_offset_store import KafkaOffsetStore
from zkconsumer.group.offset_store import ZooKeeperOffsetStore
from zkconsumer.group.snapshot import MalformedZnode
from zkconsumer.types import TopicPartition, sorted_partitions

ZOOKEEPER = "zookeeper"
KAFKA = "kafka"


class OffsetsCommitFailedError(ZkConsumerError):
    """Kafka did not take some offsets of an explicit commit; ``result`` says which, and what was written."""

    def __init__(self, message: str, result: StorageCommit) -> None:
        self.result = result
        super().__init__(message)


@dataclass(frozen=True)
class StoreWrite:
    """One store's part of a commit."""

    store: str  # ZOOKEEPER or KAFKA
    written: dict[TopicPartition, int] = field(default_factory=dict)
    #: not written because the store holds a higher offset someone else wrote: partition -> theirs
    kept_higher: dict[TopicPartition, int] = field(default_factory=dict)
    #: not taken by the store: partition -> why (Kafka only; ZooKeeper's failures raise)
    failed: dict[TopicPartition, str] = field(default_factory=dict)
    batches: int = 0  # ZooKeeper write requests; Kafka attempts
    error: str | None = None  # one line naming what failed


@dataclass(frozen=True)
class StorageCommit:
    writes: tuple[StoreWrite, ...]
    #: offset znodes that hold something else, never written over
    malformed: dict[TopicPartition, MalformedZnode] = field(default_factory=dict)

    @property
    def primary(self) -> StoreWrite:
        """The write to ``offsets.storage``: the first one."""
        return self.writes[0]

    @property
    def written(self) -> dict[TopicPartition, int]:
        return self.primary.written

    @property
    def kept_higher(self) -> dict[TopicPartition, int]:
        return self.primary.kept_higher

    @property
    def failed(self) -> dict[TopicPartition, str]:
        return self.primary.failed

    @property
    def batches(self) -> int:
        return sum(w.batches for w in self.writes if w.store == ZOOKEEPER)


@dataclass(frozen=True)
class StorageFetch:
    offsets: dict[TopicPartition, int]  # where consumption resumes; INVALID_OFFSET where none was committed
    #: offset znodes that hold something else (with Kafka storage and dual commit: read, reported, not needed)
    malformed: dict[TopicPartition, MalformedZnode] = field(default_factory=dict)
    #: partitions whose offset in Kafka cannot be one: partition -> why
    kafka_malformed: dict[TopicPartition, str] = field(default_factory=dict)
    #: each store's answer, when more than one was read (dual commit)
    zookeeper: dict[TopicPartition, int] | None = None
    kafka: dict[TopicPartition, int] | None = None


def dual_max(zookeeper: Mapping[TopicPartition, int], kafka: Mapping[TopicPartition, int],
             partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
    """Kafka 0.10's ``max(zkOffset, kafkaOffset)`` per partition (-1 = none); a partition usable in neither store
    is left out."""
    result = {}
    for tp in partitions:
        values = [v for v in (zookeeper.get(tp), kafka.get(tp)) if v is not None]
        if values:
            result[tp] = max(values)
    return result


class OffsetStorage:
    """The group's offsets in ``offsets.storage`` (and, with dual commit, ZooKeeper too)."""

    def __init__(self, zookeeper: ZooKeeperOffsetStore, kafka: KafkaOffsetStore | None = None,
                 dual_commit: bool = False) -> None:
        self.zookeeper = zookeeper
        self.kafka = kafka
        self.dual_commit = dual_commit and kafka is not None

    @property
    def storage(self) -> str:
        return ZOOKEEPER if self.kafka is None else KAFKA

    def fetch(self, partitions: Iterable[TopicPartition]) -> StorageFetch:
        asked = sorted_partitions(set(partitions))
        if self.kafka is None:
            zk = self.zookeeper.fetch(asked)
            return StorageFetch(dict(zk.offsets), dict(zk.malformed))
        kafka = self.kafka.fetch(asked)
        if not self.dual_commit:
            return StorageFetch(dict(kafka.offsets), kafka_malformed=dict(kafka.malformed))
        zk = self.zookeeper.fetch(asked)
        offsets = dual_max(zk.offsets, kafka.offsets, asked)
        return StorageFetch(offsets, dict(zk.malformed), dict(kafka.malformed), dict(zk.offsets), dict(kafka.offsets))

    def commit(self, offsets: Mapping[TopicPartition, int], retries: int = 0) -> StorageCommit:
        """Write ``offsets`` (``retries``: more attempts for what Kafka did not take; ZooKeeper needs none)."""
        if self.kafka is None:
            zk = self.zookeeper.commit(offsets)
            return StorageCommit((self._zookeeper_write(zk),), dict(zk.malformed))
        kafka = self.kafka.commit(offsets, retries)
        first = StoreWrite(KAFKA, dict(kafka.written), dict(kafka.kept_higher), dict(kafka.failed),
                           kafka.attempts, kafka.error)
        if not self.dual_commit:
            return StorageCommit((first,))
        # Only what Kafka took goes to ZooKeeper; an offset Kafka refused is not half-committed.
        zk = self.zookeeper.commit(kafka.written)
        return StorageCommit((first, self._zookeeper_write(zk)), dict(zk.malformed))

    @staticmethod
    def _zookeeper_write(result) -> StoreWrite:
        return StoreWrite(ZOOKEEPER, dict(result.written), dict(result.kept_higher),
                          batches=getattr(result, "batches", 0))
