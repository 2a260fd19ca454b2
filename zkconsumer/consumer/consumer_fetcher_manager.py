"""ConsumerFetcherManager: which fetcher thread fetches which owned partition, and from which leader.

The rebalance decides which partitions this consumer owns; it does not know their leaders, and leaders move
without any rebalance. So the connector only hands the manager its PartitionTopicInfos (``start_connections``);
all of them start out "without leader", the leader finder looks their leaders up and puts each partition on the
fetcher thread of (leader broker, fetcher id), and a fetcher that gets an error for a partition gives it back
(``add_partitions_with_error``) to be looked up again. ``stop_connections`` is what a rebalance and shutdown call
before they touch ownership or commit: when it returns, nothing fetches and nothing will enqueue any more.

The fetcher id spreads one broker's partitions over ``num.consumer.fetchers`` threads by Kafka's formula, so a
partition lands on the same thread number as it did under Kafka.

Locks: ``_lock`` (with its condition) guards the partition map and the no-leader set; ``_fetchers_lock`` guards the
fetcher threads. No thread is ever joined while ``_lock`` is held, because a fetcher that is being stopped may be
handing a failed partition back through ``add_partitions_with_error``.

Its events (``fetcher_manager.*``) are declared once in :mod:`zkconsumer.events.connector` and listed on the
events page (``docs/events.md``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any

from kazoo.client import KazooClient

from zkconsumer.assignors.java_hash import java_string_hash
from zkconsumer.config import ConsumerConfig
from zkconsumer.consumer.consumer_fetcher_thread import (
    BrokerAndInitialOffset,
    ConsumerFetcherThread,
    OffsetResetCallback,
)
from zkconsumer.consumer.data_path_events import emit, partition_names
from zkconsumer.consumer.leader_finder_thread import LeaderFinderThread
from zkconsumer.consumer.metrics import ConnectorMeters, MeteredChunkQueue
from zkconsumer.consumer.partition_topic_info import PartitionTopicInfo
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms
from zkconsumer.kafka.metadata import BrokerMeta
from zkconsumer.log import get_logger
from zkconsumer.types import TopicPartition

_log = get_logger("zkconsumer.fetcher_manager")

_INT_MIN = -(2**31)


def fetcher_id_for(topic: str, partition: int, num_fetchers: int) -> int:
    """``Utils.abs(31 * topic.hashCode + partition) % numFetchers`` in Java int arithmetic, as Kafka 0.10 computed it:
    the abs of Int.MinValue is 0. (Kafka 0.8.2 masked the sign bit instead, which puts partitions with a negative
    sum on other threads.)"""
    value = (31 * java_string_hash(topic) + partition) & 0xFFFFFFFF
    if value & 0x80000000:
        value -= 0x100000000
    return (0 if value == _INT_MIN else abs(value)) % num_fetchers


class ConsumerFetcherManager:
    def __init__(
        self,
        consumer_id: str,
        config: ConsumerConfig,
        zk: KazooClient,
        on_offset_reset: OffsetResetCallback | None = None,
    ) -> None:
        self.consumer_id = consumer_id
        self.config = config
        self.zk = zk
        self._on_offset_reset = on_offset_reset
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        # None while connections are stopped (Kafka's partitionMap = null).
        self._partition_map: dict[TopicPartition, PartitionTopicInfo] | None = None
        self._no_leader: set[TopicPartition] = set()
        self._leader_finder: LeaderFinderThread | None = None
        self._fetchers_lock = threading.Lock()
        self._fetchers: dict[tuple[int, int], ConsumerFetcherThread] = {}
        # The connector's meters when metrics are on, found on the streams' queues it hands over (start_connections).
        self._meters: ConnectorMeters | None = None

    # --- the connector's side ---

    def start_connections(self, infos: Iterable[PartitionTopicInfo]) -> None:
        if self._leader_finder is not None:
            self._emit("warning", ev.FETCHER_MANAGER_RESTARTED)
            self.stop_connections()
        partition_map = {TopicPartition(info.topic, info.partition): info for info in infos}
        self._meters = next((info.chunk_queue.meters for info in partition_map.values()
                             if isinstance(info.chunk_queue, MeteredChunkQueue)), self._meters)
        finder = LeaderFinderThread(self, self.consumer_id, self.config, self.zk)
        with self._cond:
            self._leader_finder = finder
            self._partition_map = partition_map
            self._no_leader = set(partition_map)
            self._cond.notify_all()
        finder.start()
        self._emit("info", ev.FETCHER_MANAGER_CONNECTIONS_STARTED, partitions=partition_names(partition_map))

    def stop_connections(self, wait_for_leader_finder: bool = True) -> None:
        """Stop fetching: the leader finder, then every fetcher thread (each joined: nothing enqueues once this
        returns). With ``wait_for_leader_finder`` false (a rebalance), the leader finder is told to stop but its
        thread is not waited for: once told, it changes nothing here (each of its calls checks its stop under the lock
        that call changes things under), and it may be in the middle of a Metadata request, which a loaded broker
        answers in a second or more, all of it under the rebalance lock. Kafka interrupted that request instead."""
        started = time.monotonic()
        with self._cond:
            finder, self._leader_finder = self._leader_finder, None
        # The leader finder first, so that it cannot start fetchers while they are being stopped.
        if finder is not None:
            if wait_for_leader_finder:
                finder.shutdown()
            else:
                finder.initiate_shutdown()
        with self._fetchers_lock:
            fetchers = list(self._fetchers.values())
            self._fetchers.clear()
        for fetcher in fetchers:  # all at once: each may need up to a poll interval to notice
            fetcher.initiate_shutdown()
        for fetcher in fetchers:
            fetcher.shutdown()
        with self._cond:
            self._partition_map = None
            self._no_leader.clear()
        if finder is not None or fetchers:
            self._emit("info", ev.FETCHER_MANAGER_CONNECTIONS_STOPPED, fetchers=len(fetchers),
                       duration_ms=elapsed_ms(started))

    def add_partitions_with_error(self, partitions: Iterable[TopicPartition],
                                  stop: threading.Event | None = None) -> None:
        """Back to the no-leader set, to be looked up again; nothing once ``stop`` (the leader finder's) is set."""
        partitions = list(partitions)
        with self._cond:
            if self._partition_map is None or (stop is not None and stop.is_set()):
                return  # connections stopped (or restarted since): nothing of this is to be fetched any more
            self._no_leader.update(partitions)
            self._cond.notify_all()
        self._emit("info", ev.FETCHER_MANAGER_PARTITIONS_WITH_ERROR, partitions=partition_names(partitions))

    def fetcher_assignment(self) -> dict[tuple[int, int], tuple[TopicPartition, ...]]:
        """(leader broker id, fetcher id) -> the partitions that fetcher thread owns; threads without any are left
        out."""
        with self._fetchers_lock:
            fetchers = sorted(self._fetchers.items())
        assignment = {key: fetcher.partitions() for key, fetcher in fetchers}
        return {key: partitions for key, partitions in assignment.items() if partitions}

    def partitions(self) -> frozenset[TopicPartition]:
        """What the last ``start_connections`` handed over, until ``stop_connections`` (Kafka's partitionMap): the
        partitions being fetched, or waiting for a leader to be fetched from."""
        with self._lock:
            return frozenset(self._partition_map or ())

    def partitions_without_leader(self) -> frozenset[TopicPartition]:
        with self._lock:
            return frozenset(self._no_leader)

    def fetcher_id(self, topic: str, partition: int) -> int:
        return fetcher_id_for(topic, partition, self.config.num_consumer_fetchers)

    # --- the leader finder's side (its LeaderFinderHost) ---

    def wait_for_partitions_without_leader(self, stop: threading.Event) -> frozenset[TopicPartition]:
        """Block until some partition needs a leader; empty once ``stop`` is set (``wake_leader_finder``)."""
        with self._cond:
            while not self._no_leader and not stop.is_set():
                self._cond.wait()  # no timeout: idle until there is work; a stop notifies (wake_leader_finder)
            return frozenset() if stop.is_set() else frozenset(self._no_leader)

    def wake_leader_finder(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def take_partitions_with_leader(
        self, leaders: Mapping[TopicPartition, BrokerMeta], stop: threading.Event | None = None,
    ) -> dict[TopicPartition, BrokerAndInitialOffset]:
        """Take the partitions that still need a leader out of the no-leader set, each with where and from which
        offset to fetch it (its PartitionTopicInfo's fetched offset); none once ``stop`` (the leader finder's) is set:
        a leader finder told to stop must not take what the next one is to look up."""
        taken: dict[TopicPartition, BrokerAndInitialOffset] = {}
        with self._cond:
            if self._partition_map is None or (stop is not None and stop.is_set()):
                return taken
            for tp, broker in leaders.items():
                if tp in self._no_leader:
                    self._no_leader.discard(tp)
                    taken[tp] = BrokerAndInitialOffset(broker, self._partition_map[tp].fetched_offset)
        return taken

    def add_fetcher_for_partitions(self, targets: Mapping[TopicPartition, BrokerAndInitialOffset],
                                   stop: threading.Event | None = None) -> None:
        """Give each partition to the thread of (leader, fetcher id), starting that thread if needed. A thread already
        fetching a partition keeps its own position. Nothing once ``stop`` (the leader finder's) is set: a finder
        that was not waited for (or outlived its bounded stop) must not start a fetcher after
        :meth:`stop_connections` took the list of those to stop."""
        per_fetcher: dict[tuple[int, int], dict[TopicPartition, BrokerAndInitialOffset]] = {}
        for tp, target in targets.items():
            per_fetcher.setdefault((target.broker.id, self.fetcher_id(tp.topic, tp.partition)), {})[tp] = target
        with self._fetchers_lock:
            partition_map = self._partition_map
            if partition_map is None or (stop is not None and stop.is_set()):
                return
            for key, partitions in sorted(per_fetcher.items()):
                fetcher = self._fetchers.get(key)
                if fetcher is None:
                    broker = next(iter(partitions.values())).broker
                    fetcher = ConsumerFetcherThread(self.consumer_id, key[1], broker, self.config, partition_map,
                                                    self.add_partitions_with_error, self._on_offset_reset,
                                                    self._meters)
                    self._fetchers[key] = fetcher
                    fetcher.start()
                fetcher.add_partitions({tp: target.initial_offset for tp, target in partitions.items()})

    def shutdown_idle_fetcher_threads(self, stop: threading.Event | None = None) -> None:
        """Stop the fetcher threads left without partitions; nothing once ``stop`` (the leader finder's) is set."""
        with self._fetchers_lock:
            if stop is not None and stop.is_set():
                return
            idle = [key for key, fetcher in self._fetchers.items() if fetcher.partition_count() == 0]
            stopped = [self._fetchers.pop(key) for key in idle]
            for fetcher in stopped:
                fetcher.shutdown()
        if stopped:
            self._emit("info", ev.FETCHER_MANAGER_IDLE_FETCHERS_STOPPED, fetchers=[f.name for f in stopped])

    def _emit(self, level: str, event: str, **fields: Any) -> None:
        emit(_log, level, event, consumer_id=self.consumer_id, **fields)
