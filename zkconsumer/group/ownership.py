"""Partition ownership znodes (``/consumers/<g>/owners/<t>/<p>``, ephemeral, data = owning thread id).

Claiming and releasing are where earlier ports lost partitions or got stuck (ownership conflicts at rolling restarts,
partitions left unowned, stale znodes after a fast restart), so both
differ from Kafka in how, never in what other members observe:

* **Claims are one multi-op.** Kafka created the owner znodes one by one and, on a conflict, deleted those it had
  made; here all claims of an attempt are one ZooKeeper transaction, so a failed attempt leaves nothing behind
  and a crash mid-claim cannot leave a partial claim for others to trip over.
* **Our own node is recognised by session, not by data.** A node we created just before a connection loss comes
  back as NodeExists on retry; Kafka accepted any node holding our thread id string, which also accepted a stale
  node of a previous process with the same ``consumer.id`` (it vanishes later, silently un-owning the partition).
  Here a node is ours only if its ``ephemeralOwner`` is our session (the KAFKA-1387 lesson).
* **Release deletes only what is ours**, checked by session and version in one transaction, so a slow member can
  never delete the claim a faster member made after it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError, RolledBackError

from zkconsumer.types import TopicPartition
from zkconsumer.zk import paths


@dataclass(frozen=True)
class ClaimResult:
    claimed: tuple[TopicPartition, ...] = ()  # created by this claim
    already_ours: tuple[TopicPartition, ...] = ()  # held by our session already (e.g. before a connection loss)
    conflicts: Mapping[TopicPartition, str] = field(default_factory=lambda: MappingProxyType({}))  # -> holder

    @property
    def ok(self) -> bool:
        return not self.conflicts


def owner_path(group: str, tp: TopicPartition) -> str:
    return paths.GroupTopicDirs(group, tp.topic).owner_path(tp.partition)


def _session(zk: KazooClient) -> int:
    return zk.client_id[0]


def claim_partitions(zk: KazooClient, group: str, claims: Mapping[TopicPartition, str]) -> ClaimResult:
    """Create every owner znode of ``claims`` (partition -> thread id) in one transaction, or none of them."""
    if not claims:
        return ClaimResult()
    for topic in sorted({tp.topic for tp in claims}):
        zk.ensure_path(paths.GroupTopicDirs(group, topic).owner_dir)
    todo = dict(claims)
    ours: list[TopicPartition] = []
    session = _session(zk)
    # Each round either commits or learns about one existing node; a node of ours leaves the transaction
    # (or has its data corrected in it), anyone else's node is a conflict and ends the attempt.
    fixes: dict[TopicPartition, int] = {}
    for _ in range(2 * len(claims) + 3):
        txn = zk.transaction()
        for tp, thread in todo.items():
            if tp in fixes:
                txn.set_data(owner_path(group, tp), thread.encode(), version=fixes[tp])
            else:
                txn.create(owner_path(group, tp), thread.encode(), ephemeral=True)
        results = txn.commit() if todo else []
        failed = [(tp, r) for tp, r in zip(todo, results, strict=True)
                  if isinstance(r, Exception) and not isinstance(r, RolledBackError)]
        if not failed:
            created = tuple(tp for tp in todo if tp not in fixes)
            return ClaimResult(claimed=created, already_ours=tuple(ours) + tuple(fixes))
        tp, error = failed[0]
        try:
            data, stat = zk.get(owner_path(group, tp))
        except NoNodeError:
            continue  # released meanwhile: try again
        if not isinstance(error, NodeExistsError) or stat.ephemeralOwner != session:
            holders = current_holders(zk, group, todo, session)
            if not holders:
                continue  # the holder let go while we looked: try again rather than report an empty conflict
            return ClaimResult(conflicts=MappingProxyType(holders))
        if data.decode("utf-8", "replace") == todo[tp]:
            ours.append(tp)
            del todo[tp]
            fixes.pop(tp, None)
        else:
            fixes[tp] = stat.version
    raise RuntimeError(f"owner znodes of group {group} kept changing while claiming {len(claims)} partitions")


def current_holders(zk: KazooClient, group: str, partitions: Iterable[TopicPartition],
                    session: int | None = None) -> dict[TopicPartition, str]:
    """Who holds each of ``partitions`` that is held by a session other than ``session``."""
    calls = {tp: zk.get_async(owner_path(group, tp)) for tp in partitions}
    holders: dict[TopicPartition, str] = {}
    for tp, call in calls.items():
        try:
            data, stat = call.get()
        except NoNodeError:
            continue
        if session is None or stat.ephemeralOwner != session:
            holders[tp] = (data or b"").decode("utf-8", "replace")
    return holders


def release_partitions(zk: KazooClient, group: str, partitions: Iterable[TopicPartition]) -> tuple[TopicPartition, ...]:
    """Delete the owner znodes of ``partitions`` that our session holds; returns those deleted."""
    session = _session(zk)
    calls = {tp: zk.exists_async(owner_path(group, tp)) for tp in partitions}
    mine: dict[TopicPartition, int] = {}
    for tp, call in calls.items():
        stat = call.get()
        if stat is not None and stat.ephemeralOwner == session:
            mine[tp] = stat.version
    if not mine:
        return ()
    txn = zk.transaction()
    for tp, version in mine.items():
        txn.delete(owner_path(group, tp), version=version)
    results = txn.commit()
    if not any(isinstance(r, Exception) for r in results):
        return tuple(mine)
    # Something changed between the read and the delete (only our own session writes these nodes, so it can
    # only have vanished): delete what is left one by one.
    released = []
    for tp, version in mine.items():
        with contextlib.suppress(NoNodeError):
            zk.delete(owner_path(group, tp), version=version)
            released.append(tp)
    return tuple(released)
