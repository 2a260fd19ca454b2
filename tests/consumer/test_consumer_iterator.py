"""Kafka's ConsumerIteratorTest ported, and the iterator's state machine, at the queue level: no servers needed,
because nothing here talks to one (chunks are what a fetcher would enqueue)."""

from __future__ import annotations

import threading

import pytest

from zkconsumer.consumer.consumer_iterator import IllegalStateError
from zkconsumer.consumer.kafka_stream import KafkaStream
from zkconsumer.consumer.partition_topic_info import ChunkQueue, PartitionTopicInfo, RawMessage
from zkconsumer.errors import ConsumerTimeoutException, MessageSizeTooLargeException


def setup(consumed: int = 5, fetched: int = 0, capacity: int = 4, timeout_ms: int = 200, decoder=None):
    queue = ChunkQueue(capacity, "topic/0")
    info = PartitionTopicInfo("topic", 0, queue, consumed, fetched, 1024, "client")
    stream = KafkaStream(queue, timeout_ms, decoder or (lambda b: b), decoder or (lambda b: b), "client", "s")
    return queue, info, stream


def messages(offsets) -> list[RawMessage]:
    return [RawMessage(o, None, str(o).encode()) for o in offsets]


def test_skips_messages_below_the_consumed_offset_then_ends_at_the_sentinel():
    queue, info, stream = setup(consumed=5)
    info.enqueue(messages(range(10)))
    queue.put_sentinel()
    got = [m.message for m in stream]
    assert got == [b"5", b"6", b"7", b"8", b"9"]
    assert queue.qsize() == 0  # the sentinel was consumed
    assert info.consumed_offset == 10
    assert not stream.iterator().has_next()


def test_a_decoder_failure_surfaces_on_read_and_iteration_goes_on():
    def broken(_data):
        raise NotImplementedError("decoder")

    queue, info, stream = setup(consumed=5, decoder=broken)
    info.enqueue(messages(range(10)))
    it = stream.iterator()
    for i in range(5):
        assert it.has_next()
        m = next(it)
        assert m.offset == 5 + i
        with pytest.raises(NotImplementedError):
            _ = m.message


def test_timeout_leaves_the_iterator_usable():
    queue, info, stream = setup(consumed=0)
    for _ in range(2):  # twice, as testBasic does
        with pytest.raises(ConsumerTimeoutException):
            next(iter(stream))
    info.enqueue(messages([0]))
    assert next(iter(stream)).offset == 0


def test_consumed_offset_moves_when_a_message_is_handed_out_not_when_it_is_peeked():
    queue, info, stream = setup(consumed=0)
    info.enqueue(messages([0, 1]))
    it = stream.iterator()
    assert it.has_next()
    assert info.consumed_offset == 0
    assert next(it).offset == 0
    assert info.consumed_offset == 1
    assert info.fetched_offset == 2


def test_a_chunk_beyond_the_consumed_offset_jumps_it_forward():
    queue, info, stream = setup(consumed=3, fetched=7)
    info.enqueue(messages([7, 8]))
    assert [m.offset for m in (next(iter(stream)), next(iter(stream)))] == [7, 8]
    assert info.consumed_offset == 9


def test_too_large_chunk_raises_and_the_iterator_stays_failed():
    queue, info, stream = setup(consumed=0)
    info.enqueue([], too_large=True)
    it = stream.iterator()
    with pytest.raises(MessageSizeTooLargeException, match="topic topic partition 0 at fetch offset 0"):
        it.has_next()
    assert info.fetched_offset == 0  # not advanced: the fetcher cannot get past it either
    with pytest.raises(IllegalStateError):
        it.has_next()


def test_clear_drops_the_current_chunk():
    queue, info, stream = setup(consumed=0)
    info.enqueue(messages([0, 1, 2]))
    it = stream.iterator()
    assert next(it).offset == 0
    stream.clear()
    info.enqueue(messages([3]))
    assert next(it).offset == 3


def test_a_blocked_enqueue_gives_up_when_stopped():
    queue, info, stream = setup(consumed=0, capacity=1)
    assert info.enqueue(messages([0]))
    stop = threading.Event()
    result = []
    worker = threading.Thread(target=lambda: result.append(info.enqueue(messages([1]), stop=stop)))
    worker.start()
    worker.join(0.3)
    assert worker.is_alive()  # back-pressure: the queue is full
    stop.set()
    worker.join(5)
    assert result == [False]
    assert info.fetched_offset == 1  # only the first chunk counted
