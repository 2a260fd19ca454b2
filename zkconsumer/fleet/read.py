"""Reading groups from ZooKeeper into snapshot records: the I/O edge of ``zkconsumer snapshot``.

A group is read with the offset checker's reading (:func:`~zkconsumer.tools.offset_checker.read_group_state`:
registrations, topics, partitions, offset and owner znodes, kazoo's async calls within the group), so the snapshot
and ``groups describe`` see the same group the same way, and up to :data:`READS_IN_FLIGHT` groups are read at once
on the one session, their requests pipelined.

Consistent per group: the ``ids`` directory's child version is read before and after; when a member joined or left
in between, the group is read again (up to :data:`READ_ATTEMPTS` times in all), and a group that kept changing is
recorded with ``consistent: false``. An owner znode changing without a membership change (a rebalance that was
already under way) is not detected: the owners then belong to the previous or the next assignment, which the
analysis reports as a mismatch, as an operator would see it at that moment.

Where the offsets live: ``zookeeper`` when the group has at least one offset znode holding an offset (not -1),
otherwise ``none``; with a broker to ask (``bootstrap``), Kafka's ``__consumer_offsets`` is asked too (one
OffsetFetch per group) and the answer can be ``kafka`` or ``both``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from types import MappingProxyType

from kazoo.client import KazooClient

from zkconsumer.fleet.snapshot import CommittedOffset, GroupRecord, Malformed, Owner, Registration
from zkconsumer.group.registry import GroupNotFoundError
from zkconsumer.group.snapshot import GroupSnapshot
from zkconsumer.group.topic_count import TopicCount
from zkconsumer.tools.offset_checker import GroupOffsets, read_group_state
from zkconsumer.tools.offset_locations import location
from zkconsumer.zk import paths

READS_IN_FLIGHT = 16
KAFKA_TIMEOUT_S = 10.0  # for the broker's answer to a group's OffsetFetch
READ_ATTEMPTS = 3


def read_group_record(zk: KazooClient, group: str) -> GroupRecord | None:
    """The group as one record; ``None`` when it was deleted before it could be read."""
    ids_dir = paths.GroupDirs(group).registry_dir
    for attempt in range(1, READ_ATTEMPTS + 1):
        before = _child_version(zk, ids_dir)
        read_at = datetime.now(UTC)
        try:
            snapshot, offsets = read_group_state(zk, group)
        except GroupNotFoundError:
            return None
        consistent = _child_version(zk, ids_dir) == before
        if consistent or attempt == READ_ATTEMPTS:
            return group_record(snapshot, offsets, read_at, consistent)
    raise AssertionError("unreachable")


def group_record(snapshot: GroupSnapshot, offsets: GroupOffsets, read_at: datetime, consistent: bool,
                 ) -> GroupRecord:
    """The record of what was read. Pure."""
    topics = list(snapshot.topics)
    members = tuple(
        Registration(cid, tc.pattern, MappingProxyType(_subscription(tc)),
                     MappingProxyType(tc.streams_per_topic(topics, exclude_internal=True)))
        for cid, tc in sorted(snapshot.members.items())
    )
    committed = tuple(CommittedOffset(r.topic, r.partition, r.offset) for r in offsets.rows
                      if r.offset is not None)
    in_zookeeper = any(o.offset >= 0 for o in committed)
    return GroupRecord(
        group=snapshot.group,
        read_at=read_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        registered=offsets.members,
        members=members,
        partitions=MappingProxyType({t: len(ids) for t, ids in sorted(snapshot.partitions.items())}),
        owners=tuple(Owner(r.topic, r.partition, r.owner) for r in offsets.rows if r.owner is not None),
        offsets=committed,
        offsets_storage=location(in_zookeeper, False),
        malformed=tuple(Malformed(m.path, m.problem) for m in offsets.warnings),
        consistent=consistent,
    )


def with_kafka_storage(record: GroupRecord, in_kafka: bool) -> GroupRecord:
    """The record once Kafka was asked whether it holds offsets of the group. Pure."""
    from dataclasses import replace

    return replace(record, offsets_storage=location(record.offsets_storage == "zookeeper", in_kafka))


def read_fleet(zk: KazooClient, groups: Sequence[str], on_read: Callable[[int], None] = lambda n: None,
               ) -> Iterator[GroupRecord]:
    """Every group's record, in the order given (groups deleted meanwhile left out); ``on_read(n)`` after each."""
    if not groups:
        return
    with ThreadPoolExecutor(min(READS_IN_FLIGHT, len(groups)), thread_name_prefix="zkconsumer-snapshot") as pool:
        for done, record in enumerate(pool.map(lambda g: read_group_record(zk, g), groups), start=1):
            on_read(done)
            if record is not None:
                yield record


def read_snapshot(zk: KazooClient, groups: Sequence[str], bootstrap: str | None = None,
                  on_read: Callable[[int], None] = lambda n: None) -> Iterator[GroupRecord]:
    """:func:`read_fleet`, each record marked with whether Kafka holds offsets of its group when a broker is given
    (``zkconsumer snapshot --bootstrap-server``: :func:`with_kafka_storage`)."""
    kafka = None
    if bootstrap:
        from zkconsumer.kafka.group_offsets import GroupOffsetsClient

        kafka = GroupOffsetsClient(bootstrap, KAFKA_TIMEOUT_S)
    for record in read_fleet(zk, groups, on_read):
        if kafka is not None:
            answer = kafka.fetch(record.group)
            record = with_kafka_storage(record, any(o >= 0 for o in answer.offsets.values()))
        yield record


def _subscription(tc: TopicCount) -> dict[str, int]:
    if tc.filter is None:
        return dict(tc.topic_streams)
    return {tc.filter.regex: tc.num_streams}


def _child_version(zk: KazooClient, path: str) -> int | None:
    stat = zk.exists(path)
    return None if stat is None else stat.cversion
