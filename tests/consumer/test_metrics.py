"""Prometheus metrics under the legacy names: the pure mapping, the bad configurations, and running consumers
scraped over real HTTP."""

from __future__ import annotations

import socket
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families
from support import produce, take, wait_for
from time_scale import bounded

from zkconsumer.config import ConsumerConfig, InvalidConfigError
from zkconsumer.consumer.metrics import (
    ConnectorMeters,
    MeterReadings,
    MetricsSnapshot,
    OwnedPartition,
    QueueSize,
    metric_families,
)
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.embedded.process import free_port
from zkconsumer.kafka.topics import create_topic
from zkconsumer.types import TopicPartition

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def samples_of(text: str) -> Samples:
    """Every sample of an exposition, by name and sorted labels."""
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples[(name, tuple(sorted(labels.items())))]


def scrape(connector: ZookeeperConsumerConnector) -> Samples:
    assert connector.metrics_endpoint is not None
    with urllib.request.urlopen(connector.metrics_endpoint.url, timeout=bounded(10)) as answer:
        assert answer.status == 200
        return samples_of(answer.read().decode())


def exposition(snapshot: MetricsSnapshot) -> Samples:
    from prometheus_client import CollectorRegistry, generate_latest

    class Fixed:
        def collect(self):
            return metric_families(snapshot)

    registry = CollectorRegistry(auto_describe=False)
    registry.register(Fixed())  # type: ignore[arg-type]
    return samples_of(generate_latest(registry).decode())


def test_a_snapshot_becomes_the_legacy_metrics() -> None:
    meters = ConnectorMeters()
    meters.fetched("t", 300)
    meters.taken("t", 30)
    meters.committed("zookeeper", 2)
    meters.rebalanced(0.2)
    meters.rebalanced(70.0, failed=True)
    meters.fetch_timed(("b1", 9092), 0.3)
    meters.fetch_timed(("b1", 9092), 100.0)
    meters.fetch_timed(("b1", 9092), 5000.0)
    snapshot = MetricsSnapshot(
        "c1", "g1",
        owned=(OwnedPartition("t", 0, "g1_a-0", 10, 12), OwnedPartition("t", 1, "g1_a-0", -1, -1),
               OwnedPartition("u", 0, "g1_a-1", 5, 5)),
        queues=(QueueSize("t", "g1_a-0", 2), QueueSize("u", "g1_a-1", 0)),
        readings=meters.read(),
        log_ends={TopicPartition("t", 0): 25, TopicPartition("t", 1): 7})
    samples = exposition(snapshot)
    assert value(samples, "kafka_consumer_messages_total", client_id="c1", topic="t") == 30
    assert value(samples, "kafka_consumer_bytes_total", client_id="c1", topic="t") == 300
    assert value(samples, "kafka_consumer_lag", client_id="c1", topic="t", partition="0") == 15
    # no lag where the consumed offset is not known yet (-1), nor where the end of the log is not
    assert not [key for key in samples if key[0] == "kafka_consumer_lag" and ("topic", "t") not in key[1]]
    assert len([key for key in samples if key[0] == "kafka_consumer_lag"]) == 1
    assert value(samples, "kafka_consumer_owned_partitions", client_id="c1", group_id="g1", topic="t") == 2
    assert value(samples, "kafka_consumer_owned_partitions", client_id="c1", group_id="g1", topic="u") == 1
    assert value(samples, "kafka_consumer_fetch_queue_size", client_id="c1", topic="t", thread_id="g1_a-0") == 2
    assert value(samples, "kafka_consumer_rebalance_seconds_count", client_id="c1") == 2
    assert value(samples, "kafka_consumer_rebalance_seconds_sum", client_id="c1") == pytest.approx(70.2)
    assert value(samples, "kafka_consumer_rebalance_seconds_bucket", client_id="c1", le="0.25") == 1
    assert value(samples, "kafka_consumer_rebalance_seconds_bucket", client_id="c1", le="60.0") == 1
    assert value(samples, "kafka_consumer_rebalance_seconds_bucket", client_id="c1", le="+Inf") == 2
    assert value(samples, "kafka_consumer_failed_rebalances_total", client_id="c1") == 1
    assert value(samples, "kafka_consumer_zookeeper_commits_total", client_id="c1") == 2
    assert value(samples, "kafka_consumer_kafka_commits_total", client_id="c1") == 0
    broker = {"client_id": "c1", "broker_host": "b1", "broker_port": "9092"}
    assert value(samples, "kafka_consumer_fetch_request_time_ms_count", **broker) == 3
    assert value(samples, "kafka_consumer_fetch_request_time_ms_sum", **broker) == pytest.approx(5100.3)
    assert value(samples, "kafka_consumer_fetch_request_time_ms_bucket", le="0.25", **broker) == 0
    assert value(samples, "kafka_consumer_fetch_request_time_ms_bucket", le="0.5", **broker) == 1
    assert value(samples, "kafka_consumer_fetch_request_time_ms_bucket", le="100.0", **broker) == 2
    assert value(samples, "kafka_consumer_fetch_request_time_ms_bucket", le="1000.0", **broker) == 2
    assert value(samples, "kafka_consumer_fetch_request_time_ms_bucket", le="+Inf", **broker) == 3


def test_an_empty_snapshot_still_shows_every_counter() -> None:
    samples = exposition(MetricsSnapshot("c1", "g1", (), (), MeterReadings()))
    assert value(samples, "kafka_consumer_rebalance_seconds_count", client_id="c1") == 0
    assert value(samples, "kafka_consumer_zookeeper_commits_total", client_id="c1") == 0


@pytest.mark.parametrize(("raw", "why"), [("-1", "must be at least 0"), ("65536", "must be at most 65535"),
                                          ("http", "expected a whole number")])
def test_a_bad_metrics_port_names_the_key(raw: str, why: str) -> None:
    with pytest.raises(InvalidConfigError, match=f"config metrics.http.port='{raw}': {why}"):
        ConsumerConfig({"group.id": "g", "zookeeper.connect": "127.0.0.1:1", "metrics.http.port": raw})


def test_a_port_in_use_fails_the_construction_naming_the_key() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        config = ConsumerConfig({"group.id": "g", "zookeeper.connect": f"127.0.0.1:{free_port()}",
                                 "metrics.http.port": port, "metrics.http.host": "127.0.0.1"})
        with pytest.raises(InvalidConfigError, match=rf"^config metrics.http.port={port}: cannot serve metrics on "
                                                     rf"127.0.0.1:{port} \(Address already in use\)"):
            ZookeeperConsumerConnector(config)


@pytest.mark.timeout(130)  # its waits, summed: 6 x 15 s for the consumers, 20 s to take, 2 s for the closed port
def test_two_consumers_in_one_process_are_scraped_over_http(zk, kafka_zk, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/1/state"))
    values = [f"value-{i}".encode() for i in range(10)]
    produce(bootstrap_servers, topic_name, values[:6], partition=0)
    produce(bootstrap_servers, topic_name, values[6:], partition=1)
    props = {"zookeeper.connect": kafka_zk, "group.id": "scraped", "auto.offset.reset": "smallest",
             "consumer.timeout.ms": 200, "auto.commit.enable": "false", "rebalance.backoff.ms": 200,
             "metrics.http.port": 0, "metrics.http.host": "127.0.0.1"}
    first = ZookeeperConsumerConnector(ConsumerConfig({**props, "consumer.id": "first"}))
    second = None
    try:
        stream = first.create_message_streams({topic_name: 1})[topic_name][0]
        # The starting offsets are written behind the fetchers, and one that lands after its partition was consumed
        # past it is (rightly) skipped: wait for both before consuming, so that the count below is not a race.
        wait_for(lambda: all(zk.exists(f"/consumers/scraped/offsets/{topic_name}/{p}") for p in (0, 1)))
        assert len(take(stream, 10)) == 10
        first.commit_offsets()
        samples = scrape(first)
        assert value(samples, "kafka_consumer_messages_total", client_id="scraped", topic=topic_name) == 10
        assert value(samples, "kafka_consumer_bytes_total", client_id="scraped", topic=topic_name) == sum(
            map(len, values))
        assert value(samples, "kafka_consumer_owned_partitions", client_id="scraped", group_id="scraped",
                     topic=topic_name) == 2
        # two starting offsets (the group had none), then the two consumed offsets
        wait_for(lambda: value(scrape(first), "kafka_consumer_zookeeper_commits_total", client_id="scraped") == 4)
        assert value(samples, "kafka_consumer_rebalance_seconds_count", client_id="scraped") == 1
        assert value(samples, "kafka_consumer_fetch_queue_size", client_id="scraped", topic=topic_name,
                     thread_id="scraped_first-0") == 0
        assert {value(samples, "kafka_consumer_lag", client_id="scraped", topic=topic_name, partition=p)
                for p in ("0", "1")} == {0}
        # FetchRequestRateAndTimeMs: the fetches of the one fetcher thread (one broker), counted and timed
        fetches = {labels: v for (name, labels), v in samples.items()
                   if name == "kafka_consumer_fetch_request_time_ms_count"}
        assert len(fetches) == 1
        (labels, fetched), = fetches.items()
        assert dict(labels)["client_id"] == "scraped" and int(dict(labels)["broker_port"]) > 0
        assert fetched >= 1
        assert samples[("kafka_consumer_fetch_request_time_ms_bucket", tuple(sorted({**dict(labels),
                                                                                     "le": "+Inf"}.items())))] \
            == fetched
        assert samples[("kafka_consumer_fetch_request_time_ms_sum", labels)] > 0
        # an idle fetcher keeps fetching (each wait for a first message is one fetch)
        wait_for(lambda: scrape(first)[("kafka_consumer_fetch_request_time_ms_count", labels)] > fetched)
        # Produced, fetched perhaps, not handed out: the lag counts it.
        produce(bootstrap_servers, topic_name, [b"late", b"later"], partition=1)
        wait_for(lambda: value(scrape(first), "kafka_consumer_lag", client_id="scraped", topic=topic_name,
                               partition="1") == 2)

        # A second connector in the same process: its own registry and port, no clash, and the group splits.
        second = ZookeeperConsumerConnector(ConsumerConfig({**props, "consumer.id": "second"}))
        second.create_message_streams({topic_name: 1})
        assert first.metrics_endpoint is not None and second.metrics_endpoint is not None
        assert first.metrics_endpoint.port != second.metrics_endpoint.port
        wait_for(lambda: first.metrics.owned_partitions == 1 and second.metrics.owned_partitions == 1)
        for connector in (first, second):
            samples = scrape(connector)
            assert value(samples, "kafka_consumer_owned_partitions", client_id="scraped", group_id="scraped",
                         topic=topic_name) == 1
        assert value(scrape(first), "kafka_consumer_rebalance_seconds_count", client_id="scraped") == 2
    finally:
        port = first.metrics_endpoint.port if first.metrics_endpoint is not None else None
        first.shutdown()
        if second is not None:
            second.shutdown()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=bounded(2)):
        pass  # shutdown closed the endpoint
