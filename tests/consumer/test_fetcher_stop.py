"""A fetcher thread's stop is bounded by ``socket.timeout.ms``: one stuck in something it calls (here the connector's
offset-reset bookkeeping, held by the test) is reported by ``fetcher.stop_timed_out`` and left running, and it closes
its client itself once it gets out, against the real broker."""

from __future__ import annotations

import threading
import time

from structlog.testing import capture_logs
from support import wait_for
from time_scale import bounded, scaled

from zkconsumer.config import ConsumerConfig
from zkconsumer.consumer.consumer_fetcher_thread import STOP_SLACK_S, ConsumerFetcherThread
from zkconsumer.consumer.partition_topic_info import ChunkQueue, PartitionTopicInfo
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.kafka.topics import create_topic
from zkconsumer.types import TopicPartition

SOCKET_TIMEOUT_MS = 1000


def test_a_fetcher_that_does_not_stop_within_its_bound_is_reported_and_closes_its_client_when_it_ends(
        bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    # no ZooKeeper is asked: a fetcher thread talks to its broker only
    config = ConsumerConfig({"group.id": "fetcher-stop", "zookeeper.connect": "127.0.0.1:2181",
                             "socket.timeout.ms": SOCKET_TIMEOUT_MS, "fetch.wait.max.ms": 50,
                             "refresh.leader.backoff.ms": 50})
    tp = TopicPartition(topic_name, 0)
    info = PartitionTopicInfo(topic_name, 0, ChunkQueue(10), -1, -1, config.fetch_message_max_bytes, config.client_id)
    in_reset, release = threading.Event(), threading.Event()

    def on_offset_reset(_info: PartitionTopicInfo, _offset: int, _reason: str) -> None:
        in_reset.set()
        release.wait(bounded(30))

    broker = next(iter(fetch_metadata(admin_client(bootstrap_servers), bootstrap_servers).brokers.values()))
    thread = ConsumerFetcherThread("fetcher-stop_held", 0, broker, config, {tp: info}, lambda _partitions: None,
                                   on_offset_reset)
    thread.add_partitions({tp: -1})  # no committed offset: reset, which calls on_offset_reset
    with capture_logs() as events:
        thread.start()
        try:
            assert in_reset.wait(bounded(15))
            started = time.monotonic()
            thread.shutdown()
            waited = time.monotonic() - started
            assert thread.is_alive()
        finally:
            release.set()
        wait_for(lambda: not thread.is_alive())
    bound = SOCKET_TIMEOUT_MS / 1000 + STOP_SLACK_S
    assert bound - 0.1 <= waited < bound + scaled(1.0)
    names = [e["event"] for e in events if e["event"].startswith("fetcher.stop")]
    assert names == ["fetcher.stop_timed_out", "fetcher.stopped"]  # the thread closed its client, then said so
    timed_out = next(e for e in events if e["event"] == "fetcher.stop_timed_out")
    assert (timed_out["log_level"], timed_out["thread"]) == ("warning", thread.name)
    assert timed_out["waited_ms"] >= (bound - 0.1) * 1000
