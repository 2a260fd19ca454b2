"""TopicCount: what a consumer subscribes to, its registration znode, and its thread ids (Kafka's ``TopicCount``).

Pure: the registration JSON is produced here byte for byte as Kafka 0.8.1+ wrote it
(``{"version":1,"subscription":{...},"pattern":"static","timestamp":"<ms>"}``), and parsed from whatever a
group member wrote (0.8.0's spaced JSON included), so that Burrow, kafka-manager and the Kafka tools read a
zkconsumer member as one of their own and a zkconsumer reads theirs.

Differences from Kafka, documented: Python's ``re`` stands in for ``java.util.regex`` (the same for the
patterns topic filters use in practice), and thread ids are ordered by code point, which equals Java's
UTF-16 order for every topic and host name outside the astral planes.
"""

from __future__ import annotations

import re
import socket
import time
import uuid
from dataclasses import dataclass, field

from zkconsumer.errors import UsageError, ZnodeFormatError
from zkconsumer.types import thread_id
from zkconsumer.zk import znode_json

INTERNAL_TOPICS = frozenset({"__consumer_offsets"})
STATIC, WHITELIST, BLACKLIST = "static", "white_list", "black_list"


def parse_topic_streams(spec: str) -> tuple[str, int]:
    """``TOPIC[:STREAMS]``, the command-line form of a static subscription (one stream when not given)."""
    topic, sep, count = spec.partition(":")
    if not topic or (sep and not count.isdigit()) or (count.isdigit() and int(count) < 1):
        raise UsageError(f"{spec!r}: expected TOPIC or TOPIC:STREAMS with STREAMS a positive number")
    return topic, int(count or 1)


# --- consumer and thread ids ------------------------------------------------------------------------


def consumer_id_string(group: str, consumer_id: str | None = None, hostname: str | None = None,
                       now_ms: int | None = None, random_uuid: uuid.UUID | None = None) -> str:
    """``<group>_<consumer.id>``, or ``<group>_<host>-<ms>-<8 hex of the UUID's high bits>`` as Kafka built it."""
    if consumer_id:
        return f"{group}_{consumer_id}"
    host = hostname or socket.gethostname()
    ms = int(time.time() * 1000) if now_ms is None else now_ms
    high_bits = (random_uuid or uuid.uuid4()).int >> 64  # Long.toHexString: unsigned, no leading zeros
    return f"{group}_{host}-{ms}-{format(high_bits, 'x')[:8]}"


# --- topic filters ----------------------------------------------------------------------------------


def normalize_filter(raw: str) -> str:
    """TopicFilter's normalization: trim, commas to ``|``, no spaces, no surrounding quote runs."""
    regex = raw.strip().replace(",", "|").replace(" ", "")
    return regex.lstrip("\"'").rstrip("\"'")


@dataclass(frozen=True)
class TopicFilter:
    raw: str
    pattern: str = WHITELIST
    regex: str = field(init=False, default="")
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        regex = normalize_filter(self.raw)
        try:
            compiled = re.compile(regex)
        except re.error as exc:
            raise UsageError(f"{regex} is an invalid regex ({exc})") from None
        object.__setattr__(self, "regex", regex)
        object.__setattr__(self, "_compiled", compiled)

    def is_topic_allowed(self, topic: str, exclude_internal: bool = True) -> bool:
        if exclude_internal and topic in INTERNAL_TOPICS:
            return False
        matches = self._compiled.fullmatch(topic) is not None
        return matches if self.pattern == WHITELIST else not matches


def Whitelist(raw: str) -> TopicFilter:  # named as the legacy API's class
    return TopicFilter(raw, WHITELIST)


def Blacklist(raw: str) -> TopicFilter:  # named as the legacy API's class
    return TopicFilter(raw, BLACKLIST)


# --- JSON escaping of the wildcard registration -------------------------------------------------------

_ESCAPES = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def json_escape(text: str) -> str:
    """Kafka's ``CoreUtils.JSONEscapeString``: also escapes ``/`` and the C1 controls, unlike Python's json."""
    out = []
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) <= 0x1F or 0x7F <= ord(ch) <= 0x9F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


# --- TopicCount ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicCount:
    """A member's subscription: static (topic -> streams) or wildcard (one filter, n streams for each match)."""

    consumer: str
    topic_streams: tuple[tuple[str, int], ...] = ()  # static: in the order given
    filter: TopicFilter | None = None
    num_streams: int = 0

    @property
    def pattern(self) -> str:
        return STATIC if self.filter is None else self.filter.pattern

    @staticmethod
    def static(consumer: str, topic_streams: dict[str, int]) -> TopicCount:
        for topic, n in topic_streams.items():
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise UsageError(f"stream count of topic {topic!r} must be a whole number >= 1, got {n!r}")
        return TopicCount(consumer, tuple(topic_streams.items()))

    @staticmethod
    def wildcard(consumer: str, topic_filter: TopicFilter, num_streams: int) -> TopicCount:
        if num_streams < 1:
            raise UsageError(f"the number of streams must be at least 1, got {num_streams}")
        return TopicCount(consumer, (), topic_filter, num_streams)

    def streams_per_topic(self, all_topics: list[str] | None = None, exclude_internal: bool = True) -> dict[str, int]:
        """Topic -> stream count; a wildcard count expands against the reader's topic list."""
        if self.filter is None:
            return dict(self.topic_streams)
        allowed = self.filter.is_topic_allowed
        return {t: self.num_streams for t in sorted(all_topics or []) if allowed(t, exclude_internal)}

    def thread_ids_per_topic(self, all_topics: list[str] | None = None,
                             exclude_internal: bool = True) -> dict[str, list[str]]:
        return {
            topic: [thread_id(self.consumer, i) for i in range(n)]
            for topic, n in self.streams_per_topic(all_topics, exclude_internal).items()
        }

    def registration(self, timestamp_ms: int) -> bytes:
        """The ``ids`` znode's data: Kafka's key order, timestamp as a string, compact."""
        if self.filter is None:
            subscription = ",".join(f'"{t}":{n}' for t, n in self.topic_streams)
        else:
            subscription = f'"{json_escape(self.filter.regex)}":{self.num_streams}'
        return (
            f'{{"version":1,"subscription":{{{subscription}}},"pattern":"{self.pattern}",'
            f'"timestamp":"{timestamp_ms}"}}'
        ).encode()


def parse_registration(consumer: str, data: bytes | None, path: str) -> TopicCount:
    """``TopicCount.constructTopicCount``: ``pattern`` and ``subscription`` are required; a white/black list
    with a non-empty subscription is a wildcard, anything else a static count."""
    obj = znode_json.decode_object(path, data)
    pattern = znode_json.require(path, obj, "pattern", str, data)
    subscription = znode_json.require(path, obj, "subscription", dict, data)
    for topic, n in subscription.items():
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise ZnodeFormatError(path, f"stream count of {topic!r} is {n!r}, expected a whole number", data)
    if pattern in (WHITELIST, BLACKLIST) and subscription:
        regex, n = next(iter(subscription.items()))
        try:
            topic_filter = TopicFilter(regex, pattern)
        except UsageError as exc:
            raise ZnodeFormatError(path, str(exc), data) from None
        return TopicCount(consumer, (), topic_filter, n)
    return TopicCount(consumer, tuple(subscription.items()))
