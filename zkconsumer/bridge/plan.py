"""What the bridge must change in ZooKeeper so it matches a broker's metadata: a pure plan.

Input: the cluster as the Metadata API reports it (:class:`~zkconsumer.kafka.metadata.ClusterSnapshot`) and
the relevant part of ZooKeeper as read (:class:`ZkView`). Output: the list of :class:`Change` that makes
ZooKeeper look as a ZooKeeper-mode broker and controller would have left it. The plan only ever contains a
change whose znode content really differs, so every watch a consumer has set fires exactly when it would
against a ZooKeeper-mode cluster, and never for a rewrite of the same content.

Rules, each mirroring what a ZooKeeper-mode cluster does:

* a broker in the metadata is registered as an ephemeral ``/brokers/ids/<id>`` (version 3 JSON). A
  registration with other content that belongs to our own session is replaced (a broker re-registering
  after a restart); one that belongs to another session is left alone and reported as a conflict until
  that session ends (the KAFKA-1387 lesson: never fight over somebody else's ephemeral node);
* a broker gone from the metadata is unregistered, but only when its node is ours;
* a new topic is created in one transaction: ``/brokers/topics/<t>``, its ``partitions`` children and
  every ``state``, so no reader ever sees a topic without partition states;
* new partitions get their states first and the topic's data last, in one transaction (the data change
  is what the consumer's watch reacts to);
* a leader or ISR change rewrites that partition's ``state`` with ``leader_epoch`` + 1;
* a topic gone from the metadata is deleted only if this bridge saw it in the metadata before (so topics
  in ZooKeeper that never belonged to this cluster are not touched);
* topics the broker reports with an error (being created or deleted) are left as they are.

One rule is not Kafka's, and is off unless asked for: :func:`hold_partitions` shows only the first *n*
partitions of a topic, so that partition growth can be replayed on a broker that cannot add partitions
(Tansu has no CreatePartitions): create the topic at its final size, hold it smaller, then raise the limit,
and ZooKeeper changes exactly as a ZooKeeper-mode controller's ``kafka-topics --alter`` made it change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from zkconsumer.events import catalogue as ev
from zkconsumer.kafka.metadata import ClusterSnapshot, TopicMeta
from zkconsumer.zk import cluster, paths, znode_json
from zkconsumer.zk.cluster import BrokerEndpoint, BrokerInfo, PartitionState, TopicAssignment

CONTROLLER_EPOCH = 1


@dataclass(frozen=True)
class BrokerZnode:
    info: BrokerInfo | None  # None: the node holds something we cannot parse
    owner_session: int


@dataclass(frozen=True)
class StateZnode:
    state: PartitionState | None
    version: int


@dataclass(frozen=True)
class TopicZnode:
    assignment: TopicAssignment | None
    version: int
    states: dict[int, StateZnode] = field(default_factory=dict)


@dataclass(frozen=True)
class ZkView:
    """The znodes the plan compares against, as read in one pass."""

    session_id: int
    brokers: dict[int, BrokerZnode]
    topics: dict[str, TopicZnode]
    controller_owner: int | None = None  # ephemeral owner of /controller, None when absent
    controller_id: int | None = None
    has_controller_epoch: bool = True


# --- changes ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One step of the plan; ``event`` and ``fields`` are what the bridge logs once it is applied."""

    event: str

    @property
    def fields(self) -> dict[str, object]:
        return {}


@dataclass(frozen=True)
class RegisterBroker(Change):
    broker_id: int
    data: bytes
    replace: bool = False  # our own node with other content: delete and create again, atomically

    @property
    def fields(self) -> dict[str, object]:
        return {"broker_id": self.broker_id, "registration": self.data.decode()}


@dataclass(frozen=True)
class UnregisterBroker(Change):
    broker_id: int

    @property
    def fields(self) -> dict[str, object]:
        return {"broker_id": self.broker_id}


@dataclass(frozen=True)
class BrokerConflict(Change):
    """Not a write: another session holds this broker id with other content."""

    broker_id: int
    owner_session: int

    @property
    def fields(self) -> dict[str, object]:
        return {"broker_id": self.broker_id, "owner_session": hex(self.owner_session)}


@dataclass(frozen=True)
class WriteTopic(Change):
    """Create a topic (``version`` None) or change its data, with the partition states it needs first."""

    topic: str
    data: bytes
    version: int | None
    new_states: dict[int, bytes]
    partitions_before: int = 0
    partitions_after: int = 0

    @property
    def fields(self) -> dict[str, object]:
        return {"topic": self.topic, "partitions_before": self.partitions_before,
                "partitions_after": self.partitions_after}


@dataclass(frozen=True)
class SetPartitionState(Change):
    topic: str
    partition: int
    data: bytes
    version: int | None  # None: the state node is missing and is created
    leader: int = -1
    leader_epoch: int = 0

    @property
    def fields(self) -> dict[str, object]:
        return {"topic": self.topic, "partition": self.partition, "leader": self.leader,
                "leader_epoch": self.leader_epoch}


@dataclass(frozen=True)
class DeleteTopic(Change):
    topic: str

    @property
    def fields(self) -> dict[str, object]:
        return {"topic": self.topic}


@dataclass(frozen=True)
class MalformedZnode(Change):
    """Not a write: a znode we would compare against holds something else; it is left untouched."""

    path: str

    @property
    def fields(self) -> dict[str, object]:
        return {"path": self.path}


@dataclass(frozen=True)
class SetController(Change):
    broker_id: int  # -1: remove our /controller
    data: bytes = b""
    replace: bool = False
    create_epoch: bool = False

    @property
    def fields(self) -> dict[str, object]:
        return {"broker_id": self.broker_id}


# --- planning ---------------------------------------------------------------------------------------


def broker_info(snapshot_broker_id: int, host: str, port: int, timestamp: str) -> BrokerInfo:
    endpoint = BrokerEndpoint(cluster.PLAINTEXT, host, port)
    return BrokerInfo(snapshot_broker_id, host, port, (endpoint,), version=3, jmx_port=-1, timestamp=timestamp)


def _same_registration(a: BrokerInfo, b: BrokerInfo) -> bool:
    return (a.host, a.port, a.endpoints, a.rack) == (b.host, b.port, b.endpoints, b.rack)


def plan_brokers(snapshot: ClusterSnapshot, view: ZkView, now_ms: str) -> list[Change]:
    changes: list[Change] = []
    for broker_id, meta in sorted(snapshot.brokers.items()):
        wanted = broker_info(broker_id, meta.host, meta.port, now_ms)
        current = view.brokers.get(broker_id)
        if current is None:
            changes.append(RegisterBroker(ev.BRIDGE_BROKER_REGISTERED, broker_id, cluster.encode_broker(wanted)))
        elif current.info is not None and _same_registration(current.info, wanted):
            continue
        elif current.owner_session == view.session_id:
            changes.append(
                RegisterBroker(ev.BRIDGE_BROKER_REREGISTERED, broker_id, cluster.encode_broker(wanted), replace=True)
            )
        else:
            changes.append(BrokerConflict(ev.BRIDGE_BROKER_CONFLICT, broker_id, current.owner_session))
    for broker_id, current in sorted(view.brokers.items()):
        if broker_id not in snapshot.brokers and current.owner_session == view.session_id:
            changes.append(UnregisterBroker(ev.BRIDGE_BROKER_UNREGISTERED, broker_id))
    return changes


def _initial_state(leader: int, isr: tuple[int, ...]) -> PartitionState:
    return PartitionState(leader=leader, leader_epoch=0, controller_epoch=CONTROLLER_EPOCH, isr=isr)


def _assignment(meta: TopicMeta) -> TopicAssignment:
    return TopicAssignment(meta.name, {p: part.replicas for p, part in meta.partitions.items()})


def plan_topic(meta: TopicMeta, current: TopicZnode | None) -> list[Change]:
    wanted = _assignment(meta)
    data = cluster.encode_topic(wanted)
    if current is None:
        states = {
            p: cluster.encode_partition_state(_initial_state(part.leader, part.isr))
            for p, part in meta.partitions.items()
        }
        return [WriteTopic(ev.BRIDGE_TOPIC_CREATED, meta.name, data, None, states, 0, len(states))]
    if current.assignment is None:
        return [MalformedZnode(ev.BRIDGE_MALFORMED_ZNODE, paths.topic_path(meta.name))]
    changes: list[Change] = []
    if current.assignment.replicas != wanted.replicas:
        new_states = {
            p: cluster.encode_partition_state(_initial_state(part.leader, part.isr))
            for p, part in meta.partitions.items()
            if p not in current.states
        }
        before, after = len(current.assignment.replicas), len(wanted.replicas)
        event = ev.BRIDGE_PARTITIONS_ADDED if after > before else ev.BRIDGE_TOPIC_UPDATED
        changes.append(WriteTopic(event, meta.name, data, current.version, new_states, before, after))
    for p, part in meta.partitions.items():
        znode = current.states.get(p)
        if znode is None:
            if p in current.assignment.replicas:  # partition listed but its state is missing: the controller's job
                state = _initial_state(part.leader, part.isr)
                changes.append(SetPartitionState(ev.BRIDGE_PARTITION_STATE_CREATED, meta.name, p,
                                                 cluster.encode_partition_state(state), None, part.leader, 0))
            continue
        if znode.state is None:
            changes.append(MalformedZnode(ev.BRIDGE_MALFORMED_ZNODE, paths.partition_state_path(meta.name, p)))
            continue
        if (znode.state.leader, znode.state.isr) != (part.leader, part.isr):
            state = PartitionState(part.leader, znode.state.leader_epoch + 1, znode.state.controller_epoch, part.isr)
            changes.append(SetPartitionState(ev.BRIDGE_LEADER_CHANGED, meta.name, p,
                                             cluster.encode_partition_state(state), znode.version,
                                             state.leader, state.leader_epoch))
    return changes


def plan_controller(snapshot: ClusterSnapshot, view: ZkView, now_ms: str) -> list[Change]:
    wanted = snapshot.controller_id if snapshot.controller_id in snapshot.brokers else -1
    ours = view.controller_owner == view.session_id
    if wanted == -1:
        if ours:
            return [SetController(ev.BRIDGE_CONTROLLER_RESIGNED, -1)]
        return []
    if view.controller_owner is not None and (not ours or view.controller_id == wanted):
        return []  # a controller elected elsewhere, or ours and current
    data = znode_json.encode({"version": 1, "brokerid": wanted, "timestamp": now_ms})
    return [SetController(ev.BRIDGE_CONTROLLER_ELECTED, wanted, data, replace=ours,
                          create_epoch=not view.has_controller_epoch)]


def plan(snapshot: ClusterSnapshot, view: ZkView, known_topics: frozenset[str], now_ms: str) -> list[Change]:
    """Everything to change, brokers first (a consumer reading topics finds their brokers), deletions last."""
    changes = plan_brokers(snapshot, view, now_ms)
    changes += plan_controller(snapshot, view, now_ms)
    for name, meta in snapshot.topics.items():
        changes += plan_topic(meta, view.topics.get(name))
    for name in sorted(view.topics):
        if name not in snapshot.topics and name not in snapshot.unsettled_topics and name in known_topics:
            changes.append(DeleteTopic(ev.BRIDGE_TOPIC_DELETED, name))
    return changes


def hold_partitions(snapshot: ClusterSnapshot, limits: Mapping[str, int]) -> ClusterSnapshot:
    """The snapshot with topic ``t`` cut to its first ``limits[t]`` partitions (see the module's last rule)."""
    if not limits:
        return snapshot
    topics = {
        name: TopicMeta(name, {p: m for p, m in meta.partitions.items() if p < limits[name]})
        if name in limits else meta
        for name, meta in snapshot.topics.items()
    }
    return replace(snapshot, topics=topics)
