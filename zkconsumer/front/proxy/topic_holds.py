"""Topics the front shows with fewer partitions than the broker has, until they are grown: partition growth played
for modern groups on a broker without CreatePartitions (Tansu), as the bridge plays it for ZooKeeper-era groups
(:func:`zkconsumer.bridge.plan.hold_partitions`).

The topic is created at its final size; the front is told to show its first *n* partitions with the topic config
:data:`~zkconsumer.kafka.topics.SHOWN_PARTITIONS_CONFIG` (an IncrementalAlterConfigs ``SET`` on the topic, answered
by the front and not relayed: a Kafka broker refuses a config it does not define), and raises *n* the same way.
Every Metadata answer the front gives (clients' and the KIP-848 coordinator's view of the topics) carries the first
*n* partitions only; so a classic member sees the topic grow at its next metadata refresh and a KIP-848 group at
its coordinator's next look at the topics, as after CreatePartitions on Kafka. A hold lives in the front's memory
(a restarted front shows every partition); a ``DELETE`` of the config, or *n* at or above the broker's count, ends
it. Pure: entities in, entities out.

The front's own topics (its group store, :data:`~.group_records.GROUPS_TOPIC`) are not shown at all:
they are the front's state, as Kafka's ``__consumer_offsets`` is the coordinator's, and a client listing topics (the
metadata bridge writing ``/brokers/topics``, a wildcard subscription, ``topics list``) would otherwise take them for
the cluster's. The store reads and writes them at the broker, never through the front.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from zkconsumer.kafka.topics import SHOWN_PARTITIONS_CONFIG


class TopicHolds:
    """The topics held smaller, by name: how many of their partitions are shown."""

    def __init__(self, hidden: frozenset[str] = frozenset()) -> None:
        self.shown: dict[str, int] = {}
        #: topics no Metadata answer shows: the front's own
        self.hidden = hidden

    def hold(self, topic: str, partitions: int | None) -> None:
        """Show the first ``partitions`` of ``topic`` (``None``: all of them)."""
        if partitions is None:
            self.shown.pop(topic, None)
        else:
            self.shown[topic] = partitions

    def partitions(self, topic: str, partitions: tuple[Any, ...]) -> tuple[Any, ...]:
        """Those of a topic's partitions (kio's Metadata entities) that are shown."""
        limit = self.shown.get(topic)
        if limit is None:
            return partitions
        return tuple(p for p in partitions if p.partition_index < limit)

    def metadata(self, body: Any) -> Any:
        """A Metadata answer (kio's entity, any version) with every held topic cut to its shown partitions."""
        if not (self.shown or self.hidden) or not body.topics:
            return body
        return replace(body, topics=tuple(
            replace(t, partitions=self.partitions(t.name, t.partitions)) if t.name in self.shown else t
            for t in body.topics if t.name not in self.hidden))


def requested_hold(config_name: str, operation: int, value: str | None) -> tuple[bool, int | None]:
    """Whether an IncrementalAlterConfigs entry is the front's hold, and the partitions it shows (``None``: all).

    :raises ValueError: a hold that is not a positive count, or an operation other than ``SET`` (0) or ``DELETE``
        (1), in words for the answer's error message.
    """
    if config_name != SHOWN_PARTITIONS_CONFIG:
        return False, None
    if operation == 1:
        return True, None
    if operation != 0:
        raise ValueError(f"{SHOWN_PARTITIONS_CONFIG} can only be set or deleted")
    if value is None or not value.strip().isdigit() or int(value) < 1:
        raise ValueError(f"{SHOWN_PARTITIONS_CONFIG} must be a count of partitions of at least 1, not {value!r}")
    return True, int(value)
