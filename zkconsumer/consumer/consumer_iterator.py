"""ConsumerIterator and MessageAndMetadata: how a stream hands messages to the application (Kafka's ConsumerIterator).

The iterator is the legacy IteratorTemplate state machine: an exception other than ConsumerTimeoutException that
escapes while it looks for the next message leaves it failed for good (``IllegalStateError`` afterwards), while a
timeout leaves it ready to be iterated again. Handing a message out is what advances the partition's consumed
offset (to the message's offset + 1), so that offset is what a commit writes.

Why it is shaped as it is: a Python ``__next__`` per message, a lock and an attribute write per message, and an
object built by a Python ``__init__`` per message cost several times what librdkafka needs to fetch the message.
So a chunk's messages are handed out by C iterators (a ``map`` over the list of librdkafka's messages), each made
into the stream's MessageAndMetadata by a C call as it goes (:mod:`~zkconsumer.consumer.message_and_metadata`);
the partition's consumed offset is read from the position of the list iterator over its messages
(:class:`~zkconsumer.consumer.partition_topic_info.ChunkCursor`), so it moves at the very step that hands a message
out. ``for message in stream`` (:meth:`ConsumerIterator.fast`) chains those iterators, so no Python code runs
between two messages of a slice of a chunk (:data:`FENCE_SLICE` messages); ``has_next()``/``next()`` keep Kafka's
explicit protocol on the same state.

The session fence (:mod:`~zkconsumer.consumer.session_fence`) is asked before each chunk, and again while a chunk is
handed out once the confirmation it was given has aged past half the session timeout: per message in ``next()``,
per slice in ``for message in stream``, per call in the batch methods. A member paused in the middle of a large
chunk (a fetch can hold thousands of messages) and woken after its session expired hands out at most what is left
of the slice it was in, not the rest of the chunk: the rest is dropped once the session is known lost.

By chunks: :meth:`ConsumerIterator.next_chunk` returns the rest of the current chunk (one partition's messages, in
offset order) as a list, and :meth:`ConsumerIterator.next_records` the same as columns (offsets, values, keys,
timestamps, each made by one C pass when first read), undecoded, making nothing per message in Python. Everything
returned counts as handed out when the call returns: the partition's consumed offset is then the last offset
returned + 1, so a commit from then on covers the whole batch, processed or not, exactly as a commit covers a
message ``next()`` returned.

Deliberate differences from Kafka:

* Kafka returned the last message of a chunk even when it was below the consumed offset (a duplicate); here every
  message below the consumed offset is skipped.
* ``key`` and ``message`` still run the decoders each time they are read, so a decoder failure surfaces there and
  does not break the iteration (ConsumerIteratorTest); with the default (identity) decoders there is nothing to run,
  and they read the bytes as they are.

Its events (``stream.*``) are declared once in :mod:`zkconsumer.events.connector` and listed on the events page
(``docs/events.md``).
"""

from __future__ import annotations

import queue
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain, islice
from time import monotonic

from confluent_kafka import Message

from zkconsumer.consumer.data_path_events import emit
from zkconsumer.consumer.message_and_metadata import (
    Decoder,
    FetchedRecords,
    MessageAndMetadata,
    message_class,
    message_of,
    offset_of,
    partition_of,
    topic_of,
)
from zkconsumer.consumer.partition_topic_info import (
    SHUTDOWN_CHUNK,
    ChunkCursor,
    ChunkQueue,
    FetchedDataChunk,
    PartitionTopicInfo,
)
from zkconsumer.consumer.session_fence import HELD, TIMED_OUT, SessionFence
from zkconsumer.errors import ConsumerTimeoutException, MessageSizeTooLargeException
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import duration_ms, elapsed_ms
from zkconsumer.log import get_logger

__all__ = ["ConsumerIterator", "Decoder", "IllegalStateError", "MessageAndMetadata"]

_log = get_logger("zkconsumer.stream")

#: ``for message in stream`` hands out a chunk in slices of this many messages, the fence's lease looked at between
#: two: the most a member woken after its session expired can hand out is what is left of the slice it was in. The
#: look is a clock read per slice; ``benchmarks/consume.py`` measures the whole path against raw confluent-kafka.
FENCE_SLICE = 64


@dataclass(frozen=True)
class _FenceWait:
    """How a stream's wait for its session fence ended (:meth:`ConsumerIterator._await_fence`)."""

    stream: str
    verdict: str
    started: float
    confirmed_age_ms: float | None

    def fenced(self, info: PartitionTopicInfo, fetch_offset: int, messages: int) -> None:
        """What was dropped, from ``fetch_offset`` on: one ``stream.chunk_fenced`` warning."""
        emit(_log, "warning", ev.STREAM_CHUNK_FENCED, stream=self.stream, topic=info.topic, partition=info.partition,
             fetch_offset=fetch_offset, messages=messages, reason=self.verdict,
             confirmed_age_ms=self.confirmed_age_ms, waited_ms=elapsed_ms(self.started))


class IllegalStateError(RuntimeError):
    """The iterator failed earlier (Kafka's IllegalStateException "Iterator is in failed state")."""


_NOTHING = FetchedRecords("", -1, (), 0)


def _empty_cursor() -> ChunkCursor:
    """A cursor with nothing left: the state before the first chunk, and after a rebalance dropped the current one."""
    return ChunkCursor(None, _NOTHING, -1, MessageAndMetadata)  # it makes none


_NOT_READY, _DONE, _FAILED = "not_ready", "done", "failed"


class ConsumerIterator(Iterator[MessageAndMetadata]):
    def __init__(self, chunks: ChunkQueue, consumer_timeout_ms: int, key_decoder: Decoder,
                 value_decoder: Decoder, name: str = "", fence: SessionFence | None = None) -> None:
        self._chunks = chunks
        self._timeout_ms = consumer_timeout_ms
        self._timeout_s = None if consumer_timeout_ms < 0 else consumer_timeout_ms / 1000
        self._key_decoder = key_decoder
        self._value_decoder = value_decoder
        self._make = message_class(key_decoder, value_decoder)
        self._name = name
        self._state = _NOT_READY
        # Replaced only by the application's thread (a new chunk) or a rebalance (clear); never written back, so that
        # a clear cannot be undone by a thread that read the old cursor.
        self._current = _empty_cursor()
        # has_next() answered True for this cursor with this many items left: if a rebalance drops the chunk before
        # the next hand-out, the first dropped item is still due to the application (Kafka's peeked nextItem).
        self._ready: tuple[ChunkCursor, int] | None = None
        self._held: Message | None = None
        # Asked before each chunk is handed out: does the member still hold its partitions (None: no check)?
        self._fence = fence
        # A chunk taken from the queue while the fence did not hold, kept over a ConsumerTimeoutException, with the
        # number of clears seen when it was taken: a clear since then drops it.
        self._stashed: tuple[FetchedDataChunk, int] | None = None
        self._clears = 0
        # Until when (monotonic) the fence's last look lets the current chunk be handed out without another look.
        self._lease_until = float("-inf")

    # --- the legacy protocol -------------------------------------------------------------------------------------

    def __iter__(self) -> ConsumerIterator:
        return self

    def has_next(self) -> bool:
        if self._state == _FAILED:
            raise IllegalStateError("Iterator is in failed state")
        if self._state == _DONE:
            return False
        current = self._current
        if self._held is None and current.left() and self._lease_lapsed():
            self._renew_lease(current)  # may drop the rest of the chunk: then the next one is looked for
            current = self._current
        if self._held is None and not current.left():
            if not self._advance():
                return False
            current = self._current
        self._ready = (current, current.left())
        return True

    def __next__(self) -> MessageAndMetadata:
        held = self._held
        if held is not None:
            self._held = None
            return message_of(self._make, held)
        while True:
            if self._state == _FAILED:
                raise IllegalStateError("Iterator is in failed state")
            if self._state == _DONE:
                raise StopIteration
            if self._fence is not None and monotonic() > self._lease_until and self._current.left():
                self._renew_lease(self._current)
            message = next(self._current.messages, None)
            if message is not None:
                return message
            self._advance()

    next = __next__

    # --- the fast paths ------------------------------------------------------------------------------------------

    def fast(self) -> Iterator[MessageAndMetadata]:
        """An iterator over the same messages, in the same order, with the same offsets and exceptions, in which a
        message of the current chunk is handed out without any Python code. Each call starts a new one from where
        the stream is (an exception ends the one it went through); all of them share this iterator's state."""
        return chain.from_iterable(self._segments())

    def _segments(self) -> Iterator[Iterable[MessageAndMetadata]]:
        while True:
            held = self._held
            if held is not None:
                self._held = None
                yield (message_of(self._make, held),)
                continue
            if self._state == _FAILED:
                raise IllegalStateError("Iterator is in failed state")
            if self._state == _DONE:
                return
            current = self._current
            if current.left():
                if self._fence is None:
                    yield current.messages
                elif monotonic() <= self._lease_until or self._renew_lease(current):
                    yield islice(current.messages, FENCE_SLICE)
                continue
            del current  # the exhausted chunk is freed before waiting for the next (see _advance)
            if not self._advance():
                return

    def next_chunk(self, max_messages: int | None = None) -> list[MessageAndMetadata]:
        """The rest of the current chunk (at most ``max_messages``), waiting for the next chunk as ``next()`` waits for
        the next message; raises ``StopIteration`` at the end of the stream. All of it counts as handed out."""
        if max_messages is not None and max_messages < 1:
            raise ValueError(f"max_messages must be at least 1, not {max_messages}")
        held = self._held
        if held is not None:
            self._held = None
            return [message_of(self._make, held)]
        while True:
            if self._state == _FAILED:
                raise IllegalStateError("Iterator is in failed state")
            if self._state == _DONE:
                raise StopIteration
            if self._lease_lapsed() and self._current.left():
                self._renew_lease(self._current)
            made = self._current.messages
            batch = list(made if max_messages is None else islice(made, max_messages))
            if batch:
                return batch
            self._advance()

    def next_records(self, max_messages: int | None = None) -> FetchedRecords:
        """As :meth:`next_chunk`, as columns (offsets, values, keys, timestamps) instead of one MessageAndMetadata per
        message: for a reader that wants the values in bulk (an Arrow column, say), nothing is made per message. The
        records are the stream's raw bytes: the decoders are not applied. All of them count as handed out."""
        if max_messages is not None and max_messages < 1:
            raise ValueError(f"max_messages must be at least 1, not {max_messages}")
        held = self._held
        if held is not None:
            self._held = None
            return FetchedRecords.of([held], topic_of(held), partition_of(held))
        while True:
            if self._state == _FAILED:
                raise IllegalStateError("Iterator is in failed state")
            if self._state == _DONE:
                raise StopIteration
            if self._lease_lapsed() and self._current.left():
                self._renew_lease(self._current)
            records = self._current.take(max_messages)
            if records:
                return records
            self._advance()

    # --- chunks ----------------------------------------------------------------------------------------------------

    def clear_current_chunk(self) -> None:
        """Drop the chunk being iterated (rebalance): its remaining messages will be fetched again by the owner."""
        self._clears += 1
        self._stashed = None
        current, self._current = self._current, _empty_cursor()
        rest = current.drop_rest()
        ready = self._ready
        if rest and ready is not None and ready[0] is current and ready[1] == len(rest):
            self._held = rest[0]  # has_next() promised it; it no longer moves any offset
        current.detach()

    def _advance(self) -> bool:
        """Make the next chunk current (with at least one message to hand out); ``False`` at the end of the stream.
        States as in Kafka's IteratorTemplate: failed while it runs, so that an unexpected error sticks."""
        self._state = _FAILED
        current = self._current
        if not current.left():
            # Done with it: its messages are freed before the wait for the next chunk, which ends the fetcher's wait
            # for this reader's turn (ChunkQueue), so that they are gone before the fetcher makes its next batch.
            current.detach()
            self._current = _empty_cursor()
            self._ready = None  # has_next()'s promise was of that chunk: nothing of it is held through the wait
        del current
        try:
            while True:
                stashed = self._stashed
                if stashed is None:
                    chunk, clears = self._chunks.get(self._timeout_s), self._clears
                else:
                    self._stashed = None
                    chunk, clears = stashed
                if chunk is SHUTDOWN_CHUNK:
                    self._current.detach()
                    emit(_log, "info", ev.STREAM_END, stream=self._name)
                    self._state = _DONE
                    return False
                info = chunk.topic_info
                assert info is not None
                fence = self._fence
                if fence is not None and not self._holds(fence) and not self._fence_lets(chunk, clears, fence):
                    continue
                if self._clears != clears:
                    continue  # taken before a rebalance cleared this stream: fetched for the registry it replaced
                self._current.detach()
                cursor = self._cursor_for(info, chunk.messages, chunk.fetch_offset)
                if cursor is not None:
                    self._current = cursor
                    if self._clears != clears:
                        # a rebalance cleared the stream since the check above (before it could see this cursor)
                        cursor.drop_rest()
                        cursor.detach()
                        self._current = _empty_cursor()
                        continue
                    self._state = _NOT_READY
                    return True
        except queue.Empty:
            self._state = _NOT_READY
            raise ConsumerTimeoutException(f"no message within consumer.timeout.ms={self._timeout_ms}") from None

    def _fence_lets(self, chunk: FetchedDataChunk, clears: int, fence: SessionFence) -> bool:
        """Wait for the member's hold to be confirmed before handing the chunk out; ``False`` when it is dropped.
        Out of time (consumer.timeout.ms), the chunk is kept for the next call and the timeout raised."""
        info = chunk.topic_info
        assert info is not None
        waited = self._await_fence(fence, info, clears)
        if waited.verdict == HELD:
            return True
        if waited.verdict == TIMED_OUT:
            self._stashed = (chunk, clears)
            raise queue.Empty
        waited.fenced(info, chunk.fetch_offset, len(chunk.messages))
        return False

    def _holds(self, fence: SessionFence) -> bool:
        """The fence holds now; if so, the current chunk may be handed out until its lease ends."""
        if fence.holds():
            self._lease_until = fence.lease_until()
            return True
        return False

    def _lease_lapsed(self) -> bool:
        return self._fence is not None and monotonic() > self._lease_until

    def _renew_lease(self, current: ChunkCursor) -> bool:
        """The lease ended while ``current`` was being handed out: the fence is asked again, as before a chunk.
        Held, the chunk goes on (``True``). Lost, or cleared meanwhile, what is left of it is dropped (``False``; a
        rebalance's clear drops it itself). Out of time, ConsumerTimeoutException with the chunk kept current."""
        fence = self._fence
        assert fence is not None
        if self._holds(fence):
            return True
        info, clears = current.info, self._clears
        assert info is not None  # only the empty cursor has none, and it has nothing left to hand out
        waited = self._await_fence(fence, info, clears)
        if waited.verdict == HELD:
            return True
        if waited.verdict == TIMED_OUT:
            raise ConsumerTimeoutException(f"no message within consumer.timeout.ms={self._timeout_ms}")
        if self._clears == clears and self._current is current:
            rest = current.drop_rest()
            current.detach()
            self._current = _empty_cursor()
            if rest:
                waited.fenced(info, offset_of(rest[0]), len(rest))
        return False

    def _await_fence(self, fence: SessionFence, info: PartitionTopicInfo, clears: int) -> _FenceWait:
        """Wait for the fence (a fresh confirmation, the session's loss, a clear since ``clears``, shutdown, or
        consumer.timeout.ms); held, the lease is renewed and the wait is one ``stream.fence_waited`` event."""
        started = monotonic()
        age = fence.confirmed_age_s()
        waited = _FenceWait(self._name, fence.await_hold(self._timeout_s, lambda: self._clears != clears), started,
                            duration_ms(age) if age != float("inf") else None)  # None: never confirmed yet
        if waited.verdict == HELD:
            self._lease_until = fence.lease_until()
            emit(_log, "info", ev.STREAM_FENCE_WAITED, stream=self._name, topic=info.topic, partition=info.partition,
                 confirmed_age_ms=waited.confirmed_age_ms, waited_ms=elapsed_ms(started))
        return waited

    def _cursor_for(self, info: PartitionTopicInfo, records: FetchedRecords, fetch_offset: int) -> ChunkCursor | None:
        """A cursor over the chunk's records from the partition's consumed offset on; ``None`` when every one of them
        was handed out already."""
        consumed = info.consumed_offset
        if consumed < fetch_offset:
            emit(_log, "warning", ev.STREAM_OFFSET_GAP, topic=info.topic, partition=info.partition,
                 consumed_offset=consumed, fetch_offset=fetch_offset)
            info.reset_consume_offset(fetch_offset)
            consumed = fetch_offset
        if not records:
            raise MessageSizeTooLargeException(
                f"Found a message larger than the maximum fetch size of this consumer on topic {info.topic} "
                f"partition {info.partition} at fetch offset {fetch_offset}. Increase the fetch size, or "
                f"decrease the maximum message size the broker will allow."
            )
        if records.first_offset < consumed:  # re-fetched, or already handed out: skip up to the consumed offset
            records = records.since(consumed)
            if not records:
                return None
        cursor = ChunkCursor(info, records, consumed, self._make)
        info.attach(cursor)
        return cursor
