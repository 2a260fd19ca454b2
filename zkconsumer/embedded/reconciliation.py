"""ZooKeeper and the embedded broker made to agree when ``zkconsumer local up`` starts them again.

ZooKeeper keeps its data directory across ``local down`` / ``local up``; the embedded broker (Tansu on memory
storage) starts empty. Left alone, ZooKeeper would go on listing topics the broker no longer has, with a leader, and
the groups' committed offsets would point past the end of logs that are now empty, so their consumers would wait
for offsets that will not come back for a long time.

ZooKeeper is the source of truth, as in Kafka 0.10, whose controller created on the brokers the topics recorded in
``/brokers/topics``. So before the bridge starts, every topic ZooKeeper records that the broker lacks is created in
the broker with the same partition count (empty logs; one replica, the embedded broker being one node); a topic
marked for deletion (``/admin/delete_topics``) or internal to the broker (``__consumer_offsets``...) is left
alone. The groups' committed offsets (``/consumers/<g>/offsets``) are kept, never rewritten: an offset past the
end of its log is reported, so the operator knows which consumers will reset by ``auto.offset.reset``.

The plan (:func:`topics_to_recreate`, :func:`offsets_past_end`) is pure; :func:`reconcile` reads ZooKeeper, asks
the broker and creates the topics.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from kazoo.client import KazooClient

from zkconsumer.errors import ZkConsumerError, ZnodeFormatError
from zkconsumer.group.offset_store import offset_path, parse_offset
from zkconsumer.group.registry import list_groups
from zkconsumer.kafka.log_end_offsets import fetch_log_end_offsets
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.kafka.topics import create_topic
from zkconsumer.types import TopicPartition
from zkconsumer.zk import cluster, paths
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.reads import children, pipelined_get

#: topics a broker makes for itself (Kafka's internal topics start so); creating one by hand would be wrong
INTERNAL_PREFIX = "__"
#: how many topics or groups ``local up``'s line names before it only counts the rest
LISTED = 8


@dataclass(frozen=True, order=True)
class RecordedTopic:
    """A topic as ZooKeeper records it: its name and partition count."""

    name: str
    partitions: int


@dataclass(frozen=True, order=True)
class OffsetPastEnd:
    """A group's committed offset beyond the end of its partition's log."""

    group: str
    topic: str
    partition: int
    offset: int
    log_end: int

    def __str__(self) -> str:
        return f"{self.group} {self.topic}-{self.partition} at {self.offset}, log end {self.log_end}"


@dataclass(frozen=True)
class Reconciliation:
    """What ``local up`` did to make ZooKeeper and the broker agree, and what it found and left as it was."""

    recreated: tuple[RecordedTopic, ...] = ()
    #: committed offsets past their log's end, by group, topic and partition
    past_end: tuple[OffsetPastEnd, ...] = ()
    #: topics recorded in ZooKeeper and not created in the broker, each with why
    skipped: tuple[str, ...] = ()

    def summary(self) -> str | None:
        """One line for the operator, or None when ZooKeeper and the broker agreed already."""
        parts = []
        if self.recreated:
            topics = _listed([f"{t.name} ({t.partitions} partition{_s(t.partitions)})" for t in self.recreated])
            parts.append(f"recreated {len(self.recreated)} topic{_s(len(self.recreated))} ZooKeeper records, with "
                         f"empty logs: {topics}")
        if self.skipped:
            parts.append(f"not recreated: {'; '.join(self.skipped)}")
        if self.past_end:
            groups = sorted({o.group for o in self.past_end})
            parts.append(f"{len(self.past_end)} committed offset{_s(len(self.past_end))} past the log end, kept "
                         f"(a consumer resets by auto.offset.reset; `zkconsumer groups describe --group G` flags "
                         f"them): group{_s(len(groups))} {_listed(groups)}")
        return "; ".join(parts) or None


def _s(count: int) -> str:
    return "" if count == 1 else "s"


def _listed(names: list[str]) -> str:
    """The names, the first :data:`LISTED` of them and how many more: the line stays one line to read."""
    more = f", ... ({len(names) - LISTED} more)" if len(names) > LISTED else ""
    return ", ".join(names[:LISTED]) + more


def topics_to_recreate(recorded: Mapping[str, int], in_broker: Collection[str],
                       marked_for_deletion: Collection[str] = ()) -> list[RecordedTopic]:
    """The topics ZooKeeper records (name -> partition count) that the broker lacks and should have, by name."""
    return [RecordedTopic(name, count) for name, count in sorted(recorded.items())
            if name not in in_broker and name not in marked_for_deletion and not name.startswith(INTERNAL_PREFIX)
            and count > 0]


def offsets_past_end(committed: Mapping[tuple[str, TopicPartition], int],
                     ends: Mapping[TopicPartition, int]) -> tuple[OffsetPastEnd, ...]:
    """Each committed offset (``(group, partition)`` -> offset) beyond its partition's known end; a partition whose
    end is unknown is not judged."""
    found = [OffsetPastEnd(group, tp.topic, tp.partition, offset, ends[tp])
             for (group, tp), offset in committed.items() if tp in ends and offset > ends[tp]]
    return tuple(sorted(found))


def read_recorded_topics(zk: KazooClient) -> tuple[dict[str, int], list[str]]:
    """Each topic of ``/brokers/topics`` with its partition count, and a reason for each one that cannot be read."""
    recorded: dict[str, int] = {}
    unreadable: list[str] = []
    for name in cluster.read_topic_names(zk):
        try:
            recorded[name] = len(cluster.read_topic(zk, name).partitions)
        except ZnodeFormatError as exc:
            unreadable.append(f"{name} ({exc.path} {exc.problem})")
    return recorded, unreadable


def read_committed_offsets(zk: KazooClient, topics: Collection[str]) -> dict[tuple[str, TopicPartition], int]:
    """Every group's offset znode for ``topics``, read pipelined; a znode that is not an offset is left out."""
    wanted: dict[tuple[str, TopicPartition], str] = {}
    for group in list_groups(zk):
        for topic in children(zk, paths.GroupDirs(group).offsets_dir):
            if topic not in topics:
                continue
            for partition in children(zk, paths.GroupTopicDirs(group, topic).offset_dir):
                if partition.isdigit():
                    key = (group, TopicPartition(topic, int(partition)))
                    wanted[key] = offset_path(*key)
    committed: dict[tuple[str, TopicPartition], int] = {}
    for key, got in pipelined_get(zk, wanted.items()).items():
        offset = parse_offset(wanted[key], None if got is None else got[0])
        if isinstance(offset, int) and offset >= 0:
            committed[key] = offset
    return committed


def reconcile(zookeeper_connect: str, bootstrap: str, timeout: float = 10.0) -> Reconciliation:
    """Create in the broker at ``bootstrap`` the topics ZooKeeper records and it lacks, then find the committed
    offsets past their log's end."""
    admin = admin_client(bootstrap)
    with zookeeper(zookeeper_connect, quiet=True) as zk:
        recorded, skipped = read_recorded_topics(zk)
        snapshot = fetch_metadata(admin, bootstrap, timeout)
        recreated = []
        for topic in topics_to_recreate(recorded, set(snapshot.topics) | snapshot.unsettled_topics,
                                        children(zk, paths.DELETE_TOPICS_PATH)):
            try:
                create_topic(bootstrap, topic.name, topic.partitions, timeout=timeout)
            except ZkConsumerError as exc:
                skipped.append(f"{topic.name} ({exc})")
                continue
            recreated.append(topic)
        committed = read_committed_offsets(zk, recorded)
    ends = fetch_log_end_offsets(bootstrap, sorted({tp for _, tp in committed}), timeout=timeout).offsets
    return Reconciliation(tuple(recreated), offsets_past_end(committed, ends), tuple(skipped))
