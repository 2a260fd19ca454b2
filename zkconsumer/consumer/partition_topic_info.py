"""PartitionTopicInfo and FetchedDataChunk: one owned partition, and the unit a fetcher hands a stream.

A PartitionTopicInfo is what binds a partition to the queue of the stream that owns it; the rebalance builds one per
assigned partition and the fetcher and the iterator share it. It carries the two offsets the legacy consumer's
delivery guarantees are made of:

* ``fetched_offset``: the next offset the fetcher asks the broker for, advanced when a chunk is enqueued;
* ``consumed_offset``: the next offset the application has not been handed yet. This is the value committed to
  ZooKeeper, so a committed offset means "next to read".

Both start at the committed offset, or at ``INVALID_OFFSET`` when the group never committed one, in which case the
fetcher applies ``auto.offset.reset`` before the first fetch.

The consumed offset is not written once per message. While a stream hands out a chunk of this partition, the
chunk's :class:`ChunkCursor` is attached here, and the consumed offset is read from how far the cursor's list
iterator over the chunk's messages has gone (the offset of the message before it, read when asked for): handing a
message out is then nothing but the C-level step of that iterator, which is what lets a ``for message in stream``
loop run close to librdkafka's own speed. The value read is exactly Kafka's (the offset of the last message handed
out + 1) at every moment, because the step and the hand-out are one and the same. When the stream moves to its next
chunk, or a rebalance drops the chunk, the cursor is detached and the value it had reached is kept as a plain
attribute.

A chunk holds :class:`~zkconsumer.consumer.message_and_metadata.FetchedRecords`: librdkafka's messages, at most
``queued.max.message.chunks`` chunks of at most 600 per stream.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Message

from zkconsumer.consumer.message_and_metadata import FetchedRecords, MessageAndMetadata, messages, offset_of
from zkconsumer.types import INVALID_OFFSET

#: How often a blocked put or get wakes up to look at its stop flag.
_POLL_S = 0.1
#: The longest a put into an empty queue waits for the stream's reader to come back for the next chunk (see
#: ChunkQueue): a fast loop hands out a chunk in a tenth of that; a slower one lets the fetcher go on meanwhile.
_TURN_S = 0.002


class ChunkQueue:
    """A stream's bounded queue of chunks (capacity ``queued.max.message.chunks``).

    A full queue blocks the fetcher thread that fills it; that is the legacy back-pressure. Unlike Kafka, which
    interrupted the blocked thread to stop it, a put gives up when its stop event is set.

    Made of two C queues (``queue.SimpleQueue``): the chunks, and one token per free place, which a put takes (waiting
    while there is none: the queue is full) and a get gives back. A hand-over is then a few C calls on each side,
    where ``queue.Queue``'s condition variables ran some dozens of lines of Python per chunk and per side.

    The fetcher and the stream's reader take turns when the reader keeps up: after a put into an empty queue (the
    reader is waiting, or about to) and its bookkeeping, the fetcher waits (:meth:`wait_turn`, at most
    :data:`_TURN_S`) for the reader to come back for the next chunk, which it does once it has handed this one out
    and let it go. The fetcher's next batch is then made while no other batch's messages are alive, so the garbage
    collector's young generation (700 new objects by default) is not overrun by two batches at once: no young
    collection finds queued messages alive and promotes them to the older generations, whose growth would start a
    full collection of the whole process about every 500,000 messages. And the two threads do not contend for the
    GIL while the reader hands a chunk out. A reader that does not keep up finds chunks queued: a put into a queue
    that is not empty starts no turn, and the fetcher does not wait then (nor for other streams' queues, which it
    also feeds).
    """

    def __init__(self, capacity: int, name: str = "") -> None:
        self.name = name
        self.capacity = max(1, capacity)
        self._chunks: queue.SimpleQueue[FetchedDataChunk] = queue.SimpleQueue()
        self._room: queue.SimpleQueue[None] = queue.SimpleQueue()
        for _ in range(self.capacity):
            self._room.put(None)
        # Held by a put into an empty queue until the reader is back for the next chunk; a ``threading.Lock`` may be
        # released by another thread than the one that took it.
        self._turn = threading.Lock()
        # Per fetcher thread (several feed one stream when its partitions have different leaders): whether its last
        # put took the turn, which only that fetcher then waits out.
        self._mine = threading.local()

    def put(self, chunk: FetchedDataChunk, stop: threading.Event | None = None) -> bool:
        """Block until there is room; ``False`` if ``stop`` was set first (the chunk is dropped). A chunk put into an
        empty queue starts the reader's turn (see :meth:`wait_turn`)."""
        room = self._room
        while True:
            try:
                room.get(timeout=_POLL_S)
                break
            except queue.Empty:
                if stop is not None and stop.is_set():
                    return False
        chunks = self._chunks
        # Into an empty queue the turn is taken, unless it is still held (a previous wait ran out before the reader
        # came back, or another fetcher's turn): then this fetcher does not wait.
        self._mine.turn = chunks.empty() and self._turn.acquire(False)
        chunks.put(chunk)
        return True

    def wait_turn(self) -> None:
        """When this thread's last put took the turn: until the reader's turn is over (it came back for the next
        chunk), at most :data:`_TURN_S`. What a fetcher does once it has put a chunk and done its bookkeeping, before it
        makes its next batch."""
        if not getattr(self._mine, "turn", False):
            return
        self._mine.turn = False
        turn = self._turn
        if turn.acquire(True, _TURN_S):
            with contextlib.suppress(RuntimeError):  # the reader, back at an empty queue meanwhile, released it
                turn.release()

    def put_sentinel(self) -> None:
        """After a clear, so there is room: shutdown must never block on a full queue."""
        try:
            self._room.get_nowait()
        except queue.Empty:
            self.clear()
            with contextlib.suppress(queue.Empty):  # a fetcher took the room meanwhile: the sentinel goes in anyway
                self._room.get_nowait()
        self._chunks.put(SHUTDOWN_CHUNK)

    def get(self, timeout_s: float | None) -> FetchedDataChunk:
        """The next chunk; raises ``queue.Empty`` after ``timeout_s`` (``None`` waits for ever)."""
        chunks = self._chunks
        try:
            chunk = chunks.get_nowait()
        except queue.Empty:
            turn = self._turn
            if turn.locked():  # a fetcher waits for this: the reader is done with what it had
                with contextlib.suppress(RuntimeError):  # another reader of the stream released it first
                    turn.release()
            # no timeout when None: consumer.timeout.ms=-1 waits for the next message, as the application asked;
            # shutdown puts a sentinel in
            chunk = chunks.get(timeout=timeout_s)
        self._room.put(None)
        return chunk

    def clear(self) -> int:
        dropped = 0
        while True:
            try:
                self._chunks.get_nowait()
            except queue.Empty:
                return dropped
            self._room.put(None)
            dropped += 1

    def qsize(self) -> int:
        return self._chunks.qsize()

    def __repr__(self) -> str:
        return f"ChunkQueue({self.name!r}, {self.qsize()} chunks)"


class ChunkCursor:
    """The chunk a stream is handing out, and how far it has got.

    ``messages`` yields the chunk's messages as the stream's MessageAndMetadata (class ``make``), pulling each
    librdkafka message from ``remaining``, a list iterator over the chunk's messages: whatever pulls one hands that
    message out. Several threads read the consumed offset (auto-commit, the rebalance) while the application's thread
    pulls messages without any lock; a pull is one C call under the GIL, so a reader sees either side of it. The lock
    only keeps :meth:`consumed_offset` and the writers below (a batch taken, a rebalance dropping the rest, a reset)
    from interleaving.
    """

    __slots__ = ("info", "records", "remaining", "messages", "_values", "_end", "_base", "_base_handed", "_lock")

    def __init__(self, info: PartitionTopicInfo | None, records: FetchedRecords, base: int,
                 make: type[MessageAndMetadata]) -> None:
        self.info = info
        self.records = records
        # a list iterator: its __length_hint__ is what was not handed out
        self.remaining: Any = iter(records.sources)
        self._values: Any = iter(records.sources)  # the messages' values, in step with ``remaining``
        self.messages: Iterator[MessageAndMetadata] = messages(make, self._values, self.remaining)
        self._end = len(records)  # minus what a rebalance dropped unseen
        self._base = base  # the consumed offset before the first message of this chunk is handed out (or a reset's)
        self._base_handed = 0
        self._lock = threading.Lock()

    def left(self) -> int:
        """Messages not handed out yet."""
        return self.remaining.__length_hint__()

    def consumed_offset(self) -> int:
        with self._lock:
            handed = self._end - self.remaining.__length_hint__()
            if handed <= self._base_handed:
                return self._base
            return offset_of(self.records.sources[handed - 1]) + 1

    def rebase(self, offset: int) -> None:
        """A reset of the consumed offset: it holds until the next message is handed out, as Kafka's did."""
        with self._lock:
            self._base = offset
            self._base_handed = self._end - self.remaining.__length_hint__()

    def take(self, most: int | None) -> FetchedRecords | None:
        """The next ``most`` records (all that are left when ``None``) as columns, handed out together; ``None`` when
        nothing is left. Under the lock, like :meth:`drop_rest`, so that a rebalance drops exactly what is not taken."""
        with self._lock:
            left = self.remaining.__length_hint__()
            if not left:
                return None
            count = left if most is None else min(left, most)
            start = len(self.records) - left
            self.remaining.__setstate__(start + count)  # a list iterator's position, set in one step
            self._values.__setstate__(start + count)
        return self.records.slice(start, start + count)

    def drop_rest(self) -> list[Message]:
        """Take every message not handed out yet away from whoever iterates (``list()`` of the iterator is one C
        call, so no message is both dropped and handed out); they no longer count as handed out."""
        with self._lock:
            rest = list(self.remaining)
            self._end -= len(rest)
        return rest

    def detach(self) -> None:
        """Done with this chunk: its partition keeps the consumed offset reached as a plain value."""
        info = self.info
        if info is not None and info._cursor is self:
            info._consumed = self.consumed_offset()
            info._cursor = None


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
        #: Written only by the fetcher thread that owns the partition (one int store, atomic in CPython).
        self.fetched_offset = fetched_offset
        self._consumed = consumed_offset
        self._cursor: ChunkCursor | None = None

    @property
    def consumed_offset(self) -> int:
        cursor = self._cursor
        if cursor is not None:
            return cursor.consumed_offset()
        return self._consumed

    def reset_consume_offset(self, offset: int) -> None:
        cursor = self._cursor
        if cursor is not None:
            cursor.rebase(offset)
        self._consumed = offset

    def reset_fetch_offset(self, offset: int) -> None:
        self.fetched_offset = offset

    def attach(self, cursor: ChunkCursor) -> None:
        """The stream starts handing out a chunk of this partition: the consumed offset is read from it now."""
        previous = self._cursor
        if previous is not None:
            previous.detach()
        self._cursor = cursor

    def enqueue(self, records: FetchedRecords | None, too_large: bool = False,
                stop: threading.Event | None = None) -> bool:
        """Hand fetched records to the owning stream, then advance the fetch offset past them.

        ``too_large`` with no records is Kafka's partial message (a record bigger than the fetch size): it is
        enqueued without advancing, and the iterator turns it into MessageSizeTooLargeException. No records otherwise
        is dropped. Returns ``False`` when ``stop`` interrupted a blocked put (nothing changed).
        """
        if not records:
            if not too_large:
                return True
            records = FetchedRecords(self.topic, self.partition, (), 0)
        chunk = FetchedDataChunk(records, self, self.fetched_offset)
        if not self.chunk_queue.put(chunk, stop):
            return False
        if records:
            self.fetched_offset = records.last_offset + 1
        return True

    def __repr__(self) -> str:
        # Kafka's toString, which its logs (and people used to them) read.
        return (f"{self.topic}:{self.partition}: fetched offset = {self.fetched_offset}: "
                f"consumed offset = {self.consumed_offset}")


@dataclass(slots=True, eq=False)  # not frozen: made once per chunk on the fetch path, where frozen costs
class FetchedDataChunk:
    """Records of one partition fetched together, with the fetch offset they were asked for."""

    messages: FetchedRecords
    topic_info: PartitionTopicInfo | None
    fetch_offset: int

    @property
    def value_bytes(self) -> int:
        return self.messages.value_bytes


#: Put on every queue at shutdown; iterators compare by identity and then report the end of the stream.
SHUTDOWN_CHUNK = FetchedDataChunk(FetchedRecords("", INVALID_OFFSET, (), 0), None, INVALID_OFFSET)
