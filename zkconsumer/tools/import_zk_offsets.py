"""Kafka's ``ImportZkOffsets`` tool: write offset entries to their znodes, creating the missing ones with their parents.

Kafka's tool wrote line by line and printed and ignored each failure, so a bad run left a group half imported.
Here the entries come already checked (:func:`zkconsumer.tools.zk_offsets_file.parse_offsets_file`) and each group's
are written in one ZooKeeper transaction (several of ``max_ops`` each for a very large group, as one request
must stay under the server's ``jute.maxbuffer``): a group is imported entirely or, for that transaction, not at
all. A transaction that fails because a znode appeared or vanished between the read and the write is planned
again from what is there now.

Unlike Kafka's tool, the entries are checked against the cluster first (:func:`check_entries`): a topic ZooKeeper
does not know (no ``/brokers/topics/<topic>``), a partition the topic does not have, or an offset below -1 would give
the group an offset its consumers can never use, so they are refused unless forced. -1 stays accepted: it is
what the legacy consumer reads as "no offset" (it then resets by ``auto.offset.reset``). A ZooKeeper where no topic
is registered at all (offsets restored before the cluster, a store of offsets only) cannot be checked against, which
:func:`check_entries` says in one problem instead of one per entry.

Like Kafka's tool this does not stop the group's consumers; ``plan_import`` reads what each write would replace
(for ``--dry-run``), and :func:`import_offsets`, which runs the whole import in order, warns about groups with live
members (:mod:`zkconsumer.group.registry`), whose next commit would write over the imported offsets.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError, RolledBackError

from zkconsumer.errors import ZkConsumerError, ZnodeFormatError
from zkconsumer.group.registry import live_members
from zkconsumer.tools.zk_offsets_file import OffsetEntry
from zkconsumer.zk import cluster, paths
from zkconsumer.zk.persistent import ensure_path

DEFAULT_MAX_OPS = 1000
_ATTEMPTS = 5


class ImportFailedError(ZkConsumerError):
    """ZooKeeper refused a transaction for a reason a retry does not cure."""


class ImportRefusedError(ZkConsumerError):
    """Entries that do not fit the cluster (unknown topic or partition, negative offset); nothing was written."""


def entry_problems(entries: Iterable[OffsetEntry], topics: Mapping[str, Collection[int] | None]) -> list[str]:
    """``<path>: <problem>`` for each entry that does not fit the cluster; ``topics`` has every entry's topic with
    its partitions, None for a topic ZooKeeper does not know. Pure."""
    problems: list[str] = []
    for entry in entries:
        partitions = topics.get(entry.topic)
        if partitions is None:
            problems.append(f"{entry.path}: topic {entry.topic} does not exist (no znode "
                            f"{paths.topic_path(entry.topic)})")
        elif entry.partition not in partitions:
            count = len(partitions)
            problems.append(f"{entry.path}: topic {entry.topic} has {count} partition{'s' if count != 1 else ''}, "
                            f"not partition {entry.partition}")
        elif entry.offset < -1:
            problems.append(f"{entry.path}: offset {entry.offset} is below -1 (the legacy consumer's \"no offset\")")
    return problems


@dataclass(frozen=True)
class EntryCheck:
    """What :func:`check_entries` found: entries that do not fit the cluster, or why they could not be checked."""

    problems: tuple[str, ...] = ()
    unchecked: str | None = None


def check_entries(zk: KazooClient, entries: Sequence[OffsetEntry]) -> EntryCheck:
    """:func:`entry_problems` against the topics registered in ZooKeeper (read in one round trip)."""
    if not zk.exists(paths.BROKER_TOPICS_PATH) or not zk.get_children(paths.BROKER_TOPICS_PATH):
        return EntryCheck(unchecked=f"no topic is registered in ZooKeeper ({paths.BROKER_TOPICS_PATH}): topics, "
                                    f"partitions and offsets not checked")
    reads = {topic: zk.get_async(paths.topic_path(topic)) for topic in dict.fromkeys(e.topic for e in entries)}
    topics: dict[str, Collection[int] | None] = {}
    for topic, call in reads.items():
        try:
            data = call.get()[0]
            topics[topic] = frozenset(cluster.parse_topic(topic, data, paths.topic_path(topic)).partitions)
        except (NoNodeError, ZnodeFormatError):  # a topic znode we cannot read names no partition we can check
            topics[topic] = None
    return EntryCheck(problems=tuple(entry_problems(entries, topics)))


@dataclass(frozen=True, slots=True)
class OffsetWrite:
    entry: OffsetEntry
    current: str | None  # the znode's data now; None when it does not exist yet

    @property
    def creates(self) -> bool:
        return self.current is None


@dataclass(frozen=True)
class ImportResult:
    created: int = 0
    updated: int = 0
    groups: tuple[str, ...] = ()  # in the order of the file


def by_group(entries: Iterable[OffsetEntry]) -> dict[str, list[OffsetEntry]]:
    """Entries per group, groups and entries in the order they come."""
    groups: dict[str, list[OffsetEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.group, []).append(entry)
    return groups


def plan_import(zk: KazooClient, entries: Sequence[OffsetEntry]) -> list[OffsetWrite]:
    """What writing ``entries`` would do: each with the value it would replace (read in one round trip)."""
    calls = [(e, zk.get_async(e.path)) for e in entries]
    plan = []
    for entry, call in calls:
        try:
            data = call.get()[0]
        except NoNodeError:
            plan.append(OffsetWrite(entry, None))
            continue
        plan.append(OffsetWrite(entry, (data or b"").decode("utf-8", "replace")))
    return plan


def apply_import(zk: KazooClient, entries: Sequence[OffsetEntry], max_ops: int = DEFAULT_MAX_OPS) -> ImportResult:
    created = updated = 0
    groups = by_group(entries)
    for group_entries in groups.values():
        step = max(1, max_ops)
        for start in range(0, len(group_entries), step):
            c, u = _write_chunk(zk, group_entries[start:start + step])
            created += c
            updated += u
    return ImportResult(created, updated, tuple(groups))


@dataclass(frozen=True)
class Import:
    """What :func:`import_offsets` did: the planned writes (when asked for), and what was written (None on a dry
    run)."""

    writes: list[OffsetWrite] | None
    result: ImportResult | None


def import_offsets(zk: KazooClient, entries: Sequence[OffsetEntry], *, force: bool, dry_run: bool, plan: bool,
                   warn: Callable[[str], None]) -> Import:
    """1. check the entries against the cluster (:func:`check_entries`): problems refuse the import, unless
    ``force``, which writes anyway and warns of each; 2. warn of each group with live members, whose next commit may
    overwrite what is imported; 3. with ``plan`` (or a dry run), read what each write would replace; 4. write,
    unless a dry run."""
    check = check_entries(zk, entries)
    if check.unchecked:
        warn(check.unchecked)
    problems = check.problems
    if problems and not force:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ImportRefusedError(f"{problems[0]}{more}; nothing was written (--force writes anyway)")
    for problem in problems:
        warn(f"{problem}; written anyway (--force)")
    for group in by_group(entries):
        members = live_members(zk, group)
        if members:
            shown = ", ".join(members[:3]) + (", ..." if len(members) > 3 else "")
            warn(f"group {group} has {len(members)} live member{'s' if len(members) != 1 else ''} ({shown}); "
                 f"their next commit may overwrite the imported offsets")
    writes = plan_import(zk, entries) if plan or dry_run else None
    return Import(writes, None if dry_run else apply_import(zk, entries))


def _write_chunk(zk: KazooClient, entries: list[OffsetEntry]) -> tuple[int, int]:
    last_error: Exception | None = None
    for _ in range(_ATTEMPTS):
        for offset_dir in sorted({paths.GroupTopicDirs(e.group, e.topic).offset_dir for e in entries}):
            ensure_path(zk, offset_dir)  # the parents a transaction cannot create (again, if removed meanwhile)
        exists = [(e, zk.exists_async(e.path)) for e in entries]
        txn = zk.transaction()
        created = 0
        for entry, call in exists:
            value = str(entry.offset).encode()
            if call.get() is None:
                txn.create(entry.path, value)
                created += 1
            else:
                txn.set_data(entry.path, value)
        results = txn.commit()
        failures = [r for r in results if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
        if not failures:
            return created, len(entries) - created
        last_error = failures[0]
    path = next((e.path for e, r in zip(entries, results, strict=False)
                 if isinstance(r, Exception) and not isinstance(r, RolledBackError)), "?")
    raise ImportFailedError(
        f"ZooKeeper refused the offsets of group {entries[0].group} ({type(last_error).__name__} at {path}) "
        f"{_ATTEMPTS} times; none of this transaction's {len(entries)} offsets were written"
    )
