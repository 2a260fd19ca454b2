"""``zkconsumer offsets migrate``: copy a group's committed offsets from ZooKeeper to Kafka or back.

The documented migration (``offsets.storage=kafka`` with dual commit, two rolling bounces) moves a running group's
offsets by committing them; this is for the other cases: a group that is stopped, whose offsets must be in the other
store before its consumers start (a rollback from Kafka to ZooKeeper, the ``kafka-consumer-groups.sh
--reset-offsets --from-file`` step of the two-step migration).

:func:`plan_migration` is pure: for every partition the source store has an offset for, what the target holds and
what will happen (:class:`MigrationRow`). Offsets never move backwards by accident: a partition whose target offset
is already higher than the source's is left alone and reported (``keep``), unless ``force`` (``overwrite``). The I/O
around it reads the two stores (:func:`read_zookeeper_offsets`, :func:`read_kafka_offsets`), checks that nobody
consumes the group (:func:`live_consumers`) and writes: Kafka in one OffsetCommit (:func:`write_kafka`), ZooKeeper in
transactions under ``zookeeper.multi.max.bytes``' default, each write conditional on the version the plan read
(:func:`write_zookeeper`), so an offset some consumer committed after the plan was made is never overwritten.
:func:`migrate` runs them in order, and the command prints what it returns.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError, RolledBackError

from zkconsumer.errors import UsageError, ZkConsumerError
from zkconsumer.group.offset_store import offset_path, parse_offset
from zkconsumer.group.registry import live_members, require_group
from zkconsumer.group.snapshot import MalformedZnode
from zkconsumer.kafka.group_coordinator import describe_group, find_coordinator
from zkconsumer.kafka.group_offsets import GroupOffsetsClient
from zkconsumer.tools.export_zk_offsets import export_group
from zkconsumer.types import INVALID_OFFSET, TopicPartition
from zkconsumer.zk import paths
from zkconsumer.zk.batched_transaction import DEFAULT_MULTI_MAX_BYTES, Create, Op, SetData, commit_async, plan_for
from zkconsumer.zk.persistent import ensure_path

ZOOKEEPER = "zookeeper"
KAFKA = "kafka"
STORES = (ZOOKEEPER, KAFKA)

COPY = "copy"  # the target has no offset, or a lower one
UNCHANGED = "unchanged"  # the target already holds the source's offset
KEEP = "keep"  # the target is ahead (or holds something that is not an offset): left alone
OVERWRITE = "overwrite"  # the target is ahead, and --force writes the source's offset over it
SKIP = "skip"  # the source's offset cannot be copied (malformed)
WRITES = frozenset({COPY, OVERWRITE})

#: Kafka 0.10's rule for a legacy consumer's group id, which is also a znode name under /consumers.
_LEGACY_GROUP = re.compile(r"^[a-zA-Z0-9._-]+$")


class MigrationRefusedError(ZkConsumerError):
    """The group is being consumed (ZooKeeper members or a broker-side group), and ``--force`` was not given."""


class MigrationFailedError(ZkConsumerError):
    """A store did not take some of the offsets."""


@dataclass(frozen=True, slots=True)
class MigrationRow:
    topic: str
    partition: int
    source: int | None  # the offset to copy; None when it cannot be read as one
    target: int | None  # what the target holds now; None when nothing (or -1, "no offset")
    action: str
    note: str | None = None

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True)
class StoreOffsets:
    """One store's offsets of the group: usable ones, and those that are not offsets (partition -> why)."""

    offsets: dict[TopicPartition, int]
    malformed: dict[TopicPartition, str]
    #: ZooKeeper only: the znode version each offset was read at (-1: no znode), for conditional writes
    versions: dict[TopicPartition, int]


def check_store(name: str, what: str = "--to") -> str:
    if name not in STORES:
        raise UsageError(f"{what} {name!r} is not a store: use {' or '.join(STORES)}")
    return name


def check_legacy_group(group: str) -> str:
    """A group id both the broker (non-empty) and ZooKeeper (a znode name the legacy consumer allowed) accept."""
    if not group or group in (".", "..") or not _LEGACY_GROUP.match(group):
        raise UsageError(f"group id {group!r} is not valid for a ZooKeeper consumer group: it must be non-empty and "
                         f"use only a-z A-Z 0-9 . _ - (and not be '.' or '..')")
    return group


# --- the plan (pure) ------------------------------------------------------------------------------------


def plan_migration(source: StoreOffsets, target: StoreOffsets, force: bool = False) -> list[MigrationRow]:
    rows = []
    for tp in sorted(set(source.offsets) | set(source.malformed)):
        now = target.offsets.get(tp)
        now = None if now is None or now == INVALID_OFFSET else now
        if tp in source.malformed:
            rows.append(MigrationRow(tp.topic, tp.partition, None, now, SKIP, source.malformed[tp]))
            continue
        offset = source.offsets[tp]
        if offset == INVALID_OFFSET:
            rows.append(MigrationRow(tp.topic, tp.partition, None, now, SKIP, "no offset in the source"))
        elif tp in target.malformed:
            rows.append(MigrationRow(tp.topic, tp.partition, offset, None, OVERWRITE if force else KEEP,
                                     target.malformed[tp]))
        elif now is None or now < offset:
            rows.append(MigrationRow(tp.topic, tp.partition, offset, now, COPY))
        elif now == offset:
            rows.append(MigrationRow(tp.topic, tp.partition, offset, now, UNCHANGED))
        elif force:
            rows.append(MigrationRow(tp.topic, tp.partition, offset, now, OVERWRITE, "the target was ahead"))
        else:
            rows.append(MigrationRow(tp.topic, tp.partition, offset, now, KEEP,
                                     "the target is ahead; --force to overwrite"))
    return rows


def rows_json(rows: list[MigrationRow]) -> list[dict[str, Any]]:
    return [{"topic": r.topic, "partition": r.partition, "from": r.source, "to": r.target, "action": r.action,
             "note": r.note} for r in rows]


def format_plan(rows: list[MigrationRow], source: str, target: str) -> list[str]:
    form = "%-30s %-9s %-15s %-15s %-9s %s"
    lines = [form % ("TOPIC", "PARTITION", f"FROM ({source})", f"TO ({target})", "ACTION", "NOTE")]
    for r in rows:
        lines.append((form % (r.topic, r.partition, "-" if r.source is None else r.source,
                              "-" if r.target is None else r.target, r.action, r.note or "")).rstrip())
    return lines


# --- reading ------------------------------------------------------------------------------------------


def read_zookeeper_offsets(zk: KazooClient, group: str) -> StoreOffsets:
    """Every offset znode of the group (ExportZkOffsets' walk), with versions."""
    exported = export_group(zk, group)
    offsets = {TopicPartition(e.topic, e.partition): e.offset for e in exported.entries}
    malformed: dict[TopicPartition, str] = {}
    for bad in exported.skipped:
        parts = bad.path.rsplit("/", 2)
        if len(parts) == 3 and parts[2].isdigit():
            malformed[TopicPartition(parts[1], int(parts[2]))] = f"znode {bad.path} {bad.problem}"
    versions = read_zookeeper_versions(zk, group, list(offsets) + list(malformed)).versions
    return StoreOffsets(offsets, malformed, versions)


def read_zookeeper_versions(zk: KazooClient, group: str, partitions: list[TopicPartition]) -> StoreOffsets:
    """The offset znodes of these partitions, read in one round trip."""
    calls = {tp: zk.get_async(offset_path(group, tp)) for tp in partitions}
    offsets: dict[TopicPartition, int] = {}
    malformed: dict[TopicPartition, str] = {}
    versions: dict[TopicPartition, int] = {}
    for tp, call in calls.items():
        try:
            data, stat = call.get()
        except NoNodeError:
            versions[tp] = -1
            continue
        versions[tp] = stat.version
        value = parse_offset(offset_path(group, tp), data)
        if isinstance(value, MalformedZnode):
            malformed[tp] = f"znode {value.path} {value.problem}"
        else:
            offsets[tp] = value
    return StoreOffsets(offsets, malformed, versions)


def read_kafka_offsets(client: GroupOffsetsClient, group: str,
                       partitions: list[TopicPartition] | None = None) -> StoreOffsets:
    """The group's offsets in Kafka: every partition it has one for, or the given ones. A refused partition, or an
    offset that cannot be one, is malformed (never copied, never written over without --force)."""
    answer = client.fetch(group, partitions)
    offsets: dict[TopicPartition, int] = {}
    malformed = {tp: f"Kafka answered {error}" for tp, error in answer.refused.items()}
    for tp, offset in answer.offsets.items():
        if offset < INVALID_OFFSET:
            malformed[tp] = f"Kafka holds offset {offset}, not a position in a log"
        elif offset != INVALID_OFFSET or partitions is not None:
            offsets[tp] = offset
    return StoreOffsets(offsets, malformed, {})


def live_consumers(zk: KazooClient, bootstrap: str, group: str, timeout: float) -> list[str]:
    """Who consumes the group now: its members registered in ZooKeeper, and a broker-side group that is not empty
    (a modern consumer with the same group id); one sentence each."""
    found = []
    members = live_members(zk, group)
    if members:
        shown = ", ".join(members[:3]) + (", ..." if len(members) > 3 else "")
        found.append(f"{len(members)} member{'s' if len(members) != 1 else ''} registered in "
                     f"{paths.GroupDirs(group).registry_dir} ({shown})")
    described = describe_group(find_coordinator(bootstrap, group, timeout), group, timeout)
    if described.members or described.state not in ("Empty", "Dead", ""):
        found.append(f"a broker-side group in state {described.state} with {len(described.members)} member"
                     f"{'s' if len(described.members) != 1 else ''}")
    return found


# --- writing ------------------------------------------------------------------------------------------


def write_kafka(client: GroupOffsetsClient, group: str, rows: list[MigrationRow]) -> int:
    """One OffsetCommit of every row to write; raises naming the partitions Kafka did not take."""
    offsets = {r.topic_partition: r.source for r in rows if r.action in WRITES and r.source is not None}
    answer = client.commit(group, offsets)
    if answer.refused:
        shown = "; ".join(f"{tp}: {error}" for tp, error in sorted(answer.refused.items()))
        raise MigrationFailedError(f"Kafka did not take {len(answer.refused)} of {len(offsets)} offsets of group "
                                   f"{group} ({shown}); the {len(answer.committed)} others were committed")
    return len(answer.committed)


def write_zookeeper(zk: KazooClient, group: str, rows: list[MigrationRow], versions: Mapping[TopicPartition, int],
                    max_bytes: int = DEFAULT_MULTI_MAX_BYTES) -> int:
    """The rows to write, in transactions of at most ``max_bytes``, each write conditional on the version planned
    with (a znode created or changed since makes that transaction fail whole, naming it)."""
    ops: list[Op] = []
    for r in rows:
        if r.action not in WRITES or r.source is None:
            continue
        path = offset_path(group, r.topic_partition)
        version = versions.get(r.topic_partition, -1)
        value = str(r.source).encode()
        ops.append(Create(path, value) if version < 0 else SetData(path, value, version))
    for topic in sorted({r.topic for r in rows if r.action in WRITES}):
        ensure_path(zk, paths.GroupTopicDirs(group, topic).offset_dir)  # parents a transaction cannot create
    written = 0
    for batch in plan_for(zk, ops, max_bytes):
        results = commit_async(zk, batch).get()
        problems = [(op, r) for op, r in zip(batch, results, strict=False)
                    if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
        if problems:
            op, error = problems[0]
            raise MigrationFailedError(
                f"ZooKeeper refused {op.path} ({type(error).__name__}: it changed since the plan was read?); "
                f"that transaction of {len(batch)} offsets was not written, {written} earlier ones were")
        written += len(batch)
    return written


# --- the migration, in order --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Migration:
    """What :func:`migrate` did: the plan's rows, who consumes the group (one sentence each), whether that refused the
    migration, and how many offsets it wrote."""

    group: str
    source: str
    target: str
    rows: list[MigrationRow]
    consumers: list[str]
    refused: bool
    written: int


def migrate(zk: KazooClient, client: GroupOffsetsClient, bootstrap: str, group: str, target: str, *, force: bool,
            dry_run: bool, timeout: float,
            consumed: Callable[[str, bool], None] = lambda _who, _refused: None) -> Migration:
    """1. read the source store and what the target holds for the same partitions; 2. plan; 3. find who consumes the
    group (which refuses the migration without ``force``), each told to ``consumed`` with whether it refused, before
    anything is written; 4. write, unless refused or a dry run. ``group`` and ``target`` are checked
    (:func:`check_legacy_group`, :func:`check_store`); a group read from ZooKeeper must exist there."""
    source = ZOOKEEPER if target == KAFKA else KAFKA
    if source == ZOOKEEPER:
        require_group(zk, group)
        from_store = read_zookeeper_offsets(zk, group)
        to_store = read_kafka_offsets(client, group, sorted(from_store.offsets))
    else:
        from_store = read_kafka_offsets(client, group)
        to_store = read_zookeeper_versions(zk, group, sorted(from_store.offsets))
    rows = plan_migration(from_store, to_store, force=force)
    consumers = live_consumers(zk, bootstrap, group, timeout)
    refused = bool(consumers) and not force and not dry_run
    for who in consumers:
        consumed(who, refused)
    written = 0
    if not refused and not dry_run:
        written = (write_kafka(client, group, rows) if target == KAFKA
                   else write_zookeeper(zk, group, rows, to_store.versions))
    return Migration(group, source, target, rows, consumers, refused, written)
