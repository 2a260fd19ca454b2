"""Topics through ZooKeeper, as ``kafka-topics.sh --zookeeper`` made them before Kafka 2.2: the edge that reads the
registered brokers and the existing topics, and writes what :mod:`zkconsumer.admin.topic_plans` decided.

A new topic is ``/config/topics/<t>`` (its overrides, ``{"version":1,"config":{...}}``) and ``/brokers/topics/<t>``
(its placement, ``{"version":1,"partitions":{...}}``), and nothing else: the partitions' ``state`` znodes and the
logs are the ZooKeeper-mode controller's work, started by the topic znode's appearance. Kafka wrote the two znodes
one after the other; here they go in one transaction, with any missing parent, so a failure leaves nothing behind.
Adding partitions rewrites the topic znode only, conditional on the version read, so a concurrent change fails the
command instead of being undone.

**Coexistence with the metadata bridge.** The bridge (:mod:`zkconsumer.bridge`) writes only the topics its broker
reports, and deletes only topics it has seen there. A topic created here, under a name the broker does not have, is
therefore never touched by it: it stays exactly as written, without partition states (describe shows ``Leader:
none``) until a ZooKeeper-mode controller, which the bridge is not, brings its partitions online. The broker owns
the names it reports: if a topic of the same name appears on the broker, the bridge rewrites the znode to the
broker's placement, as a ZooKeeper-mode cluster would have refused the second creation. Against the embedded
environment, create topics for consumers with ``topics create`` without ``--zookeeper``.
"""

from __future__ import annotations

import posixpath
import random
from collections.abc import Callable, Mapping
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from zkconsumer.admin.replica_placement import BrokerMetadata, RackAwareMode
from zkconsumer.admin.topic_plans import (
    CreateRequest,
    TopicAddition,
    TopicCreation,
    TopicStateError,
    describe_lines,
    parse_config,
    plan_addition,
    plan_creation,
)
from zkconsumer.zk import cluster, paths
from zkconsumer.zk.cluster import PartitionState, TopicAssignment
from zkconsumer.zk.persistent import ensure_path
from zkconsumer.zk.reads import value_or_none

#: how ``describe`` shows one topic: lines (``describe_lines``) or one object (``describe_json``)
Renderer = Callable[[TopicAssignment, Mapping[str, str], Mapping[int, PartitionState | None]], Any]

# Created by the transaction when absent, parents first (Kafka's ZkClient created parents too).
_PARENTS = (paths.BROKERS_PATH, paths.BROKER_TOPICS_PATH, posixpath.dirname(paths.TOPIC_CONFIG_PATH),
            paths.TOPIC_CONFIG_PATH)


def read_broker_metadatas(zk: KazooClient) -> list[BrokerMetadata]:
    """The registered brokers with their racks, as ``AdminUtils.getBrokerMetadatas`` read them."""
    return [BrokerMetadata(b.id, b.rack) for b in cluster.read_brokers(zk)]


def read_topic_config(zk: KazooClient, topic: str) -> dict[str, str]:
    """A topic's overrides; none when it has no config znode (a topic made by a broker's auto-creation)."""
    path = paths.topic_config_path(topic)
    try:
        data, _ = zk.get(path)
    except NoNodeError:
        return {}
    return parse_config(path, data)


def prepare_creation(zk: KazooClient, request: CreateRequest, rng: random.Random | None = None) -> TopicCreation:
    """The topic to create, planned on what ZooKeeper holds now; nothing written."""
    return plan_creation(request, read_broker_metadatas(zk), cluster.read_topic_names(zk), rng)


def write_creation(zk: KazooClient, creation: TopicCreation) -> None:
    """Both znodes in one transaction. A leftover config znode of an earlier topic of this name is overwritten, as
    ``AdminUtils.writeEntityConfig`` did. The empty parents come first, each created unless it exists: a broker or
    bridge creating the same parent meanwhile is no conflict (in the transaction it failed the creation)."""
    topic_path, config_path = paths.topic_path(creation.topic), paths.topic_config_path(creation.topic)
    for parent in _PARENTS:
        ensure_path(zk, parent)
    txn = zk.transaction()
    config_stat = zk.exists(config_path)
    if config_stat is None:
        txn.create(config_path, creation.config_data)
    else:
        txn.set_data(config_path, creation.config_data, version=config_stat.version)
    txn.create(topic_path, creation.topic_data)
    results = txn.commit()
    failures = [r for r in results if isinstance(r, Exception)]
    if not failures:
        return
    if isinstance(results[-1], NodeExistsError):
        raise TopicStateError(f'Topic "{creation.topic}" already exists.')
    first = next(f for f in failures if type(f).__name__ != "RolledBackError")
    if isinstance(first, (NodeExistsError, BadVersionError, NoNodeError)):
        raise TopicStateError(f"ZooKeeper changed while topic {creation.topic!r} was being created "
                              f"({type(first).__name__}); nothing was written, try again")
    raise TopicStateError(f"ZooKeeper refused to create topic {creation.topic!r} ({type(first).__name__}, e.g. no "
                          f"permission on /brokers/topics or /config/topics); nothing was written")


def prepare_addition(zk: KazooClient, topic: str, partitions: int, replica_assignment: str | None = None,
                     rack_aware_mode: RackAwareMode = RackAwareMode.ENFORCED,
                     rng: random.Random | None = None) -> TopicAddition:
    """The partitions to add to ``topic``, planned on its znode as read now; nothing written."""
    path = paths.topic_path(topic)
    try:
        data, stat = zk.get(path)
    except NoNodeError:
        raise TopicStateError(f"Topic {topic} does not exist (no znode {path})") from None
    before = cluster.parse_topic(topic, data, path)
    return plan_addition(before, stat.version, read_broker_metadatas(zk), partitions, replica_assignment,
                         rack_aware_mode, rng)


def write_addition(zk: KazooClient, addition: TopicAddition) -> None:
    """The grown topic znode, only over the version the addition was planned on."""
    try:
        zk.set(paths.topic_path(addition.topic), addition.topic_data, version=addition.version)
    except BadVersionError:
        raise TopicStateError(f"topic {addition.topic!r} changed while partitions were being added; nothing was "
                              f"written, try again") from None
    except NoNodeError:
        raise TopicStateError(f"topic {addition.topic!r} was deleted while partitions were being added") from None


def describe(zk: KazooClient, topic: str | None = None, render: Renderer = describe_lines) -> list[Any]:
    """``--describe``'s lines for one topic, or for every topic in name order (one that vanishes meanwhile is
    left out, as it would be had it gone a moment earlier); ``render`` makes each topic's lines (or, with
    :func:`~zkconsumer.admin.topic_plans.describe_json`, its one object)."""
    names = [topic] if topic is not None else cluster.read_topic_names(zk)
    lines: list[str] = []
    for name in names:
        path = paths.topic_path(name)
        data = value_or_none(zk.get_async(path))
        if data is None:
            if topic is not None:
                raise TopicStateError(f"Topic {topic} does not exist (no znode {path})")
            continue
        assignment = cluster.parse_topic(name, data[0], path)
        reads = {p: zk.get_async(paths.partition_state_path(name, p)) for p in assignment.partitions}
        states: dict[int, PartitionState | None] = {}
        for partition, pending in reads.items():
            got = value_or_none(pending)
            state_path = paths.partition_state_path(name, partition)
            states[partition] = None if got is None else cluster.parse_partition_state(name, partition, got[0],
                                                                                       state_path)
        rendered = render(assignment, read_topic_config(zk, name), states)
        lines += rendered if isinstance(rendered, list) else [rendered]
    return lines
