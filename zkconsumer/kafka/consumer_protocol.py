"""ConsumerProtocol's Subscription and Assignment, the bytes a classic member of protocol type ``consumer`` puts in its
JoinGroup metadata and gets back in its SyncGroup assignment (Kafka's ``ConsumerProtocol``): what the front's KIP-848
coordinator reads of a classic group it converts and of the classic members it answers afterwards, and what
:mod:`zkconsumer.kafka.group_coordinator` reads of a broker's DescribeGroups answer.

Subscription: version (int16), topics ([string]), user data (nullable bytes); v1 adds the owned partitions
([topic, [int32]]), v2 the generation, v3 the rack. Assignment: version (int16), partitions ([topic, [int32]]), user
data (nullable bytes). Pure; bytes that do not read raise :class:`ProtocolInvalid` naming what.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass

from zkconsumer.types import TopicPartition

#: the Assignment version written (v0: nothing after the user data that any reader needs)
ASSIGNMENT_VERSION = 0


class ProtocolInvalid(ValueError):
    """Bytes that are not a ConsumerProtocol Subscription or Assignment."""


@dataclass(frozen=True)
class Subscription:
    topics: tuple[str, ...]
    #: the partitions the member reports owning (v1+; empty before, as an eager member revoked everything)
    owned: tuple[TopicPartition, ...] = ()


class _Reader:
    def __init__(self, data: bytes, what: str) -> None:
        self.data, self.at, self.what = data, 0, what

    def take(self, fmt: str) -> int:
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise ProtocolInvalid(f"{self.what} ends at byte {len(self.data)}, inside a field")
        (value,) = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return int(value)

    def string(self) -> str:
        size = self.take(">h")
        if size < 0 or self.at + size > len(self.data):
            raise ProtocolInvalid(f"{self.what} has a string of length {size} at byte {self.at}")
        self.at += size
        return self.data[self.at - size:self.at].decode("utf-8", "replace")

    def skip_bytes(self) -> None:
        size = self.take(">i")
        if size > 0:
            self.at += size

    def partitions(self) -> list[TopicPartition]:
        rows: list[TopicPartition] = []
        for _ in range(max(self.take(">i"), 0)):
            topic = self.string()
            rows.extend(TopicPartition(topic, self.take(">i")) for _ in range(max(self.take(">i"), 0)))
        return rows


def decode_subscription(data: bytes, owned: bool = True) -> Subscription:
    """A member's Subscription: its topics and, from v1 and when ``owned``, the partitions it owns (a reader of the
    topics alone reads nothing after them, as a reader of version 0 would).

    :raises ProtocolInvalid:
    """
    reader = _Reader(data, "the subscription")
    version = reader.take(">h")
    if version < 0:
        raise ProtocolInvalid(f"the subscription has version {version}")
    topics = tuple(reader.string() for _ in range(max(reader.take(">i"), 0)))
    reader.skip_bytes()
    held = reader.partitions() if owned and version >= 1 and reader.at < len(data) else []
    return Subscription(topics, tuple(held))


def decode_assignment(data: bytes) -> tuple[TopicPartition, ...]:
    """A member's Assignment: its partitions (empty bytes: none, as a member given nothing yet has).

    :raises ProtocolInvalid:
    """
    return _read_assignment(data)[0]


def assignment_user_data(data: bytes) -> bytes:
    """The user data an assignor put in a member's Assignment (``b""``: none, null or absent).

    :raises ProtocolInvalid:
    """
    return _read_assignment(data)[1]


def _read_assignment(data: bytes) -> tuple[tuple[TopicPartition, ...], bytes]:
    if not data:
        return (), b""
    reader = _Reader(data, "the assignment")
    if reader.take(">h") < 0:
        raise ProtocolInvalid("the assignment has a negative version")
    partitions = tuple(reader.partitions())
    if reader.at == len(data):
        return partitions, b""
    size = reader.take(">i")
    if size > len(data) - reader.at:
        raise ProtocolInvalid(f"the assignment's user data of {size} bytes ends past its {len(data)} bytes")
    return partitions, data[reader.at:reader.at + max(size, 0)]


def encode_assignment(partitions: Mapping[str, frozenset[int]]) -> bytes:
    """An Assignment of ``partitions`` (topic name -> numbers), topics and numbers in order, no user data."""
    out = [struct.pack(">hi", ASSIGNMENT_VERSION, len(partitions))]
    for topic in sorted(partitions):
        name = topic.encode()
        numbers = sorted(partitions[topic])
        out.append(struct.pack(f">h{len(name)}si{len(numbers)}i", len(name), name, len(numbers), *numbers))
    out.append(struct.pack(">i", -1))
    return b"".join(out)


__all__ = ["ProtocolInvalid", "Subscription", "assignment_user_data", "decode_assignment", "decode_subscription",
           "encode_assignment"]
