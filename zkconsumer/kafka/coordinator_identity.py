"""Which group coordinator a bootstrap server's clients get, and its group settings, asked as a client asks any Kafka
broker: DescribeCluster (the cluster id, the brokers) and DescribeConfigs of a broker resource, whose
``group.min.session.timeout.ms``, ``group.consumer.session.timeout.ms``... are the settings the coordinator runs.

This project's front (:mod:`zkconsumer.front`) answers the group APIs with its own coordinators and says so in that
answer (:data:`~zkconsumer.kafka.topics.FRONT_CONFIG`, its name and version, with its settings); a broker that does
not is named by its cluster id and address, with whatever group settings it reports (a Kafka broker reports them all;
the embedded Tansu none), and by the software it runs where the caller learned it (no Kafka API says a broker's
version: :mod:`zkconsumer.embedded.broker_software` reads it from the environment's records or the broker's
ApiVersions). A Kafka broker runs KIP-848 groups where its ``group.coordinator.rebalance.protocols`` lists
``consumer`` (Kafka 4.0's default); the front always does. For a report that must say what ran, not what was assumed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from confluent_kafka import KafkaException
from confluent_kafka.admin import ConfigResource, ResourceType

from zkconsumer.errors import ServerUnavailableError
from zkconsumer.kafka.metadata import admin_client
from zkconsumer.kafka.topics import FRONT_CONFIG

#: the group settings read, by Kafka's broker config names
GROUP_SETTINGS = (
    "group.initial.rebalance.delay.ms", "group.min.session.timeout.ms", "group.max.session.timeout.ms",
    "group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
    "group.consumer.max.session.timeout.ms", "group.consumer.heartbeat.interval.ms",
    "group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms",
    "group.consumer.assignors", "group.coordinator.rebalance.protocols",
)
#: which group protocols a Kafka broker's coordinator runs (``classic,consumer,streams`` in Kafka 4.x)
REBALANCE_PROTOCOLS = "group.coordinator.rebalance.protocols"


@dataclass(frozen=True)
class CoordinatorIdentity:
    """Who coordinates the groups of a bootstrap server's clients."""

    bootstrap: str
    #: ``front``: this project's front, its own coordinators; ``broker``: a Kafka-protocol broker's own coordinator,
    #: reached directly or through a front that relays the group APIs to it
    kind: str
    cluster_id: str | None
    #: the front's own description (``zkconsumer 0.1.0``) where a front answers, ``None`` for a broker reached directly
    front: str | None = None
    #: the group settings the coordinator reported, by Kafka's names; those it did not report are absent
    settings: dict[str, str] = field(default_factory=dict)
    #: what the broker runs (``Apache Kafka 4.4.0``) and how that was learned, where the caller learned it
    broker_software: str | None = None
    broker_software_source: str | None = None

    @property
    def coordinator(self) -> str:
        """Whose group coordinator runs the groups, by name and version: the front's own (``zkconsumer 0.1.0``, as
        it names itself) where it coordinates, else the broker's software (``Apache Kafka 4.4.0``), else ``an
        unnamed broker's``."""
        if self.kind == "front":
            return f"{self.front} (the front)"
        return self.broker_software or "an unnamed broker"

    @property
    def runs_kip848(self) -> bool:
        """Whether KIP-848 consumer groups can run here: the front runs them; a Kafka broker where its
        ``group.coordinator.rebalance.protocols`` lists ``consumer``; a broker that does not say (Tansu) does not."""
        if self.kind == "front":
            return True
        listed = self.settings.get(REBALANCE_PROTOCOLS, "")
        return "consumer" in (name.strip() for name in listed.split(","))

    @property
    def holds_topics(self) -> bool:
        """Whether a topic can be held smaller and grown in this server's Metadata
        (:func:`~zkconsumer.kafka.topics.show_partitions`): any front can, whoever coordinates its groups."""
        return self.front is not None

    @property
    def name(self) -> str:
        """One phrase for a report: ``the front at HOST:PORT (zkconsumer 0.1.0; cluster tansu_cluster)``."""
        cluster = f"cluster {self.cluster_id}" if self.cluster_id else "no cluster id"
        if self.kind == "front":
            return f"the front at {self.bootstrap} ({self.front}; its own group coordinators; {cluster})"
        if self.front is not None:
            whose = f"{self.broker_software}'s" if self.broker_software else "the broker's"
            return f"{whose} own coordinator, through the front at {self.bootstrap} ({self.front}; {cluster})"
        if self.broker_software:
            return f"{self.broker_software}'s own group coordinator at {self.bootstrap} ({cluster})"
        return f"the broker at {self.bootstrap} ({cluster}; not this project's front)"


def identify(bootstrap: str, timeout: float = 10.0) -> CoordinatorIdentity:
    """Ask the server at ``bootstrap`` who it is and what group settings it runs.

    :raises ServerUnavailableError: nothing answered within ``timeout``.
    """
    admin = admin_client(bootstrap)
    try:
        cluster = admin.describe_cluster(request_timeout=timeout).result(timeout=timeout)
        node = cluster.controller if cluster.controller is not None else cluster.nodes[0]
        resource = ConfigResource(ResourceType.BROKER, str(node.id))
        entries = admin.describe_configs([resource], request_timeout=timeout)[resource].result(timeout=timeout)
    except (KafkaException, TimeoutError, IndexError) as exc:
        raise ServerUnavailableError(f"the server at {bootstrap} did not describe its cluster and configs within "
                                     f"{timeout:g} s ({exc})") from None
    values = {name: entry.value for name, entry in entries.items() if entry.value is not None}
    front = values.get(FRONT_CONFIG)
    settings = {name: values[name] for name in GROUP_SETTINGS if name in values}
    own = front is not None and bool(settings)  # a front relaying the group APIs reports no settings of its own
    return CoordinatorIdentity(bootstrap, "front" if own else "broker", cluster.cluster_id or None, front, settings)
