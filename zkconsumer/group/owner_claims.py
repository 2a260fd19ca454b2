"""Partition ownership claimed in ZooKeeper: the owner znodes (``/consumers/<g>/owners/<t>/<p>``, ephemeral, data =
owning thread id) created and deleted. What one connector owns, claims and holds in memory is
:mod:`zkconsumer.consumer.partition_ownership`, which keeps this module's results.

Claiming and releasing are where a group can lose partitions or get stuck (ownership conflicts at rolling restarts,
partitions left unowned, stale znodes after a fast restart), so both differ from Kafka in how, never in what other
members observe:

* **A claim is all or nothing, in few requests.** Kafka created the owner znodes one by one and, on a conflict,
  deleted those it had made. Here the claims of an attempt go in multi-ops, as few as fit under the byte budget
  ``zookeeper.multi.max.bytes`` (:mod:`zkconsumer.zk.batched_transaction`: one multi-op of 10,000 claims is larger
  than ZooKeeper accepts, and the server drops the connection). A claim that fits one batch is one transaction, so
  a failed attempt leaves nothing behind. The batches are sent together (the server applies them one after the
  other, each as one transaction; waiting for each answer before sending the next made a claim of 10,000 partitions
  wait for four round trips of the server's slowest work). When a batch meets a conflict, or fails with an error (a
  dropped connection: it may or may not have been applied), every batch of this attempt is deleted again,
  session-checked as release does (those answered as applied at the version they were made with, unread: while a
  large claim read its thousands of znodes first, every other member's claim met them), and the attempt fails as
  one. Budget 0 claims Kafka's way, one create per
  partition (kept to compare both in ``benchmarks/rebalance.py``).
* **Our own node is recognised by session, not by data.** A node we created just before a connection loss comes
  back as NodeExists on retry; Kafka accepted any node holding our thread id string, which also accepted a stale
  node of a previous process with the same ``consumer.id`` (it vanishes later, silently un-owning the partition).
  Here a node is ours only if its ``ephemeralOwner`` is our session (the KAFKA-1387 lesson).
* **Release deletes only what is ours**, checked by session and version (each delete carries the version read), so
  a slow member can never delete the claim a faster member made after it. What a claim of the same, still live
  session left (:class:`HeldZnodes`: the version of each node it holds) is deleted without reading it first: our
  ephemeral nodes cannot change hands while our session lives, and a batch whose delete fails anyway (someone
  deleted a node by hand) is released the checked way. Reading 10,000 owner znodes first would cost seconds.

Every result says how many requests it took (``batches``): the rebalance's ``claim`` and ``release`` events carry it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import KeeperState
from kazoo.retry import KazooRetry

from zkconsumer.types import TopicPartition, sorted_partitions
from zkconsumer.zk import paths
from zkconsumer.zk.batched_transaction import (
    DEFAULT_MULTI_MAX_BYTES,
    Create,
    Delete,
    SetData,
    commit_async,
    failed,
    plan_for,
)
from zkconsumer.zk.client import session_id
from zkconsumer.zk.persistent import ensure_path
from zkconsumer.zk.reads import value_or_none

#: The longest topic name Kafka allows and the largest partition id: bound the size of any owner znode's create.
_LONGEST_TOPIC = "t" * 249
_LARGEST_PARTITION = 2**31 - 1
#: Thread ids are ``<consumer id>-<stream number>``; no one runs more streams than this has digits for.
_LONGEST_STREAM_SUFFIX = "-" + "9" * 10


@dataclass(frozen=True)
class HeldZnodes:
    """The owner znodes one session holds after a claim: partition -> znode version."""

    session: int = 0
    versions: Mapping[TopicPartition, int] = field(default_factory=lambda: MappingProxyType({}))


@dataclass(frozen=True)
class ClaimResult:
    claimed: tuple[TopicPartition, ...] = ()  # created by this claim
    already_ours: tuple[TopicPartition, ...] = ()  # held by our session already (e.g. before a connection loss)
    #: partitions found held by another session -> holder (those of the batch that met them: not necessarily all)
    conflicts: Mapping[TopicPartition, str] = field(default_factory=lambda: MappingProxyType({}))
    batches: int = 0  # write requests sent: multi-ops, or creates when claiming one by one
    held: HeldZnodes = field(default_factory=HeldZnodes)  # of a claim that succeeded, for the next release

    @property
    def ok(self) -> bool:
        return not self.conflicts


@dataclass(frozen=True)
class ReleaseResult:
    released: tuple[TopicPartition, ...] = ()  # owner znodes of our session deleted
    batches: int = 0  # write requests sent: multi-ops, or deletes when releasing one by one


def owner_path(group: str, tp: TopicPartition) -> str:
    return paths.owner_path(group, tp.topic, tp.partition)


def largest_claim_op(group: str, consumer_id: str) -> Create:
    """The largest create a member of ``group`` named ``consumer_id`` can send: for a budget check at construction."""
    tp = TopicPartition(_LONGEST_TOPIC, _LARGEST_PARTITION)
    return Create(owner_path(group, tp), (consumer_id + _LONGEST_STREAM_SUFFIX).encode(), ephemeral=True)


def claim_partitions(zk: KazooClient, group: str, claims: Mapping[TopicPartition, str],
                     max_bytes: int = DEFAULT_MULTI_MAX_BYTES) -> ClaimResult:
    """Create every owner znode of ``claims`` (partition -> thread id), or leave none of this attempt's behind.

    An error (typically ConnectionLoss) propagates after the attempt's znodes were deleted again, as far as the
    connection allowed within the session timeout; callers release the partitions of a failed claim again anyway.
    """
    if not claims:
        return ClaimResult()
    for topic in sorted({tp.topic for tp in claims}):
        ensure_path(zk, paths.GroupTopicDirs(group, topic).owner_dir)
    if max_bytes == 0:
        return _claim_one_by_one(zk, group, claims)
    order = sorted_partitions(claims)
    batches = plan_for(zk, (Create(owner_path(group, tp), claims[tp].encode(), ephemeral=True) for tp in order),
                       max_bytes)
    session = session_id(zk)
    todos: list[dict[TopicPartition, str]] = []
    start = 0
    for batch in batches:
        todos.append({tp: claims[tp] for tp in order[start:start + len(batch)]})
        start += len(batch)
    first_writes = [commit_async(zk, batch) for batch in batches]  # all sent before any answer is read
    created: list[TopicPartition] = []
    ours: list[TopicPartition] = []
    versions: dict[TopicPartition, int] = {}
    sent = 0
    for index, (todo, first_write) in enumerate(zip(todos, first_writes, strict=True)):
        later = [tp for rest in todos[index + 1:] for tp in rest]  # sent too: maybe applied
        try:
            outcome = _claim_batch(zk, group, todo, session, first_write)
        except Exception:
            # The failed batch may have been applied without its answer reaching us: undo it too.
            _undo(zk, group, created + list(todo) + later, max_bytes)
            raise
        sent += outcome.batches
        if not outcome.ok:
            # The batches sent with this one have their answers (or will within the bound): one applied created
            # its znodes at version 0, one that failed created none, and only one without an answer is read.
            applied, unanswered = _outcomes(todos[index + 1:], first_writes[index + 1:])
            held = HeldZnodes(session, MappingProxyType({**{tp: 0 for tp in created}, **dict.fromkeys(applied, 0)}))
            sent += len(first_writes) - index - 1 + _undo(zk, group, created + applied + unanswered, max_bytes, held)
            return ClaimResult(conflicts=outcome.conflicts, batches=sent)
        created.extend(outcome.claimed)
        ours.extend(outcome.already_ours)
        versions.update(outcome.held.versions)
    return ClaimResult(claimed=tuple(created), already_ours=tuple(ours), batches=sent,
                       held=HeldZnodes(session, MappingProxyType(versions)))


def _claim_batch(zk: KazooClient, group: str, todo: dict[TopicPartition, str], session: int,
                 first_write: Any) -> ClaimResult:
    """One batch, as one transaction (``first_write``: the async result of its creates, already sent): retried after
    reading every node of it when it fails, so that nodes of our own session leave it (or get their data corrected in
    it) and anyone else's node ends the attempt."""
    fixes: dict[TopicPartition, int] = {}  # our node with other data -> its version
    versions: dict[TopicPartition, int] = {}  # our node with the right data already -> its version
    sent = 0
    for _ in range(5):
        if first_write is not None:
            results, first_write = first_write.get(), None
            sent += 1
        elif todo:
            ops = [SetData(owner_path(group, tp), thread.encode(), fixes[tp]) if tp in fixes
                   else Create(owner_path(group, tp), thread.encode(), ephemeral=True) for tp, thread in todo.items()]
            results = commit_async(zk, ops).get()
            sent += 1
        else:
            results = []
        if not failed(results):
            for tp, answer in zip(todo, results, strict=True):
                versions[tp] = answer.version if tp in fixes else 0  # set_data answers the stat, create a path
            created = tuple(tp for tp in todo if tp not in fixes)
            ours = tuple(tp for tp in versions if tp not in todo) + tuple(fixes)
            return ClaimResult(claimed=created, already_ours=ours, batches=sent,
                               held=HeldZnodes(session, MappingProxyType(versions)))
        reads = {tp: zk.get_async(owner_path(group, tp)) for tp in todo}
        conflicts: dict[TopicPartition, str] = {}
        for tp, call in reads.items():
            got = value_or_none(call)
            if got is None:
                fixes.pop(tp, None)  # absent (or released meanwhile): create it
                continue
            data, stat = got
            holder = (data or b"").decode("utf-8", "replace")
            if stat.ephemeralOwner != session:
                conflicts[tp] = holder
            elif holder == todo[tp]:
                versions[tp] = stat.version
                fixes.pop(tp, None)
                del todo[tp]
            else:
                fixes[tp] = stat.version
        if conflicts:
            return ClaimResult(conflicts=MappingProxyType(conflicts), batches=sent)
    raise RuntimeError(f"owner znodes of group {group} kept changing while claiming {len(todo)} partitions")


def _claim_one_by_one(zk: KazooClient, group: str, claims: Mapping[TopicPartition, str]) -> ClaimResult:
    """Kafka's ``reflectPartitionOwnershipDecision``: one create per partition, every partition tried, those
    created deleted again if any was held by someone else (here: by another session)."""
    session = session_id(zk)
    created: list[TopicPartition] = []
    ours: list[TopicPartition] = []
    versions: dict[TopicPartition, int] = {}
    conflicts: dict[TopicPartition, str] = {}
    sent = 0
    try:
        for tp in sorted(claims):
            path, data = owner_path(group, tp), claims[tp].encode()
            for _ in range(3):
                sent += 1
                try:
                    zk.create(path, data, ephemeral=True)
                    created.append(tp)
                    versions[tp] = 0
                    break
                except NodeExistsError:
                    pass
                got = value_or_none(zk.get_async(path))
                if got is None:
                    continue  # released while we looked: try again
                if got[1].ephemeralOwner != session:
                    conflicts[tp] = (got[0] or b"").decode("utf-8", "replace")
                else:
                    versions[tp] = got[1].version
                    if got[0] != data:
                        versions[tp] = zk.set(path, data, version=got[1].version).version
                        sent += 1
                    ours.append(tp)
                break
            else:
                raise RuntimeError(f"owner znode {path} kept changing while claiming it")
    except Exception:
        _undo(zk, group, created, 0)
        raise
    if conflicts:
        sent += _undo(zk, group, created, 0)
        return ClaimResult(conflicts=MappingProxyType(conflicts), batches=sent)
    return ClaimResult(claimed=tuple(created), already_ours=tuple(ours), batches=sent,
                       held=HeldZnodes(session, MappingProxyType(versions)))


def _outcomes(todos: list[dict[TopicPartition, str]], writes: list[Any],
              ) -> tuple[list[TopicPartition], list[TopicPartition]]:
    """The partitions of the batches that were applied, and of those whose answer did not come (an error such as a
    lost connection: maybe applied); a batch that failed applied nothing (a multi-op is one transaction)."""
    applied: list[TopicPartition] = []
    unanswered: list[TopicPartition] = []
    for todo, write in zip(todos, writes, strict=True):
        try:
            answers = write.get()
        except Exception:
            unanswered.extend(todo)
            continue
        if not failed(answers):
            applied.extend(todo)
    return applied, unanswered


def _undo(zk: KazooClient, group: str, partitions: list[TopicPartition], max_bytes: int,
          held: HeldZnodes | None = None) -> int:
    """Delete what this attempt may have created, session-checked (``held``: those it knows it created, deleted at
    their version unread: reading thousands of owner znodes first kept them held for seconds, every other member's
    claim meeting them meanwhile), waiting for the connection to come back for at most a session timeout (past it
    the session, and with it every such znode, is gone anyway); returns the write requests it took."""
    if not partitions:
        return 0
    session_timeout_ms = getattr(zk, "_session_timeout", 10_000)  # kazoo keeps the asked timeout only there
    retry = KazooRetry(max_tries=-1, delay=0.05, max_delay=0.5, deadline=session_timeout_ms / 1000,
                       interrupt=lambda: zk.client_state == KeeperState.CLOSED)  # stopped: nothing comes back
    try:
        return retry(release_partitions, zk, group, partitions, max_bytes, held).batches
    except Exception:  # best effort: the caller's error (or conflict) is the one to report
        return 0


def release_partitions(zk: KazooClient, group: str, partitions: Iterable[TopicPartition],
                       max_bytes: int = DEFAULT_MULTI_MAX_BYTES, held: HeldZnodes | None = None) -> ReleaseResult:
    """Delete the owner znodes of ``partitions`` that our session holds, in batched multi-ops (budget 0: one
    delete each, as Kafka did). Those in ``held`` (what a claim of this same session left) are deleted at the
    version it recorded, unread; the others are read first, and deleted only if our session holds them."""
    session = session_id(zk)
    known = held.versions if held is not None and held.session == session else {}
    partitions = set(partitions)
    unread = {tp: known[tp] for tp in partitions if tp in known}
    released: list[TopicPartition] = []
    sent = 0
    if unread:
        deleted, failures, sent = _delete_batched(zk, group, unread, max_bytes)
        released.extend(deleted)
        partitions = (partitions - unread.keys()) | failures  # a node that was not as recorded: read it
    mine = _held_by(zk, group, partitions, session)
    if mine:
        deleted, failures, more = _delete_batched(zk, group, mine, max_bytes)
        released.extend(deleted)
        sent += more
        # Something changed between the read and the delete (only our own session writes these nodes, so it can
        # only have vanished): delete what is left one by one.
        if failures:
            released.extend(_delete_one_by_one(zk, group, {tp: mine[tp] for tp in sorted_partitions(failures)})[0])
            sent += len(failures)
    return ReleaseResult(tuple(sorted_partitions(released)), sent)


def _held_by(zk: KazooClient, group: str, partitions: Iterable[TopicPartition],
             session: int) -> dict[TopicPartition, int]:
    """Those of ``partitions`` whose owner znode ``session`` holds -> its version (read pipelined)."""
    calls = {tp: zk.exists_async(owner_path(group, tp)) for tp in partitions}
    mine: dict[TopicPartition, int] = {}
    for tp, call in calls.items():
        stat = call.get()
        if stat is not None and stat.ephemeralOwner == session:
            mine[tp] = stat.version
    return mine


def _delete_batched(zk: KazooClient, group: str, versions: Mapping[TopicPartition, int],
                    max_bytes: int) -> tuple[list[TopicPartition], set[TopicPartition], int]:
    """Delete each owner znode at its version: (deleted, those of batches that failed, requests sent)."""
    if max_bytes == 0:
        return (*_delete_one_by_one(zk, group, versions), len(versions))
    order = sorted_partitions(versions)
    batches = plan_for(zk, (Delete(owner_path(group, tp), versions[tp]) for tp in order), max_bytes)
    pending = [commit_async(zk, batch) for batch in batches]  # independent: sent together
    deleted: list[TopicPartition] = []
    failures: set[TopicPartition] = set()
    start = 0
    for batch, call in zip(batches, pending, strict=True):
        part = order[start:start + len(batch)]
        start += len(batch)
        if failed(call.get()):
            failures.update(part)
        else:
            deleted.extend(part)
    return deleted, failures, len(batches)


def _delete_one_by_one(zk: KazooClient, group: str,
                       versions: Mapping[TopicPartition, int]) -> tuple[list[TopicPartition], set[TopicPartition]]:
    """(deleted, those at another version than given); a node already gone is neither."""
    released: list[TopicPartition] = []
    changed: set[TopicPartition] = set()
    for tp, version in versions.items():
        try:
            zk.delete(owner_path(group, tp), version=version)
            released.append(tp)
        except NoNodeError:
            continue
        except BadVersionError:
            changed.add(tp)
    return released, changed
