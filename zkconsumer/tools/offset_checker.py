"""Kafka's ``ConsumerOffsetChecker``: each partition of a group's topics with its committed offset, log size, lag
and owner.

Read from ZooKeeper (``read_group_offsets``), completed with the brokers' log sizes (``with_log_sizes``, fed by
:mod:`zkconsumer.kafka.log_end_offsets`) and printed in the tool's format (``format_table``) or as plain data
(``json_rows``). Only the first does I/O, and what the znodes it read mean (``group_partitions``, ``group_offsets``)
is pure. The Spark table of every group (:mod:`zkconsumer.spark.groups_source`) reads each group with
``read_group_offsets``, asks ``read_log_sizes`` once for all its groups' partitions and completes the rows with
``with_log_sizes``, so the table and ``groups describe`` agree.

The topics are those the group's members subscribe to (wildcards expanded against ``/brokers/topics``) plus
those it has offsets or owners for, so a group whose members all left still shows what it committed; 0.8.2's
tool listed only the owned topics, 0.8.0's only the committed ones. Partitions come from ``/brokers/topics/<t>``;
for a topic missing there (deleted), from the group's own offset and owner znodes, with a warning.

Nothing a znode holds fails the report: a registration, topic or offset znode in the wrong format is returned in
``warnings`` by path and its value shown as unknown. A committed offset past the end of its log (a negative lag: the
log is shorter than what the group consumed) is never shown bare: ``(past end)`` beside the lag, and one warning
naming every such partition (:func:`past_end_warning`).

``offsets_storage`` (``groups describe --offsets-storage``) says which store's offsets to show: ``zookeeper`` (the
tool's own), ``kafka`` (the group's offsets in ``__consumer_offsets``, for a group on ``offsets.storage=kafka``),
or ``both``, each row then carrying the Kafka offset and its lag beside ZooKeeper's (``kafka_offset``,
``kafka_lag``), which is how a migration with dual commit is watched. Partitions Kafka has an offset for are
reported even when ZooKeeper knows nothing of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.group.offset_store import offset_path, parse_offset
from zkconsumer.group.owner_claims import owner_path
from zkconsumer.group.registry import require_group
from zkconsumer.group.snapshot import GroupSnapshot, MalformedZnode, read_group_snapshot
from zkconsumer.kafka.group_offsets import GroupOffsetsClient, OffsetsUnavailableError
from zkconsumer.kafka.log_end_offsets import DEFAULT_TIMEOUT, LogEndOffsets, fetch_log_end_offsets
from zkconsumer.types import TopicPartition
from zkconsumer.zk import paths
from zkconsumer.zk.cluster import registered_bootstrap
from zkconsumer.zk.reads import children

ROW_FORMAT = "%-15s %-30s %-3s %-15s %-15s %-15s %s"
HEADER = ROW_FORMAT % ("Group", "Topic", "Pid", "Offset", "logSize", "Lag", "Owner")
#: ``--offsets-storage both``: ZooKeeper's offset and lag, then Kafka's
BOTH_ROW_FORMAT = "%-15s %-30s %-3s %-15s %-15s %-15s %-15s %-15s %s"
BOTH_HEADER = BOTH_ROW_FORMAT % ("Group", "Topic", "Pid", "Offset", "KafkaOffset", "logSize", "Lag", "KafkaLag",
                                 "Owner")
OFFSETS_STORAGES = ("zookeeper", "kafka", "both")
UNKNOWN = "unknown"
NO_OWNER = "none"
#: beside a negative lag: the committed offset is past the end of the log
PAST_END = "(past end)"
#: why no log size is known when neither a bootstrap server is given nor a broker registered in ZooKeeper
NO_BROKER = "no broker is registered in ZooKeeper"


@dataclass(frozen=True, slots=True)
class PartitionOffsetRow:
    group: str
    topic: str
    partition: int
    offset: int | None  # None: no offset znode, or one not holding a number; -1: "no offset" written by a tool
    log_size: int | None  # None: no broker told us
    owner: str | None  # the owner znode's data; None when nobody owns the partition
    kafka_offset: int | None = None  # the group's offset in Kafka (offsets storage "both"); None: none there

    @property
    def lag(self) -> int | None:
        return _lag(self.offset, self.log_size)

    @property
    def kafka_lag(self) -> int | None:
        return _lag(self.kafka_offset, self.log_size)

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


def _lag(offset: int | None, log_size: int | None) -> int | None:
    if offset is None or offset < 0 or log_size is None:
        return None
    return log_size - offset


@dataclass(frozen=True)
class GroupOffsets:
    group: str
    rows: tuple[PartitionOffsetRow, ...]  # topics sorted, partitions ascending
    warnings: tuple[MalformedZnode, ...] = ()
    #: the consumer ids registered in ``/consumers/<g>/ids`` when the group was read (a member whose registration
    #: is malformed is still registered: its session is alive), sorted
    members: tuple[str, ...] = ()


# --- reading ----------------------------------------------------------------------------------------


def read_group_offsets(zk: KazooClient, group: str) -> GroupOffsets:
    """The group's partitions with offsets and owners (log sizes unknown); raises GroupNotFoundError.

    The reading is here; what the znodes mean is in :func:`group_partitions` and :func:`group_offsets` (pure), where
    every case (a deleted topic, a malformed offset, a stranger owning a partition) is checked without a server."""
    return read_group_state(zk, group)[1]


def read_group_state(zk: KazooClient, group: str) -> tuple[GroupSnapshot, GroupOffsets]:
    """:func:`read_group_offsets` with the registrations it read on the way (``zkconsumer snapshot`` keeps both)."""
    require_group(zk, group)
    dirs = paths.GroupDirs(group)
    committed = children(zk, dirs.offsets_dir)
    owned = children(zk, dirs.owners_dir)
    snapshot = read_group_snapshot(zk, group, extra_topics=committed + owned)
    seen = {topic: _partitions_seen(zk, dirs.topic_dirs(topic)) for topic in deleted_topics(snapshot)}
    partitions, warnings = group_partitions(snapshot, seen)
    offset_calls = {tp: zk.get_async(offset_path(group, tp)) for tp in partitions}
    owner_calls = {tp: zk.get_async(owner_path(group, tp)) for tp in partitions}
    offsets = {tp: _data(call) for tp, call in offset_calls.items()}
    owners = {tp: _data(call) for tp, call in owner_calls.items()}
    return snapshot, group_offsets(snapshot, partitions, warnings, offsets, owners)


def deleted_topics(snapshot: GroupSnapshot) -> list[str]:
    """Topics the group has offsets or owners for that ``/brokers/topics`` no longer lists (a malformed topic
    znode is not deleted: it is reported as malformed). Pure."""
    malformed = {m.path for m in snapshot.malformed}
    present = set(snapshot.topics)
    return [t for t in sorted(snapshot.partitions) if t not in present and paths.topic_path(t) not in malformed]


def group_partitions(snapshot: GroupSnapshot, seen: Mapping[str, list[int]],
                     ) -> tuple[list[TopicPartition], list[MalformedZnode]]:
    """Every partition to report, topics sorted: from ``/brokers/topics``, or for a deleted topic from ``seen``
    (the partitions of its offset and owner znodes), with a warning. Pure."""
    warnings = list(snapshot.malformed)
    partitions: list[TopicPartition] = []
    for topic in sorted(snapshot.partitions):
        ids: Sequence[int] = snapshot.partitions[topic]
        if topic in seen:
            ids = seen[topic]
            if ids:
                warnings.append(MalformedZnode(
                    paths.topic_path(topic),
                    "does not exist (topic deleted?); partitions taken from the group's offset and owner znodes",
                ))
        partitions.extend(TopicPartition(topic, p) for p in ids)
    return partitions, warnings


def group_offsets(snapshot: GroupSnapshot, partitions: Sequence[TopicPartition], warnings: Sequence[MalformedZnode],
                  offsets: Mapping[TopicPartition, bytes | None],
                  owners: Mapping[TopicPartition, bytes | None]) -> GroupOffsets:
    """The rows from the offset and owner znodes' data (``None``: no znode); a malformed offset is unknown and
    reported. Pure."""
    group = snapshot.group
    found = list(warnings)
    rows = []
    for tp in partitions:
        offset: int | None = None
        data = offsets.get(tp)
        if data is not None:
            value = parse_offset(offset_path(group, tp), data)
            if isinstance(value, MalformedZnode):
                found.append(value)
            else:
                offset = value
        owner_data = owners.get(tp)
        owner = owner_data.decode("utf-8", "replace") if owner_data else None
        rows.append(PartitionOffsetRow(group, tp.topic, tp.partition, offset, None, owner))
    return GroupOffsets(group, tuple(rows), tuple(found), registered_members(snapshot))


def registered_members(snapshot: GroupSnapshot) -> tuple[str, ...]:
    """The ids registered when the snapshot was read: those it parsed and those whose registration is malformed
    (alive, just unreadable). Pure."""
    prefix = paths.GroupDirs(snapshot.group).registry_dir + "/"
    unreadable = {m.path[len(prefix):] for m in snapshot.malformed if m.path.startswith(prefix)}
    return tuple(sorted(set(snapshot.members) | unreadable))


def _data(call) -> bytes | None:
    try:
        return call.get()[0]
    except NoNodeError:
        return None


def _partitions_seen(zk: KazooClient, dirs: paths.GroupTopicDirs) -> list[int]:
    seen = set(children(zk, dirs.offset_dir)) | set(children(zk, dirs.owner_dir))
    return sorted(int(p) for p in seen if p.isdigit())


@dataclass(frozen=True)
class GroupDescription:
    """``groups describe`` in one call: the rows with log sizes, and every warning as a sentence."""

    offsets: GroupOffsets
    warnings: tuple[str, ...]


def describe_group(zk: KazooClient, group: str, bootstrap: str | None = None,
                   timeout: float = DEFAULT_TIMEOUT, offsets_storage: str = "zookeeper") -> GroupDescription:
    """Offsets and owners from ZooKeeper (and Kafka, per ``offsets_storage``), log sizes from ``bootstrap`` or else
    the brokers registered there. Kafka that does not answer is an error: the offsets asked for are unknown."""
    offsets = read_group_offsets(zk, group)
    warnings = [f"znode {problem.path} {problem.problem}" for problem in offsets.warnings]
    if offsets_storage != "zookeeper":
        kafka, bad = read_kafka_offsets(group, bootstrap or registered_bootstrap(zk), timeout)
        warnings += bad
        offsets = with_kafka_offsets(offsets, kafka, replace=offsets_storage == "kafka")
    if not offsets.rows:
        return GroupDescription(offsets, tuple(warnings))
    log_ends = read_log_sizes(zk, [r.topic_partition for r in offsets.rows], bootstrap, timeout)
    if log_ends.unavailable == NO_BROKER:
        warnings.append("no broker is registered in ZooKeeper and no --bootstrap-server was given; logSize unknown")
    elif log_ends.unavailable:
        warnings.append(f"logSize unknown: {log_ends.unavailable}")
    else:
        warnings += [f"logSize of [{tp.topic},{tp.partition}] unknown: {reason}"
                     for tp, reason in sorted(log_ends.unknown.items())]
    offsets = with_log_sizes(offsets, log_ends.offsets)
    past_end = past_end_warning(offsets.rows)
    return GroupDescription(offsets, tuple(warnings + ([past_end] if past_end else [])))


def past_end_warning(rows: Iterable[PartitionOffsetRow]) -> str | None:
    """One sentence naming every committed offset past its log's end (a negative lag), or None. Pure.

    Kafka's fetch answers such an offset with OFFSET_OUT_OF_RANGE and the consumer resets by ``auto.offset.reset``;
    a negative lag shown without a word would read as a consumer ahead of its log."""
    found = [f"[{r.topic},{r.partition}] {offset} > {r.log_size}{store}" for r in rows
             for offset, lag, store in ((r.offset, r.lag, ""), (r.kafka_offset, r.kafka_lag, " in Kafka"))
             if lag is not None and lag < 0]
    if not found:
        return None
    return (f"{len(found)} committed offset{'' if len(found) == 1 else 's'} past the log end (the log is shorter "
            f"than what the group consumed; a consumer resets by auto.offset.reset): {', '.join(found)}")


def read_log_sizes(zk: KazooClient, partitions: Iterable[TopicPartition], bootstrap: str | None = None,
                   timeout: float = DEFAULT_TIMEOUT) -> LogEndOffsets:
    """The log end of each partition, asked once however many groups' rows name it, of ``bootstrap`` or else the
    brokers registered in ZooKeeper (read after the offsets: an end older than the offsets would hide lag). With
    no broker at all, every partition is unknown and ``unavailable`` is :data:`NO_BROKER`."""
    wanted = sorted(set(partitions))
    if not wanted:
        return LogEndOffsets()
    bootstrap = bootstrap or registered_bootstrap(zk)
    if bootstrap is None:
        return LogEndOffsets(unknown=MappingProxyType(dict.fromkeys(wanted, NO_BROKER)), unavailable=NO_BROKER)
    return fetch_log_end_offsets(bootstrap, wanted, timeout=timeout)


def read_kafka_offsets(group: str, bootstrap: str | None, timeout: float) -> tuple[dict[TopicPartition, int],
                                                                                  list[str]]:
    """Every offset the group has in Kafka, and a warning for each that cannot be one (left out)."""
    if bootstrap is None:
        raise OffsetsUnavailableError("no broker is registered in ZooKeeper and no --bootstrap-server was given: "
                                      f"cannot read the offsets of group {group} in Kafka")
    answer = GroupOffsetsClient(bootstrap, timeout).fetch(group)
    offsets = {tp: o for tp, o in answer.offsets.items() if o >= 0}
    warnings = [f"Kafka holds offset {o} for [{tp.topic},{tp.partition}]: not an offset; shown as unknown"
                for tp, o in sorted(answer.offsets.items()) if o < -1]
    warnings += [f"Kafka refused the offset of [{tp.topic},{tp.partition}]: {error}"
                 for tp, error in sorted(answer.refused.items())]
    return offsets, warnings


# --- completing and showing (pure) ------------------------------------------------------------------


def with_kafka_offsets(offsets: GroupOffsets, kafka: Mapping[TopicPartition, int],
                       replace: bool = False) -> GroupOffsets:
    """Each row with the group's Kafka offset (rows added, in order, for partitions only Kafka has); ``replace``
    puts it in ``offset`` instead (the report of a group that stores its offsets in Kafka)."""
    known = {r.topic_partition for r in offsets.rows}
    extra = [PartitionOffsetRow(offsets.group, tp.topic, tp.partition, None, None, None)
             for tp in sorted(set(kafka) - known)]
    rows = sorted([*offsets.rows, *extra], key=lambda r: r.topic_partition)
    if replace:
        done = [dataclasses.replace(r, offset=kafka.get(r.topic_partition), kafka_offset=None) for r in rows]
    else:
        done = [dataclasses.replace(r, kafka_offset=kafka.get(r.topic_partition)) for r in rows]
    return dataclasses.replace(offsets, rows=tuple(done))



def with_log_sizes(offsets: GroupOffsets, log_sizes: Mapping[TopicPartition, int]) -> GroupOffsets:
    rows = tuple(dataclasses.replace(r, log_size=log_sizes.get(r.topic_partition)) for r in offsets.rows)
    return dataclasses.replace(offsets, rows=rows)


def _shown(value: int | None) -> str:
    return UNKNOWN if value is None else str(value)


def _shown_lag(lag: int | None) -> str:
    return f"{lag} {PAST_END}" if lag is not None and lag < 0 else _shown(lag)


def format_row(row: PartitionOffsetRow) -> str:
    return ROW_FORMAT % (row.group, row.topic, row.partition, _shown(row.offset), _shown(row.log_size),
                         _shown_lag(row.lag), NO_OWNER if row.owner is None else row.owner)


def format_both_row(row: PartitionOffsetRow) -> str:
    return BOTH_ROW_FORMAT % (row.group, row.topic, row.partition, _shown(row.offset), _shown(row.kafka_offset),
                              _shown(row.log_size), _shown_lag(row.lag), _shown_lag(row.kafka_lag),
                              NO_OWNER if row.owner is None else row.owner)


def format_table(rows: tuple[PartitionOffsetRow, ...] | list[PartitionOffsetRow],
                 offsets_storage: str = "zookeeper") -> list[str]:
    """The header and one line per partition, as ConsumerOffsetChecker printed them (with ``both``, Kafka's offset
    and lag beside ZooKeeper's)."""
    if offsets_storage == "both":
        return [BOTH_HEADER, *(format_both_row(r) for r in rows)]
    return [HEADER, *(format_row(r) for r in rows)]


def json_rows(rows: tuple[PartitionOffsetRow, ...] | list[PartitionOffsetRow],
              offsets_storage: str = "zookeeper") -> list[dict[str, Any]]:
    result = []
    for r in rows:
        row: dict[str, Any] = {"group": r.group, "topic": r.topic, "partition": r.partition, "offset": r.offset,
                               "log_size": r.log_size, "lag": r.lag, "owner": r.owner}
        if offsets_storage == "both":
            row.update(kafka_offset=r.kafka_offset, kafka_lag=r.kafka_lag)
        result.append(row)
    return result
