"""PartitionTopicInfo and FetchedDataChunk: one owned partition, and the unit a fetcher hands a stream.

A PartitionTopicInfo is what binds a partition to the queue of the stream that owns it; the rebalance builds one per
assigned partition and the fetcher and the iterator share it. It carries the two offsets the legacy consumer's
delivery guarantees are made of:

* ``fetched_offset``: the next offset the fetcher asks the broker for, advanced when a chunk is enqueued;
* ``consumed_offset``: the next offset the application has not been handed yet, advanced by the iterator when it
  hands a message out. This is the value committed to ZooKeeper, so a committed offset means "next to read".

Both start at the committed offset, or at ``INVALID_OFFSET`` when the group never committed one, in which case the
fetcher applies ``auto.offset.reset`` before the first fetch.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from zkconsumer.types import INVALID_OFFSET

#: How often a blocked put or get wakes up to look at its stop flag.
_POLL_S = 0.1


@dataclass(frozen=True, slots=True)
class RawMessage:
    """One record as fetched: undecoded key and value, as the legacy ``Message`` kept them."""

    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int = -1
    timestamp_type: int = 0  # 0 none, 1 create time, 2 log append time (confluent-kafka's TIMESTAMP_*)

    @property
    def next_offset(self) -> int:
        return self.offset + 1

    @property
    def size(self) -> int:
        return len(self.key or b"") + len(self.value or b"")


class ChunkQueue:
    """A stream's bounded queue of chunks (capacity ``queued.max.message.chunks``).

    A full queue blocks the fetcher thread that fills it; that is the legacy back-pressure. Unlike Kafka, which
    interrupted the blocked thread to stop it, a put gives up when its stop event is set.
    """

    def __init__(self, capacity: int, name: str = "") -> None:
        self.name = name
        self._queue: queue.Queue[FetchedDataChunk] = queue.Queue(maxsize=max(1, capacity))

    def put(self, chunk: FetchedDataChunk, stop: threading.Event | None = None) -> bool:
        """Block until there is room; ``False`` if ``stop`` was set first (the chunk is dropped)."""
        while True:
            try:
                self._queue.put(chunk, timeout=_POLL_S)
                return True
            except queue.Full:
                if stop is not None and stop.is_set():
                    return False

    def put_sentinel(self) -> None:
        """After a clear, so there is room: shutdown must never block on a full queue."""
        try:
            self._queue.put_nowait(SHUTDOWN_CHUNK)
        except queue.Full:
            self.clear()
            self._queue.put_nowait(SHUTDOWN_CHUNK)

    def get(self, timeout_s: float | None) -> FetchedDataChunk:
        """The next chunk; raises ``queue.Empty`` after ``timeout_s`` (``None`` waits for ever)."""
        return self._queue.get(timeout=timeout_s)

    def clear(self) -> int:
        dropped = 0
        while True:
            try:
                self._queue.get_nowait()
                dropped += 1
            except queue.Empty:
                return dropped

    def qsize(self) -> int:
        return self._queue.qsize()

    def __repr__(self) -> str:
        return f"ChunkQueue({self.name!r}, {self.qsize()} chunks)"


class PartitionTopicInfo:
    def __init__(
        self,
        topic: str,
        partition: int,
        chunk_queue: ChunkQueue,
        consumed_offset: int,
        fetched_offset: int,
        fetch_size: int,
        client_id: str,
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.chunk_queue = chunk_queue
        self.fetch_size = fetch_size
        self.client_id = client_id
        self._lock = threading.Lock()
        self._consumed = consumed_offset
        self._fetched = fetched_offset

    @property
    def consumed_offset(self) -> int:
        return self._consumed

    @property
    def fetched_offset(self) -> int:
        return self._fetched

    def reset_consume_offset(self, offset: int) -> None:
        with self._lock:
            self._consumed = offset

    def reset_fetch_offset(self, offset: int) -> None:
        with self._lock:
            self._fetched = offset

    def enqueue(self, messages: Sequence[RawMessage], too_large: bool = False,
                stop: threading.Event | None = None) -> bool:
        """Hand a fetched message set to the owning stream, then advance the fetch offset past it.

        ``too_large`` with no messages is Kafka's partial message (a record bigger than the fetch size): it is
        enqueued without advancing, and the iterator turns it into MessageSizeTooLargeException. An empty set is
        dropped. Returns ``False`` when ``stop`` interrupted a blocked put (nothing changed).
        """
        if not messages and not too_large:
            return True
        chunk = FetchedDataChunk(tuple(messages), self, self._fetched)
        if not self.chunk_queue.put(chunk, stop):
            return False
        if messages:
            self.reset_fetch_offset(messages[-1].next_offset)
        return True

    def __repr__(self) -> str:
        # Kafka's toString, which its logs (and people used to them) read.
        return f"{self.topic}:{self.partition}: fetched offset = {self._fetched}: consumed offset = {self._consumed}"


@dataclass(frozen=True, slots=True, eq=False)
class FetchedDataChunk:
    """One fetch response's messages for one partition, with the fetch offset they were asked for."""

    messages: tuple[RawMessage, ...]
    topic_info: PartitionTopicInfo | None
    fetch_offset: int


#: Put on every queue at shutdown; iterators compare by identity and then report the end of the stream.
SHUTDOWN_CHUNK = FetchedDataChunk((), None, INVALID_OFFSET)
