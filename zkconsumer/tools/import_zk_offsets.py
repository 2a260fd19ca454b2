"""Kafka's ``ImportZkOffsets`` tool: write offset entries to their znodes, creating the missing ones with their parents.

Kafka's tool wrote line by line and printed and ignored each failure, so a bad run left a group half imported.
Here the entries come already checked (:func:`zkconsumer.tools.zk_offsets_file.parse_offsets_file`) and each group's
are written in one ZooKeeper transaction (several of ``max_ops`` each for a very large group, as one request
must stay under the server's ``jute.maxbuffer``): a group is imported entirely or, for that transaction, not at
all. A transaction that fails because a znode appeared or vanished between the read and the write is planned
again from what is there now.

Like Kafka's tool this does not stop the group's consumers; ``plan_import`` reads what each write would replace
(for ``--dry-run``), and the caller warns about groups with live members (:mod:`zkconsumer.group.registry`),
whose next commit would write over the imported offsets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError, RolledBackError

from zkconsumer.errors import ZkConsumerError
from zkconsumer.tools.zk_offsets_file import OffsetEntry
from zkconsumer.zk import paths
from zkconsumer.zk.persistent import ensure_path

DEFAULT_MAX_OPS = 1000
_ATTEMPTS = 5


class ImportFailedError(ZkConsumerError):
    """ZooKeeper refused a transaction for a reason a retry does not cure."""


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
