"""OffsetCommit and OffsetFetch version 0 kept where a Kafka 0.8.2-0.10 broker kept them: in ZooKeeper, at
``/consumers/<group>/offsets/<topic>/<partition>``, the offset as decimal text; where this project's legacy members,
``groups describe`` and ``offsets migrate`` read and write them (:class:`~zkconsumer.group.offset_store.
ZooKeeperOffsetStore` writes and reads them here too).

Each partition is answered as Kafka 0.10's ``KafkaApis`` answered it:

* a topic the broker does not have: ``UNKNOWN_TOPIC_OR_PARTITION``, nothing written (Kafka checked its metadata cache
  for the topic, not the partition);
* a commit's metadata longer than ``offset.metadata.max.bytes`` (4096): ``OFFSET_METADATA_TOO_LARGE``, nothing written;
  the metadata itself is never kept (version 0 stored the offset alone);
* a fetch of a partition the group never committed: offset -1 with ``UNKNOWN_TOPIC_OR_PARTITION``, as Kafka 0.10 said
  it; a znode that holds something other than an offset: offset -1 with ``UNKNOWN`` (Kafka's NumberFormatException);
* ZooKeeper failing (down, or slower than the session timeout), or a group id that names no znode (empty or null,
  which Kafka 0.10 failed to write or read under): ``UNKNOWN`` for that partition.

Where this differs from Kafka 0.10, it writes less, never more: a negative offset, or the value the znode already
holds, is not written (Kafka wrote it all the same), and a znode holding something other than an offset is not
overwritten (Kafka overwrote it) but answered ``UNKNOWN``. Two commits racing for one partition end with one of them,
as in Kafka (the store re-reads a znode that changed under it, and keeps a higher value written meanwhile).

The kazoo client is opened at the first request, and each request's reads and writes run on a worker thread, so the
front's event loop never waits on ZooKeeper; every kazoo request is bounded by the session timeout
(:mod:`zkconsumer.zk.client`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient

from zkconsumer.group.offset_store import ZooKeeperOffsetStore
from zkconsumer.types import INVALID_OFFSET, TopicPartition
from zkconsumer.zk.client import close_client, open_client

#: Kafka's error codes as Kafka 0.10 answered version 0 with them
NONE, UNKNOWN, UNKNOWN_TOPIC_OR_PARTITION, OFFSET_METADATA_TOO_LARGE = 0, -1, 3, 12
#: Kafka's ``offset.metadata.max.bytes`` default
OFFSET_METADATA_MAX_BYTES = 4096
#: how long the first connection and each request may take (the session timeout asked of the server)
SESSION_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Committed:
    """A partition's answer to OffsetFetch v0."""

    offset: int
    error_code: int


class ZooKeeperOffsets:
    """Version-0 offsets of every group, in the ZooKeeper at ``connect`` (a connect string, chroot included)."""

    def __init__(self, connect: str, session_timeout_s: float = SESSION_TIMEOUT_S) -> None:
        self.connect = connect
        self.session_timeout_s = session_timeout_s
        self._client: KazooClient | None = None
        self._lock = threading.Lock()

    async def commit(self, group: str | None, offsets: Mapping[TopicPartition, tuple[int, str | None]],
                     topics: frozenset[str]) -> dict[TopicPartition, int]:
        """Each partition's error code for committing ``offsets`` (offset and metadata); ``topics`` are the topics
        the broker has."""
        return await asyncio.to_thread(self._commit, group, offsets, topics)

    async def fetch(self, group: str | None, partitions: Sequence[TopicPartition],
                    topics: frozenset[str]) -> dict[TopicPartition, Committed]:
        """Each partition's committed offset, or its error."""
        return await asyncio.to_thread(self._fetch, group, partitions, topics)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                close_client(self._client)
                self._client = None

    def _zk(self) -> KazooClient:
        with self._lock:
            if self._client is None:
                self._client = open_client(self.connect, self.session_timeout_s, retry_forever=True, quiet=True)
            return self._client

    def _commit(self, group: str | None, offsets: Mapping[TopicPartition, tuple[int, str | None]],
                topics: frozenset[str]) -> dict[TopicPartition, int]:
        if not group:
            return dict.fromkeys(offsets, UNKNOWN)
        errors: dict[TopicPartition, int] = {}
        writes: dict[TopicPartition, int] = {}
        for tp, (offset, metadata) in offsets.items():
            if tp.topic not in topics:
                errors[tp] = UNKNOWN_TOPIC_OR_PARTITION
            elif metadata is not None and len(metadata) > OFFSET_METADATA_MAX_BYTES:
                errors[tp] = OFFSET_METADATA_TOO_LARGE
            else:
                writes[tp] = offset
        if writes:
            try:
                result = ZooKeeperOffsetStore(self._zk(), group).commit(writes)
            except Exception:  # noqa: BLE001 - Kafka 0.10 answered any failure of ZooKeeper as UNKNOWN, per partition
                errors.update(dict.fromkeys(writes, UNKNOWN))
            else:
                errors.update({tp: UNKNOWN if tp in result.malformed else NONE for tp in writes})
        return {tp: errors[tp] for tp in offsets}

    def _fetch(self, group: str | None, partitions: Sequence[TopicPartition],
               topics: frozenset[str]) -> dict[TopicPartition, Committed]:
        if not group:
            return dict.fromkeys(partitions, Committed(INVALID_OFFSET, UNKNOWN))
        known = [tp for tp in partitions if tp.topic in topics]
        answers = {tp: Committed(INVALID_OFFSET, UNKNOWN_TOPIC_OR_PARTITION) for tp in partitions}
        if known:
            try:
                result = ZooKeeperOffsetStore(self._zk(), group).fetch(known)
            except Exception:  # noqa: BLE001 - as above: UNKNOWN, per partition
                answers.update(dict.fromkeys(known, Committed(INVALID_OFFSET, UNKNOWN)))
            else:
                for tp in known:
                    if tp in result.malformed:
                        answers[tp] = Committed(INVALID_OFFSET, UNKNOWN)
                    elif result.offsets[tp] != INVALID_OFFSET:
                        answers[tp] = Committed(result.offsets[tp], NONE)
        return answers
