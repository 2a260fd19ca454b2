"""The options of ``spark.readStream.format("zkconsumer")``, parsed and checked. Pure.

Spark hands a data source its options as strings in a case-insensitive map (keys lower-cased), so names are
matched without case and every value is parsed here, once, into :class:`SourceOptions`. The source parses them in
``schema()``, which Spark runs when the DataFrame is defined (``load()``): a missing or invalid option fails there,
on the driver, with one line naming the option, before any query starts.

The source's own options:

* ``zookeeper.connect``, ``group.id`` (required): the ensemble and the legacy group the source joins.
* ``topics`` (comma-separated) or ``whitelist`` / ``blacklist`` (the legacy filters' regex): exactly one.
* ``startingOffsets``: ``group`` (default: the group's committed offsets, else ``auto.offset.reset``),
  ``earliest``, ``latest``, or JSON ``{"topic": {"0": offset}}`` (``-2`` = earliest, ``-1`` = latest; partitions
  not listed start as with ``group``). Only for a new query: a restarted one resumes from its checkpoint.
* ``maxOffsetsPerTrigger``: at most this many offsets per micro-batch, shared over the partitions in proportion to
  what each has waiting (Spark's Kafka source's rule).
* ``minPartitions``: at least this many Spark tasks per micro-batch (large ranges are split anyway).
* ``bootstrap.servers``: where the executors read; otherwise the brokers registered in ZooKeeper.
* ``membership``: ``member`` (default; registered in the group, reads what the group assigns it) or ``none``
  (reads every partition of the subscription and only commits offsets).
* ``streams``: the member's stream count per topic (its thread ids, which the assignor counts), default 1.

Every other key is a legacy consumer key, checked by :class:`zkconsumer.config.ConsumerConfig` as a legacy consumer
would check it (``auto.offset.reset``, ``partition.assignment.strategy``, ``consumer.id``, the ZooKeeper timeouts,
``fetch.message.max.bytes``...); an unknown key only warns, as Kafka's did. ``auto.commit.enable=true`` is refused:
the source commits itself, when Spark has processed a batch.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.config import ConsumerConfig, InvalidConfigError
from zkconsumer.errors import UsageError
from zkconsumer.group.topic_count import BLACKLIST, WHITELIST, TopicFilter
from zkconsumer.kafka.topic_names import validate_topic_name
from zkconsumer.types import TopicPartition

MEMBER, NONE = "member", "none"
GROUP, EARLIEST, LATEST, SPECIFIC = "group", "earliest", "latest", "json"
#: the JSON form's special offsets, as in Spark's Kafka source
EARLIEST_OFFSET, LATEST_OFFSET = -2, -1

#: the source's own options: lower-cased key -> the name messages use
SOURCE_KEYS = {
    "zookeeper.connect": "zookeeper.connect",
    "group.id": "group.id",
    "topics": "topics",
    "whitelist": "whitelist",
    "blacklist": "blacklist",
    "startingoffsets": "startingOffsets",
    "maxoffsetspertrigger": "maxOffsetsPerTrigger",
    "minpartitions": "minPartitions",
    "bootstrap.servers": "bootstrap.servers",
    "membership": "membership",
    "streams": "streams",
}
#: set by Spark itself for ``load(path)``; meaningless here
_IGNORED = {"path"}


class InvalidOptionError(UsageError):
    """An option of the source is missing or invalid; the message names it."""


@dataclass(frozen=True)
class Subscription:
    """What the source subscribes to: static topics, or one legacy filter (whitelist or blacklist)."""

    topics: tuple[str, ...] = ()
    filter: TopicFilter | None = None

    def allows(self, topic: str, exclude_internal: bool = True) -> bool:
        if self.filter is None:
            return topic in self.topics
        return self.filter.is_topic_allowed(topic, exclude_internal)

    def describe(self) -> str:
        if self.filter is None:
            return ",".join(self.topics)
        return f"{self.filter.pattern}:{self.filter.regex}"


@dataclass(frozen=True)
class StartingOffsets:
    kind: str = GROUP  # GROUP, EARLIEST, LATEST or SPECIFIC
    #: SPECIFIC only: partition -> offset, or EARLIEST_OFFSET / LATEST_OFFSET
    positions: Mapping[TopicPartition, int] = field(default_factory=dict)


@dataclass(frozen=True)
class SourceOptions:
    """Everything the source was asked for; picklable, since Spark ships the source to its workers."""

    zookeeper_connect: str
    group_id: str
    subscription: Subscription
    starting: StartingOffsets = StartingOffsets()
    auto_offset_reset: str = "largest"
    max_offsets_per_trigger: int | None = None
    min_partitions: int | None = None
    bootstrap_servers: str | None = None
    membership: str = MEMBER
    streams: int = 1
    #: the legacy consumer keys, as given (zookeeper.connect and group.id included)
    consumer_properties: Mapping[str, str] = field(default_factory=dict)

    def consumer_config(self) -> ConsumerConfig:
        """The member's configuration: the legacy keys given, and no auto-commit (the source commits itself)."""
        return ConsumerConfig({**self.consumer_properties, "auto.commit.enable": "false"})


def parse_options(options: Mapping[str, Any]) -> SourceOptions:
    """The source's options from Spark's map; raises :class:`InvalidOptionError` naming the first bad option."""
    given = {str(k).lower(): ("" if v is None else str(v)) for k, v in options.items()}
    own = {k: v for k, v in given.items() if k in SOURCE_KEYS}
    legacy = {k: v for k, v in given.items() if k not in SOURCE_KEYS and k not in _IGNORED}

    for key in ("zookeeper.connect", "group.id"):
        if not own.get(key, "").strip():
            raise InvalidOptionError(f"option {key} is required")
    legacy["zookeeper.connect"] = own["zookeeper.connect"].strip()
    legacy["group.id"] = own["group.id"].strip()
    if legacy.get("auto.commit.enable", "").strip().lower() == "true":
        raise InvalidOptionError("option auto.commit.enable=true: the source commits offsets itself, when Spark has "
                                 "processed a batch; leave it unset")
    if legacy.get("offsets.storage", "").strip().lower() == "kafka":
        raise InvalidOptionError("option offsets.storage=kafka is not supported by zkconsumer; use zookeeper")
    try:
        config = ConsumerConfig(legacy)
    except InvalidConfigError as exc:
        message = str(exc)
        raise InvalidOptionError("option " + message.removeprefix("config ")) from None

    subscription = parse_subscription(own)
    return SourceOptions(
        zookeeper_connect=config.zookeeper_connect,
        group_id=config.group_id,
        subscription=subscription,
        starting=parse_starting_offsets(own.get("startingoffsets"), subscription),
        auto_offset_reset=config.auto_offset_reset,
        max_offsets_per_trigger=_positive_int(own, "maxoffsetspertrigger"),
        min_partitions=_positive_int(own, "minpartitions"),
        bootstrap_servers=_bootstrap(own.get("bootstrap.servers")),
        membership=_choice(own, "membership", (MEMBER, NONE), MEMBER),
        streams=_positive_int(own, "streams") or 1,
        consumer_properties=legacy,
    )


def parse_subscription(own: Mapping[str, str]) -> Subscription:
    chosen = [k for k in ("topics", "whitelist", "blacklist") if own.get(k, "").strip()]
    if len(chosen) != 1:
        given = " and ".join(chosen) if chosen else "none of them"
        raise InvalidOptionError(f"option topics, whitelist or blacklist: exactly one is required (given: {given})")
    key = chosen[0]
    raw = own[key]
    if key == "topics":
        topics = tuple(dict.fromkeys(t.strip() for t in raw.split(",") if t.strip()))
        for topic in topics:
            try:
                validate_topic_name(topic)
            except UsageError as exc:
                raise InvalidOptionError(f"option topics: {exc}") from None
        return Subscription(topics=topics)
    try:
        topic_filter = TopicFilter(raw, WHITELIST if key == "whitelist" else BLACKLIST)
    except UsageError as exc:
        raise InvalidOptionError(f"option {key}: {exc}") from None
    return Subscription(filter=topic_filter)


def parse_starting_offsets(raw: str | None, subscription: Subscription) -> StartingOffsets:
    text = (raw or "").strip()
    if not text or text.lower() in (GROUP, EARLIEST, LATEST):
        return StartingOffsets(text.lower() or GROUP)

    def bad(why: str) -> InvalidOptionError:
        return InvalidOptionError(f"option startingOffsets={text[:80]!r}: {why}")

    try:
        parsed = json.loads(text)
    except ValueError:
        raise bad('expected group, earliest, latest or JSON {"topic": {"0": offset}}') from None
    if not isinstance(parsed, dict):
        raise bad('expected a JSON object {"topic": {"0": offset}}')
    positions: dict[TopicPartition, int] = {}
    for topic, partitions in parsed.items():
        if not isinstance(partitions, dict):
            raise bad(f'topic {topic!r} must map to an object {{"0": offset}}')
        if not subscription.allows(topic):
            raise bad(f"topic {topic!r} is not in the subscription ({subscription.describe()})")
        for partition, offset in partitions.items():
            if not (isinstance(partition, str) and partition.isdigit()):
                raise bad(f"partition {partition!r} of topic {topic!r} is not a partition number")
            if not isinstance(offset, int) or isinstance(offset, bool) or offset < EARLIEST_OFFSET:
                raise bad(f"offset {offset!r} of {topic}-{partition} must be a whole number >= -2 "
                          "(-2 = earliest, -1 = latest)")
            positions[TopicPartition(topic, int(partition))] = offset
    return StartingOffsets(SPECIFIC, dict(sorted(positions.items())))


def _positive_int(own: Mapping[str, str], key: str) -> int | None:
    raw = own.get(key, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise InvalidOptionError(f"option {SOURCE_KEYS[key]}={raw!r}: expected a whole number") from None
    if value < 1:
        raise InvalidOptionError(f"option {SOURCE_KEYS[key]}={raw!r}: must be at least 1")
    return value


def _choice(own: Mapping[str, str], key: str, choices: tuple[str, ...], default: str) -> str:
    raw = own.get(key, "").strip()
    if not raw:
        return default
    if raw.lower() not in choices:
        raise InvalidOptionError(f"option {SOURCE_KEYS[key]}={raw!r}: must be one of {', '.join(choices)}")
    return raw.lower()


def _bootstrap(raw: str | None) -> str | None:
    if raw is None:
        return None
    servers = [s.strip() for s in raw.split(",") if s.strip()]
    if not servers:
        raise InvalidOptionError("option bootstrap.servers is empty; leave it unset to use the registered brokers")
    for server in servers:
        host, sep, port = server.rpartition(":")
        if not sep or not host or not port.isdigit():
            raise InvalidOptionError(f"option bootstrap.servers: {server!r} is not HOST:PORT")
    return ",".join(servers)
