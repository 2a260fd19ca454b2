"""Kafka topic ids (``org.apache.kafka.common.Uuid``): parsing, Java hashing and ordering, and a stable
id for a topic that a scenario gives no id.

The server-side assignors key everything by topic id: the uniform assignor walks topics in the
iteration order of a ``HashSet<Uuid>`` and breaks ties by ``Uuid.compareTo``, so an id's ``hashCode``
and order decide who gets which partition. An id is two signed 64-bit halves; its text form is the
16 bytes in URL-safe base64 without padding (22 characters).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass

from zkconsumer.errors import UsageError

_GENERATED_PREFIX = b"zkconsumer topic id\x00"


class TopicIdError(UsageError):
    """The text is not a Kafka topic id."""


@dataclass(frozen=True, slots=True, order=True)
class Uuid:
    """A Kafka ``Uuid``; dataclass order is ``Uuid.compareTo`` (signed most, then least significant half)."""

    msb: int
    lsb: int

    @classmethod
    def parse(cls, text: str) -> Uuid:
        """``Uuid.fromString``: URL-safe base64 of 16 bytes, padding optional; like Java's decoder, the
        4 bits the 22nd character carries beyond the 16 bytes are ignored."""
        if len(text) > 24:
            raise TopicIdError(f"topic id {text!r} is too long (22 base64 characters expected)")
        if "+" in text or "/" in text:
            raise TopicIdError(f"topic id {text!r} is not URL-safe base64")
        try:
            raw = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
        except (binascii.Error, ValueError):
            raise TopicIdError(f"topic id {text!r} is not URL-safe base64") from None
        if len(raw) != 16:
            raise TopicIdError(f"topic id {text!r} does not encode 16 bytes")
        return cls._of_bytes(raw)

    @classmethod
    def _of_bytes(cls, raw: bytes) -> Uuid:
        return cls(int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True))

    def __str__(self) -> str:
        raw = self.msb.to_bytes(8, "big", signed=True) + self.lsb.to_bytes(8, "big", signed=True)
        return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()

    def java_hash(self) -> int:
        """``Uuid.hashCode``: ``(int)(x >> 32) ^ (int) x`` with ``x = msb ^ lsb``."""
        x = (self.msb ^ self.lsb) & 0xFFFFFFFFFFFFFFFF
        return ((x >> 32) ^ x) & 0xFFFFFFFF

    @property
    def reserved(self) -> bool:
        """Kafka never gives a topic the zero id, the metadata topic's id (1), or one printed with a leading '-'."""
        return (self.msb == 0 and self.lsb in (0, 1)) or str(self).startswith("-")


def compare_uuids(a: Uuid, b: Uuid) -> int:
    return (a > b) - (a < b)


def uuid_hash(u: Uuid) -> int:
    return u.java_hash()


def generated_topic_id(topic: str) -> Uuid:
    """A stable id for a topic the scenario names without one: the first 16 bytes of
    SHA-256(``"zkconsumer topic id\\0"`` + the topic's UTF-8 name), rehashed while Kafka would not hand
    out that id (see :attr:`Uuid.reserved`). The same name always gets the same id, so scenarios without
    ``topic_ids`` give repeatable assignments; a real cluster's ids differ, and with them the uniform
    assignor's topic order."""
    digest = hashlib.sha256(_GENERATED_PREFIX + topic.encode("utf-8")).digest()
    uuid = Uuid._of_bytes(digest[:16])
    while uuid.reserved:
        digest = hashlib.sha256(digest).digest()
        uuid = Uuid._of_bytes(digest[:16])
    return uuid
