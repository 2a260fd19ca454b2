"""ConsumerIterator and MessageAndMetadata: how a stream hands messages to the application (Kafka's ConsumerIterator).

The iterator is the legacy IteratorTemplate state machine: an exception other than ConsumerTimeoutException that
escapes while it looks for the next message leaves it failed for good (``IllegalStateError`` afterwards), while a
timeout leaves it ready to be iterated again. Handing a message out is what advances the partition's consumed
offset (to the message's offset + 1), so that offset is what a commit writes.

One deliberate difference from Kafka: Kafka returned the last message of a chunk even when it was below the
consumed offset (a duplicate); here every message below the consumed offset is skipped.

Events (logger ``zkconsumer.stream``):

* ``stream.offset_gap`` (warning): a chunk starts beyond the partition's consumed offset, so the messages in
  between were never handed out ("Consumer may lose data"). Fields: ``topic``, ``partition``,
  ``consumed_offset``, ``fetch_offset``.
* ``stream.end``: the shutdown sentinel reached this stream. Fields: ``stream``.
"""

from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from zkconsumer.consumer.data_path_events import emit
from zkconsumer.consumer.partition_topic_info import SHUTDOWN_CHUNK, ChunkQueue, PartitionTopicInfo, RawMessage
from zkconsumer.errors import ConsumerTimeoutException, MessageSizeTooLargeException
from zkconsumer.log import get_logger

Decoder = Callable[[bytes | None], Any]

_log = get_logger("zkconsumer.stream")


class IllegalStateError(RuntimeError):
    """The iterator failed earlier (Kafka's IllegalStateException "Iterator is in failed state")."""


@dataclass(frozen=True, slots=True)
class MessageAndMetadata:
    """A message as the application sees it. ``key`` and ``message`` run the decoders each time they are read,
    so a decoder failure surfaces there and does not break the iteration (as in Kafka)."""

    topic: str
    partition: int
    offset: int
    raw_key: bytes | None
    raw_message: bytes | None
    timestamp: int
    timestamp_type: int
    key_decoder: Decoder
    value_decoder: Decoder

    @property
    def key(self) -> Any:
        return self.key_decoder(self.raw_key)

    @property
    def message(self) -> Any:
        return self.value_decoder(self.raw_message)


class _Cursor:
    __slots__ = ("info", "messages", "position")

    def __init__(self, info: PartitionTopicInfo, messages: tuple[RawMessage, ...]) -> None:
        self.info = info
        self.messages = messages
        self.position = 0


_NOT_READY, _READY, _DONE, _FAILED = "not_ready", "ready", "done", "failed"


class ConsumerIterator(Iterator[MessageAndMetadata]):
    def __init__(self, chunks: ChunkQueue, consumer_timeout_ms: int, key_decoder: Decoder,
                 value_decoder: Decoder, name: str = "") -> None:
        self._chunks = chunks
        self._timeout_ms = consumer_timeout_ms
        self._timeout_s = None if consumer_timeout_ms < 0 else consumer_timeout_ms / 1000
        self._key_decoder = key_decoder
        self._value_decoder = value_decoder
        self._name = name
        self._state = _NOT_READY
        self._next: tuple[MessageAndMetadata, PartitionTopicInfo] | None = None
        # The chunk being iterated. Only replaced when a chunk is loaded, never written back, so that a
        # clear_current_chunk from the rebalance thread cannot be undone by the application thread.
        self._current: _Cursor | None = None

    def __iter__(self) -> ConsumerIterator:
        return self

    def has_next(self) -> bool:
        if self._state == _FAILED:
            raise IllegalStateError("Iterator is in failed state")
        if self._state == _DONE:
            return False
        if self._state == _READY:
            return True
        self._state = _FAILED
        try:
            item = self._make_next()
        except ConsumerTimeoutException:
            self._state = _NOT_READY
            raise
        if item is None:
            self._state = _DONE
            return False
        self._next = item
        self._state = _READY
        return True

    def __next__(self) -> MessageAndMetadata:
        if not self.has_next():
            raise StopIteration
        self._state = _NOT_READY
        assert self._next is not None
        item, info = self._next
        self._next = None
        # Handing out is what moves the consumed offset, so a commit covers exactly what the application got.
        info.reset_consume_offset(item.offset + 1)
        return item

    next = __next__

    def clear_current_chunk(self) -> None:
        """Drop the chunk being iterated (rebalance): its remaining messages will be fetched again by the owner."""
        self._current = None

    def _take_chunk(self) -> bool:
        """Load the next chunk; ``False`` at the end of the stream."""
        try:
            chunk = self._chunks.get(self._timeout_s)
        except queue.Empty:
            raise ConsumerTimeoutException(
                f"no message within consumer.timeout.ms={self._timeout_ms}"
            ) from None
        if chunk is SHUTDOWN_CHUNK:
            emit(_log, "info", "stream.end", stream=self._name)
            return False
        info = chunk.topic_info
        assert info is not None
        if info.consumed_offset < chunk.fetch_offset:
            emit(_log, "warning", "stream.offset_gap", topic=info.topic, partition=info.partition,
                 consumed_offset=info.consumed_offset, fetch_offset=chunk.fetch_offset)
            info.reset_consume_offset(chunk.fetch_offset)
        if not chunk.messages:
            raise MessageSizeTooLargeException(
                f"Found a message larger than the maximum fetch size of this consumer on topic {info.topic} "
                f"partition {info.partition} at fetch offset {chunk.fetch_offset}. Increase the fetch size, or "
                f"decrease the maximum message size the broker will allow."
            )
        self._current = _Cursor(info, chunk.messages)
        return True

    def _make_next(self) -> tuple[MessageAndMetadata, PartitionTopicInfo] | None:
        while True:
            current = self._current
            if current is None or current.position >= len(current.messages):
                if not self._take_chunk():
                    return None
                continue
            info, raw = current.info, current.messages[current.position]
            current.position += 1
            if raw.offset < info.consumed_offset:
                continue  # re-fetched inside a compressed set, or already handed out
            item = MessageAndMetadata(info.topic, info.partition, raw.offset, raw.key, raw.value, raw.timestamp,
                                      raw.timestamp_type, self._key_decoder, self._value_decoder)
            return item, info
