"""KafkaStream: what the application iterates; one per (topic, consumer thread), or per thread for a wildcard.

The stream owns one chunk queue and one ConsumerIterator, whose state every way of reading shares, so iterating
again after a ConsumerTimeoutException continues where the last loop stopped, whichever way it read. The rebalance
clears its current chunk. A connector's streams ask its :class:`~zkconsumer.consumer.session_fence.SessionFence`
before each chunk, and in the middle of one once its confirmation has aged: nothing more is handed out once the
member may have lost its partitions.

Three ways to read, the same messages and offsets semantics (see :mod:`zkconsumer.consumer.consumer_iterator`):

* ``for message in stream``: the fast one; no Python code runs between two messages of a slice of a chunk;
* ``stream.iterator()``: Kafka's ConsumerIterator, with ``has_next()`` and ``next()``;
* ``stream.chunks()``: lists of messages, each the rest of one fetched chunk (one partition, in offset order), all
  handed out (so covered by the next commit) when the list is;
* ``stream.record_batches()``: the same, as columns (offsets, values, keys, timestamps), undecoded, for a reader
  that takes values in bulk (an Arrow column): nothing is made per message.
"""

from __future__ import annotations

from collections.abc import Iterator

from zkconsumer.consumer.consumer_iterator import ConsumerIterator, Decoder, MessageAndMetadata
from zkconsumer.consumer.message_and_metadata import FetchedRecords
from zkconsumer.consumer.partition_topic_info import ChunkQueue
from zkconsumer.consumer.session_fence import SessionFence


class KafkaStream:
    def __init__(self, chunk_queue: ChunkQueue, consumer_timeout_ms: int, key_decoder: Decoder,
                 value_decoder: Decoder, client_id: str, name: str = "", fence: SessionFence | None = None) -> None:
        self.chunk_queue = chunk_queue
        self.client_id = client_id
        self.name = name
        self._iterator = ConsumerIterator(chunk_queue, consumer_timeout_ms, key_decoder, value_decoder, name, fence)

    def __iter__(self) -> Iterator[MessageAndMetadata]:
        return self._iterator.fast()

    def iterator(self) -> ConsumerIterator:
        return self._iterator

    def chunks(self, max_messages: int | None = None) -> Iterator[list[MessageAndMetadata]]:
        """Lists of at most ``max_messages`` messages of one partition each, until the end of the stream; a
        ConsumerTimeoutException ends this generator (call ``chunks()`` again to go on)."""
        if max_messages is not None and max_messages < 1:
            raise ValueError(f"max_messages must be at least 1, not {max_messages}")
        return self._chunks(max_messages)

    def _chunks(self, max_messages: int | None) -> Iterator[list[MessageAndMetadata]]:
        iterator = self._iterator
        while True:
            try:
                batch = iterator.next_chunk(max_messages)
            except StopIteration:
                return
            yield batch

    def record_batches(self, max_messages: int | None = None) -> Iterator[FetchedRecords]:
        """As :meth:`chunks`, as columns (:class:`~zkconsumer.consumer.message_and_metadata.FetchedRecords`: offsets,
        values, keys, timestamps of one partition), undecoded; nothing is made per message."""
        if max_messages is not None and max_messages < 1:
            raise ValueError(f"max_messages must be at least 1, not {max_messages}")
        return self._record_batches(max_messages)

    def _record_batches(self, max_messages: int | None) -> Iterator[FetchedRecords]:
        iterator = self._iterator
        while True:
            try:
                batch = iterator.next_records(max_messages)
            except StopIteration:
                return
            yield batch

    def clear(self) -> None:
        self._iterator.clear_current_chunk()

    def __repr__(self) -> str:
        return f"KafkaStream({self.name!r}, client_id={self.client_id!r})"
