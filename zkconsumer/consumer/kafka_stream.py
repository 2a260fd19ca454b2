"""KafkaStream: what the application iterates; one per (topic, consumer thread), or per thread for a wildcard.

The stream owns one chunk queue and always hands out the same iterator, so iterating again after a
ConsumerTimeoutException continues where the last loop stopped. The rebalance clears its current chunk.
"""

from __future__ import annotations

from zkconsumer.consumer.consumer_iterator import ConsumerIterator, Decoder
from zkconsumer.consumer.partition_topic_info import ChunkQueue


class KafkaStream:
    def __init__(self, chunk_queue: ChunkQueue, consumer_timeout_ms: int, key_decoder: Decoder,
                 value_decoder: Decoder, client_id: str, name: str = "") -> None:
        self.chunk_queue = chunk_queue
        self.client_id = client_id
        self.name = name
        self._iterator = ConsumerIterator(chunk_queue, consumer_timeout_ms, key_decoder, value_decoder, name)

    def __iter__(self) -> ConsumerIterator:
        return self._iterator

    def iterator(self) -> ConsumerIterator:
        return self._iterator

    def clear(self) -> None:
        self._iterator.clear_current_chunk()

    def __repr__(self) -> str:
        return f"KafkaStream({self.name!r}, client_id={self.client_id!r})"
