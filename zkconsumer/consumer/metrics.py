"""The legacy consumer's metrics, for Prometheus, under names an operator of Kafka 0.10 recognises.

Kafka 0.10's consumer published yammer metrics over JMX (``kafka.consumer:type=ConsumerTopicMetrics,
name=MessagesPerSec,clientId=...``); dashboards and alerts were built on them. Here each becomes a Prometheus metric
with the same labels in Prometheus' spelling (``client_id``, ``group_id``, ``topic``, ``partition``,
``thread_id``); ``docs/metrics.md`` maps every MBean to its metric. Yammer's meters were rates; Prometheus computes
rates from counters (``rate(kafka_consumer_messages_total[1m])``), so a meter becomes a counter and a timer a
histogram.

Nothing here runs on the consumer's paths unless metrics are asked for (``metrics.http.port``): the connector then
counts into a :class:`ConnectorMeters` (a chunk handed to a stream's queue, a chunk taken by a stream, a fetch, a
commit, a rebalance: each a few integer additions under a lock, per chunk or per fetch, never per message). The
fetcher threads find the meters on the streams' queues (:class:`MeteredChunkQueue`), the one thing of the
connector's they are handed, so the connector has nothing more to pass them. Everything else is read
when Prometheus scrapes: owned partitions and their offsets, queue sizes, and the end of each owned partition's log
(asked of the brokers at that moment, :func:`read_log_ends`). The scrape turns a :class:`MetricsSnapshot` into metric
families with a pure function (:func:`metric_families`).

Each connector has its own ``CollectorRegistry`` and HTTP server (:class:`MetricsEndpoint`), opened at construction
and closed by ``shutdown()``, so several connectors in one process never register the same series twice.
"""

from __future__ import annotations

import bisect
import errno
import socket
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kazoo.client import KazooClient
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector

from zkconsumer.config import InvalidConfigError
from zkconsumer.consumer.partition_topic_info import ChunkQueue, FetchedDataChunk
from zkconsumer.kafka.log_end_offsets import fetch_log_end_offsets
from zkconsumer.types import TopicPartition
from zkconsumer.zk.cluster import read_brokers

PREFIX = "kafka_consumer"
#: the upper bounds of the rebalance histogram's buckets, in seconds (a rebalance takes from tens of milliseconds, one
#: member, to tens of seconds, many members backing off)
REBALANCE_BUCKETS_S: tuple[float, ...] = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
#: the upper bounds of the fetch histogram's buckets, in milliseconds, as Kafka's FetchRequestRateAndTimeMs timed a
#: fetch (a busy partition's fetch returns in well under a millisecond, a quiet one waits up to its poll timeout)
FETCH_BUCKETS_MS: tuple[float, ...] = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 25.0, 50.0, 100.0, 250.0, 1000.0)
#: how long a scrape may wait for the brokers to tell the ends of the logs; past it, lags are left out
LOG_END_TIMEOUT_S = 3.0
#: the offset stores, as the connector's commit results name them
ZOOKEEPER_STORE, KAFKA_STORE = "zookeeper", "kafka"


def _frozen(mapping: Mapping[Any, int] | None = None) -> Mapping[Any, int]:
    return MappingProxyType(dict(mapping or {}))


@dataclass(frozen=True)
class RebalanceTimes:
    """Rebalances so far and how long they took: Kafka's RebalanceRateAndTime timer as histogram data."""

    counts: tuple[int, ...] = (0,) * len(REBALANCE_BUCKETS_S)  # per bucket, not cumulative (the last is above all)
    above: int = 0
    sum_s: float = 0.0

    @property
    def count(self) -> int:
        return sum(self.counts) + self.above


@dataclass(frozen=True)
class FetchTimes:
    """Fetches of one fetcher broker and how long they took: Kafka's FetchRequestRateAndTimeMs timer as histogram
    data, in milliseconds."""

    broker_host: str
    broker_port: int
    counts: tuple[int, ...] = (0,) * len(FETCH_BUCKETS_MS)  # per bucket, not cumulative (the last is above all)
    above: int = 0
    sum_ms: float = 0.0

    @property
    def count(self) -> int:
        return sum(self.counts) + self.above


@dataclass(frozen=True)
class MeterReadings:
    """What the connector counted since it was made."""

    messages: Mapping[str, int] = field(default_factory=_frozen)  # topic -> messages taken by its streams
    bytes: Mapping[str, int] = field(default_factory=_frozen)  # topic -> value bytes handed to its streams' queues
    commits: Mapping[str, int] = field(default_factory=_frozen)  # store -> partition offsets committed there
    rebalances: RebalanceTimes = RebalanceTimes()
    failed_rebalances: int = 0
    fetches: tuple[FetchTimes, ...] = ()  # per broker the fetcher threads fetch from, sorted


@dataclass(frozen=True)
class OwnedPartition:
    topic: str
    partition: int
    thread_id: str
    consumed_offset: int  # -1 until auto.offset.reset decided
    fetched_offset: int


@dataclass(frozen=True)
class QueueSize:
    """Chunks waiting in the queue of one stream (thread) for one topic (Kafka's FetchQueueSize)."""

    topic: str
    thread_id: str
    chunks: int


@dataclass(frozen=True)
class MetricsSnapshot:
    """Everything one scrape shows, read at one moment."""

    client_id: str
    group_id: str
    owned: tuple[OwnedPartition, ...]
    queues: tuple[QueueSize, ...]
    readings: MeterReadings
    log_ends: Mapping[TopicPartition, int] = field(default_factory=_frozen)


class ConnectorMeters:
    """The counters the connector feeds while metrics are on; thread-safe (fetcher threads, streams, the rebalance
    and auto-commit threads all count). Per chunk or per operation, never per message."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._messages: dict[str, int] = {}
        self._bytes: dict[str, int] = {}
        self._commits: dict[str, int] = {ZOOKEEPER_STORE: 0, KAFKA_STORE: 0}
        self._buckets = [0] * (len(REBALANCE_BUCKETS_S) + 1)
        self._rebalance_s = 0.0
        self._failed = 0
        # (broker host, port) -> per bucket counts (the last above all), and the sum of milliseconds
        self._fetch_buckets: dict[tuple[str, int], list[int]] = {}
        self._fetch_ms: dict[tuple[str, int], float] = {}

    def fetched(self, topic: str, value_bytes: int) -> None:
        with self._lock:
            self._bytes[topic] = self._bytes.get(topic, 0) + value_bytes

    def taken(self, topic: str, messages: int) -> None:
        with self._lock:
            self._messages[topic] = self._messages.get(topic, 0) + messages

    def committed(self, store: str, partitions: int) -> None:
        with self._lock:
            self._commits[store] = self._commits.get(store, 0) + partitions

    def rebalanced(self, seconds: float, failed: bool = False) -> None:
        """One rebalance (all its attempts), as Kafka timed syncedRebalance; ``failed`` when it ran out of retries."""
        with self._lock:
            self._buckets[bisect.bisect_left(REBALANCE_BUCKETS_S, seconds)] += 1
            self._rebalance_s += seconds
            self._failed += failed

    def fetch_timed(self, broker: tuple[str, int], milliseconds: float) -> None:
        """One fetch of a fetcher thread (its ``consume()``, and its wait for a first message when nothing was
        there), as Kafka timed each FetchRequest; ``broker`` is the (host, port) the thread fetches from."""
        with self._lock:
            buckets = self._fetch_buckets.get(broker)
            if buckets is None:
                buckets = self._fetch_buckets[broker] = [0] * (len(FETCH_BUCKETS_MS) + 1)
                self._fetch_ms[broker] = 0.0
            buckets[bisect.bisect_left(FETCH_BUCKETS_MS, milliseconds)] += 1
            self._fetch_ms[broker] += milliseconds

    def read(self) -> MeterReadings:
        with self._lock:
            times = RebalanceTimes(tuple(self._buckets[:-1]), self._buckets[-1], self._rebalance_s)
            fetches = tuple(FetchTimes(host, port, tuple(buckets[:-1]), buckets[-1], self._fetch_ms[(host, port)])
                            for (host, port), buckets in sorted(self._fetch_buckets.items()))
            return MeterReadings(_frozen(self._messages), _frozen(self._bytes), _frozen(self._commits), times,
                                 self._failed, fetches)


class MeteredChunkQueue(ChunkQueue):
    """A stream's queue that counts what goes through it: value bytes when a fetcher hands a chunk over (where Kafka
    counted BytesPerSec), messages when the stream takes the chunk to hand it out (Kafka counted each message as
    its iterator handed it out; the difference is at most the chunk a rebalance cuts short)."""

    def __init__(self, capacity: int, name: str, meters: ConnectorMeters) -> None:
        super().__init__(capacity, name)
        self._meters = meters

    @property
    def meters(self) -> ConnectorMeters:
        """The connector's meters, which the fetcher threads feeding this queue count their fetches into."""
        return self._meters

    def put(self, chunk: FetchedDataChunk, stop: threading.Event | None = None) -> bool:
        if not super().put(chunk, stop):
            return False
        if chunk.topic_info is not None and chunk.messages:
            self._meters.fetched(chunk.topic_info.topic, chunk.value_bytes)
        return True

    def get(self, timeout_s: float | None) -> FetchedDataChunk:
        chunk = super().get(timeout_s)
        if chunk.topic_info is not None and chunk.messages:
            self._meters.taken(chunk.topic_info.topic, len(chunk.messages))
        return chunk


def metric_families(snapshot: MetricsSnapshot) -> list[Metric]:
    """The Prometheus metrics of one snapshot. Pure."""
    client = snapshot.client_id
    readings = snapshot.readings
    messages = CounterMetricFamily(
        f"{PREFIX}_messages", "Messages handed to the application's streams (MessagesPerSec).",
        labels=["client_id", "topic"])
    value_bytes = CounterMetricFamily(
        f"{PREFIX}_bytes", "Bytes of message values fetched for the streams (BytesPerSec).",
        labels=["client_id", "topic"])
    for topic in sorted(set(readings.messages) | set(readings.bytes)):
        messages.add_metric([client, topic], readings.messages.get(topic, 0))
        value_bytes.add_metric([client, topic], readings.bytes.get(topic, 0))

    lag = GaugeMetricFamily(
        f"{PREFIX}_lag", "Messages between the consumed offset and the end of the partition's log (ConsumerLag).",
        labels=["client_id", "topic", "partition"])
    owned_per_topic: dict[str, int] = {}
    for owned in sorted(snapshot.owned, key=lambda o: (o.topic, o.partition)):
        owned_per_topic[owned.topic] = owned_per_topic.get(owned.topic, 0) + 1
        end = snapshot.log_ends.get(TopicPartition(owned.topic, owned.partition))
        if end is not None and owned.consumed_offset >= 0:
            lag.add_metric([client, owned.topic, str(owned.partition)], max(0, end - owned.consumed_offset))
    owned_partitions = GaugeMetricFamily(
        f"{PREFIX}_owned_partitions", "Partitions this consumer owns (OwnedPartitionsCount).",
        labels=["client_id", "group_id", "topic"])
    for topic, count in sorted(owned_per_topic.items()):
        owned_partitions.add_metric([client, snapshot.group_id, topic], count)

    queue_size = GaugeMetricFamily(
        f"{PREFIX}_fetch_queue_size", "Chunks waiting in a stream's queue (FetchQueueSize).",
        labels=["client_id", "topic", "thread_id"])
    for queue in sorted(snapshot.queues, key=lambda q: (q.topic, q.thread_id)):
        queue_size.add_metric([client, queue.topic, queue.thread_id], queue.chunks)

    times = readings.rebalances
    rebalance = HistogramMetricFamily(
        f"{PREFIX}_rebalance_seconds", "Rebalances, each with all its attempts, and how long they took "
        "(RebalanceRateAndTime).", labels=["client_id"])
    rebalance.add_metric([client], _cumulative(REBALANCE_BUCKETS_S, times.counts, times.above),
                         sum_value=times.sum_s)
    fetch = HistogramMetricFamily(
        f"{PREFIX}_fetch_request_time_ms", "Fetches of the fetcher threads, and how long each took, in milliseconds "
        "(FetchRequestRateAndTimeMs).", labels=["client_id", "broker_host", "broker_port"])
    for fetches in readings.fetches:
        fetch.add_metric([client, fetches.broker_host, str(fetches.broker_port)],
                         _cumulative(FETCH_BUCKETS_MS, fetches.counts, fetches.above), sum_value=fetches.sum_ms)
    failed = CounterMetricFamily(
        f"{PREFIX}_failed_rebalances", "Rebalances that ran out of rebalance.max.retries.", labels=["client_id"])
    failed.add_metric([client], readings.failed_rebalances)

    zookeeper_commits = CounterMetricFamily(
        f"{PREFIX}_zookeeper_commits", "Partition offsets written to ZooKeeper (ZooKeeperCommitsPerSec).",
        labels=["client_id"])
    zookeeper_commits.add_metric([client], readings.commits.get(ZOOKEEPER_STORE, 0))
    kafka_commits = CounterMetricFamily(
        f"{PREFIX}_kafka_commits", "Partition offsets committed to Kafka (KafkaCommitsPerSec).", labels=["client_id"])
    kafka_commits.add_metric([client], readings.commits.get(KAFKA_STORE, 0))
    return [messages, value_bytes, lag, owned_partitions, queue_size, rebalance, failed, zookeeper_commits,
            kafka_commits, fetch]


def _cumulative(bounds: Sequence[float], counts: Sequence[int], above: int) -> list[tuple[str, float]]:
    """Per bucket counts as Prometheus' cumulative ``le`` buckets, ``+Inf`` last."""
    buckets: list[tuple[str, float]] = []
    running = 0
    for bound, count in zip(bounds, counts, strict=True):
        running += count
        buckets.append((repr(bound), running))
    buckets.append(("+Inf", running + above))
    return buckets


def read_log_ends(zk: KazooClient, partitions: Iterable[TopicPartition],
                  timeout: float = LOG_END_TIMEOUT_S) -> Mapping[TopicPartition, int]:
    """The end of each partition's log, from the brokers registered in ZooKeeper (read forward, so that a broker
    whose ListOffsets answer trails its log does not show too small a lag); a partition whose end is not known in
    time, or a cluster that cannot be reached, is left out (no lag sample rather than a wrong one)."""
    wanted = sorted(set(partitions))
    if not wanted:
        return {}
    try:
        brokers = read_brokers(zk)
    except Exception:  # a scrape must answer whatever ZooKeeper does
        return {}
    if not brokers:
        return {}
    found = fetch_log_end_offsets(",".join(b.address for b in brokers), wanted, timeout=timeout)
    return found.offsets


class SnapshotCollector(Collector):
    """A Prometheus collector that reads a fresh snapshot at each scrape."""

    def __init__(self, snapshot: Callable[[], MetricsSnapshot]) -> None:
        self._snapshot = snapshot

    def collect(self) -> Sequence[Metric]:
        return metric_families(self._snapshot())

    def describe(self) -> Sequence[Metric]:
        return []  # nothing is known before a scrape: the registry must not collect to learn the names


class MetricsEndpoint:
    """A connector's registry, served over HTTP on ``metrics.http.host:metrics.http.port`` until :meth:`close`."""

    def __init__(self, snapshot: Callable[[], MetricsSnapshot], host: str, port: int) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.registry.register(SnapshotCollector(snapshot))
        try:
            self._server, self._thread = start_http_server(port, addr=host, registry=self.registry)
        except socket.gaierror as exc:
            raise InvalidConfigError(f"config metrics.http.host={host!r}: not an address ({exc.strerror})") from None
        except OSError as exc:
            if exc.errno == errno.EADDRNOTAVAIL:
                raise InvalidConfigError(
                    f"config metrics.http.host={host!r}: not an address of this machine ({exc.strerror})") from None
            raise InvalidConfigError(
                f"config metrics.http.port={port}: cannot serve metrics on {host}:{port} ({exc.strerror}); choose "
                f"another port, or 0 for any free one") from None
        self.port: int = self._server.server_address[1]
        self.host = host

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::") else self.host
        return f"http://{host}:{self.port}/metrics"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)
