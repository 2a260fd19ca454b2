"""Committed offsets in ZooKeeper (``/consumers/<g>/offsets/<t>/<p>``, persistent, ASCII next offset).

Kafka wrote an offset only when it differed from the last value this process checkpointed for the partition, and
so does this store. What it adds, without changing what is written: each write is conditional on the znode version
last seen, so a commit can never silently move an offset backwards over a value another member wrote meanwhile
(e.g. after this consumer lost the partition during a long pause). Such a commit is skipped and reported instead.

An offset znode holding something other than a decimal number (written by some other tool) is reported by path
and left alone: the partition reads as malformed and is never overwritten by this store.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from zkconsumer.group.snapshot import MalformedZnode
from zkconsumer.types import INVALID_OFFSET, TopicPartition
from zkconsumer.zk import paths

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


def offset_path(group: str, tp: TopicPartition) -> str:
    return paths.GroupTopicDirs(group, tp.topic).offset_path(tp.partition)


def parse_offset(path: str, data: bytes | None) -> int | MalformedZnode:
    text = (data or b"").decode("utf-8", "replace").strip()
    try:
        return int(text)
    except ValueError:
        return MalformedZnode(path, f"holds {text[:40]!r}, expected a decimal offset")


class ZooKeeperOffsetStore:
    def __init__(self, zk: KazooClient, group: str) -> None:
        self.zk = zk
        self.group = group
        # partition -> (offset, znode version) last read or written by this process; version -1 = no znode
        self._checkpoints: dict[TopicPartition, tuple[int, int]] = {}

    def fetch(self, partitions: Iterable[TopicPartition]) -> FetchResult:
        """The committed offsets, read in one round trip; they become the checkpoints later commits compare with."""
        calls = {tp: self.zk.get_async(offset_path(self.group, tp)) for tp in partitions}
        offsets: dict[TopicPartition, int] = {}
        malformed: dict[TopicPartition, MalformedZnode] = {}
        for tp, call in calls.items():
            try:
                data, stat = call.get()
            except NoNodeError:
                offsets[tp] = INVALID_OFFSET
                self._checkpoints[tp] = (INVALID_OFFSET, -1)
                continue
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
            if checkpoint is not None and checkpoint[0] == _MALFORMED:
                path = offset_path(self.group, tp)
                result.malformed[tp] = MalformedZnode(path, "holds something other than an offset; not overwritten")
                continue
            pending[tp] = (offset, self._write_async(tp, offset, checkpoint))
        for tp, (offset, call) in pending.items():
            self._settle(tp, offset, call, result)
        return result

    def _write_async(self, tp: TopicPartition, offset: int, checkpoint: tuple[int, int] | None):
        path = offset_path(self.group, tp)
        if checkpoint is not None and checkpoint[1] < 0:
            return self.zk.create_async(path, str(offset).encode(), makepath=True)
        return self.zk.set_async(path, str(offset).encode(), version=checkpoint[1] if checkpoint else -1)

    def _settle(self, tp: TopicPartition, offset: int, call, result: CommitResult) -> None:
        path = offset_path(self.group, tp)
        for _ in range(5):
            try:
                got = call.get()
                version = 0 if isinstance(got, str) else got.version  # create returns the path, set a stat
                self._checkpoints[tp] = (offset, version)
                result.written[tp] = offset
                return
            except NoNodeError:
                call = self.zk.create_async(path, str(offset).encode(), makepath=True)
            except (NodeExistsError, BadVersionError):
                # Someone else wrote it since we last looked: keep theirs if it is ahead of ours.
                try:
                    data, stat = self.zk.get(path)
                except NoNodeError:
                    call = self.zk.create_async(path, str(offset).encode(), makepath=True)
                    continue
                theirs = parse_offset(path, data)
                if isinstance(theirs, MalformedZnode):
                    result.malformed[tp] = theirs
                    return
                if theirs > offset:
                    self._checkpoints[tp] = (theirs, stat.version)
                    result.kept_higher[tp] = theirs
                    return
                call = self.zk.set_async(path, str(offset).encode(), version=stat.version)
        raise RuntimeError(f"offset znode {path} kept changing while committing {offset}")

    def checkpoint(self, tp: TopicPartition) -> int | None:
        entry = self._checkpoints.get(tp)
        return None if entry is None or entry[0] == _MALFORMED else entry[0]
