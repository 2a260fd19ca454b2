"""The fetcher side of the data path (fetcher manager, leader finder, fetcher threads) against the real ZooKeeper
and broker.

A ConsumerFetcherManager is given PartitionTopicInfos as a rebalance would give them; the leader finder reads the
brokers the bridge registers in ZooKeeper (``kafka_zk``), and what reaches the chunk queues is checked message by
message. Nothing is mocked.
"""

from __future__ import annotations

import json
import queue
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest
from confluent_kafka import Producer
from structlog.testing import capture_logs
from support import produce_batched, wait_for
from time_scale import bounded, scaled

from zkconsumer.bridge.metadata_bridge import MetadataBridge
from zkconsumer.config import ConsumerConfig, identity_decoder
from zkconsumer.consumer.consumer_fetcher_manager import ConsumerFetcherManager, fetcher_id_for
from zkconsumer.consumer.consumer_fetcher_thread import ConsumerFetcherThread
from zkconsumer.consumer.kafka_stream import KafkaStream
from zkconsumer.consumer.partition_topic_info import INVALID_OFFSET, ChunkQueue, FetchedDataChunk, PartitionTopicInfo
from zkconsumer.errors import MessageSizeTooLargeException
from zkconsumer.kafka.metadata import BrokerMeta, admin_client, fetch_metadata
from zkconsumer.kafka.topics import create_topic
from zkconsumer.types import TopicPartition

GROUP = "fetcher-test"


def make_config(zk_connect: str, **properties: object) -> ConsumerConfig:
    """Short waits, so that a test sees a fetch or a leader lookup within a fraction of a second."""
    return ConsumerConfig({"group.id": GROUP, "zookeeper.connect": zk_connect, "refresh.leader.backoff.ms": 50,
                           "fetch.wait.max.ms": 50, **properties})


def new_consumer_id() -> str:
    return f"{GROUP}_fetcher-{uuid.uuid4().hex[:8]}"


def broker_id(bootstrap: str) -> int:
    brokers = fetch_metadata(admin_client(bootstrap), bootstrap).brokers
    assert len(brokers) == 1
    return next(iter(brokers))


def produce(bootstrap: str, topic: str, values: list[bytes], partition: int = 0) -> None:
    """Each message is flushed on its own, so each is a batch of its own: Tansu's ListOffsets "latest" is the base
    offset of the last batch + 1, which is the log end only when the last batch holds one message."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0})
    for value in values:
        producer.produce(topic, value=value, partition=partition)
        assert producer.flush(bounded(10)) == 0


def partition_info(topic: str, partition: int, chunks: ChunkQueue, offset: int,
                   config: ConsumerConfig) -> PartitionTopicInfo:
    """As the rebalance builds one: both offsets at the committed offset (-1 when there is none)."""
    return PartitionTopicInfo(topic, partition, chunks, offset, offset, config.fetch_message_max_bytes,
                              config.client_id)


@dataclass(frozen=True)
class Fetched:
    offset: int
    value: bytes | None


def take(chunks: ChunkQueue, count: int, timeout: float = 15.0) -> list[Fetched]:
    """Chunks until ``count`` messages arrived (FetcherTest.fetch): more than ``count`` is a failure too."""
    messages: list[Fetched] = []
    limit = bounded(timeout)
    deadline = time.monotonic() + limit
    while len(messages) < count:
        try:
            chunk = chunks.get(max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"{len(messages)} of {count} messages within {limit:.1f} s") from None
        messages.extend(map(Fetched, chunk.messages.offsets, chunk.messages.values))
    assert len(messages) == count
    return messages


def markers_arrive(bootstrap: str, topic: str, partition: int, chunks: ChunkQueue, rounds: int = 2) -> None:
    """Produce a marker to ``partition`` (fetched into ``chunks``) and take it, ``rounds`` times, each produced once the
    previous one arrived. A message already in the log of any partition the fetcher fetches comes in the same fetch
    response as the first marker or an earlier one, so in an earlier response than the last marker: a fetcher hands
    out what it fetched in order, so such a message has reached its queue before the last marker arrives, and a
    message that has not is one the fetcher did not fetch."""
    for number in range(rounds):
        marker = f"marker-{number}".encode()
        produce(bootstrap, topic, [marker], partition=partition)
        assert [m.value for m in take(chunks, 1)] == [marker]


class WatchedChunkQueue(ChunkQueue):
    """A stream's queue that says when a put found it full (and so waits for room: the fetcher's back-pressure)."""

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity)
        self.put_found_it_full = threading.Event()

    def put(self, chunk: FetchedDataChunk, stop: threading.Event | None = None) -> bool:
        if self.qsize() >= self.capacity:
            self.put_found_it_full.set()
        return super().put(chunk, stop)


@contextmanager
def fetching(consumer_id: str, config: ConsumerConfig, zk, infos: list[PartitionTopicInfo],
             on_offset_reset=None) -> Iterator[ConsumerFetcherManager]:
    manager = ConsumerFetcherManager(consumer_id, config, zk, on_offset_reset)
    manager.start_connections(infos)
    try:
        yield manager
    finally:
        manager.stop_connections()


def threads_of(consumer_id: str) -> list[str]:
    return [t.name for t in threading.enumerate() if consumer_id in t.name]


def events_named(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e["event"] == name]


def test_fetches_exactly_what_was_produced_twice(kafka_zk, zk, bootstrap_servers, topic_name):
    """FetcherTest: a manager started with one partition at offset 0 delivers exactly the produced messages, twice."""
    create_topic(bootstrap_servers, topic_name, 1)
    config = make_config(kafka_zk)
    consumer_id = new_consumer_id()
    chunks = ChunkQueue(100)
    info = partition_info(topic_name, 0, chunks, 0, config)
    manager = ConsumerFetcherManager(consumer_id, config, zk)
    manager.stop_connections()  # nothing started yet: nothing to do
    with capture_logs() as events:
        manager.start_connections([info])
        produce(bootstrap_servers, topic_name, [b"a0", b"a1", b"a2"])
        first = take(chunks, 3)
        assert [(m.offset, m.value) for m in first] == [(0, b"a0"), (1, b"a1"), (2, b"a2")]
        assert chunks.qsize() == 0
        produce(bootstrap_servers, topic_name, [b"b0", b"b1"])
        second = take(chunks, 2)
        assert [(m.offset, m.value) for m in second] == [(3, b"b0"), (4, b"b1")]
        assert chunks.qsize() == 0
        assert (info.fetched_offset, info.consumed_offset) == (5, 0)  # only the iterator moves the consumed offset
        tp = TopicPartition(topic_name, 0)
        assert manager.fetcher_assignment() == {(broker_id(bootstrap_servers), 0): (tp,)}
        assert manager.partitions_without_leader() == frozenset()
        assert f"ConsumerFetcherThread-{consumer_id}-0-{broker_id(bootstrap_servers)}" in threads_of(consumer_id)
        manager.stop_connections()
        manager.stop_connections()
    assert threads_of(consumer_id) == []
    assert manager.fetcher_assignment() == {}
    names = [e["event"] for e in events if e.get("consumer_id") == consumer_id]
    for name in ("fetcher_manager.connections_started", "leader_finder.started", "leader_finder.leaders_found",
                 "fetcher.started", "fetcher.partitions_added", "leader_finder.stopped", "fetcher.stopped"):
        assert name in names
    assert names.count("fetcher_manager.connections_stopped") == 1
    found = events_named(events, "leader_finder.leaders_found")[0]
    assert found["leaders"] == {f"{topic_name}-0": broker_id(bootstrap_servers)}
    added = events_named(events, "fetcher.partitions_added")[0]
    assert added["partitions"] == [f"{topic_name}-0"] and added["offsets"] == {f"{topic_name}-0": 0}
    enqueued = events_named(events, "fetcher.chunk_enqueued")
    assert sum(e["messages"] for e in enqueued) == 5
    assert enqueued[0]["topic"] == topic_name and enqueued[0]["partition"] == 0 and enqueued[0]["fetch_offset"] == 0


def test_a_fetcher_thread_adds_only_new_partitions_and_stops_fetching_removed_ones(kafka_zk, bootstrap_servers,
                                                                                   topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    config = make_config(kafka_zk)
    chunks = ChunkQueue(100)
    tp0, tp1 = TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)
    infos = {tp: partition_info(topic_name, tp.partition, chunks, 0, config) for tp in (tp0, tp1)}
    host, port = bootstrap_servers.rsplit(":", 1)
    failed: list[TopicPartition] = []
    consumer_id = new_consumer_id()
    thread = ConsumerFetcherThread(consumer_id, 0, BrokerMeta(broker_id(bootstrap_servers), host, int(port)),
                                   config, infos, failed.extend)
    thread.start()
    try:
        assert thread.add_partitions({tp0: 0}) == [tp0]
        assert thread.add_partitions({tp0: 5, tp1: 0}) == [tp1]  # tp0 keeps its own offset
        produce(bootstrap_servers, topic_name, [b"a"], partition=0)
        produce(bootstrap_servers, topic_name, [b"b"], partition=1)
        assert sorted((m.value, m.offset) for m in take(chunks, 2)) == [(b"a", 0), (b"b", 0)]
        assert thread.remove_partitions([tp1, TopicPartition("elsewhere", 0)]) == [tp1]
        assert thread.partitions() == (tp0,)
        produce(bootstrap_servers, topic_name, [b"c"], partition=1)
        produce(bootstrap_servers, topic_name, [b"d"], partition=0)
        assert [m.value for m in take(chunks, 1)] == [b"d"]
        markers_arrive(bootstrap_servers, topic_name, 0, chunks)  # "c" would have come before them
        assert chunks.qsize() == 0
        assert (infos[tp1].fetched_offset, infos[tp0].fetched_offset) == (1, 4)
    finally:
        started = time.monotonic()
        thread.shutdown()
    assert time.monotonic() - started < scaled(5)
    assert not thread.is_alive() and threads_of(consumer_id) == []
    assert failed == []


@pytest.mark.parametrize("policy", ["smallest", "largest"])
def test_auto_offset_reset_for_a_partition_without_offset(kafka_zk, zk, bootstrap_servers, topic_name, policy):
    """AutoOffsetResetTest with the committed offset -1. (The out-of-range path cannot be run here: Tansu answers a
    fetch beyond the log end with no records instead of OFFSET_OUT_OF_RANGE.)"""
    create_topic(bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic_name, [f"old{i}".encode() for i in range(5)])
    config = make_config(kafka_zk, **{"auto.offset.reset": policy})
    chunks = ChunkQueue(100)
    info = partition_info(topic_name, 0, chunks, INVALID_OFFSET, config)
    resets: list[tuple[PartitionTopicInfo, int, str, int]] = []
    expected = 0 if policy == "smallest" else 5

    def on_reset(pti: PartitionTopicInfo, offset: int, reason: str) -> None:
        resets.append((pti, offset, reason, pti.consumed_offset))

    with capture_logs() as events, fetching(new_consumer_id(), config, zk, [info], on_reset):
        wait_for(lambda: resets)
        assert resets == [(info, expected, "no_offset", expected)]
        if policy == "smallest":
            got = take(chunks, 5)
            assert [m.value for m in got] == [f"old{i}".encode() for i in range(5)]
        else:
            produce(bootstrap_servers, topic_name, [b"new"])
            got = take(chunks, 1)  # were any old message fetched, it would have come first
            assert [(m.offset, m.value) for m in got] == [(5, b"new")]
        assert info.consumed_offset == expected
        assert info.fetched_offset == got[-1].offset + 1
    (reset,) = events_named(events, "fetcher.offset_reset")
    assert reset["topic"] == topic_name and reset["partition"] == 0
    assert (reset["reason"], reset["policy"], reset["old_offset"], reset["new_offset"]) == \
        ("no_offset", policy, INVALID_OFFSET, expected)


def test_largest_starts_after_the_whole_last_batch(kafka_zk, zk, bootstrap_servers, topic_name):
    """``largest`` is the end of the log, even where the broker's ListOffsets answer trails it (Tansu says 1 after
    one batch of 300): not one of the old messages is fetched."""
    create_topic(bootstrap_servers, topic_name, 1)
    produce_batched(bootstrap_servers, topic_name, 0, 300, linger_ms=200)
    config = make_config(kafka_zk, **{"auto.offset.reset": "largest"})
    chunks = ChunkQueue(100)
    info = partition_info(topic_name, 0, chunks, INVALID_OFFSET, config)
    resets: list[int] = []
    with fetching(new_consumer_id(), config, zk, [info], lambda _pti, offset, _reason: resets.append(offset)):
        wait_for(lambda: resets)
        assert resets == [300]
        produce(bootstrap_servers, topic_name, [b"new"])
        got = take(chunks, 1)
        assert [(m.offset, m.value) for m in got] == [(300, b"new")]


def test_a_message_larger_than_the_fetch_size_fails_the_stream(kafka_zk, zk, bootstrap_servers, topic_name):
    """Partition 1, fetched by the same fetcher into a queue of its own, carries the markers that show what
    partition 0 would have received."""
    create_topic(bootstrap_servers, topic_name, 2)
    produce(bootstrap_servers, topic_name, [b"small", b"x" * 4096, b"after"])
    config = make_config(kafka_zk, **{"fetch.message.max.bytes": 1024})
    chunks, marker_chunks = ChunkQueue(config.queued_max_message_chunks), ChunkQueue(100)
    info = partition_info(topic_name, 0, chunks, 0, config)
    marker_info = partition_info(topic_name, 1, marker_chunks, 0, config)
    stream = KafkaStream(chunks, 10_000, identity_decoder, identity_decoder, config.client_id)
    with capture_logs() as events, fetching(new_consumer_id(), config, zk, [info, marker_info]) as manager:
        iterator = iter(stream)
        assert next(iterator).message == b"small"
        with pytest.raises(MessageSizeTooLargeException, match="partition 0 at fetch offset 1"):
            next(iterator)
        # The partition is not fetched any more (no refetch of the same message, nor of a new one), but still owned
        # by its fetcher.
        produce(bootstrap_servers, topic_name, [b"later"])
        markers_arrive(bootstrap_servers, topic_name, 1, marker_chunks)
        assert chunks.qsize() == 0
        assert info.fetched_offset == 1
        assert manager.fetcher_assignment() == {
            (broker_id(bootstrap_servers), 0): (TopicPartition(topic_name, 0), TopicPartition(topic_name, 1))}
    (too_large,) = events_named(events, "fetcher.message_too_large")
    assert (too_large["offset"], too_large["size"], too_large["fetch_message_max_bytes"]) == (1, 4096, 1024)


def test_stop_returns_while_a_fetcher_waits_on_a_full_queue(kafka_zk, zk, bootstrap_servers, topic_name):
    """A chunk holds at most fetch.message.max.bytes, so 20 messages of 60 bytes are 20 chunks for a one-chunk queue:
    the fetcher blocks in its put, and stopping must still be prompt and leave no thread behind."""
    create_topic(bootstrap_servers, topic_name, 1)
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    for i in range(20):
        producer.produce(topic_name, value=b"%02d" % i + b"." * 58, partition=0)
    assert producer.flush(bounded(10)) == 0
    config = make_config(kafka_zk, **{"fetch.message.max.bytes": 100, "queued.max.message.chunks": 1})
    chunks = WatchedChunkQueue(config.queued_max_message_chunks)
    info = partition_info(topic_name, 0, chunks, 0, config)
    consumer_id = new_consumer_id()
    manager = ConsumerFetcherManager(consumer_id, config, zk)
    manager.start_connections([info])
    try:
        wait_for(lambda: chunks.qsize() == 1 and info.fetched_offset == 1)
        wait_for(chunks.put_found_it_full.is_set)
        assert info.fetched_offset == 1  # the second put is waiting
    finally:
        started = time.monotonic()
        manager.stop_connections()
        elapsed = time.monotonic() - started
    assert elapsed < scaled(5)
    assert threads_of(consumer_id) == []
    assert list(chunks.get(0).messages.offsets) == [0]


def test_leader_finder_waits_for_a_registered_broker(zk_chroot, zk, bootstrap_servers, topic_name):
    """Without the bridge nothing is registered under /brokers/ids: the partition stays without leader until the
    bridge registers the broker."""
    create_topic(bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic_name, [b"m0", b"m1"])
    config = make_config(zk_chroot)
    chunks = ChunkQueue(10)
    info = partition_info(topic_name, 0, chunks, 0, config)
    tp = TopicPartition(topic_name, 0)
    consumer_id = new_consumer_id()
    with capture_logs() as events, fetching(consumer_id, config, zk, [info]) as manager:
        wait_for(lambda: events_named(events, "leader_finder.no_brokers"))
        assert events_named(events, "leader_finder.no_brokers")[0]["partitions"] == [f"{topic_name}-0"]
        assert chunks.qsize() == 0
        assert manager.fetcher_assignment() == {}
        assert manager.partitions_without_leader() == {tp}
        # A registration the leader finder cannot read is an error it logs and retries, not the end of the thread.
        zk.create("/brokers/ids/7", b"not json", makepath=True)
        wait_for(lambda: [e for e in events_named(events, "leader_finder.error") if e["stage"] == "zookeeper"])
        zk.delete("/brokers/ids/7")
        assert chunks.qsize() == 0
        with MetadataBridge(zk_chroot, bootstrap_servers, interval_ms=250).running():
            assert [m.value for m in take(chunks, 2)] == [b"m0", b"m1"]
            assert manager.partitions_without_leader() == frozenset()
    assert threads_of(consumer_id) == []


def test_partitions_are_spread_over_fetcher_ids(kafka_zk, zk, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 4)
    config = make_config(kafka_zk, **{"num.consumer.fetchers": 2})
    chunks = ChunkQueue(100)
    infos = [partition_info(topic_name, p, chunks, 0, config) for p in range(4)]
    consumer_id = new_consumer_id()
    broker = broker_id(bootstrap_servers)
    expected: dict[tuple[int, int], list[TopicPartition]] = {}
    for p in range(4):
        expected.setdefault((broker, fetcher_id_for(topic_name, p, 2)), []).append(TopicPartition(topic_name, p))
    assert {fetcher for _, fetcher in expected} == {0, 1}  # consecutive sums alternate between the two
    with fetching(consumer_id, config, zk, infos) as manager:
        wait_for(lambda: sum(len(ps) for ps in manager.fetcher_assignment().values()) == 4)
        assert manager.fetcher_assignment() == {key: tuple(ps) for key, ps in expected.items()}
        assert sorted(threads_of(consumer_id)) == sorted(
            [f"{consumer_id}-leader-finder-thread"]
            + [f"ConsumerFetcherThread-{consumer_id}-{fetcher}-{broker}" for _, fetcher in expected]
        )
        for p in range(4):
            produce(bootstrap_servers, topic_name, [f"p{p}".encode()], partition=p)
        got = take(chunks, 4)
        assert sorted(m.value for m in got) == [b"p0", b"p1", b"p2", b"p3"]
    assert threads_of(consumer_id) == []


def test_fetcher_id_is_kafkas_formula():
    # "topic".hashCode() = 110546223; 31 * that overflows to -868034383, whose abs is odd.
    assert fetcher_id_for("topic", 0, 2) == 1
    assert fetcher_id_for("topic", 1, 2) == 0
    assert fetcher_id_for("topic1", 5, 3) == 1
    assert fetcher_id_for("a", 0, 7) == 3007 % 7
    assert fetcher_id_for("orders", 2, 4) == 1207109187 % 4
    assert fetcher_id_for("anything", 5, 1) == 0
    # 31 * "t0".hashCode() + 2147370684 is Int.MinValue, whose abs Kafka 0.10 takes as 0 (a plain abs gives 2 here).
    assert fetcher_id_for("t0", 2147370684, 3) == 0


def test_a_rebalance_does_not_wait_for_a_leader_finder_in_the_middle_of_a_request(zk_chroot, zk, topic_name):
    """The broker registered here accepts connections and never answers: the leader finder stays in its Metadata
    request (a slice of it at a time). A rebalance's stop tells it to stop and returns without waiting for the
    request; the thread ends on its own afterwards, and what it was told to stop for is never touched by it again:
    a stopped finder takes nothing from the no-leader set, returns nothing to it and stops no fetcher."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        zk.create("/brokers/ids/1", json.dumps({"version": 1, "host": "127.0.0.1", "port": port}).encode(),
                  makepath=True)
        config = make_config(zk_chroot)
        consumer_id = new_consumer_id()
        tp = TopicPartition(topic_name, 0)
        manager = ConsumerFetcherManager(consumer_id, config, zk)
        with capture_logs() as events:
            manager.start_connections([partition_info(topic_name, 0, ChunkQueue(10), 0, config)])
            finder = next(t for t in threading.enumerate() if t.name == f"{consumer_id}-leader-finder-thread")
            silent.settimeout(bounded(15))
            connection, _ = silent.accept()  # the finder's client connected: its request waits for an answer
            with connection:
                manager.stop_connections(wait_for_leader_finder=False)
                assert finder.is_alive()  # still in a request of the silent broker, which can only end with a slice
                stopped = [e["event"] for e in events if e.get("consumer_id") == consumer_id]
                assert "fetcher_manager.connections_stopped" in stopped and "leader_finder.stopped" not in stopped
                # The next generation: a stopped finder's calls leave it alone, a running one's do not.
                info = partition_info(topic_name, 0, ChunkQueue(10), 0, config)
                manager.start_connections([info])
                told_to_stop, running = threading.Event(), threading.Event()
                told_to_stop.set()
                leader = BrokerMeta(1, "127.0.0.1", port)
                assert manager.take_partitions_with_leader({tp: leader}, told_to_stop) == {}
                assert manager.partitions_without_leader() == {tp}
                assert set(manager.take_partitions_with_leader({tp: leader}, running)) == {tp}
                manager.add_partitions_with_error([tp], told_to_stop)
                assert manager.partitions_without_leader() == frozenset()
                manager.add_partitions_with_error([tp], running)
                assert manager.partitions_without_leader() == {tp}
                wait_for(lambda: not finder.is_alive(), timeout=30)
            manager.stop_connections()
    assert threads_of(consumer_id) == []
