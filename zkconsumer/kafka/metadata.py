"""Cluster metadata from any Kafka-protocol broker (Metadata API through confluent-kafka), as plain data.

The bridge turns a :class:`ClusterSnapshot` into the znodes a ZooKeeper-mode cluster would have; the
launchers use :func:`fetch_metadata` as the broker's readiness probe.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from zkconsumer.errors import ServerUnavailableError
from zkconsumer.kafka.client_config import with_client_settings
from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.types import TopicPartition


@dataclass(frozen=True)
class BrokerMeta:
    """A broker as the Metadata API names it: the broker a consumer fetches from (Kafka's ``BrokerEndPoint``).

    The data path uses this type only: the leader finder takes each partition's leader from a Metadata answer, and
    a fetcher thread bootstraps from its ``address``. Not to be confused with the ZooKeeper registration of a
    broker, :class:`zkconsumer.zk.cluster.BrokerInfo`, whose ``endpoints`` are its listeners
    (:class:`zkconsumer.zk.cluster.BrokerEndpoint`): the leader finder reads those only to know where to send the
    Metadata request.
    """

    id: int
    host: str
    port: int

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"


@dataclass(frozen=True)
class PartitionMeta:
    id: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]


@dataclass(frozen=True)
class TopicMeta:
    name: str
    partitions: dict[int, PartitionMeta] = field(default_factory=dict)


@dataclass(frozen=True)
class ClusterSnapshot:
    brokers: dict[int, BrokerMeta]
    topics: dict[str, TopicMeta]
    controller_id: int
    #: Topics the broker reported with an error (being created or deleted): neither present nor absent yet.
    unsettled_topics: frozenset[str] = frozenset()


def admin_client(bootstrap: str, extra: dict[str, Any] | None = None) -> AdminClient:
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "socket.connection.setup.timeout.ms": 3000,
        # librdkafka backs off up to 10 s between reconnects; a restarted broker should be seen within a second.
        "reconnect.backoff.max.ms": 1000,
        "logger": LIBRDKAFKA_LOGGER,
    }
    config.update(extra or {})
    return AdminClient(with_client_settings(config))


def _list_topics(admin: AdminClient, bootstrap: str, timeout: float) -> Any:
    """confluent-kafka's metadata of every topic, or ServerUnavailableError naming the address."""
    try:
        return admin.list_topics(timeout=timeout)
    except KafkaException as exc:
        raise ServerUnavailableError(
            f"no Kafka-protocol broker answered at {bootstrap} within {timeout:g} s ({exc.args[0].str()}); "
            f"check the address, or start the embedded environment with `zkconsumer local up`"
        ) from None


def fetch_metadata(admin: AdminClient, bootstrap: str, timeout: float = 5.0) -> ClusterSnapshot:
    md = _list_topics(admin, bootstrap, timeout)
    brokers = {b.id: BrokerMeta(b.id, b.host or "", b.port) for b in md.brokers.values()}
    topics: dict[str, TopicMeta] = {}
    unsettled: set[str] = set()
    for name, tm in md.topics.items():
        if tm.error is not None:
            unsettled.add(name)
            continue
        partitions = {
            p.id: PartitionMeta(p.id, p.leader, tuple(p.replicas), tuple(p.isrs)) for p in tm.partitions.values()
        }
        topics[name] = TopicMeta(name, dict(sorted(partitions.items())))
    return ClusterSnapshot(brokers, dict(sorted(topics.items())), md.controller_id, frozenset(unsettled))


def fetch_leaders(admin: AdminClient, bootstrap: str, partitions: Iterable[TopicPartition],
                  timeout: float = 5.0) -> dict[TopicPartition, BrokerMeta]:
    """The leader of each of ``partitions`` that has one now, from one Metadata request of every topic. Only these
    partitions are read from the answer: a consumer of 500 partitions of a 10,000-partition topic would otherwise
    make a snapshot of all 10,000 (of every topic) each time it looks its leaders up."""
    md = _list_topics(admin, bootstrap, timeout)
    brokers: dict[int, BrokerMeta] = {}
    leaders: dict[TopicPartition, BrokerMeta] = {}
    for tp in partitions:
        topic = md.topics.get(tp.topic)
        partition = topic.partitions.get(tp.partition) if topic is not None and topic.error is None else None
        broker = md.brokers.get(partition.leader) if partition is not None else None
        if broker is None:
            continue
        if broker.id not in brokers:
            brokers[broker.id] = BrokerMeta(broker.id, broker.host or "", broker.port)
        leaders[tp] = brokers[broker.id]
    return leaders


def broker_answers(bootstrap: str, timeout: float = 1.0) -> bool:
    try:
        fetch_metadata(admin_client(bootstrap), bootstrap, timeout)
    except ServerUnavailableError:
        return False
    return True
