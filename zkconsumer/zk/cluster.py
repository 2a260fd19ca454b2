"""The cluster metadata the legacy consumer reads from ZooKeeper: brokers, topics, partition states.

Typed values, pure codecs (``parse_*`` / ``encode_*``) and thin kazoo readers (``read_*``). A znode in the
wrong format raises :class:`~zkconsumer.errors.ZnodeFormatError` naming it, never a bare ``KeyError``.

Formats (as Kafka 0.10.0.1's brokers and controller wrote them):

* ``/brokers/ids/<id>``: version 1 ``host``/``port``; version 2 adds ``endpoints`` (then authoritative),
  3 adds ``rack``, 4 adds ``listener_security_protocol_map`` (endpoints named by listener). The consumer
  uses the PLAINTEXT endpoint.
* ``/brokers/topics/<t>``: ``{"version":1,"partitions":{"0":[1,2],...}}``.
* ``/brokers/topics/<t>/partitions/<p>/state``: leader, leader_epoch, controller_epoch, isr.

The encoders write what a Kafka 0.10.0.1 broker and controller wrote, in the key order seen on real
clusters (Kafka's JSON maps of more than four entries were Scala hash maps, so that order is fixed by
the keys themselves).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.errors import ServerUnavailableError, ZnodeFormatError, ZnodeMissingError
from zkconsumer.zk import paths, znode_json
from zkconsumer.zk.reads import children, pipelined_get

PLAINTEXT = "PLAINTEXT"
_ENDPOINT_RE = re.compile(r"^(.+)://\[?([0-9a-zA-Z\-%._:]*?)\]?:(-?[0-9]+)$")


@dataclass(frozen=True)
class BrokerEndpoint:
    """One listener of a broker's ZooKeeper registration (an entry of its ``endpoints``, ``LISTENER://host:port``).

    Not the broker a consumer fetches from: that is :class:`zkconsumer.kafka.metadata.BrokerMeta` (Kafka's
    ``BrokerEndPoint``), taken from a Metadata answer."""

    listener: str
    host: str
    port: int
    security_protocol: str = PLAINTEXT

    @property
    def connection_string(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.listener}://{host}:{self.port}"


@dataclass(frozen=True)
class BrokerInfo:
    """A broker's registration in ``/brokers/ids/<id>``. ``host``/``port`` are its PLAINTEXT endpoint, where the
    leader finder sends its Metadata request; the fetchers then fetch from the leaders named in the answer
    (:class:`zkconsumer.kafka.metadata.BrokerMeta`)."""

    id: int
    host: str
    port: int
    endpoints: tuple[BrokerEndpoint, ...] = ()
    version: int = 3
    jmx_port: int = -1
    timestamp: str | None = None
    rack: str | None = None

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class TopicAssignment:
    """``/brokers/topics/<t>``: the replica list of each partition."""

    topic: str
    replicas: dict[int, tuple[int, ...]] = field(default_factory=dict)

    @property
    def partitions(self) -> list[int]:
        """Partition ids ascending, as ``ZkUtils.getPartitionsForTopics`` returns them."""
        return sorted(self.replicas)


@dataclass(frozen=True)
class PartitionState:
    """``.../partitions/<p>/state``, the controller's leader and ISR record."""

    leader: int
    leader_epoch: int
    controller_epoch: int
    isr: tuple[int, ...]
    version: int = 1


# --- codecs ---------------------------------------------------------------------------------------


def parse_endpoint(path: str, text: Any, protocol_map: dict[str, str], data: bytes | None) -> BrokerEndpoint:
    match = _ENDPOINT_RE.match(text) if isinstance(text, str) else None
    if match is None:
        raise ZnodeFormatError(path, f"endpoint {text!r} is not LISTENER://host:port", data)
    listener, host, port = match.group(1), match.group(2), int(match.group(3))
    return BrokerEndpoint(listener, host, port, protocol_map.get(listener, listener))


def parse_broker(broker_id: int, data: bytes | None, path: str | None = None) -> BrokerInfo:
    path = path or paths.broker_path(broker_id)
    obj = znode_json.decode_object(path, data)
    version = znode_json.require(path, obj, "version", int, data)
    jmx_port = obj.get("jmx_port", -1)
    timestamp = obj.get("timestamp")
    rack = obj.get("rack")
    if version < 2:
        host = znode_json.require(path, obj, "host", str, data)
        port = znode_json.require(path, obj, "port", int, data)
        endpoint = BrokerEndpoint(PLAINTEXT, host, port)
        return BrokerInfo(broker_id, host, port, (endpoint,), version, jmx_port, _opt_str(timestamp), rack)
    raw_endpoints = znode_json.require(path, obj, "endpoints", list, data)
    protocol_map = obj.get("listener_security_protocol_map") or {}
    if not isinstance(protocol_map, dict):
        raise ZnodeFormatError(path, "field 'listener_security_protocol_map' is not an object", data)
    endpoints = tuple(parse_endpoint(path, e, protocol_map, data) for e in raw_endpoints)
    plaintext = next((e for e in endpoints if e.security_protocol == PLAINTEXT), None)
    if plaintext is None:
        listed = ", ".join(e.connection_string for e in endpoints) or "none"
        raise ZnodeFormatError(
            path, f"has no PLAINTEXT endpoint (endpoints: {listed}); the legacy consumer needs one", data
        )
    return BrokerInfo(
        broker_id, plaintext.host, plaintext.port, endpoints, version, jmx_port, _opt_str(timestamp), rack
    )


def encode_broker(broker: BrokerInfo) -> bytes:
    """A version 3 registration, byte for byte what a Kafka 0.10.0.1 broker writes."""
    endpoints = broker.endpoints or (BrokerEndpoint(PLAINTEXT, broker.host, broker.port),)
    obj: dict[str, Any] = {
        "jmx_port": broker.jmx_port,
        "timestamp": broker.timestamp or "0",
        "endpoints": [e.connection_string for e in endpoints],
        "host": broker.host,
        "version": 3,
        "port": broker.port,
    }
    if broker.rack is not None:
        obj["rack"] = broker.rack
    return znode_json.encode(obj)


def parse_topic(topic: str, data: bytes | None, path: str | None = None) -> TopicAssignment:
    path = path or paths.topic_path(topic)
    obj = znode_json.decode_object(path, data)
    raw = znode_json.require(path, obj, "partitions", dict, data)
    replicas: dict[int, tuple[int, ...]] = {}
    for key, value in raw.items():
        if not key.isdigit():
            raise ZnodeFormatError(path, f"partition id {key!r} is not a non-negative number", data)
        if not isinstance(value, list) or not all(_is_int(r) for r in value):
            raise ZnodeFormatError(path, f"replicas of partition {key} are {value!r}, expected a list of ids", data)
        replicas[int(key)] = tuple(value)
    return TopicAssignment(topic, dict(sorted(replicas.items())))


def encode_topic(assignment: TopicAssignment) -> bytes:
    partitions = {str(p): list(r) for p, r in sorted(assignment.replicas.items())}
    return znode_json.encode({"version": 1, "partitions": partitions})


def parse_partition_state(topic: str, partition: int, data: bytes | None, path: str | None = None) -> PartitionState:
    path = path or paths.partition_state_path(topic, partition)
    obj = znode_json.decode_object(path, data)
    leader = znode_json.require(path, obj, "leader", int, data)
    leader_epoch = znode_json.require(path, obj, "leader_epoch", int, data)
    controller_epoch = znode_json.require(path, obj, "controller_epoch", int, data)
    isr = znode_json.require(path, obj, "isr", list, data)
    if not all(_is_int(r) for r in isr):
        raise ZnodeFormatError(path, f"field 'isr' is {isr!r}, expected a list of broker ids", data)
    return PartitionState(leader, leader_epoch, controller_epoch, tuple(isr), obj.get("version", 1))


def encode_partition_state(state: PartitionState) -> bytes:
    """The controller's 0.10.0.1 ``leaderAndIsrZkData`` in its usual key order."""
    return znode_json.encode(
        {
            "controller_epoch": state.controller_epoch,
            "leader": state.leader,
            "version": state.version,
            "leader_epoch": state.leader_epoch,
            "isr": list(state.isr),
        }
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


# --- readers --------------------------------------------------------------------------------------


def _get(zk: KazooClient, path: str) -> bytes:
    try:
        data, _ = zk.get(path)
    except NoNodeError:
        raise ZnodeMissingError(path) from None
    return data


def read_broker(zk: KazooClient, broker_id: int) -> BrokerInfo:
    path = paths.broker_path(broker_id)
    return parse_broker(broker_id, _get(zk, path), path)


def read_brokers(zk: KazooClient) -> list[BrokerInfo]:
    """Every registered broker, ids in string order, skipping one that vanishes while read
    (``getAllBrokersInCluster``); a missing ``/brokers/ids`` is an empty cluster."""
    ids = []
    for child in children(zk, paths.BROKER_IDS_PATH):
        if not child.lstrip("-").isdigit():
            raise ZnodeFormatError(f"{paths.BROKER_IDS_PATH}/{child}", "is not a numeric broker id")
        ids.append(int(child))
    got = pipelined_get(zk, ((broker_id, paths.broker_path(broker_id)) for broker_id in ids))
    return [parse_broker(broker_id, value[0]) for broker_id, value in got.items() if value is not None]


def registered_bootstrap(zk: KazooClient) -> str | None:
    """``host:port`` of every broker registered in ZooKeeper (PLAINTEXT endpoints), comma-separated; ``None`` if
    there is none. A registration that cannot be read is skipped: any one broker is enough to bootstrap."""
    addresses = []
    for child in children(zk, paths.BROKER_IDS_PATH):
        if not child.isdigit():
            continue
        try:
            data, _ = zk.get(paths.broker_path(int(child)))
            addresses.append(parse_broker(int(child), data).address)
        except (NoNodeError, ZnodeFormatError):
            continue
    return ",".join(addresses) or None


def read_topic_names(zk: KazooClient) -> list[str]:
    return children(zk, paths.BROKER_TOPICS_PATH)


def read_topic(zk: KazooClient, topic: str) -> TopicAssignment:
    path = paths.topic_path(topic)
    return parse_topic(topic, _get(zk, path), path)


def read_partition_state(zk: KazooClient, topic: str, partition: int) -> PartitionState:
    path = paths.partition_state_path(topic, partition)
    return parse_partition_state(topic, partition, _get(zk, path), path)


def wait_for_topic(zk: KazooClient, topic: str, partitions: int, timeout: float = 15.0) -> None:
    """Until ZooKeeper shows ``topic`` with at least ``partitions`` partitions (a broker that does not write
    ZooKeeper itself is mirrored there by the metadata bridge a moment later); ServerUnavailableError after
    ``timeout`` seconds. Woken by a watch on the topic's znode, not by polling."""
    deadline = time.monotonic() + timeout
    path = paths.topic_path(topic)
    changed = threading.Event()  # a watch left from an earlier look only costs one more look
    while True:
        changed.clear()
        if zk.exists(path, watch=lambda _event: changed.set()) is not None:
            try:
                if len(read_topic(zk, topic).partitions) >= partitions:
                    return
            except ZnodeMissingError:
                pass  # deleted between the two reads: the watch fires
        left = deadline - time.monotonic()
        if left <= 0 or not changed.wait(left):
            raise ServerUnavailableError(
                f"topic {topic} did not show {partitions} partitions in ZooKeeper within {timeout:g} s")
