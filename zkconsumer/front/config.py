"""What a front is told: where it listens, the address it gives clients, the broker behind it, whether and how
its own group coordinators answer the group APIs, and the ZooKeeper that keeps version-0 offsets."""

from __future__ import annotations

from dataclasses import dataclass, field

from zkconsumer.errors import UsageError
from zkconsumer.front.classic_group import ClassicGroupConfig
from zkconsumer.front.consumer_group import ConsumerGroupConfig
from zkconsumer.front.wire import MAX_REQUEST_BYTES

LOOPBACK = "127.0.0.1"


def parse_address(address: str, what: str = "address") -> tuple[str, int]:
    """``HOST:PORT`` (an IPv6 host in brackets) as a pair.

    :raises UsageError:
    """
    host, sep, port = address.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UsageError(f"{what} {address!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


@dataclass(frozen=True)
class FrontConfig:
    """A front's settings. ``port`` 0 takes a free port; the advertised host and port default to where it listens."""

    #: the broker's addresses, ``HOST:PORT`` each, tried in order for every client connection
    bootstrap: tuple[str, ...]
    host: str = LOOPBACK
    port: int = 0
    advertised_host: str | None = None
    advertised_port: int | None = None
    #: how long connecting to the broker may take before the client's connection is closed
    connect_timeout: float = 10.0
    max_request_bytes: int = MAX_REQUEST_BYTES
    #: whether the front answers the group APIs with its own coordinators (else they are relayed to the broker's)
    group_coordinator: bool = True
    classic_groups: ClassicGroupConfig = field(default_factory=ClassicGroupConfig)
    consumer_groups: ConsumerGroupConfig = field(default_factory=ConsumerGroupConfig)
    #: the ZooKeeper (connect string, chroot included) where OffsetCommit and OffsetFetch v0 keep offsets, as Kafka
    #: 0.8.2-0.10 kept them; without it those versions are not answered
    zookeeper: str | None = None

    def __post_init__(self) -> None:
        if not self.bootstrap:
            raise UsageError("the front needs the broker's address (--bootstrap-server)")
        for address in self.bootstrap:
            parse_address(address, "broker address")

    @classmethod
    def of(cls, bootstrap: str, **settings: object) -> FrontConfig:
        """A config from a comma-separated bootstrap list, as the command line and the fixtures give it."""
        servers = tuple(s.strip() for s in bootstrap.split(",") if s.strip())
        return cls(servers, **settings)  # type: ignore[arg-type]
