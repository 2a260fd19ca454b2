"""Kafka's ConsumerIteratorTest ported, and the iterator's state machine, at the queue level: no servers needed,
because nothing here talks to one (chunks are what a fetcher would enqueue)."""

from __future__ import annotations

import gc
import pickle
import sys
import threading
import weakref
from pathlib import Path

import pytest
from confluent_kafka import Message
from time_scale import bounded, scaled

from zkconsumer.config import identity_decoder
from zkconsumer.consumer import partition_topic_info
from zkconsumer.consumer.consumer_iterator import IllegalStateError, MessageAndMetadata
from zkconsumer.consumer.kafka_stream import KafkaStream
from zkconsumer.consumer.message_and_metadata import FetchedRecords
from zkconsumer.consumer.partition_topic_info import ChunkQueue, PartitionTopicInfo
from zkconsumer.errors import ConsumerTimeoutException, MessageSizeTooLargeException


def setup(consumed: int = 5, fetched: int = 0, capacity: int = 4, timeout_ms: int = 200, decoder=None):
    queue = ChunkQueue(capacity, "topic/0")
    info = PartitionTopicInfo("topic", 0, queue, consumed, fetched, 1024, "client")
    stream = KafkaStream(queue, timeout_ms, decoder or (lambda b: b), decoder or (lambda b: b), "client", "s")
    return queue, info, stream


def messages(offsets, topic: str = "topic", partition: int = 0) -> FetchedRecords:
    """What a fetcher enqueues: the records of librdkafka's messages (confluent-kafka's Message, made by hand here)."""
    return FetchedRecords.of([Message(topic=topic, partition=partition, offset=o, value=str(o).encode())
                              for o in offsets], topic, partition)


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
    info.enqueue(None, too_large=True)
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
    worker.join(scaled(0.3))
    assert worker.is_alive()  # back-pressure: the queue is full
    stop.set()
    worker.join(bounded(5))
    assert result == [False]
    assert info.fetched_offset == 1  # only the first chunk counted


def test_each_message_a_for_loop_hands_out_moves_the_consumed_offset_and_nothing_else_does():
    queue, info, stream = setup(consumed=0)
    info.enqueue(messages([0, 1, 2]))
    info.enqueue(messages([3, 4]))
    seen = []
    for m in stream:
        seen.append((m.offset, info.consumed_offset))
        if m.offset == 3:
            break
    assert seen == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert info.consumed_offset == 4  # 4 is fetched, in the current chunk, not handed out
    it = stream.iterator()
    assert it.has_next() and info.consumed_offset == 4
    assert next(iter(stream)).offset == 4  # a new loop goes on where the last one stopped
    assert info.consumed_offset == 5


def test_chunks_hand_out_the_rest_of_a_chunk_at_once_and_end_at_the_sentinel():
    queue, info, stream = setup(consumed=2)
    info.enqueue(messages(range(6)))
    info.enqueue(messages([6, 7]))
    queue.put_sentinel()
    it = stream.iterator()
    assert next(it).offset == 2
    assert [m.offset for m in it.next_chunk(max_messages=2)] == [3, 4]
    assert info.consumed_offset == 5  # the whole list counts as handed out
    assert [[m.offset for m in batch] for batch in stream.chunks()] == [[5], [6, 7]]
    assert info.consumed_offset == 8
    assert not it.has_next()
    with pytest.raises(StopIteration):
        it.next_chunk()


def test_chunks_time_out_like_next_and_go_on_afterwards():
    queue, info, stream = setup(consumed=0)
    with pytest.raises(ConsumerTimeoutException):
        next(stream.chunks())
    info.enqueue(messages([0, 1]))
    assert [m.offset for m in next(stream.chunks())] == [0, 1]
    with pytest.raises(ValueError, match="max_messages"):
        stream.iterator().next_chunk(max_messages=0)
    with pytest.raises(ValueError, match="max_messages"):
        stream.chunks(max_messages=-1)


def test_a_rebalance_clear_stops_a_running_loop_at_what_was_handed_out():
    queue, info, stream = setup(consumed=0)
    info.enqueue(messages([0, 1, 2, 3]))
    loop = iter(stream)
    assert next(loop).offset == 0
    stream.clear()  # the rebalance thread: messages 1..3 go back to the next owner
    assert info.consumed_offset == 1
    info.enqueue(messages([7]))
    assert next(loop).offset == 7  # not 1: the dropped chunk is not handed out by the loop either


def test_a_message_has_next_promised_is_still_handed_out_after_a_clear():
    """Kafka's IteratorTemplate kept the peeked item; handed out after a clear, it does not move the (released)
    partition's offset."""
    queue, info, stream = setup(consumed=0)
    info.enqueue(messages([0, 1, 2]))
    it = stream.iterator()
    assert next(it).offset == 0
    assert it.has_next()
    stream.clear()
    assert next(iter(stream)).offset == 1
    assert info.consumed_offset == 1
    with pytest.raises(ConsumerTimeoutException):
        next(it)


def test_a_reset_of_the_consumed_offset_holds_until_the_next_hand_out():
    queue, info, stream = setup(consumed=0)
    info.enqueue(messages([0, 1, 2]))
    loop = iter(stream)
    assert next(loop).offset == 0
    info.reset_consume_offset(42)  # the fetcher's auto.offset.reset, as Kafka's resetConsumeOffset
    assert info.consumed_offset == 42
    assert next(loop).offset == 1
    assert info.consumed_offset == 2


def test_a_finished_chunk_is_let_go_before_the_stream_waits_for_the_next():
    queue, info, stream = setup(consumed=0)
    records = messages([0, 1, 2])
    unheld = sys.getrefcount(records)
    info.enqueue(records)
    loop = iter(stream)
    assert [next(loop).offset for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ConsumerTimeoutException):
        next(loop)  # the wait for the next chunk, which does not come
    assert sys.getrefcount(records) == unheld  # the stream holds nothing of the chunk it finished
    assert info.consumed_offset == 3
    info.reset_consume_offset(7)  # a reset while the stream waits holds as at any other moment
    assert info.consumed_offset == 7
    info.enqueue(messages([7, 8]))
    assert next(iter(stream)).offset == 7
    assert info.consumed_offset == 8


def test_a_finished_chunk_is_let_go_before_has_next_waits_for_the_next():
    queue, info, stream = setup(consumed=0)
    records = messages([0, 1])
    unheld = sys.getrefcount(records)
    info.enqueue(records)
    it = stream.iterator()
    offsets = []
    while len(offsets) < 2 and it.has_next():
        offsets.append(next(it).offset)
    assert offsets == [0, 1]
    with pytest.raises(ConsumerTimeoutException):
        it.has_next()  # the wait for the next chunk, which does not come
    assert sys.getrefcount(records) == unheld


def test_a_fetcher_waits_after_a_put_into_an_empty_queue_until_the_reader_is_back_for_the_next_chunk(monkeypatch):
    monkeypatch.setattr(partition_topic_info, "_TURN_S", 30.0)  # so that only the reader's return ends the wait
    queue, info, stream = setup(consumed=0)
    loop = iter(stream)
    handed = threading.Event()
    go_on = threading.Event()
    seen = []

    def read():
        seen.append(next(loop).offset)
        handed.set()
        go_on.wait(bounded(10))
        seen.append(next(loop).offset)
        with pytest.raises(ConsumerTimeoutException):
            next(loop)  # back once more, which ends the second put's turn

    reader = threading.Thread(target=read)
    reader.start()
    put = threading.Thread(target=lambda: (info.enqueue(messages([0])), queue.wait_turn()))
    put.start()
    assert handed.wait(bounded(10))
    put.join(scaled(0.3))
    assert put.is_alive()  # the reader has the chunk and has not come back for the next
    assert info.fetched_offset == 1  # the put and its bookkeeping are done: only the next batch waits
    go_on.set()
    put.join(bounded(10))
    assert not put.is_alive()  # back for the next chunk: its turn is over
    assert info.enqueue(messages([1]))
    queue.wait_turn()
    reader.join(bounded(10))
    assert seen == [0, 1] and info.consumed_offset == 2


def test_a_fetcher_does_not_wait_after_a_put_into_a_queue_the_reader_has_not_emptied(monkeypatch):
    monkeypatch.setattr(partition_topic_info, "_TURN_S", 30.0)  # a wait that happened would outlast the test
    queue, info, _ = setup(consumed=0)
    assert info.enqueue(messages([0]))  # into the empty queue: a turn no reader ends (none reads yet)
    done = threading.Event()

    def another_fetcher():  # its partition led by another broker, say
        assert info.enqueue(messages([1]))
        queue.wait_turn()  # its put found the queue not empty: no turn of its own to wait out
        done.set()

    threading.Thread(target=another_fetcher, daemon=True).start()
    assert done.wait(bounded(10))
    assert info.enqueue(messages([2]))
    queue.wait_turn()  # the same for the first fetcher's next put
    assert queue.qsize() == 3


def test_message_and_metadata_fields_with_the_default_decoders():
    queue = ChunkQueue(2, "t/0")
    info = PartitionTopicInfo("t", 3, queue, 0, 0, 1024, "client")
    stream = KafkaStream(queue, 200, identity_decoder, identity_decoder, "client", "s")
    record = Message(topic="t", partition=3, offset=0, key=b"k", value=b"v", timestamp=(1, 1_700_000_000_000))
    info.enqueue(FetchedRecords.of([record], "t", 3))
    m = next(iter(stream))
    assert (m.topic, m.partition, m.offset, m.key, m.message, m.raw_key, m.raw_message) == \
        ("t", 3, 0, b"k", b"v", b"k", b"v")
    assert (m.timestamp, m.timestamp_type) == (1_700_000_000_000, 1)
    assert m.key_decoder is identity_decoder and m.value_decoder is identity_decoder
    for name in ("raw_message", "message", "offset", "topic"):  # immutable, as Kafka's case class
        with pytest.raises(AttributeError):
            setattr(m, name, None)
    assert repr(m) == "MessageAndMetadata(topic='t', partition=3, offset=0, key=b'k', message=b'v')"
    assert isinstance(m, MessageAndMetadata)
    # the same message fetched again (another librdkafka object) is equal; another timestamp is not
    again = Message(topic="t", partition=3, offset=0, key=b"k", value=b"v", timestamp=(1, 1_700_000_000_000))
    later = Message(topic="t", partition=3, offset=0, key=b"k", value=b"v", timestamp=(1, 1_700_000_000_001))
    info.reset_fetch_offset(0)
    info.reset_consume_offset(0)
    info.enqueue(FetchedRecords.of([again], "t", 3))
    assert next(iter(stream)) == m and hash(m) == hash(pickle.loads(pickle.dumps(m))) and m == pickle.loads(
        pickle.dumps(m))
    assert m != type(m)(b"v", later)


def test_messages_kept_by_the_object_whose_method_decodes_them_are_collected_with_it():
    """A stream's decoder that is a bound method of the object keeping its messages makes a cycle through the
    messages' class; the cycle is collected (the stream's messages are then tracked by the collector)."""

    class Worker:
        def __init__(self) -> None:
            self.pending: list = []
            queue, info, self.stream = setup(consumed=0, decoder=self.decode)
            info.enqueue(FetchedRecords.of([Message(topic="topic", partition=0, offset=o, value=b"v")
                                            for o in range(3)], "topic", 0))

        def decode(self, data: bytes | None) -> bytes | None:
            return data

        def run(self) -> None:
            loop = iter(self.stream)
            self.pending.extend(next(loop) for _ in range(3))

    workers = []
    for _ in range(3):
        worker = Worker()
        worker.run()
        assert [m.message for m in worker.pending] == [b"v"] * 3
        workers.append(weakref.ref(worker))
        del worker
    gc.collect()
    assert [ref() for ref in workers] == [None, None, None]


def test_rich_pretty_prints_a_message_as_its_repr(monkeypatch):
    # rich is kept out of the suite's environment (structlog would import it into every process the suite starts);
    # the checks' environment beside it has it (scripts/bootstrap.sh)
    checks = sorted(Path(f"{sys.prefix}-checks").glob("lib/python*/site-packages"))
    if checks:
        monkeypatch.syspath_prepend(str(checks[0]))
    pretty = pytest.importorskip("rich.pretty")
    queue, info, stream = setup(consumed=0, decoder=identity_decoder)
    info.enqueue(FetchedRecords.of([Message(topic="topic", partition=0, offset=0, key=b"k", value=b"v")], "topic", 0))
    m = next(iter(stream))
    assert pretty.pretty_repr(m) == repr(m) == \
        "MessageAndMetadata(topic='topic', partition=0, offset=0, key=b'k', message=b'v')"


def shouted(data: bytes | None) -> bytes:  # a decoder of the module: pickled by reference
    return (data or b"").upper()


def test_a_decoded_message_pickles_with_its_decoders_and_messages_sort_by_offset():
    queue, info, stream = setup(consumed=0, decoder=shouted)
    info.enqueue(FetchedRecords.of([Message(topic="topic", partition=0, offset=o, value=v)
                                    for o, v in ((0, b"b"), (1, b"a"), (2, b"a"), (3, None))], "topic", 0))
    loop = iter(stream)
    got = [next(loop) for _ in range(4)]
    back = pickle.loads(pickle.dumps(got[1]))
    assert back == got[1] and back.message == b"A" and back.value_decoder is shouted
    assert [m.offset for m in sorted(reversed(got))] == [0, 1, 2, 3]  # equal values and a None value included
    assert max(got).offset == 3 and got[0] < got[1]


def test_decoders_run_on_every_read():
    calls = []

    def marked(data):
        calls.append(data)
        return data + b"!"

    queue, info, stream = setup(consumed=0, decoder=marked)
    info.enqueue(messages([0]))
    m = next(iter(stream))
    assert calls == []
    assert (m.message, m.message) == (b"0!", b"0!")
    assert calls == [b"0", b"0"]


def test_record_batches_hand_out_columns_and_move_the_consumed_offset_past_them():
    queue, info, stream = setup(consumed=1)
    info.enqueue(messages(range(5)))
    info.enqueue(messages([5, 6]))
    queue.put_sentinel()
    it = stream.iterator()
    assert next(it).offset == 1
    first = it.next_records(max_messages=2)
    assert (list(first.offsets), list(first.values), first.value_bytes) == ([2, 3], [b"2", b"3"], 2)
    assert (first.topic, first.partition, info.consumed_offset) == ("topic", 0, 4)
    batches = list(stream.record_batches())
    assert [list(b.offsets) for b in batches] == [[4], [5, 6]]
    assert info.consumed_offset == 7
    with pytest.raises(StopIteration):
        it.next_records()


def test_a_clear_drops_exactly_what_a_record_batch_did_not_take():
    queue, info, stream = setup(consumed=0)
    info.enqueue(messages(range(4)))
    it = stream.iterator()
    assert list(it.next_records(max_messages=3).offsets) == [0, 1, 2]
    stream.clear()
    assert info.consumed_offset == 3  # message 3 goes to the next owner
    info.enqueue(messages([9]))
    assert list(it.next_records().offsets) == [9]  # not 3: the dropped chunk is not handed out either
    assert info.consumed_offset == 10


def test_a_full_queue_makes_room_for_the_shutdown_sentinel_and_a_take_or_a_clear_gives_places_back():
    queue, info, stream = setup(consumed=0, capacity=2)
    info.enqueue(messages([0]))
    info.enqueue(messages([1]))
    stopped = threading.Event()
    stopped.set()
    assert not info.enqueue(messages([2]), stop=stopped)  # full: the put gives up once stopped
    assert [m.offset for m in stream.iterator().next_chunk()] == [0]  # a take gives a place back
    assert info.enqueue(messages([2]), stop=stopped)
    queue.put_sentinel()  # full again: cleared, then the sentinel goes in
    assert queue.qsize() == 1 and list(stream) == []
    assert info.enqueue(messages([3]), stop=stopped) and info.enqueue(messages([4]), stop=stopped)
    assert not info.enqueue(messages([5]), stop=stopped)
    assert queue.clear() == 2 and info.enqueue(messages([5]), stop=stopped)


def test_record_batch_columns_are_librdkafka_s_fields_and_a_slice_counts_its_own_bytes():
    sources = [Message(topic="t", partition=1, offset=7, key=b"a", value=b"xyz", timestamp=(1, 10)),
               Message(topic="t", partition=1, offset=9, key=None, value=None, timestamp=(2, 11)),
               Message(topic="t", partition=1, offset=10, key=b"c", value=b"zz", timestamp=(1, 12))]
    records = FetchedRecords.of(sources, "t", 1)
    assert (records.offsets, records.values, records.keys) == ([7, 9, 10], [b"xyz", None, b"zz"], [b"a", None, b"c"])
    assert records.timestamps == [(1, 10), (2, 11), (1, 12)] and records.value_bytes == 5
    assert (records.first_offset, records.last_offset, len(records)) == (7, 10, 3)
    assert records.since(8).offsets == [9, 10] and records.since(8).value_bytes == 2
    assert records.since(7) is records and len(records.since(11)) == 0
    assert records.slice(0, 2).keys == [b"a", None] and records.slice(0, 2).value_bytes == 3
