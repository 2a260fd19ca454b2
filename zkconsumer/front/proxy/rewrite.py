"""The answers that name brokers, rewritten so that clients keep talking to the front.

A client learns where to connect from three answers: Metadata (the cluster's brokers), FindCoordinator (a group's
or a transaction's coordinator; from version 4 a list of them, KIP-699) and DescribeCluster (the brokers again, for
the admin client). Each is parsed with kio, every broker in it given the front's advertised host and port (node ids
unchanged, so a client's view of which node leads what stays the broker's), and written back. A coordinator answer
carrying an error names no broker (node -1) and is left as it is. Pure: entities in, entities out.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kio.schema.errors import ErrorCode
from kio.static.primitive import i32

from zkconsumer.kafka.api_keys import DESCRIBE_CLUSTER, FIND_COORDINATOR, METADATA
from zkconsumer.kafka.metadata import BrokerMeta

#: the APIs whose answers name brokers, rewritten by the front
REWRITTEN = frozenset({METADATA, FIND_COORDINATOR, DESCRIBE_CLUSTER})


@dataclass(frozen=True)
class Advertised:
    """The address the front gives clients for every broker."""

    host: str
    port: int

    @property
    def address(self) -> str:
        """``host:port``, written as a broker's address is (an IPv6 host in brackets)."""
        return BrokerMeta(-1, self.host, self.port).address


def rewrite_brokers(api_key: int, body: Any, advertised: Advertised) -> Any:
    """``body`` (an answer of one of :data:`REWRITTEN`) with every broker it names at ``advertised``."""
    if api_key in (METADATA, DESCRIBE_CLUSTER):
        return replace(body, brokers=tuple(_at(broker, advertised) for broker in body.brokers))
    if api_key == FIND_COORDINATOR:
        if hasattr(body, "coordinators"):  # version 4 on: one entry per key asked
            return replace(body, coordinators=tuple(_coordinator_at(c, advertised) for c in body.coordinators))
        return _coordinator_at(body, advertised)
    raise ValueError(f"API key {api_key} names no broker the front rewrites")


def _at(broker: Any, advertised: Advertised) -> Any:
    return replace(broker, host=advertised.host, port=i32(advertised.port))


def _coordinator_at(coordinator: Any, advertised: Advertised) -> Any:
    if coordinator.error_code != ErrorCode.none or coordinator.node_id < 0:
        return coordinator
    return _at(coordinator, advertised)
