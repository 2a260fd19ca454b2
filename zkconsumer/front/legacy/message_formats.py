"""Records between the message formats: Kafka's down-conversion, for the clients that predate record batches (Kafka
0.11's magic 2), and the up-conversion of what they produce.

**Down.** A Fetch of version 0 or 1 reads message sets of magic 0, versions 2 and 3 of magic 1 (the timestamp,
KIP-32), as a Kafka 0.10 broker answered them; the broker behind the front keeps magic-2 batches, so every
partition's records are converted as Kafka's own ``RecordsUtil.downConvert`` converts them:

* control batches (transaction markers) are left out;
* records below the fetch offset are left out (a batch is returned whole, from its first record);
* record headers are dropped (magic 0 and 1 have none), and magic 0 has no timestamp;
* each message is written uncompressed, with its own offset and CRC. Kafka re-compresses a compressed batch with the
  batch's codec; the front does not: the clients read uncompressed message sets all the same, and the answer is
  larger on the wire, never different in content.

Kafka (KIP-74) returns the first message of a partition even when it is larger than the partition's byte limit, so
that a consumer is never stuck behind it; the conversion follows that for every version, and stops at the first
message that would take a partition's answer past its limit. A batch cut short at the end of the broker's answer is
left out, as a client leaves it out.

**Up.** A Produce of version 0 to 2 carries a message set of magic 0 or 1, which the broker behind does not take; it
becomes one uncompressed record batch (magic 2) of the same messages, their keys, values and timestamps (-1, "none",
for magic 0), as Kafka up-converts a message set for a log of the newer format. A message set that is cut short, of
another magic, or whose messages' CRCs do not match is corrupt, as Kafka 0.10 found it (``CORRUPT_MESSAGE``).

The encoding and decoding are kafka-python's (``kafka.record``: its producer writes every format for the brokers that
read nothing else, its consumer reads every format, decompressing gzip natively and snappy, lz4 and zstd when their
libraries are installed); pure: bytes in, bytes out.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kafka.errors import CorruptRecordError, UnsupportedCodecError
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords

from zkconsumer.kafka.record_batches import UNCOMPRESSED, batch_builder, record_bytes

#: every message is appended: the front applies the byte limit itself (the builder's own counts from offset 0)
_NO_LIMIT = 1 << 62


class CannotConvert(Exception):
    """Records the front cannot convert."""


class UnsupportedCodec(CannotConvert):
    """Records compressed with a codec whose library is not installed."""


class CorruptRecords(CannotConvert):
    """Records that do not read as a record batch or a message set."""


@dataclass(frozen=True)
class Converted:
    """A partition's records in the older format, and how many messages they hold."""

    records: bytes
    messages: int


def magic_of_fetch(version: int) -> int:
    """The message format a Fetch version reads: magic 0 up to version 1, magic 1 for versions 2 and 3."""
    if not 0 <= version <= 3:
        raise ValueError(f"Fetch v{version} reads record batches, not message sets")
    return 0 if version < 2 else 1


def down_convert(records: bytes | None, magic: int, fetch_offset: int, max_bytes: int) -> Converted:
    """``records`` (a partition's, as the broker answered a Fetch) as a message set of ``magic``: the messages from
    ``fetch_offset`` on, up to ``max_bytes`` (at least the first message, whatever its size).

    :raises CannotConvert:
    """
    builder = LegacyRecordBatchBuilder(magic, UNCOMPRESSED, _NO_LIMIT)
    messages = 0
    try:
        for batch in MemoryRecords(records or b""):
            if batch.magic >= 2 and batch.is_control_batch:
                continue
            for record in batch:
                if record.offset < fetch_offset:
                    continue
                key, value = record_bytes(record.key), record_bytes(record.value)
                size = builder.size_in_bytes(record.offset, record.timestamp, key, value)
                if messages and builder.size() + size > max_bytes:
                    return Converted(bytes(builder.build()), messages)
                builder.append(record.offset, -1 if record.timestamp is None else record.timestamp, key, value)
                messages += 1
    except UnsupportedCodecError as exc:
        raise UnsupportedCodec(str(exc)) from None
    except CorruptRecordError as exc:
        raise CorruptRecords(str(exc)) from None
    return Converted(bytes(builder.build()), messages)


def up_convert(message_set: bytes | None) -> Converted:
    """A Produce's message set (magic 0 or 1) as one uncompressed record batch (magic 2) of the same messages; no
    messages, no batch.

    :raises CannotConvert:
    """
    builder = batch_builder()
    messages = 0
    data = message_set or b""
    try:
        records = MemoryRecords(data)
        if records.valid_bytes() != len(data):
            raise CorruptRecords(f"a message set cut short: its last {len(data) - records.valid_bytes()} bytes are "
                                 f"not a whole message")
        for batch in records:
            if batch.magic > 1:
                raise CorruptRecords(f"a message of magic {batch.magic} in a message set")
            if not batch.validate_crc():
                raise CorruptRecords("a message whose CRC does not match")
            for record in batch:
                if not record.validate_crc():
                    raise CorruptRecords(f"a message whose CRC does not match (offset {record.offset})")
                timestamp = -1 if record.timestamp is None else record.timestamp
                builder.append(messages, timestamp, record_bytes(record.key), record_bytes(record.value), [])
                messages += 1
    except UnsupportedCodecError as exc:
        raise UnsupportedCodec(str(exc)) from None
    except (CorruptRecordError, ValueError, struct.error) as exc:
        raise CorruptRecords(str(exc)) from None
    return Converted(bytes(builder.build()) if messages else b"", messages)
