"""What a front is told: where it listens, the address it gives clients, the broker behind it, whether and how
its own group coordinators answer the group APIs, and the ZooKeeper that keeps version-0 offsets."""

from __future__ import annotations

from dataclasses import dataclass, field

from zkconsumer.errors import UsageError
from zkconsumer.front.groups.classic_group import ClassicGroupConfig
from zkconsumer.front.groups.consumer_group import ConsumerGroupConfig
from zkconsumer.front.groups.group_records import GROUPS_TOPIC
from zkconsumer.front.proxy.wire import MAX_REQUEST_BYTES

LOOPBACK = "127.0.0.1"
#: Kafka's ``Int.MaxValue``, the value of an unlimited ``group.max.size``
INT_MAX = 2**31 - 1


def parse_address(address: str, what: str = "address") -> tuple[str, int]:
    """``HOST:PORT`` (an IPv6 host in brackets) as a pair.

    :raises UsageError:
    """
    host, sep, port = address.strip().rpartition(":")
    if not sep or not host or not port.isdigit():
        raise UsageError(f"{what} {address!r} is not HOST:PORT")
    return host.strip("[]"), int(port)


#: the coordinators' settings by Kafka's broker config names, and the field of the coordinator's config each is
#: (the front's options are ``--`` and the name with dashes)
CLASSIC_SETTINGS = {"group.initial.rebalance.delay.ms": "initial_rebalance_delay_ms",
                    "group.min.session.timeout.ms": "min_session_timeout_ms",
                    "group.max.session.timeout.ms": "max_session_timeout_ms"}
CONSUMER_SETTINGS = {"group.consumer.heartbeat.interval.ms": "heartbeat_interval_ms",
                     "group.consumer.min.heartbeat.interval.ms": "min_heartbeat_interval_ms",
                     "group.consumer.max.heartbeat.interval.ms": "max_heartbeat_interval_ms",
                     "group.consumer.session.timeout.ms": "session_timeout_ms",
                     "group.consumer.min.session.timeout.ms": "min_session_timeout_ms",
                     "group.consumer.max.session.timeout.ms": "max_session_timeout_ms"}



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
    #: the broker's topic where the coordinators keep their groups' records (:mod:`.group_store`); ``None``: kept in
    #: memory only
    group_store_topic: str | None = GROUPS_TOPIC
    #: how long the broker may take to store a checked OffsetCommit (Kafka's ``offsets.commit.timeout.ms``): the
    #: group's commits wait behind it (:mod:`.offset_order`)
    offsets_commit_timeout_ms: int = 5000

    def __post_init__(self) -> None:
        if not self.bootstrap:
            raise UsageError("the front needs the broker's address (--bootstrap-server)")
        for address in self.bootstrap:
            parse_address(address, "broker address")

    def group_settings(self) -> dict[str, str]:
        """The group coordinators' settings by Kafka's broker config names, as a Kafka broker's DescribeConfigs
        answers them (``group.max.size`` unlimited as Kafka's ``Int.MaxValue``), the commit timeout of the offsets
        they check included; none when the broker's own coordinator answers the group APIs."""
        if not self.group_coordinator:
            return {}
        classic, consumer = self.classic_groups, self.consumer_groups
        settings: dict[str, int | str | None] = {
            **{setting: getattr(classic, name) for setting, name in CLASSIC_SETTINGS.items()},
            "group.max.size": classic.max_size,
            **{setting: getattr(consumer, name) for setting, name in CONSUMER_SETTINGS.items()},
            "group.consumer.assignors": ",".join(consumer.assignors),
            "group.consumer.max.size": consumer.max_size,
            "group.consumer.migration.policy": consumer.migration_policy,
            "offsets.commit.timeout.ms": self.offsets_commit_timeout_ms,
        }
        return {name: str(INT_MAX if value is None else value) for name, value in settings.items()}

    @classmethod
    def of(cls, bootstrap: str, **settings: object) -> FrontConfig:
        """A config from a comma-separated bootstrap list, as the command line and the fixtures give it."""
        servers = tuple(s.strip() for s in bootstrap.split(",") if s.strip())
        return cls(servers, **settings)  # type: ignore[arg-type]
