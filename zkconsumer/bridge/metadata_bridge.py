"""The metadata bridge: keeps ZooKeeper's ``/brokers`` as a ZooKeeper-mode cluster would, for any broker.

The legacy consumer finds brokers, topics and partition counts in ZooKeeper. Brokers that never register
there (Tansu, a KRaft-mode Kafka) are made visible by this bridge: every interval it reads the Metadata API,
reads the matching znodes, and applies the pure plan of :mod:`zkconsumer.bridge.plan`. Its first pass creates
the persistent paths a broker creates when it starts (``/consumers``, ``/config/changes``...: Kafka's
``ZkUtils.persistentZkPaths``), so that clients which assume them find them. It survives either
side going away: a broker outage longer than ``broker_timeout_ms`` unregisters the brokers (as their
ZooKeeper sessions would have expired), a lost ZooKeeper session re-creates the ephemeral registrations on
the next pass, and nothing is retried in a tight loop.

Its events (``bridge.*``, logger ``zkconsumer.bridge.metadata_bridge``) are declared once in
:mod:`zkconsumer.events.bridge` and listed on the events page (``docs/events.md``).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, KazooException, NodeExistsError, NoNodeError

from zkconsumer.bridge import plan as bridge_plan
from zkconsumer.bridge.plan import (
    BrokerConflict,
    BrokerZnode,
    Change,
    DeleteTopic,
    MalformedZnode,
    RegisterBroker,
    SetController,
    SetPartitionState,
    StateZnode,
    TopicZnode,
    UnregisterBroker,
    WriteTopic,
    ZkView,
)
from zkconsumer.errors import ServerUnavailableError, ZkConsumerError, ZnodeFormatError
from zkconsumer.events import catalogue as ev
from zkconsumer.kafka.metadata import ClusterSnapshot, admin_client, fetch_metadata
from zkconsumer.log import get_logger
from zkconsumer.security import ZkAuth, default_acl
from zkconsumer.zk import batched_transaction as batched
from zkconsumer.zk import cluster, paths, znode_json
from zkconsumer.zk.client import close_client, open_client, session_id
from zkconsumer.zk.persistent import ensure_broker_paths, ensure_path
from zkconsumer.zk.reads import children, value_or_none

DEFAULT_INTERVAL_MS = 1000
DEFAULT_BROKER_TIMEOUT_MS = 6000  # zookeeper.session.timeout.ms of a 0.10 broker


class TransactionFailed(ZkConsumerError):
    pass


def _now_ms() -> str:
    return str(int(time.time() * 1000))


def read_view(zk: KazooClient, topics: Iterable[str]) -> ZkView:
    """Read brokers, the controller and the named topics (with their partition states) in two async rounds."""
    broker_ids = [int(c) for c in children(zk, paths.BROKER_IDS_PATH) if c.isdigit()]
    existing = set(children(zk, paths.BROKER_TOPICS_PATH))
    wanted = sorted(set(topics) & existing)
    broker_reads = {b: zk.get_async(paths.broker_path(b)) for b in broker_ids}
    topic_reads = {t: zk.get_async(paths.topic_path(t)) for t in wanted}
    partition_lists = {t: zk.get_children_async(paths.topic_partitions_path(t)) for t in wanted}
    controller_read = zk.get_async(paths.CONTROLLER_PATH)
    epoch_read = zk.exists_async(paths.CONTROLLER_EPOCH_PATH)

    brokers: dict[int, BrokerZnode] = {}
    for broker_id, result in broker_reads.items():
        got = value_or_none(result)
        if got is None:
            continue  # vanished between listing and reading
        data, stat = got
        try:
            info: cluster.BrokerInfo | None = cluster.parse_broker(broker_id, data)
        except ZnodeFormatError:
            info = None
        brokers[broker_id] = BrokerZnode(info, stat.ephemeralOwner)

    state_reads: dict[str, dict[int, object]] = {}
    for topic in wanted:
        partition_children = value_or_none(partition_lists[topic]) or []
        state_reads[topic] = {
            int(c): zk.get_async(paths.partition_state_path(topic, int(c))) for c in partition_children if c.isdigit()
        }

    topic_nodes: dict[str, TopicZnode] = {}
    for topic in wanted:
        got = value_or_none(topic_reads[topic])
        if got is None:
            continue
        data, stat = got
        try:
            assignment: cluster.TopicAssignment | None = cluster.parse_topic(topic, data)
        except ZnodeFormatError:
            assignment = None
        states: dict[int, StateZnode] = {}
        for p, result in state_reads[topic].items():
            state_got = value_or_none(result)
            if state_got is None:
                continue
            try:
                state: cluster.PartitionState | None = cluster.parse_partition_state(topic, p, state_got[0])
            except ZnodeFormatError:
                state = None
            states[p] = StateZnode(state, state_got[1].version)
        topic_nodes[topic] = TopicZnode(assignment, stat.version, states)

    controller_owner = controller_id = None
    got = value_or_none(controller_read)
    if got is not None:
        controller_owner = got[1].ephemeralOwner
        try:
            controller_id = znode_json.decode_object(paths.CONTROLLER_PATH, got[0]).get("brokerid")
        except ZnodeFormatError:
            controller_id = None
    has_epoch = epoch_read.get() is not None
    # the connection may have dropped since the reads: ConnectionLoss, an outage waited out as any other
    return ZkView(session_id(zk), brokers, topic_nodes, controller_owner, controller_id, has_epoch)


def _commit(txn, what: str) -> None:
    results = txn.commit()
    failures = [r for r in results if isinstance(r, Exception)]
    if failures:
        raise TransactionFailed(f"{what}: {type(failures[0]).__name__}")


def apply_change(zk: KazooClient, change: Change) -> None:
    """Write one planned change; several znodes of one change go in one transaction."""
    if isinstance(change, RegisterBroker):
        path = paths.broker_path(change.broker_id)
        ensure_path(zk, paths.BROKER_IDS_PATH)
        if change.replace:
            txn = zk.transaction()
            txn.delete(path)
            txn.create(path, change.data, ephemeral=True)
            _commit(txn, f"re-register broker {change.broker_id}")
        else:
            zk.create(path, change.data, ephemeral=True)
    elif isinstance(change, UnregisterBroker):
        with contextlib.suppress(NoNodeError):
            zk.delete(paths.broker_path(change.broker_id))
    elif isinstance(change, WriteTopic):
        _write_topic(zk, change)
    elif isinstance(change, SetPartitionState):
        path = paths.partition_state_path(change.topic, change.partition)
        if change.version is None:
            ensure_path(zk, paths.partition_path(change.topic, change.partition))
            zk.create(path, change.data)
        else:
            zk.set(path, change.data, version=change.version)
    elif isinstance(change, DeleteTopic):
        zk.delete(paths.topic_path(change.topic), recursive=True)
        with contextlib.suppress(NoNodeError):
            zk.delete(paths.topic_config_path(change.topic))
    elif isinstance(change, SetController):
        if change.broker_id == -1:
            zk.delete(paths.CONTROLLER_PATH)
        elif change.replace:
            zk.set(paths.CONTROLLER_PATH, change.data)
        else:
            zk.create(paths.CONTROLLER_PATH, change.data, ephemeral=True)
        if change.create_epoch:
            with contextlib.suppress(NodeExistsError):
                zk.create(paths.CONTROLLER_EPOCH_PATH, str(bridge_plan.CONTROLLER_EPOCH).encode())


def _write_topic(zk: KazooClient, change: WriteTopic) -> None:
    """A topic's znodes in as few multi-ops as fit ZooKeeper's request limit: one for an ordinary topic, several
    for one of thousands of partitions (a single request would be dropped by the server). Across batches the order
    is what a Kafka controller's writes show: a new topic's znode first (partitions without a leader yet), the
    partition states of added partitions before the topic's new partition list. The ``partitions`` directories hold
    null data, as the controller's parents did."""
    topic = change.topic
    ops: list[batched.Op] = []
    if change.version is None:
        ensure_path(zk, paths.BROKER_TOPICS_PATH)
        ops += [batched.Create(paths.topic_path(topic), change.data),
                batched.Create(paths.topic_partitions_path(topic))]
    else:
        ensure_path(zk, paths.topic_partitions_path(topic))
    for partition, state in sorted(change.new_states.items()):
        ops += [batched.Create(paths.partition_path(topic, partition)),
                batched.Create(paths.partition_state_path(topic, partition), state)]
    if change.version is not None:
        ops.append(batched.SetData(paths.topic_path(topic), change.data, version=change.version))
    for batch in batched.plan_for(zk, ops, batched.DEFAULT_MULTI_MAX_BYTES):
        results = batched.commit_async(zk, batch).get()
        failures = [r for r in results if isinstance(r, Exception)]
        if failures:
            raise TransactionFailed(f"write topic {topic}: {type(failures[0]).__name__}")
    if change.version is None:
        # What a 0.10 AdminUtils writes beside a new topic (kafka-manager reads it); kept if already there.
        ensure_path(zk, paths.TOPIC_CONFIG_PATH)
        with contextlib.suppress(NodeExistsError):
            zk.create(paths.topic_config_path(topic), znode_json.encode({"version": 1, "config": {}}))


class MetadataBridge:
    """Mirror one Kafka-protocol cluster's metadata into one ZooKeeper (chroot allowed)."""

    def __init__(
        self,
        zookeeper: str,
        bootstrap: str,
        interval_ms: int = DEFAULT_INTERVAL_MS,
        broker_timeout_ms: int = DEFAULT_BROKER_TIMEOUT_MS,
        connect_timeout: float = 6.0,
        partition_limits: Mapping[str, int] | None = None,
        auth: ZkAuth | None = None,
    ) -> None:
        self.zookeeper = zookeeper
        self.auth = auth  # a broker's credentials: what it writes gets the creator-writes, everyone-reads ACL
        self.bootstrap = bootstrap
        self.interval = interval_ms / 1000.0
        self.broker_timeout = broker_timeout_ms / 1000.0
        self.connect_timeout = connect_timeout
        self.log = get_logger("zkconsumer.bridge.metadata_bridge").bind(zookeeper=zookeeper, bootstrap=bootstrap)
        self._zk: KazooClient | None = None
        self._admin = admin_client(bootstrap)
        self._known_topics: set[str] = set()
        self._reported: set[tuple[str, str]] = set()
        self._last_snapshot: ClusterSnapshot | None = None
        self._broker_down_since: float | None = None
        self._zk_down = False
        self._broker_paths_ensured = False  # a broker's persistent paths, made sure of once per ZooKeeper outage
        #: Topics shown with fewer partitions than the broker has (bridge_plan.hold_partitions); the demo
        #: raises a limit with :meth:`show_partitions` to replay "partitions added" on Tansu.
        self.partition_limits: dict[str, int] = dict(partition_limits or {})
        self._apply_lock = threading.Lock()  # show_partitions() may sync while run() does

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> None:
        """Connect both sides; an unreachable server fails here, clearly, rather than in the loop."""
        self._zk = open_client(self.zookeeper, self.connect_timeout, retry_forever=True, auth=self.auth,
                               acl=default_acl(self.auth, None))
        try:
            fetch_metadata(self._admin, self.bootstrap, self.connect_timeout)
        except ServerUnavailableError:
            self.close()
            raise
        self.log.emit(ev.BRIDGE_STARTED, interval_ms=int(self.interval * 1000), session_id=hex(self._zk.client_id[0]))

    def close(self) -> None:
        """Closing the session removes our ephemeral broker registrations at once, as a broker's clean stop does."""
        with self._apply_lock:  # never under a pass that is still writing
            if self._zk is not None:
                close_client(self._zk)
                self._zk = None
                self.log.emit(ev.BRIDGE_STOPPED)

    def __enter__(self) -> MetadataBridge:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def running(self, name: str = "bridge", join_timeout: float = 10.0) -> Iterator[MetadataBridge]:
        """Connect, run :meth:`run` in a daemon thread, and on exit stop the loop, wait for it and close: the bridge
        beside other work in one process (the demo, the migration comparison, the tests' servers)."""
        stop = threading.Event()
        with self:
            thread = threading.Thread(target=self.run, args=(stop,), name=name, daemon=True)
            thread.start()
            try:
                yield self
            finally:
                stop.set()
                thread.join(join_timeout)

    def show_partitions(self, topic: str, count: int) -> list[Change]:
        """Raise (or set) the number of partitions of ``topic`` shown in ZooKeeper, and sync at once (an outage is
        waited out as in :meth:`run`: the caller waits for the znode, not for this pass)."""
        self.partition_limits[topic] = count
        return self.sync_safely()

    def run(self, stop: threading.Event) -> None:
        """Pass after pass until ``stop``. Outages are waited out by :meth:`sync_safely`; any other failure of a pass
        is reported and the next pass runs: this thread keeps ZooKeeper's view of the cluster for every consumer of
        the environment, and if it died that view would stay as it was, silently."""
        failed = 0  # passes in a row
        while not stop.is_set():
            try:
                self.sync_safely()
            except Exception as exc:
                if not failed:
                    self.log.emit(ev.BRIDGE_PASS_FAILED, error=f"{type(exc).__name__}: {exc}", exc_info=True)
                failed += 1
            else:
                if failed:
                    self.log.emit(ev.BRIDGE_PASS_RECOVERED, failed_passes=failed)
                failed = 0
            stop.wait(self.interval)

    # -- one pass ------------------------------------------------------------------------------

    def sync_once(self) -> list[Change]:
        """Fetch metadata, read ZooKeeper, apply the plan; errors propagate (``--once`` reports them)."""
        snapshot = fetch_metadata(self._admin, self.bootstrap, self.connect_timeout)
        return self._apply(snapshot)

    def sync_safely(self) -> list[Change]:
        """One pass of the long-running loop: outages are reported once and waited out, never raised."""
        snapshot: ClusterSnapshot | None
        try:
            snapshot = fetch_metadata(self._admin, self.bootstrap, min(self.connect_timeout, max(self.interval, 1.0)))
        except ServerUnavailableError as exc:
            snapshot = self._broker_outage(str(exc))
            if snapshot is None:
                return []
        else:
            if self._broker_down_since is not None:
                down_ms = int((time.monotonic() - self._broker_down_since) * 1000)
                self.log.emit(ev.BRIDGE_BROKER_RECOVERED, down_ms=down_ms)
                self._broker_down_since = None
        try:
            changes = self._apply(snapshot)
        except (NodeExistsError, NoNodeError, BadVersionError, TransactionFailed) as exc:
            # Someone else wrote between our read and our write: the next pass reads again and re-plans.
            self.log.emit(ev.BRIDGE_WRITE_CONFLICT, error=f"{type(exc).__name__}: {exc}")
            return []
        except KazooException as exc:
            if not self._zk_down:
                self.log.emit(ev.BRIDGE_ZOOKEEPER_UNAVAILABLE, error=f"{type(exc).__name__}: {exc}")
                self._zk_down = True
            return []
        if self._zk_down:
            self._zk_down = False
            self._broker_paths_ensured = False  # the ensemble may have come back without them
            session = self._zk.client_id if self._zk is not None else None  # closed meanwhile, or dropped again
            self.log.emit(ev.BRIDGE_ZOOKEEPER_RECOVERED, session_id=hex(session[0]) if session else None)
        return changes

    def _broker_outage(self, error: str) -> ClusterSnapshot | None:
        now = time.monotonic()
        if self._broker_down_since is None:
            self._broker_down_since = now
            self.log.emit(ev.BRIDGE_BROKER_UNAVAILABLE, error=error)
        down = now - self._broker_down_since
        if down < self.broker_timeout or self._last_snapshot is None or not self._last_snapshot.brokers:
            return None
        self.log.emit(ev.BRIDGE_BROKERS_EXPIRED, down_ms=int(down * 1000))
        # Every broker's session would have expired by now; topics and states stay as they were.
        return replace(self._last_snapshot, brokers={})

    def _apply(self, snapshot: ClusterSnapshot) -> list[Change]:
        with self._apply_lock:
            return self._apply_locked(snapshot)

    def _apply_locked(self, snapshot: ClusterSnapshot) -> list[Change]:
        if self._zk is None:  # not started, or closed while run() was between two passes
            return []
        started = time.monotonic()
        if not self._broker_paths_ensured:
            created = ensure_broker_paths(self._zk)
            if created:
                self.log.emit(ev.BRIDGE_PATHS_CREATED, paths=created)
            self._broker_paths_ensured = True
        snapshot = bridge_plan.hold_partitions(snapshot, self.partition_limits)
        self._known_topics |= set(snapshot.topics)
        view = read_view(self._zk, self._known_topics)
        changes = bridge_plan.plan(snapshot, view, frozenset(self._known_topics), _now_ms())
        applied = []
        for change in changes:
            if isinstance(change, (BrokerConflict, MalformedZnode)):
                key = (change.event, repr(change.fields))
                if key not in self._reported:
                    self._reported.add(key)
                    self.log.warning(change.event, **change.fields)
                continue
            apply_change(self._zk, change)
            applied.append(change)
            self.log.info(change.event, **change.fields)
        for change in applied:
            if isinstance(change, DeleteTopic):
                self._known_topics.discard(change.topic)
        self._last_snapshot = snapshot
        self.log.emit(ev.BRIDGE_SYNCED, changes=len(applied), duration_ms=int((time.monotonic() - started) * 1000))
        return applied
