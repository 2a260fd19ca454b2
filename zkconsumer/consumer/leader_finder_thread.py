"""LeaderFinderThread: finds the leader of every owned partition that has no fetcher yet.

Leaders are not in the rebalance's hands: they move on their own, and a fetch error is how the consumer learns that
one did. This thread is the one place that resolves them. It sleeps until the manager's no-leader set is not
empty, finds the brokers where the legacy consumer did (their registrations in ZooKeeper), asks them for topic
metadata, and hands every partition with a leader to the manager, which puts it on a fetcher thread. Partitions
without a leader, or whose hand-over failed, stay in (or go back to) the set and are tried again after
``refresh.leader.backoff.ms``; nothing here ever ends the thread but a stop.

The metadata client bootstraps from the registered brokers in random order, as Kafka's ClientUtils tried them, and
is kept while the registered brokers stay the same. It asks for the metadata of all topics, because librdkafka asks
for one topic or for all, and one request is cheaper than one per topic. Network waits are cut in one-second
slices (:mod:`~zkconsumer.consumer.sliced_deadline`), so a stop does not wait for ``socket.timeout.ms`` when no
broker answers.

Its events (``leader_finder.*``) are declared once in :mod:`zkconsumer.events.connector` and listed on the
events page (``docs/events.md``).
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from kazoo.client import KazooClient

from zkconsumer.config import ConsumerConfig
from zkconsumer.consumer.consumer_fetcher_thread import STOP_SLACK_S, BrokerAndInitialOffset
from zkconsumer.consumer.data_path_events import emit, partition_names
from zkconsumer.consumer.sliced_deadline import call_in_slices
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms
from zkconsumer.kafka.metadata import BrokerMeta, admin_client, fetch_leaders
from zkconsumer.log import get_logger
from zkconsumer.types import TopicPartition
from zkconsumer.zk.cluster import BrokerInfo, read_brokers

if TYPE_CHECKING:
    from confluent_kafka.admin import AdminClient

_log = get_logger("zkconsumer.leader_finder")


class LeaderFinderHost(Protocol):
    """What the leader finder asks of the fetcher manager that runs it.

    In Kafka the finder was an inner class of ConsumerFetcherManager and called these on its outer instance; here
    it depends on this interface only, so the manager can import the finder without the finder importing the
    manager. :class:`~zkconsumer.consumer.consumer_fetcher_manager.ConsumerFetcherManager` is the one host.
    """

    def wait_for_partitions_without_leader(self, stop: threading.Event) -> frozenset[TopicPartition]:
        """Block until some partition needs a leader; empty once ``stop`` is set and :meth:`wake_leader_finder`
        was called."""
        ...

    def wake_leader_finder(self) -> None: ...

    def take_partitions_with_leader(
        self, leaders: Mapping[TopicPartition, BrokerMeta], stop: threading.Event | None = None,
    ) -> dict[TopicPartition, BrokerAndInitialOffset]:
        """Take those still without a leader, each with its leader and the offset to fetch from; none once ``stop``
        is set."""
        ...

    def add_fetcher_for_partitions(self, targets: Mapping[TopicPartition, BrokerAndInitialOffset],
                                   stop: threading.Event | None = None) -> None:
        """Put these partitions on fetcher threads; nothing once ``stop`` is set."""
        ...

    def add_partitions_with_error(self, partitions: Iterable[TopicPartition],
                                  stop: threading.Event | None = None) -> None:
        """Back to be looked up again; nothing once ``stop`` is set."""
        ...

    def shutdown_idle_fetcher_threads(self, stop: threading.Event | None = None) -> None:
        """Stop fetcher threads without partitions; nothing once ``stop`` is set."""
        ...


class LeaderFinderThread(threading.Thread):
    def __init__(self, manager: LeaderFinderHost, consumer_id: str, config: ConsumerConfig,
                 zk: KazooClient) -> None:
        super().__init__(name=f"{consumer_id}-leader-finder-thread", daemon=True)
        self.consumer_id = consumer_id
        self._manager = manager
        self._config = config
        self._zk = zk
        self._backoff_s = config.refresh_leader_backoff_ms / 1000
        self._stop_wait_s = (config.zookeeper_session_timeout_ms + config.socket_timeout_ms) / 1000 + STOP_SLACK_S
        self._stopping = threading.Event()
        self._admin: AdminClient | None = None
        self._admin_brokers: frozenset[str] = frozenset()
        self._metadata_bootstrap = ""

    def initiate_shutdown(self) -> None:
        self._stopping.set()
        self._manager.wake_leader_finder()

    def shutdown(self) -> None:
        """Stop, and wait for the thread: at most its longest step, a ZooKeeper read (bounded by the session timeout)
        or the stop of an idle fetcher (by ``socket.timeout.ms``); metadata requests end within a slice."""
        self.initiate_shutdown()
        if self.ident is not None:
            started = time.monotonic()
            self.join(self._stop_wait_s)
            if self.is_alive():
                self._emit("warning", ev.LEADER_FINDER_STOP_TIMED_OUT, waited_ms=elapsed_ms(started))

    def run(self) -> None:
        self._emit("info", ev.LEADER_FINDER_STARTED, thread=self.name)
        try:
            while not self._stopping.is_set():
                try:
                    self._do_work()
                except Exception as exc:  # only a stop may end this thread
                    self._emit("warning", ev.LEADER_FINDER_ERROR, stage="loop", error=str(exc), partitions=[],
                               exc_info=True)
                    self._stopping.wait(self._backoff_s)
        finally:
            self._admin = None
            self._emit("info", ev.LEADER_FINDER_STOPPED)

    def _do_work(self) -> None:
        wanted = self._manager.wait_for_partitions_without_leader(self._stopping)
        if not wanted:
            return
        try:
            brokers = read_brokers(self._zk)
        except Exception as exc:  # kazoo's connection errors, or a registration in a format we cannot read
            self._retry_later("zookeeper", exc, wanted)
            return
        if not brokers:
            self._emit("warning", ev.LEADER_FINDER_NO_BROKERS, partitions=partition_names(wanted))
            self._stopping.wait(self._backoff_s)
            return
        try:
            leaders = self._leaders(brokers, wanted)
        except ServerUnavailableError as exc:
            self._retry_later("metadata", exc, wanted)
            return
        if leaders is None:
            return  # stopping
        # Tried again every refresh.leader.backoff.ms while a leader is missing: the list is made (sorting thousands
        # of partitions) only for a logger that shows the debug event.
        if len(leaders) < len(wanted) and _log.is_enabled_for(logging.DEBUG):
            self._emit("debug", ev.LEADER_FINDER_NO_LEADER, partitions=partition_names(set(wanted) - set(leaders)))
        # Every call to the manager from here on passes our stop: a rebalance does not wait for this thread (see
        # ConsumerFetcherManager.stop_connections), and a stopped finder must change nothing of the next one's.
        targets = self._manager.take_partitions_with_leader(leaders, self._stopping)
        if targets:
            self._emit("info", ev.LEADER_FINDER_LEADERS_FOUND, partitions=partition_names(targets),
                       leaders={str(tp): targets[tp].broker.id for tp in sorted(targets)})
            try:
                self._manager.add_fetcher_for_partitions(targets, self._stopping)
            except Exception as exc:
                self._emit("warning", ev.LEADER_FINDER_ERROR, stage="add_fetcher", error=str(exc),
                           partitions=partition_names(targets), exc_info=True)
                self._manager.add_partitions_with_error(targets, self._stopping)
        self._manager.shutdown_idle_fetcher_threads(self._stopping)
        self._stopping.wait(self._backoff_s)

    def _retry_later(self, stage: str, exc: Exception, partitions: frozenset[TopicPartition]) -> None:
        self._emit("warning", ev.LEADER_FINDER_ERROR, stage=stage, error=str(exc) or type(exc).__name__,
                   partitions=partition_names(partitions))
        self._stopping.wait(self._backoff_s)

    def _leaders(self, brokers: list[BrokerInfo], wanted: frozenset[TopicPartition],
                 ) -> dict[TopicPartition, BrokerMeta] | None:
        """The leaders of ``wanted`` that have one, from all topics' metadata asked of the registered brokers within
        socket.timeout.ms; ``None`` if stopped first."""
        addresses = frozenset(broker.address for broker in brokers)
        if self._admin is None or addresses != self._admin_brokers:
            shuffled = sorted(addresses)
            random.shuffle(shuffled)
            self._metadata_bootstrap = ",".join(shuffled)
            self._admin = admin_client(self._metadata_bootstrap, {
                "client.id": self._config.client_id,
                "socket.timeout.ms": max(10, min(300_000, self._config.socket_timeout_ms)),
            })
            self._admin_brokers = addresses
        admin, bootstrap = self._admin, self._metadata_bootstrap
        return call_in_slices(lambda timeout_s: fetch_leaders(admin, bootstrap, wanted, timeout=timeout_s),
                              self._config.socket_timeout_ms / 1000, self._stopping, retry_on=(ServerUnavailableError,))

    def _emit(self, level: str, event: str, **fields: Any) -> None:
        emit(_log, level, event, consumer_id=self.consumer_id, **fields)
