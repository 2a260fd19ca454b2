"""What ``kafka-topics.sh --zookeeper`` decided before writing anything: the znodes of a new topic, the partitions
added to one, and the lines ``--describe`` printed. Pure: the cluster comes in as read
(:mod:`zkconsumer.admin.zk_topics` reads and writes it), so every refusal happens before a znode is touched.

Kafka's ``TopicCommand`` and ``AdminUtils.createTopic`` / ``addPartitions`` are followed, with three refusals Kafka
did not make, because each turned a typing mistake into a silently different topic: ``--partitions`` or
``--replication-factor`` that disagree with ``--replica-assignment`` (Kafka refused the options together, or, when
altering, used the assignment's count), and an alter ``--replica-assignment`` that lists an existing partition on
other brokers (Kafka ignored the listed old partitions; moving them was ``kafka-reassign-partitions``' job).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.admin import replica_placement as placement
from zkconsumer.admin.replica_placement import AdminOperationError, Assignment, BrokerMetadata, RackAwareMode
from zkconsumer.errors import ZkConsumerError, ZnodeFormatError
from zkconsumer.kafka.topic_names import colliding_topics, validate_topic_name
from zkconsumer.zk import cluster, znode_json
from zkconsumer.zk.cluster import PartitionState, TopicAssignment

#: the topic-level configurations a Kafka 0.10.0.1 broker knew (``LogConfig.configNames``); any other name was
#: refused by ``LogConfig.validateNames``, so a misspelt override never reached ZooKeeper
#: Kafka 0.10.0.1's topic configs (``LogConfig.configDef``): name -> (type, lowest value or allowed values). A value
#: is checked before anything is written, since a broker that cannot parse a topic's config fails to create its log.
LOG_CONFIGS: dict[str, tuple[str, int | float | tuple[str, ...] | None]] = {
    "segment.bytes": ("INT", 14), "segment.ms": ("LONG", 0), "segment.jitter.ms": ("LONG", 0),
    "segment.index.bytes": ("INT", 0), "flush.messages": ("LONG", 0), "flush.ms": ("LONG", 0),
    "retention.bytes": ("LONG", None), "retention.ms": ("LONG", None), "max.message.bytes": ("INT", 0),
    "index.interval.bytes": ("INT", 0), "delete.retention.ms": ("LONG", 0), "file.delete.delay.ms": ("LONG", 0),
    "min.cleanable.dirty.ratio": ("DOUBLE", 0.0), "cleanup.policy": ("STRING", ("compact", "delete")),
    "unclean.leader.election.enable": ("BOOLEAN", None), "min.insync.replicas": ("INT", 1),
    "compression.type": ("STRING", ("uncompressed", "snappy", "lz4", "gzip", "producer")),
    "preallocate": ("BOOLEAN", None), "message.format.version": ("VERSION", None),
    "message.timestamp.type": ("STRING", ("CreateTime", "LogAppendTime")),
    "message.timestamp.difference.max.ms": ("LONG", 0),
}
LOG_CONFIG_NAMES = frozenset(LOG_CONFIGS)
_INT_RANGES = {"INT": (-(2**31), 2**31 - 1), "LONG": (-(2**63), 2**63 - 1)}
#: the message format versions a 0.10.0.1 broker knows (``ApiVersion``: the first three parts count)
_FORMAT_VERSION = re.compile(r"0\.(8\.[0-2]|9\.0|10\.0)(-IV[01]|\.[0-9]+)?")

COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
                     "could collide. To avoid issues it is best to use either, but not both.")
PARTITION_WARNING = ("WARNING: If partitions are increased for a topic that has a key, the partition logic or "
                     "ordering of the messages will be affected")


class TopicStateError(ZkConsumerError):
    """What is already in ZooKeeper refuses the command (the topic exists, collides, is missing, or no broker is
    registered): the input may be right, the cluster is not ready for it."""


@dataclass(frozen=True)
class CreateRequest:
    """``topics create --zookeeper``'s options, as given: ``None`` where an option was left out."""

    topic: str
    partitions: int | None = None
    replication_factor: int | None = None
    replica_assignment: str | None = None
    config: dict[str, str] = field(default_factory=dict)
    rack_aware_mode: RackAwareMode = RackAwareMode.ENFORCED


@dataclass(frozen=True)
class TopicCreation:
    """The two znodes a new topic is: its configuration overrides and its replica assignment."""

    topic: str
    assignment: Assignment
    config: dict[str, str]

    @property
    def topic_data(self) -> bytes:
        return encode_assignment(self.topic, self.assignment)

    @property
    def config_data(self) -> bytes:
        return encode_config(self.config)


@dataclass(frozen=True)
class TopicAddition:
    """Partitions added to a topic; ``version`` is that of the topic znode read, so that the write fails instead of
    undoing a change made meanwhile."""

    topic: str
    before: TopicAssignment
    added: Assignment
    version: int

    @property
    def after(self) -> Assignment:
        return {**{p: list(r) for p, r in self.before.replicas.items()}, **self.added}

    @property
    def topic_data(self) -> bytes:
        return encode_assignment(self.topic, self.after)


def encode_assignment(topic: str, assignment: Mapping[int, Sequence[int]]) -> bytes:
    return cluster.encode_topic(TopicAssignment(topic, {p: tuple(r) for p, r in assignment.items()}))


def encode_config(config: Mapping[str, str]) -> bytes:
    """``/config/topics/<t>`` as ``AdminUtils.writeEntityConfig`` wrote it (version 1, even with no overrides)."""
    return znode_json.encode({"version": 1, "config": dict(config)})


def parse_config(path: str, data: bytes | None) -> dict[str, str]:
    """A topic's overrides from its config znode; values kept as the strings Kafka stored."""
    obj = znode_json.decode_object(path, data)
    config = obj.get("config", {})
    if not isinstance(config, dict):
        raise ZnodeFormatError(path, f"field 'config' is {config!r}, expected an object", data)
    return {str(k): str(v) for k, v in config.items()}


def parse_config_options(items: Sequence[str]) -> dict[str, str]:
    """``--config k=v`` options, split and checked as ``TopicCommand.parseTopicConfigsToBeAdded`` did (a value
    with ``=`` in it is refused, as there), in the order given."""
    config: dict[str, str] = {}
    for item in items:
        parts = re.split(r"\s*=\s*", item)
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2:
            raise AdminOperationError(f"Invalid topic config {item!r}: all configs to be added must be in the "
                                      f"format \"key=val\".")
        name = parts[0].strip()
        if name not in LOG_CONFIG_NAMES:
            raise AdminOperationError(f"Unknown configuration `{name}`.")
        config[name] = parts[1].strip()
        check_config_value(name, config[name])
    return config


def check_config_value(name: str, value: str) -> None:
    """A topic config value as Kafka's ``ConfigDef`` parsed and validated it, with its messages."""
    kind, rule = LOG_CONFIGS[name]

    def invalid(why: str) -> AdminOperationError:
        return AdminOperationError(f"Invalid value {value} for configuration {name}: {why}")

    number: float | None = None
    if kind in _INT_RANGES:
        low, high = _INT_RANGES[kind]
        if not re.fullmatch(r"[+-]?[0-9]+", value) or not low <= int(value) <= high:
            raise invalid(f"Not a number of type {kind}")
        number = int(value)
    elif kind == "DOUBLE":
        try:
            number = float(value)
        except ValueError:
            raise invalid("Not a number of type DOUBLE") from None
        if not 0.0 <= number <= 1.0:  # min.cleanable.dirty.ratio, the one DOUBLE: between(0, 1)
            raise invalid("Value must be no more than 1" if number > 1 else "Value must be at least 0")
        return
    elif kind == "BOOLEAN":
        if value.lower() not in ("true", "false"):
            raise invalid("Expected value to be either true or false")
        return
    elif kind == "VERSION":
        if not _FORMAT_VERSION.fullmatch(value):
            raise invalid(f"Version `{value}` is not a valid version")
        return
    if isinstance(rule, tuple) and value not in rule:
        raise invalid(f"String must be one of: {', '.join(rule)}")
    if isinstance(rule, (int, float)) and number is not None and number < rule:
        raise invalid(f"Value must be at least {rule}")


def _require_brokers(brokers: Sequence[BrokerMetadata]) -> None:
    if not brokers:
        raise TopicStateError("no broker is registered under /brokers/ids: start the brokers (or the bridge) "
                              "before placing replicas on them")


def plan_creation(request: CreateRequest, brokers: Sequence[BrokerMetadata], existing_topics: Sequence[str],
                  rng: random.Random | None = None) -> TopicCreation:
    """The topic ``request`` asks for on these brokers, or the refusal ``kafka-topics.sh --create`` gave.

    A manual assignment is taken as written (only its brokers are checked against the registered ones, so racks
    play no part); otherwise the placement of ``assignReplicasToBrokers`` from a random start (``rng``)."""
    topic = request.topic
    validate_topic_name(topic)
    if topic in existing_topics:
        raise TopicStateError(f'Topic "{topic}" already exists.')
    colliding = colliding_topics(topic, existing_topics)
    if colliding:
        raise TopicStateError(f'Topic "{topic}" collides with existing topics: {", ".join(colliding)}')
    _require_brokers(brokers)
    if request.replica_assignment is not None:
        assignment = placement.parse_replica_assignment(request.replica_assignment)
        replication_factor = len(assignment[0])
        if request.partitions is not None and request.partitions != len(assignment):
            raise AdminOperationError(f"--partitions {request.partitions} disagrees with --replica-assignment, "
                                      f"which lists {len(assignment)} partitions")
        if request.replication_factor is not None and request.replication_factor != replication_factor:
            raise AdminOperationError(f"--replication-factor {request.replication_factor} disagrees with "
                                      f"--replica-assignment, which lists {replication_factor} replicas a partition")
        placement.check_manual_assignment(assignment, {b.id for b in brokers})
    else:
        if request.partitions is None or request.replication_factor is None:
            raise AdminOperationError("--partitions and --replication-factor are required without "
                                      "--replica-assignment")
        placed_on = placement.broker_metadatas(brokers, request.rack_aware_mode)
        assignment = placement.assign_replicas_to_brokers(placed_on, request.partitions, request.replication_factor,
                                                          rng=rng)
    return TopicCreation(topic, assignment, dict(request.config))


def plan_addition(before: TopicAssignment, version: int, brokers: Sequence[BrokerMetadata], partitions: int,
                  replica_assignment: str | None = None,
                  rack_aware_mode: RackAwareMode = RackAwareMode.ENFORCED,
                  rng: random.Random | None = None) -> TopicAddition:
    """The partitions ``AdminUtils.addPartitions`` added to grow ``before`` to ``partitions``: the placement
    continued from partition 0's leader, or the new tail of a manual assignment with the topic's replication
    factor."""
    existing: Assignment = {p: list(r) for p, r in before.replicas.items()}
    _require_brokers(brokers)
    if replica_assignment is None:
        placed_on = placement.broker_metadatas(brokers, rack_aware_mode)
        added = placement.partitions_to_add(existing, placed_on, partitions, rng)
        return TopicAddition(before.topic, before, added, version)
    if 0 not in existing:
        raise AdminOperationError("the topic does not have partition with id 0, it should never happen")
    if partitions <= len(existing):
        raise AdminOperationError("The number of partitions for a topic can only be increased")
    listed = placement.parse_replica_assignment(replica_assignment)
    if len(listed) != partitions:
        raise AdminOperationError(f"--partitions {partitions} disagrees with --replica-assignment, which lists "
                                  f"{len(listed)} partitions (the existing ones included)")
    moved = [p for p in sorted(existing) if listed.get(p) != existing[p]]
    if moved:
        p = moved[0]
        raise AdminOperationError(
            f"--replica-assignment lists partition {p} on {':'.join(map(str, listed.get(p, [])))}, but it is on "
            f"{':'.join(map(str, existing[p]))}; adding partitions cannot move existing ones")
    added = placement.manual_partitions_to_add(replica_assignment, len(existing))
    placement.check_manual_assignment(added, {b.id for b in brokers}, len(existing[0]))
    return TopicAddition(before.topic, before, added, version)


def describe_json(assignment: TopicAssignment, config: Mapping[str, str],
                  states: Mapping[int, PartitionState | None]) -> dict[str, Any]:
    """What :func:`describe_lines` shows, as data (``topics describe --json``): leader None and an empty ISR where
    the controller has written no state yet."""
    replicas = assignment.replicas
    partitions: list[dict[str, Any]] = []
    for partition in assignment.partitions:
        state = states.get(partition)
        partitions.append({"partition": partition, "leader": None if state is None else state.leader,
                           "replicas": list(replicas[partition]), "isr": [] if state is None else list(state.isr)})
    return {"topic": assignment.topic, "partition_count": len(replicas),
            "replication_factor": len(replicas[min(replicas)]) if replicas else 0, "configs": dict(config),
            "partitions": partitions}


def describe_lines(assignment: TopicAssignment, config: Mapping[str, str],
                   states: Mapping[int, PartitionState | None]) -> list[str]:
    """``kafka-topics.sh --describe``'s lines for one topic: a header, then one line a partition (leader ``none``
    and an empty ISR where the controller has written no state yet)."""
    replicas = assignment.replicas
    replication_factor = len(replicas[min(replicas)]) if replicas else 0
    configs = ",".join(f"{k}={v}" for k, v in config.items())
    lines = [f"Topic:{assignment.topic}\tPartitionCount:{len(replicas)}\tReplicationFactor:{replication_factor}"
             f"\tConfigs:{configs}"]
    for partition in assignment.partitions:
        state = states.get(partition)
        leader = "none" if state is None else str(state.leader)
        isr = "" if state is None else ",".join(map(str, state.isr))
        lines.append(f"\tTopic: {assignment.topic}\tPartition: {partition}\tLeader: {leader}"
                     f"\tReplicas: {','.join(map(str, replicas[partition]))}\tIsr: {isr}")
    return lines
