"""ZookeeperConsumerConnector: a member of a legacy ZooKeeper-coordinated consumer group.

It registers in ``/consumers/<group>/ids``, watches the group and its topics, and on every change runs the legacy
rebalance: :meth:`ZookeeperConsumerConnector._attempt` runs its numbered steps in their order, one method each.
Every step emits one event; ``docs/events.md`` is the contract for all of them.

Where it does better than Kafka 0.10.0.1, without changing what other members or tools observe:

* owner znodes of one attempt are claimed all or nothing, in as few multi-ops as fit ``zookeeper.multi.max.bytes``
  (releases, commits and starting offsets too: a group of 10,000 partitions starts), and recognised as ours by
  session (see ``ownership`` and ``offset_store``);
* a committed offset is never written over a higher one another member wrote (see ``offset_store``);
* a background rebalance that runs out of retries keeps retrying, loudly, instead of leaving a registered member
  that owns nothing until some unrelated event (KAFKA-4228); the first rebalance, inside stream creation, still
  raises ConsumerRebalanceFailedException as Kafka's did;
* ``rebalance.backoff.jitter.ms`` (off by default) spreads retries of members that failed together;
* when the ZooKeeper session is lost, fetching stops at once (Kafka kept fetching partitions it no longer owned
  until the new session was up), then the member re-registers and rebalances;
* and a member cut off from ZooKeeper stops fetching once the server may have expired its session (a third of the
  session timeout after the disconnection: see :meth:`ZookeeperConsumerConnector._suspended_too_long`), instead of
  delivering what another member may own by then until it hears of the expiry, which may be never;
* a stream hands out a chunk only while the server confirmed the session within half its timeout (a clock read per
  chunk, :mod:`~zkconsumer.consumer.session_fence`), so a member woken from a pause longer than its session starts
  no new chunk of partitions it may have lost (Kafka's zombie did until it noticed the expiry); the rest of a chunk
  the application was in the middle of when the pause began is still handed out;
* a stale registration left by a previous run with the same ``consumer.id`` is waited out with a watch;
* ``/consumers/<group>/offsets`` and ``owners`` exist from registration, and a partition's offset znode from the
  moment its starting offset is known, so Burrow and kafka-manager see the group at once.

Offsets go where ``offsets.storage`` says (ZooKeeper, or Kafka with ``dual.commit.enabled``), see
``offset_storage``; every offset event names its ``store``. ``offsets.commit.max.retries`` applies to explicit
commits only, as its documentation says (none for auto-commits, nor for the commits before a rebalance and at
shutdown); an explicit commit that Kafka did not take raises :class:`OffsetsCommitFailedError` once the partitions
it did take are committed (and written to ZooKeeper when dual).
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient, KazooState
from kazoo.recipe.watchers import ChildrenWatch, DataWatch

from zkconsumer.config import ConsumerConfig
from zkconsumer.consumer.consumer_fetcher_manager import ConsumerFetcherManager
from zkconsumer.consumer.kafka_stream import KafkaStream
from zkconsumer.consumer.metrics import (
    ConnectorMeters,
    MeteredChunkQueue,
    MetricsEndpoint,
    MetricsSnapshot,
    OwnedPartition,
    QueueSize,
    read_log_ends,
)
from zkconsumer.consumer.partition_ownership import PartitionOwnership, Registry
from zkconsumer.consumer.partition_topic_info import ChunkQueue, PartitionTopicInfo
from zkconsumer.consumer.rebalance_listener import ConsumerRebalanceListener
from zkconsumer.consumer.rebalance_plan import NotRegisteredError, RebalancePlan, plan_rebalance
from zkconsumer.consumer.session_fence import SessionFence
from zkconsumer.consumer.step_gate import StepContext, StepGate
from zkconsumer.consumer.zk_rebalancer_listener import ZKRebalancerListener
from zkconsumer.errors import (
    ConsumerRebalanceFailedException,
    MessageStreamsExistException,
    UsageError,
)
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms, partition_list
from zkconsumer.events.rebalance_steps import BY_NAME, RebalanceStep
from zkconsumer.group.kafka_offset_store import KafkaOffsetStore
from zkconsumer.group.offset_storage import KAFKA, OffsetsCommitFailedError, OffsetStorage, StorageCommit
from zkconsumer.group.offset_store import WriteBehind, ZooKeeperOffsetStore, largest_offset_op
from zkconsumer.group.owner_claims import claim_partitions, largest_claim_op, release_partitions
from zkconsumer.group.snapshot import MalformedZnode, read_group_snapshot
from zkconsumer.group.topic_count import TopicCount, TopicFilter, consumer_id_string
from zkconsumer.log import EventLogger, get_logger
from zkconsumer.security import default_acl, shared_acl
from zkconsumer.types import ConsumerThreadId, TopicPartition, thread_id
from zkconsumer.zk import paths, reads
from zkconsumer.zk.acl_check import verify_group_writable
from zkconsumer.zk.batched_transaction import check_budget, chroot_of
from zkconsumer.zk.checked_ephemeral import create_checked_ephemeral
from zkconsumer.zk.client import close_client, open_client, session_id
from zkconsumer.zk.persistent import ensure_path
from zkconsumer.zk.session_liveness import SessionLiveness

#: ``rebalance.attempt_failed`` reasons besides an error's text (``docs/events.md``).
OWNERSHIP_CONFLICT = "ownership conflict"
SHUTDOWN = "shutdown"


@dataclass(frozen=True)
class AttemptOutcome:
    """How one attempt of a rebalance ended, told by the attempt itself: ``failure`` is ``None`` when the consumer
    owns and fetches its new share, else the ``reason`` its ``rebalance.attempt_failed`` event gives
    (:data:`OWNERSHIP_CONFLICT`, :data:`SHUTDOWN`, or the text of the error a step raised)."""

    failure: str | None = None

    @property
    def completed(self) -> bool:
        return self.failure is None


COMPLETED = AttemptOutcome()


@dataclass(frozen=True)
class ConnectorMetrics:
    """Counters an operator alerts on (a member that keeps failing to rebalance owns nothing)."""

    rebalances: int
    failed_rebalances: int
    consecutive_failures: int
    owned_partitions: int


def create_connector(config: ConsumerConfig | Mapping[str, Any],
                     listener: ConsumerRebalanceListener | None = None) -> ZookeeperConsumerConnector:
    """``Consumer.create(config)``: a connected connector, not yet a member of its group."""
    if not isinstance(config, ConsumerConfig):
        config = ConsumerConfig(config)
    return ZookeeperConsumerConnector(config, listener)


class ZookeeperConsumerConnector:
    def __init__(self, config: ConsumerConfig, listener: ConsumerRebalanceListener | None = None,
                 fetch: bool = True, *, step_gate: StepGate | None = None) -> None:
        """``fetch=False`` makes a member that owns partitions without fetching them: it registers, rebalances and
        claims as any member, and its streams stay empty; something else reads what it owns (the Spark source,
        :mod:`zkconsumer.spark.stream_source`, plans micro-batches over :attr:`topic_registry`).

        ``step_gate``, a teaching and debugging hook outside the legacy API (:mod:`zkconsumer.consumer.step_gate`),
        is called before each numbered step of every rebalance attempt, which waits for it to return."""
        self.config = config
        self.fetch = fetch
        self.group = config.group_id
        self.consumer_id = consumer_id_string(config.group_id, config.consumer_id)
        self._dirs = paths.GroupDirs(self.group)
        self._log = get_logger("zkconsumer.connector").bind(consumer_id=self.consumer_id, group=self.group)
        self._listener = listener
        self._rebalance_lock = threading.RLock()
        self._shutdown = threading.Event()
        self._session_lost = threading.Event()
        self._suspension_timer: threading.Timer | None = None
        self._fetching_suspended = False  # fetchers stopped by _suspended_too_long, until a rebalance restarts them
        # The registry, the owner threads, the unconfirmed claims and the held znodes, changed by the steps only.
        self._ownership = PartitionOwnership()
        self._members_seen = False
        self._topics_seen = False
        self._topic_count: TopicCount | None = None
        self._queues: dict[tuple[str, str], ChunkQueue] = {}  # static: (topic, thread id) -> queue
        self._thread_queues: dict[str, ChunkQueue] = {}  # wildcard: thread id -> queue shared by every topic
        self._streams: list[KafkaStream] = []
        self._watched_topics: set[str] = set()
        self._wildcard_topics: set[str] = set()
        self._broker_watch_armed = False
        self._rebalance_id = 0
        self._attempt_number = 0  # of the attempt running, for the step gate
        self._step_gate = step_gate
        self._before_step: Callable[[RebalanceStep], None] | None = None if step_gate is None else self._at_step_gate
        self._rebalances = 0
        self._failed_rebalances = 0
        self._consecutive_failures = 0
        # zookeeper.auth / zookeeper.acl: the ACL every znode we create gets (kazoo's default_acl), counted in
        # the multi-op budget as it is sent.
        self._acl = default_acl(config.zookeeper_auth, config.zookeeper_acl)
        for largest in (largest_claim_op(self.group, self.consumer_id), largest_offset_op(self.group)):
            check_budget(config.zookeeper_multi_max_bytes, largest, chroot_of(config.zookeeper_connect), self._acl)
        self._meters: ConnectorMeters | None = None
        self.metrics_endpoint: MetricsEndpoint | None = None
        self._liveness: SessionLiveness | None = None
        self.zk = self._connect()
        self._fence = self._session_fence()
        self._offsets = self._offset_storage()
        # Starting offsets found by the fetchers one by one, written together (and off the fetchers' threads).
        self._initial_offsets: WriteBehind[TopicPartition] = WriteBehind(
            self._write_initial_offsets, name=f"{self.consumer_id}-initial-offsets")
        self._fetcher = ConsumerFetcherManager(self.consumer_id, config, self.zk, on_offset_reset=self._on_offset_reset)
        self._rebalancer = ZKRebalancerListener(f"{self.consumer_id}_watcher_executor", self._handle_triggers)
        self._auto_commit: threading.Thread | None = None
        if config.auto_commit_enable:
            self._auto_commit = threading.Thread(target=self._auto_commit_loop, daemon=True,
                                                 name=f"kafka-consumer-scheduler-{self.consumer_id}")
            self._auto_commit.start()
        self._log.emit(ev.CONSUMER_CONNECTED, zookeeper=config.zookeeper_connect, session_id=self._session_hex(),
                       metrics=self.metrics_endpoint.url if self.metrics_endpoint is not None else None)

    def _connect(self) -> KazooClient:
        """Serve the Prometheus metrics (``metrics.http.port``), then open the ZooKeeper session and check that it
        may write the group's znodes. A port in use, an unreachable ZooKeeper or a group we may not write fails the
        construction, and whatever was opened by then is closed again, the session first."""
        config = self.config
        with contextlib.ExitStack() as opened:
            if config.metrics_http_port is not None:
                self._meters = ConnectorMeters()
                self.metrics_endpoint = MetricsEndpoint(self._metrics_snapshot, config.metrics_http_host,
                                                        config.metrics_http_port)
                opened.callback(self.metrics_endpoint.close)
            zk = open_client(
                config.zookeeper_connect,
                timeout=config.zookeeper_connection_timeout_ms / 1000,
                session_timeout=config.zookeeper_session_timeout_ms / 1000,
                retry_forever=True,
                auth=config.zookeeper_auth,
                acl=self._acl,
                before_start=self._watch_session,
            )
            opened.callback(close_client, zk)
            verify_group_writable(zk, self.group, config.zookeeper_auth, config.zookeeper_connect)
            zk.add_listener(self._on_zookeeper_state)
            opened.pop_all()  # connected: from here on, shutdown() closes both
        return zk

    def _watch_session(self, client: KazooClient) -> None:
        """Watch the session's confirmations from its first handshake, which says the timeout the server
        negotiated (lower than the one asked for above the server's ``maxSessionTimeout``)."""
        self._liveness = SessionLiveness.attach(client)

    def _session_fence(self) -> SessionFence | None:
        """What the streams ask before each chunk; ``None`` (and a warning) where kazoo's connection cannot be
        watched."""
        liveness = self._liveness
        if liveness is None:
            self._log.emit(ev.CONSUMER_UNFENCED, reason="this kazoo's connection handler cannot be watched")
            return None
        liveness.ask()  # confirmed before the first chunk, most likely
        return SessionFence(liveness, self._session_lost, self._shutdown)

    def _offset_storage(self) -> OffsetStorage:
        """Where offsets are read and committed: ZooKeeper, or Kafka with ``offsets.storage=kafka`` (and ZooKeeper
        too with ``dual.commit.enabled``)."""
        config = self.config
        kafka = None if config.offsets_storage != KAFKA else KafkaOffsetStore(
            self.zk, self.group, client_id=config.client_id, backoff_ms=config.offsets_channel_backoff_ms,
            socket_timeout_ms=config.offsets_channel_socket_timeout_ms, stop=self._shutdown)
        return OffsetStorage(ZooKeeperOffsetStore(self.zk, self.group, config.zookeeper_multi_max_bytes), kafka,
                             dual_commit=config.dual_commit_enabled)

    # --- public API -------------------------------------------------------------------------------------

    @property
    def topic_registry(self) -> Registry:
        """topic -> partition -> PartitionTopicInfo of what this consumer owns now (a copy)."""
        return {t: dict(ps) for t, ps in self._ownership.current().registry.items()}

    @property
    def metrics(self) -> ConnectorMetrics:
        owned = sum(len(ps) for ps in self._ownership.current().registry.values())
        return ConnectorMetrics(self._rebalances, self._failed_rebalances, self._consecutive_failures, owned)

    def set_consumer_rebalance_listener(self, listener: ConsumerRebalanceListener) -> None:
        if self._topic_count is not None:
            raise MessageStreamsExistException(
                "the rebalance listener must be set before message streams are created"
            )
        self._listener = listener

    def create_message_streams(self, topic_count_map: Mapping[str, int], key_decoder=None,
                               value_decoder=None) -> dict[str, list[KafkaStream]]:
        """Join the group with ``topic -> number of streams``; returns the streams per topic."""
        if self._topic_count is not None:
            raise MessageStreamsExistException(f"{self.consumer_id}: message streams were already created")
        if not isinstance(topic_count_map, Mapping):
            raise UsageError("create_message_streams needs a mapping of topic -> number of streams")
        topic_count = TopicCount.static(self.consumer_id, dict(topic_count_map))
        result: dict[str, list[KafkaStream]] = {}
        for topic, count in topic_count.topic_streams:
            for n in range(count):
                thread = thread_id(self.consumer_id, n)
                queue = self._chunk_queue(f"{topic}/{thread}")
                self._queues[(topic, thread)] = queue
                result.setdefault(topic, []).append(self._new_stream(queue, key_decoder, value_decoder))
        self._join(topic_count, {t for t, _ in topic_count.topic_streams})
        return result

    def create_message_streams_by_filter(self, topic_filter: TopicFilter, num_streams: int = 1, key_decoder=None,
                                         value_decoder=None) -> list[KafkaStream]:
        """Join with a whitelist or blacklist; stream ``n`` gets thread ``n``'s share of every matching topic."""
        if self._topic_count is not None:
            raise MessageStreamsExistException(f"{self.consumer_id}: can create message streams by filter at most once")
        topic_count = TopicCount.wildcard(self.consumer_id, topic_filter, num_streams)
        streams = []
        for n in range(num_streams):
            thread = thread_id(self.consumer_id, n)
            queue = self._chunk_queue(thread)
            self._thread_queues[thread] = queue
            streams.append(self._new_stream(queue, key_decoder, value_decoder))
        self._join(topic_count, set(), wildcard=True)
        return streams

    def commit_offsets(self, offsets: Mapping[TopicPartition, int] | None = None) -> StorageCommit:
        """Commit the consumed offset of every owned partition (or the given ones); ZooKeeper gets changed values
        only. Raises OffsetsCommitFailedError when Kafka did not take some, after ``offsets.commit.max.retries``."""
        return self._commit("explicit", offsets)

    def shutdown(self) -> None:
        """Leave the group: stop everything, commit (with auto-commit) and close the session."""
        if self._shutdown.is_set():
            return
        self._shutdown.set()
        self._cancel_suspension_timer()
        started = time.monotonic()
        self._log.emit(ev.CONSUMER_SHUTTING_DOWN)
        self._rebalancer.shutdown()
        # A rebalance stuck on an unreachable ZooKeeper must not hold shutdown for ever: closing the client
        # below fails its pending requests and lets it finish.
        locked = self._rebalance_lock.acquire(timeout=self.config.zookeeper_session_timeout_ms / 1000)
        try:
            if self._auto_commit is not None:
                self._auto_commit.join(5)
            self._stop_fetching()  # shutdown is set: it ends every stream (the sentinel)
            self._initial_offsets.close()
            if self.config.auto_commit_enable:
                if self.zk.connected:
                    self._commit("shutdown")
                else:
                    self._log.emit(ev.OFFSETS_COMMIT_FAILED, reason="shutdown", error="ZooKeeper is not connected")
        except Exception as exc:  # shutdown must complete; Kafka logged these as fatal too
            self._log.emit(ev.CONSUMER_SHUTDOWN_ERROR, error=_error_text(exc))
        finally:
            close_client(self.zk)
            if locked:
                self._rebalance_lock.release()
            if self.metrics_endpoint is not None:
                self.metrics_endpoint.close()
        self._log.emit(ev.CONSUMER_SHUTDOWN, duration_ms=elapsed_ms(started))

    def __enter__(self) -> ZookeeperConsumerConnector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # --- joining ---------------------------------------------------------------------------------------

    def _new_stream(self, queue: ChunkQueue, key_decoder, value_decoder) -> KafkaStream:
        stream = KafkaStream(queue, self.config.consumer_timeout_ms, key_decoder or self.config.key_decoder,
                             value_decoder or self.config.value_decoder, self.config.client_id, queue.name,
                             self._fence)
        self._streams.append(stream)
        return stream

    def _all_queues(self) -> list[ChunkQueue]:
        return list(self._queues.values()) + list(self._thread_queues.values())

    def _join(self, topic_count: TopicCount, topics: set[str], wildcard: bool = False) -> None:
        """Register, watch, then rebalance in the caller's thread, as Kafka's consume() did."""
        self._topic_count = topic_count
        self._session_lost.clear()  # a session lost before joining left nothing of ours behind
        if self._acl is not None:  # /consumers is every group's parent: creatable by all, as Kafka left it
            ensure_path(self.zk, paths.CONSUMERS_PATH, acl=shared_acl())
        # The owners and offsets directories are made by the first claim and the first commit, as Kafka's were:
        # a member that joined and never committed leaves no offsets directory (which --from-beginning looks for).
        self._register()
        ChildrenWatch(self.zk, self._dirs.registry_dir, self._on_members_changed)
        if wildcard:
            ensure_path(self.zk, paths.BROKER_TOPICS_PATH, acl=shared_acl())  # the brokers' path, not ours
            ChildrenWatch(self.zk, paths.BROKER_TOPICS_PATH, self._on_topics_changed)
        else:
            self._watch_topics(topics)
        self._rebalancer.start()
        self._synced_rebalance(("initial",), background=False)

    def _register(self, again: bool = False) -> None:
        assert self._topic_count is not None
        path = self._dirs.consumer_path(self.consumer_id)
        data = self._topic_count.registration(int(time.time() * 1000))
        wait_s = 2 * self.config.zookeeper_session_timeout_ms / 1000

        def waiting(owner: int) -> None:
            self._log.emit(ev.CONSUMER_REGISTRATION_WAITING, path=path, owner_session=f"{owner:#x}",
                           max_wait_ms=int(wait_s * 1000))

        already = create_checked_ephemeral(self.zk, path, data, wait_s, waiting)
        self._log.emit(ev.CONSUMER_REGISTERED, path=path, registration=data.decode(), pattern=self._topic_count.pattern,
                       session_id=self._session_hex(), reregistered=again, already_ours=already)

    def _watch_topics(self, topics: set[str]) -> None:
        """A data watch per subscribed topic: a partition count change (or the topic's creation) rebalances."""
        for topic in sorted(topics - self._watched_topics):
            self._watched_topics.add(topic)
            first = [True]

            def changed(data, stat, event=None, topic=topic, first=first):
                if self._shutdown.is_set():
                    return False
                if first[0]:
                    first[0] = False
                    return None
                self._log.emit(ev.REBALANCE_TRIGGERED, cause="topic_changed", topic=topic)
                self._rebalancer.trigger("topic_changed")
                return None

            DataWatch(self.zk, paths.topic_path(topic), changed)

    # --- triggers (kazoo's event thread: record and return) ---------------------------------------------

    def _on_members_changed(self, children: list[str]) -> bool | None:
        if self._shutdown.is_set():
            return False
        if not self._members_seen:
            self._members_seen = True  # the watch's first call reports the present, not a change
            return None
        self._log.emit(ev.REBALANCE_TRIGGERED, cause="members_changed", members=sorted(children))
        self._rebalancer.trigger("members_changed")
        return None

    def _on_topics_changed(self, children: list[str]) -> bool | None:
        if self._shutdown.is_set():
            return False
        assert self._topic_count is not None and self._topic_count.filter is not None
        allowed = self._topic_count.filter.is_topic_allowed
        matching = {t for t in children if allowed(t, self.config.exclude_internal_topics)}
        added, deleted = matching - self._wildcard_topics, self._wildcard_topics - matching
        self._wildcard_topics = matching
        first_call, self._topics_seen = not self._topics_seen, True
        if not added and not deleted:
            return None
        self._watch_topics(added)
        if first_call:
            return None  # the first call comes before the initial rebalance, which covers it
        self._log.emit(ev.REBALANCE_TRIGGERED, cause="topics_changed", added=sorted(added), deleted=sorted(deleted))
        self._rebalancer.trigger("topics_changed")
        return None

    def _on_brokers_changed(self, children: list[str]) -> bool | None:
        """Armed only while the cluster has no brokers (step 1 of the rebalance); disarms itself at the first one."""
        if self._shutdown.is_set():
            return False
        if not children:
            return None
        self._broker_watch_armed = False
        self._log.emit(ev.REBALANCE_TRIGGERED, cause="brokers_appeared", brokers=sorted(children))
        self._rebalancer.trigger("brokers_appeared")
        return False

    def _on_zookeeper_state(self, state: str) -> None:
        if self._shutdown.is_set():
            return
        if state == KazooState.LOST:
            self._session_lost.set()
            self._log.emit(ev.ZOOKEEPER_SESSION_LOST)
            if self._topic_count is not None:
                self._rebalancer.trigger("session_expired")
        elif state == KazooState.SUSPENDED:
            # Same session, maybe back in a moment: nothing is rebalanced (unlike kafka-node's rebalance per blip),
            # unless it lasts long enough for the server to have expired the session meanwhile.
            self._log.emit(ev.ZOOKEEPER_SUSPENDED)
            if self._topic_count is not None:
                self._arm_suspension_timer()
        elif state == KazooState.CONNECTED:
            self._cancel_suspension_timer()
            self._log.emit(ev.ZOOKEEPER_CONNECTED, session_id=self._session_hex(),
                           new_session=self._session_lost.is_set())
            if self._session_lost.is_set() and self._topic_count is not None:
                self._rebalancer.trigger("session_expired")
            elif self._fetching_suspended and self._topic_count is not None:
                self._rebalancer.trigger("session_resumed")  # same session: claim what is still ours, fetch again

    def _arm_suspension_timer(self) -> None:
        self._cancel_suspension_timer()
        delay = self.config.zookeeper_session_timeout_ms / 3000
        timer = threading.Timer(delay, self._suspended_too_long, args=(time.monotonic(),))
        timer.daemon = True
        timer.name = f"{self.consumer_id}-suspension"
        self._suspension_timer = timer
        timer.start()

    def _cancel_suspension_timer(self) -> None:
        timer, self._suspension_timer = self._suspension_timer, None
        if timer is not None:
            timer.cancel()

    def _suspended_too_long(self, since: float) -> None:
        """Still cut off from ZooKeeper a third of the session timeout after the disconnection: stop fetching.

        The server expires the session a session timeout after it last heard from us, and another member may claim
        our partitions a moment later; we learn of it only when we reach the server again, which may take much
        longer, and meanwhile both would deliver the same partition. kazoo reports the disconnection at most two
        thirds of the session timeout after the last answer (its read timeout), so a third more is the latest moment
        that is still safe. Ownership is kept (the znodes may be ours still): a reconnection on the same session
        rebalances to fetch again, an expiry re-registers."""
        if self._shutdown.is_set() or self.zk.connected or self._suspension_timer is None:
            return
        self._fetching_suspended = True
        dropped = self._stop_fetching()
        owned = self._owned()
        self._log.emit(ev.ZOOKEEPER_SUSPENDED_TOO_LONG, suspended_ms=elapsed_ms(since), chunks_dropped=dropped,
                       owned=partition_list(owned, thread=owned))

    # --- the rebalance thread ---------------------------------------------------------------------------

    def _handle_triggers(self, causes: tuple[str, ...]) -> None:
        try:
            if self._session_lost.is_set():
                self._start_new_session()
            self._synced_rebalance(causes, background=True)
        except ConsumerRebalanceFailedException:
            # KAFKA-4228: Kafka gave up here, leaving a member that owns nothing. Keep going, and say so loudly.
            self._log.emit(ev.REBALANCE_RETRYING_AFTER_FAILURE, failures_in_a_row=self._consecutive_failures)
            self._rebalancer.trigger("retry_after_failure")
        except Exception as exc:
            self._log.emit(ev.REBALANCE_ERROR, error=_error_text(exc))
            if not self._shutdown.wait(self.config.rebalance_backoff_ms / 1000):
                self._rebalancer.trigger("retry_after_error")

    def _start_new_session(self) -> None:
        """Our ephemerals died with the old session: drop what we held, without committing, and register again."""
        with self._rebalance_lock:
            if self._shutdown.is_set():
                return
            self._stop_fetching()
            # Owner znodes normally died with the old session; any made by the new one (a claim that raced the
            # expiry) are ours to delete: forgotten, they stay unconfirmed, and release checks the session.
            owned = self._ownership.forget()
            self._log.emit(ev.SESSION_EXPIRED, dropped=partition_list(owned))
            while not self.zk.connected:
                if self._shutdown.wait(0.2):
                    return
            self._register(again=True)
            self._session_lost.clear()

    # --- the rebalance (Kafka's syncedRebalance) ---------------------------------------------------------

    def _synced_rebalance(self, causes: tuple[str, ...], background: bool) -> None:
        with self._rebalance_lock:
            if self._shutdown.is_set():
                return
            self._rebalance_id += 1
            started = time.monotonic()
            log = self._log.bind(rebalance_id=self._rebalance_id)
            log.emit(ev.REBALANCE_STARTED, cause=",".join(causes), strategy=self.config.partition_assignment_strategy)
            retries = self.config.rebalance_max_retries
            for attempt in range(1, retries + 1):
                if self._shutdown.is_set():
                    return
                self._attempt_number = attempt
                outcome = self._rebalance(log.bind(attempt=attempt))
                if outcome.completed:
                    self._rebalances += 1
                    self._consecutive_failures = 0
                    log.emit(ev.REBALANCE_COMPLETED, attempts=attempt, duration_ms=elapsed_ms(started),
                             owned=partition_list(self._owned(), thread=self._owned()))
                    if self._meters is not None:
                        self._meters.rebalanced(time.monotonic() - started)
                    return
                self._close_fetchers_for_queues()
                backoff = self.config.rebalance_backoff_ms + random.randint(0, self.config.rebalance_backoff_jitter_ms)
                log.emit(ev.REBALANCE_ATTEMPT_FAILED, attempt=attempt, reason=outcome.failure, backoff_ms=backoff)
                if self._shutdown.wait(backoff / 1000):
                    return
            self._failed_rebalances += 1
            self._consecutive_failures += 1
            log.emit(ev.REBALANCE_FAILED, attempts=retries, background=background, duration_ms=elapsed_ms(started),
                     failures_in_a_row=self._consecutive_failures)
            if self._meters is not None:
                self._meters.rebalanced(time.monotonic() - started, failed=True)
            raise ConsumerRebalanceFailedException(f"{self.consumer_id} can't rebalance after {retries} retries")

    def _rebalance(self, log: EventLogger) -> AttemptOutcome:
        """One attempt, and why it failed if it did: a step that raised has emitted its event with the error
        already, and the attempt fails with that error (Kafka retried on any exception too). ``log`` carries the
        rebalance and attempt numbers every event of the attempt gives."""
        try:
            outcome = self._attempt(log)
        except NotRegisteredError as exc:
            # Our registration is gone (an expired session, or someone deleted it): register again.
            self._session_lost.set()
            outcome = AttemptOutcome(str(exc))
        except Exception as exc:  # ZooKeeper churn, a listener's error...
            outcome = AttemptOutcome(_error_text(exc))
        if not outcome.completed and self._shutdown.is_set():
            return AttemptOutcome(SHUTDOWN)  # cut short by shutdown() (which closes the client), whatever it raised
        return outcome

    def _attempt(self, log: EventLogger) -> AttemptOutcome:
        """The steps of one attempt, numbered and in the order of Kafka's ``ZKRebalancerListener.rebalance``
        (:mod:`zkconsumer.events.rebalance_steps`); each emits its event when it ends (see :func:`_step`)."""
        if not self._read_cluster(log):  # 1
            return COMPLETED
        self._stop_fetchers(log)  # 2
        self._commit_before_release(log)  # 2
        self._listener_before_release(log, self._owned())  # 3
        self._release(log)  # 4
        plan = self._assign(log)  # 5
        offsets = self._fetch_offsets(log, plan)  # 6
        if self._shutdown.is_set():
            return AttemptOutcome(SHUTDOWN)
        registry = self._build_registry(log, plan, offsets)  # 7
        claims = {tp: plan.assignment[tp] for tp in offsets}
        if not self._claim(log, claims, registry, offsets):  # 8
            return AttemptOutcome(OWNERSHIP_CONFLICT)
        self._ownership.publish(registry, claims)  # 9. Own it: what fails from here on is released as owned
        self._listener_before_start(log, plan)  # 9
        self._start_fetchers(log)  # 9
        return COMPLETED

    def _read_cluster(self, log: EventLogger) -> bool:
        """Step 1: is there a cluster at all? Without brokers nothing can be fetched: the attempt succeeds owning
        nothing new (``False``), and a watch on /brokers/ids rebalances at the first broker's arrival."""
        with _step(log, "read_cluster", self._before_step) as fields:
            brokers = reads.children(self.zk, paths.BROKER_IDS_PATH)
            fields["brokers"] = brokers
        if brokers:
            return True
        log.emit(ev.REBALANCE_NO_BROKERS)
        if not self._broker_watch_armed:
            self._broker_watch_armed = True
            ensure_path(self.zk, paths.BROKER_IDS_PATH, acl=shared_acl())  # the brokers' path, not ours
            ChildrenWatch(self.zk, paths.BROKER_IDS_PATH, self._on_brokers_changed)
        return False

    def _stop_fetchers(self, log: EventLogger) -> None:
        """Step 2: stop fetching and empty the buffers, so nothing fetched under the old ownership is handed out
        later."""
        with _step(log, "stop_fetchers", self._before_step) as fields:
            fields["chunks_dropped"] = self._stop_fetching()

    def _commit_before_release(self, log: EventLogger) -> None:
        """Step 2, then: commit what the application consumed (with auto-commit), while we still own it."""
        with _step(log, "commit_offsets", self._before_step) as fields:
            fields["auto_commit"] = self.config.auto_commit_enable
            if self.config.auto_commit_enable:
                result = self._commit("rebalance", log_event=False)
                fields["offsets"] = partition_list(result.written, offset=result.written)
                fields["batches"] = result.batches
                fields["store"] = result.primary.store

    def _listener_before_release(self, log: EventLogger, owned: Iterable[TopicPartition]) -> None:
        """Step 3: tell the application, which may commit its own offsets now."""
        if self._listener is None:
            return
        with _step(log, "listener_before_release", self._before_step):
            ownership: dict[str, set[int]] = {}
            for tp in owned:
                ownership.setdefault(tp.topic, set()).add(tp.partition)
            self._listener.before_releasing_partitions(ownership)

    def _release(self, log: EventLogger) -> None:
        """Step 4: give up every partition, and every claim left unconfirmed; the assignment is computed from
        scratch (eager, as in Kafka)."""
        with _step(log, "release", self._before_step) as fields:
            released = self._ownership.release(lambda partitions, held: release_partitions(
                self.zk, self.group, partitions, self.config.zookeeper_multi_max_bytes, held))
            fields.update(released=partition_list(released.released), batches=released.batches)

    def _assign(self, log: EventLogger) -> RebalancePlan:
        """Step 5: read the group and compute this consumer's share, as every other member does from its own
        reading."""
        with _step(log, "assign", self._before_step) as fields:
            assert self._topic_count is not None
            own = [t for t, _ in self._topic_count.topic_streams]  # static: asked for with the members' listing
            snapshot = read_group_snapshot(self.zk, self.group, self.config.exclude_internal_topics, own)
            self._report_malformed(snapshot.malformed)
            plan = plan_rebalance(snapshot, self.consumer_id, self.config.partition_assignment_strategy,
                                  self.config.exclude_internal_topics)
            fields.update(strategy=plan.strategy, members=list(plan.members),
                          assignment=partition_list(plan.assignment, thread=plan.assignment),
                          partitions={t: len(ps) for t, ps in snapshot.partitions.items() if t in plan.my_threads})
        return plan

    def _fetch_offsets(self, log: EventLogger, plan: RebalancePlan) -> dict[TopicPartition, int]:
        """Step 6: where each assigned partition's consumption resumes (a partition whose offset cannot be read
        is left out, and so not claimed)."""
        with _step(log, "fetch_offsets", self._before_step) as fields:
            fields["storage"] = self._offsets.storage
            fetched = self._offsets.fetch(plan.assignment)
            self._report_malformed(tuple(fetched.malformed.values()))
            for tp, problem in sorted(fetched.kafka_malformed.items()):
                log.emit(ev.OFFSETS_MALFORMED, store=KAFKA, topic=tp.topic, partition=tp.partition, problem=problem)
            fields["offsets"] = partition_list(fetched.offsets, offset=fetched.offsets)
            fields["skipped"] = partition_list(set(plan.assignment) - set(fetched.offsets))
            if fetched.zookeeper is not None and fetched.kafka is not None:  # dual commit: the larger of the two
                fields["zookeeper_offsets"] = partition_list(fetched.zookeeper, offset=fetched.zookeeper)
                fields["kafka_offsets"] = partition_list(fetched.kafka, offset=fetched.kafka)
        return fetched.offsets

    def _build_registry(self, log: EventLogger, plan: RebalancePlan, offsets: Mapping[TopicPartition, int]) -> Registry:
        """Step 7: the new topicRegistry, each partition bound to the queue of the stream of its thread."""
        with _step(log, "build_registry", self._before_step) as fields:
            registry: Registry = {}
            fetch_size, client_id = self.config.fetch_message_max_bytes, self.config.client_id  # a lookup each
            for tp, offset in offsets.items():
                thread = plan.assignment[tp]
                registry.setdefault(tp.topic, {})[tp.partition] = PartitionTopicInfo(
                    tp.topic, tp.partition, self._queue_for(tp.topic, thread), offset, offset, fetch_size, client_id)
            fields["partitions"] = sum(len(ps) for ps in registry.values())
        return registry

    def _claim(self, log: EventLogger, claims: Mapping[TopicPartition, str], registry: Registry,
               offsets: Mapping[TopicPartition, int]) -> bool:
        """Step 8: claim ownership, all or nothing. ``False`` on a conflict: another member has not released yet,
        or read the group differently, and the attempt backs off and retries. The claims stay unconfirmed until
        published (step 9), so that the next release covers znodes an error left."""
        with _step(log, "claim", self._before_step) as fields:
            self._ownership.claiming(claims)
            claimed = claim_partitions(self.zk, self.group, claims, self.config.zookeeper_multi_max_bytes)
            self._ownership.claimed(claims, claimed)
            fields.update(claimed=partition_list(claimed.claimed, thread=claims),
                          already_ours=partition_list(claimed.already_ours),
                          conflicts=partition_list(claimed.conflicts, holder=claimed.conflicts),
                          batches=claimed.batches)
            if claimed.ok and claimed.claimed:
                # A read that fails here fails the attempt with the znodes created and still unconfirmed, so that
                # the next release deletes them rather than leaving them owned by no member's registry.
                moved = self._offsets_committed_since(registry, offsets, claimed.claimed)
                fields["offsets_moved"] = partition_list(moved, offset=moved)
        return claimed.ok

    def _listener_before_start(self, log: EventLogger, plan: RebalancePlan) -> None:
        """Step 9: tell the application the group's decision before fetching resumes."""
        if self._listener is None:
            return
        with _step(log, "listener_before_start", self._before_step):
            decision = {t: {p: ConsumerThreadId(th) for p, th in ps.items()}
                        for t, ps in plan.global_assignment.items()}
            self._listener.before_starting_fetchers(self.consumer_id, decision)

    def _start_fetchers(self, log: EventLogger) -> None:
        """Step 9, then: hand the published registry to the fetcher manager (unless this member does not fetch)."""
        with _step(log, "start_fetchers", self._before_step) as fields:
            infos = self._ownership.current().infos()
            if not self.zk.connected:  # cut off since the claim: _suspended_too_long may have stopped us already
                raise ConnectionError("ZooKeeper connection lost before the fetchers started")
            self._fetching_suspended = False
            if self.fetch:
                self._fetcher.start_connections(infos)
            fields["partitions"] = len(infos)
            fields["fetching"] = self.fetch

    def _at_step_gate(self, step: RebalanceStep) -> None:
        """Hold the attempt before ``step`` for as long as the step gate does (only the rebalance lock is held)."""
        assert self._step_gate is not None
        self._step_gate(step, StepContext(self.consumer_id, self._rebalance_id, self._attempt_number))

    def _offsets_committed_since(self, registry: Registry, read: Mapping[TopicPartition, int],
                                 claimed: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """Step 6 read the offsets before step 8 claimed (Kafka's order): an old owner that committed and released
        in between left us resuming from before its commit, and what it consumed meanwhile was delivered twice.
        Now that the partitions are ours, nobody else commits them: read them again, and resume from any that
        moved forward. Returns those, with their new offset."""
        again = self._offsets.fetch(claimed).offsets
        moved = {tp: offset for tp, offset in again.items() if offset > read.get(tp, offset)}
        for tp, offset in moved.items():
            old = registry[tp.topic][tp.partition]
            registry[tp.topic][tp.partition] = PartitionTopicInfo(
                tp.topic, tp.partition, old.chunk_queue, offset, offset, old.fetch_size, old.client_id)
        return moved

    def _close_fetchers_for_queues(self) -> None:
        """After a failed attempt: nothing may be fetched for partitions we might not own."""
        self._stop_fetching()
        if self.config.auto_commit_enable:
            try:
                self._commit("rebalance")
            except Exception as exc:
                self._log.emit(ev.OFFSETS_COMMIT_FAILED, reason="rebalance", error=_error_text(exc))

    def _stop_fetching(self) -> int:
        """Stop the fetchers and drop everything fetched but not handed out (queues and every stream's current
        chunk): the next owner fetches it again from the consumed offset. Returns the chunks dropped. A rebalance
        does not wait for the leader finder's thread to end (it may be in the middle of a Metadata request), shutdown
        does."""
        self._fetcher.stop_connections(wait_for_leader_finder=self._shutdown.is_set())
        dropped = sum(queue.clear() for queue in self._all_queues())
        for stream in self._streams:
            stream.clear()
        if self._shutdown.is_set():
            # a rebalance that outlasted shutdown's wait for it must not clear the streams' end away: a stream
            # without consumer.timeout.ms would wait for ever
            for queue in self._all_queues():
                queue.put_sentinel()
        return dropped

    # --- offsets ----------------------------------------------------------------------------------------

    def _owned(self) -> dict[TopicPartition, str]:
        """Owned partitions -> the thread whose queue each feeds."""
        return self._ownership.owned()

    def _commit(self, reason: str, offsets: Mapping[TopicPartition, int] | None = None,
                log_event: bool = True) -> StorageCommit:
        """``log_event=False``: the caller's event carries what the first store took (the other stores' still log)."""
        retries = self.config.offsets_commit_max_retries if reason == "explicit" else 0
        with self._ownership.locked() as registry:  # no release while committing: what is written is still ours
            if offsets is None:
                offsets = {TopicPartition(t, p): info.consumed_offset
                           for t, ps in registry.items() for p, info in ps.items()}
            result = self._offsets.commit(offsets, retries)
        self._log_commit(reason, result, log_event)
        primary = result.primary
        if primary.failed and reason == "explicit":
            raise OffsetsCommitFailedError(f"group {self.group}: {primary.error}", result)
        return result

    def _log_commit(self, reason: str, result: StorageCommit, log_event: bool = True) -> None:
        for write in result.writes:
            if self._meters is not None and write.written:
                self._meters.committed(write.store, len(write.written))
            if write.written and (log_event or write is not result.primary):
                self._log.emit(ev.OFFSETS_COMMITTED, reason=reason, store=write.store,
                               offsets=partition_list(write.written, offset=write.written), batches=write.batches)
            if write.kept_higher:
                self._log.emit(ev.OFFSETS_COMMIT_SKIPPED, reason=reason, store=write.store,
                               offsets=partition_list(write.kept_higher, theirs=write.kept_higher))
            if write.failed:
                self._log.emit(ev.OFFSETS_COMMIT_FAILED, reason=reason, store=write.store, error=write.error,
                               offsets=partition_list(write.failed, error=write.failed))
        self._report_malformed(tuple(result.malformed.values()))

    def _auto_commit_loop(self) -> None:
        interval = self.config.auto_commit_interval_ms / 1000
        while not self._shutdown.wait(interval):
            try:
                self._commit("auto")
            except Exception as exc:  # Kafka's autoCommit logged and carried on
                self._log.emit(ev.OFFSETS_COMMIT_FAILED, reason="auto", error=_error_text(exc))

    def _on_offset_reset(self, info: PartitionTopicInfo, offset: int, reason: str) -> None:
        """The fetcher resolved ``auto.offset.reset``; a partition never committed gets its offset znode now."""
        if reason == "no_offset":
            self._initial_offsets.put(TopicPartition(info.topic, info.partition), (info, offset))

    def _write_initial_offsets(self, pending: dict[TopicPartition, tuple[PartitionTopicInfo, int]]) -> None:
        """Every starting offset found since the last call, in one commit (a few batches)."""
        try:
            with self._ownership.locked():
                # Only partitions still ours (else released) and not consumed past their start meanwhile: a
                # commit since then wrote a later offset, which a late starting offset must not move back.
                offsets = {tp: offset for tp, (info, offset) in pending.items()
                           if self._ownership.is_current(info) and info.consumed_offset <= offset}
                result = self._offsets.commit(offsets)
        except Exception as exc:  # the next commit writes them (the consumed offset is the starting one)
            self._log.emit(ev.OFFSETS_COMMIT_FAILED, reason="initial", error=_error_text(exc))
            return
        self._log_commit("initial", result)

    # --- helpers ----------------------------------------------------------------------------------------

    def _chunk_queue(self, name: str) -> ChunkQueue:
        if self._meters is None:
            return ChunkQueue(self.config.queued_max_message_chunks, name)
        return MeteredChunkQueue(self.config.queued_max_message_chunks, name, self._meters)

    def _metrics_snapshot(self) -> MetricsSnapshot:
        """What a Prometheus scrape shows (:mod:`zkconsumer.consumer.metrics`), read on the scraping thread."""
        assert self._meters is not None
        current = self._ownership.current()  # a registry and its threads, published together
        threads = current.threads
        owned = tuple(OwnedPartition(info.topic, info.partition, threads.get(tp, ""), info.consumed_offset,
                                     info.fetched_offset)
                      for info, tp in ((info, TopicPartition(info.topic, info.partition)) for info in current.infos()))
        queues = [QueueSize(topic, thread, queue.qsize()) for (topic, thread), queue in list(self._queues.items())]
        queues += [QueueSize(topic, thread, queue.qsize()) for thread, queue in list(self._thread_queues.items())
                   for topic in sorted(self._wildcard_topics)]
        log_ends = read_log_ends(self.zk, [TopicPartition(o.topic, o.partition) for o in owned]) if owned else {}
        return MetricsSnapshot(self.config.client_id, self.group, owned, tuple(queues), self._meters.read(), log_ends)

    def _queue_for(self, topic: str, thread: str) -> ChunkQueue:
        return self._queues.get((topic, thread)) or self._thread_queues[thread]

    def _report_malformed(self, malformed: tuple[MalformedZnode, ...]) -> None:
        for bad in malformed:
            self._log.emit(ev.ZNODE_MALFORMED, path=bad.path, problem=bad.problem)

    def _session_hex(self) -> str:
        with contextlib.suppress(Exception):
            return f"{session_id(self.zk):#x}"
        return "none"


@contextlib.contextmanager
def _step(log: EventLogger, name: str, before: Callable[[RebalanceStep], None] | None = None,
          ) -> Iterator[dict[str, Any]]:
    """One step of an attempt: its event (numbered as in :mod:`zkconsumer.events.rebalance_steps`) on ``log`` when
    the step is done, with the fields the step puts in the dict it is given. A step that raises still emits it, as a
    warning with what it gathered so far and the ``error``, so that a timeline shows where the attempt broke; the
    exception then fails the attempt. ``before`` (a teaching hook, :mod:`zkconsumer.consumer.step_gate`) is called
    first, and the step's time counts from its return."""
    step = BY_NAME[name]
    event = ev.BY_NAME[step.event]  # the catalogue's declaration of the step's event (made from the same table)
    if before is not None:
        before(step)
    started = time.monotonic()
    fields: dict[str, Any] = {}
    try:
        yield fields
    except Exception as exc:
        log.warning(event, step=step.number, duration_ms=elapsed_ms(started), **{**fields, "error": _error_text(exc)})
        raise
    log.info(event, step=step.number, duration_ms=elapsed_ms(started), **fields)


def _error_text(exc: BaseException) -> str:
    """An error as events carry it (``error``, and an attempt's ``reason``): its type and its message."""
    return f"{type(exc).__name__}: {exc}"
