"""Message sets (magic 0 and 1) read as Kafka 0.10's clients read them, with a reader of the tests' own, so that what
the front writes is checked byte by byte and not by the library that wrote it."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Message:
    offset: int
    magic: int
    attributes: int
    timestamp: int | None
    key: bytes | None
    value: bytes | None


def message_set(data: bytes) -> list[Message]:
    """A message set read as Kafka 0.10's clients read it, every message's CRC checked."""
    messages, position = [], 0
    while position < len(data):
        offset, size = struct.unpack_from(">qi", data, position)
        body = data[position + 12:position + 12 + size]
        assert len(body) == size, "a message cut short"
        crc, magic, attributes = struct.unpack_from(">Ibb", body)
        assert crc == zlib.crc32(body[4:]), f"CRC of offset {offset}"
        cursor = 6
        timestamp = None
        if magic == 1:
            timestamp, = struct.unpack_from(">q", body, cursor)
            cursor += 8
        fields = []
        for _ in range(2):
            length, = struct.unpack_from(">i", body, cursor)
            cursor += 4
            fields.append(None if length < 0 else body[cursor:cursor + length])
            cursor += max(length, 0)
        assert cursor == size
        messages.append(Message(offset, magic, attributes, timestamp, fields[0], fields[1]))
        position += 12 + size
    return messages
