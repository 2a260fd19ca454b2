"""Committed offsets in ZooKeeper (``/consumers/<g>/offsets/<t>/<p>``, persistent, ASCII next offset).

Kafka wrote an offset only when it differed from the last value this process checkpointed for the partition, and
so does this store. What it adds, without changing what is written: each write is conditional on the znode version
last seen, so a commit can never silently move an offset backwards over a value another member wrote meanwhile
(e.g. after this consumer lost the partition during a long pause). Such a commit is skipped and reported instead.

An offset znode holding something other than a decimal number (written by some other tool) is reported by path
and left alone: the partition reads as malformed and is never overwritten by this store.

Kafka wrote one znode per request; the writes of one commit go here in multi-ops sized under the byte budget
``zookeeper.multi.max.bytes`` (:mod:`zkconsumer.zk.batched_transaction`), so a commit of 10,000 partitions is a few
requests instead of 10,000, and never one request larger than ZooKeeper accepts. A batch is one transaction only
for convenience, not for meaning: when one of its conditional writes meets a value someone else wrote, that batch
is written again one znode at a time, each write deciding on its own as before. Budget 0 writes one znode per
request. Reads of many offsets are pipelined (all requests sent, then all answers read).

The starting offsets of partitions the group never committed are found by the fetchers one partition at a time;
:class:`WriteBehind` collects them from those threads and hands them over together, so they too are written in a
few batches, off the fetchers' threads.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError
from kazoo.protocol.states import ZnodeStat

from zkconsumer.group.snapshot import MalformedZnode
from zkconsumer.types import INVALID_OFFSET, TopicPartition, sorted_partitions
from zkconsumer.zk import paths
from zkconsumer.zk.batched_transaction import (
    DEFAULT_MULTI_MAX_BYTES,
    Create,
    Op,
    SetData,
    commit_async,
    failed,
    plan_for,
)
from zkconsumer.zk.persistent import ensure_path
from zkconsumer.zk.reads import value_or_none

_MALFORMED = -2  # checkpoint of a znode that holds something else: never written over


@dataclass(frozen=True)
class FetchResult:
    offsets: dict[TopicPartition, int]  # INVALID_OFFSET where the group never committed
    malformed: dict[TopicPartition, MalformedZnode] = field(default_factory=dict)


@dataclass(frozen=True)
class CommitResult:
    written: dict[TopicPartition, int] = field(default_factory=dict)
    #: not written because ZooKeeper already holds a higher offset written by someone else: partition -> theirs
    kept_higher: dict[TopicPartition, int] = field(default_factory=dict)
    #: not written because the znode holds something that is not an offset
    malformed: dict[TopicPartition, MalformedZnode] = field(default_factory=dict)
    batches: int = 0  # write requests sent: multi-ops, plus single writes where a batch met someone else's value


def offset_path(group: str, tp: TopicPartition) -> str:
    return paths.offset_path(group, tp.topic, tp.partition)


def largest_offset_op(group: str) -> Create:
    """The largest write of this store for ``group`` (longest topic name, largest partition and offset): for a budget
    check at construction."""
    return Create(offset_path(group, TopicPartition("t" * 249, 2**31 - 1)), str(2**63 - 1).encode())


#: what Java's Long.parseLong takes (Kafka's readers, Burrow's ParseInt): ASCII digits, an optional sign; Python's
#: int() would also take "1_000", other scripts' digits and 5,000-digit numbers (which it refuses with a ValueError)
_OFFSET_TEXT = re.compile(r"[+-]?[0-9]{1,19}")


def parse_offset(path: str, data: bytes | None) -> int | MalformedZnode:
    text = (data or b"").decode("utf-8", "replace").strip()
    if _OFFSET_TEXT.fullmatch(text) and -(2**63) <= int(text) < 2**63:
        return int(text)
    return MalformedZnode(path, f"holds {text[:40]!r}, expected a decimal offset")


class ZooKeeperOffsetStore:
    def __init__(self, zk: KazooClient, group: str, max_bytes: int = DEFAULT_MULTI_MAX_BYTES) -> None:
        self.zk = zk
        self.group = group
        self.max_bytes = max_bytes  # multi-op budget; 0: one write per request
        # partition -> (offset, znode version) last read or written by this process; version -1 = no znode
        self._checkpoints: dict[TopicPartition, tuple[int, int]] = {}
        # partitions whose checkpoint is a higher offset someone else wrote (a commit kept it): a lower commit of ours
        # must not go over it, though its version check would pass (nobody wrote since we read it)
        self._theirs: set[TopicPartition] = set()

    def fetch(self, partitions: Iterable[TopicPartition]) -> FetchResult:
        """The committed offsets, read pipelined; they become the checkpoints later commits compare with.

        Each topic's offset directory is listed first (one request), and only the znodes that exist are read: a
        group that never committed costs one request per topic, not one per partition. A znode created between
        the listing and now reads as never committed, as if read a moment earlier; a later commit over it then
        meets it and keeps the higher value."""
        partitions = list(partitions)
        listings = {topic: self.zk.get_children_async(paths.GroupTopicDirs(self.group, topic).offset_dir)
                    for topic in sorted({tp.topic for tp in partitions})}
        present = {topic: set(value_or_none(call) or ()) for topic, call in listings.items()}
        calls = {tp: self.zk.get_async(offset_path(self.group, tp)) for tp in partitions
                 if str(tp.partition) in present[tp.topic]}
        offsets: dict[TopicPartition, int] = {}
        malformed: dict[TopicPartition, MalformedZnode] = {}
        for tp in partitions:
            self._theirs.discard(tp)  # read afresh: what a claim starts from
            got = value_or_none(calls[tp]) if tp in calls else None
            if got is None:
                offsets[tp] = INVALID_OFFSET
                self._checkpoints[tp] = (INVALID_OFFSET, -1)
                continue
            data, stat = got
            value = parse_offset(offset_path(self.group, tp), data)
            if isinstance(value, MalformedZnode):
                malformed[tp] = value
                self._checkpoints[tp] = (_MALFORMED, stat.version)
            else:
                offsets[tp] = value
                self._checkpoints[tp] = (value, stat.version)
        return FetchResult(offsets, malformed)

    def commit(self, offsets: Mapping[TopicPartition, int]) -> CommitResult:
        """Write each offset that is valid and differs from its checkpoint; never over a higher foreign value."""
        result = CommitResult()
        unknown = [tp for tp, offset in offsets.items() if offset >= 0 and tp not in self._checkpoints]
        if unknown:
            self.fetch(unknown)  # a partition this process never read: learn its value and version first
        pending = {}
        for tp, offset in offsets.items():
            checkpoint = self._checkpoints.get(tp)
            if offset < 0 or (checkpoint is not None and checkpoint[0] == offset):
                continue
            if tp in self._theirs and checkpoint is not None and offset < checkpoint[0]:
                continue  # still behind the offset another member wrote, kept (and reported) when it was found
            if checkpoint is not None and checkpoint[0] == _MALFORMED:
                path = offset_path(self.group, tp)
                result.malformed[tp] = MalformedZnode(path, "holds something other than an offset; not overwritten")
                continue
            pending[tp] = (offset, checkpoint)
        if not pending:
            return result
        if self.max_bytes == 0:
            calls = {tp: (offset, self._write_async(tp, offset, checkpoint))
                     for tp, (offset, checkpoint) in pending.items()}
            for tp, (offset, call) in calls.items():
                self._settle(tp, offset, call, result)
            return CommitResult(result.written, result.kept_higher, result.malformed, batches=len(calls))
        return self._commit_batched(pending, result)

    def _commit_batched(self, pending: dict[TopicPartition, tuple[int, tuple[int, int] | None]],
                        result: CommitResult) -> CommitResult:
        order = sorted_partitions(pending)
        ops: list[Op] = []
        for tp in order:
            offset, checkpoint = pending[tp]
            path, data = offset_path(self.group, tp), str(offset).encode()
            if checkpoint is not None and checkpoint[1] < 0:
                ops.append(Create(path, data))
            else:
                ops.append(SetData(path, data, checkpoint[1] if checkpoint else -1))
        # A create in a multi-op cannot make its parents: /consumers/<g>/offsets/<t> must exist first.
        for topic in sorted({tp.topic for tp, op in zip(order, ops, strict=True) if isinstance(op, Create)}):
            ensure_path(self.zk, paths.GroupTopicDirs(self.group, topic).offset_dir)
        batches = plan_for(self.zk, ops, self.max_bytes)
        calls = [commit_async(self.zk, batch) for batch in batches]  # independent: sent together
        sent = len(batches)
        start = 0
        for batch, call in zip(batches, calls, strict=True):
            tps = order[start:start + len(batch)]
            start += len(batch)
            answers = call.get()
            if not failed(answers):
                for tp, answer in zip(tps, answers, strict=True):
                    version = answer.version if isinstance(answer, ZnodeStat) else 0  # create answers its path
                    self._checkpoints[tp] = (pending[tp][0], version)
                    self._theirs.discard(tp)
                    result.written[tp] = pending[tp][0]
                continue
            # Someone else wrote one of them (or one vanished) since we read it: each write of this batch on its
            # own, deciding as a single commit does.
            singles = {tp: self._write_async(tp, pending[tp][0], pending[tp][1]) for tp in tps}
            sent += len(singles)
            for tp, single in singles.items():
                self._settle(tp, pending[tp][0], single, result)
        return CommitResult(result.written, result.kept_higher, result.malformed, batches=sent)

    def _write_async(self, tp: TopicPartition, offset: int, checkpoint: tuple[int, int] | None):
        path = offset_path(self.group, tp)
        if checkpoint is not None and checkpoint[1] < 0:
            return self.zk.create_async(path, str(offset).encode())  # a missing parent: _settle creates it
        return self.zk.set_async(path, str(offset).encode(), version=checkpoint[1] if checkpoint else -1)

    def _settle(self, tp: TopicPartition, offset: int, call, result: CommitResult) -> None:
        path = offset_path(self.group, tp)
        for _ in range(5):
            try:
                got = call.get()
                version = 0 if isinstance(got, str) else got.version  # create returns the path, set a stat
                self._checkpoints[tp] = (offset, version)
                self._theirs.discard(tp)
                result.written[tp] = offset
                return
            except NoNodeError:
                ensure_path(self.zk, paths.GroupTopicDirs(self.group, tp.topic).offset_dir)
                call = self.zk.create_async(path, str(offset).encode())
            except (NodeExistsError, BadVersionError):
                # Someone else wrote it since we last looked: keep theirs if it is ahead of ours.
                try:
                    data, stat = self.zk.get(path)
                except NoNodeError:
                    call = self.zk.create_async(path, str(offset).encode())
                    continue
                theirs = parse_offset(path, data)
                if isinstance(theirs, MalformedZnode):
                    result.malformed[tp] = theirs
                    return
                if theirs > offset:
                    self._checkpoints[tp] = (theirs, stat.version)
                    self._theirs.add(tp)
                    result.kept_higher[tp] = theirs
                    return
                call = self.zk.set_async(path, str(offset).encode(), version=stat.version)
        raise RuntimeError(f"offset znode {path} kept changing while committing {offset}")

    def checkpoint(self, tp: TopicPartition) -> int | None:
        entry = self._checkpoints.get(tp)
        return None if entry is None or entry[0] == _MALFORMED else entry[0]


K = TypeVar("K")


class WriteBehind(Generic[K]):
    """Values put from any thread, handed to ``flush`` together on a thread of its own: whatever arrived while the
    previous flush ran goes in the next one, so a burst of single puts becomes a few calls (a few batched writes)
    and the putting threads never wait for ZooKeeper. ``flush`` must not raise (it reports its own failures)."""

    def __init__(self, flush: Callable[[dict[K, Any]], None], name: str) -> None:
        self._flush = flush
        self._pending: dict[K, Any] = {}
        self._cond = threading.Condition()
        self._closed = False
        self._busy = False
        self._thread = threading.Thread(target=self._run, daemon=True, name=name)
        self._thread.start()

    def put(self, key: K, value: Any) -> None:
        with self._cond:
            self._pending[key] = value
            self._cond.notify_all()

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait until everything put so far has been flushed; ``False`` if that took longer than ``timeout``."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._pending and not self._busy, timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Flush what is pending, then stop the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._pending or self._closed)  # no timeout: idle; put() and close() notify
                if not self._pending:
                    return
                batch, self._pending, self._busy = self._pending, {}, True
            try:
                self._flush(batch)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
