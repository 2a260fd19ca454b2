"""The down-conversion of record batches (magic 2) to the message sets old Fetch versions read, the up-conversion of
what old producers send, and ListOffsets v0's offsets, without a broker: batches and message sets made as producers
make them (kafka-python's builders), each converted message's magic and CRC read back with the tests' own reader."""

from __future__ import annotations

import asyncio
import importlib.util
import threading

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.memory_records import MemoryRecords, MemoryRecordsBuilder
from message_sets import message_set

from zkconsumer.front.legacy.legacy_versions import INLINE_BYTES, _off_the_loop, old_style_offsets
from zkconsumer.front.legacy.message_formats import (
    CannotConvert,
    CorruptRecords,
    down_convert,
    magic_of_fetch,
    up_convert,
)
from zkconsumer.front.proxy.api_versions import negotiate

TIMESTAMP = 1_700_000_000_000
GZIP, ZSTD = 1, 4


def batch(base_offset: int, values: list[bytes], compression: int = 0, headers: bool = False) -> bytes:
    builder = MemoryRecordsBuilder(2, compression, 1 << 20, offset=base_offset)
    for i, value in enumerate(values):
        builder.append(TIMESTAMP + i, f"k{i}".encode(), value, headers=[("h", b"x")] if headers else [])
    builder.close()
    return bytes(builder.buffer())


def control_batch(offset: int) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, is_transactional=1, producer_id=7, producer_epoch=0, base_sequence=-1,
                                        batch_size=1 << 20)
    builder.append(0, TIMESTAMP, b"\x00\x00\x00\x00", b"\x00\x00\x00\x00\x00\x00", [])
    data = builder.build()
    data[0:8] = offset.to_bytes(8, "big")
    data[22] |= 0x20  # the control bit of the attributes: a transaction marker, as only a broker writes one
    return bytes(data)


@pytest.mark.parametrize(("version", "magic"), [(0, 0), (1, 0), (2, 1), (3, 1)])
def test_each_old_fetch_version_reads_its_own_magic(version, magic):
    assert magic_of_fetch(version) == magic


def test_fetch_v4_reads_batches():
    with pytest.raises(ValueError, match="record batches"):
        magic_of_fetch(4)


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("compression", [0, GZIP])
def test_batches_become_uncompressed_messages_with_their_offsets_and_crcs(magic, compression):
    records = batch(10, [b"a", b"b"], compression, headers=True) + batch(12, [b"c"])

    converted = down_convert(records, magic, 10, 1 << 20)

    messages = message_set(converted.records)  # every CRC checked
    assert converted.messages == 3
    assert [(m.offset, m.key, m.value) for m in messages] == [(10, b"k0", b"a"), (11, b"k1", b"b"), (12, b"k0", b"c")]
    assert {(m.magic, m.attributes) for m in messages} == {(magic, 0)}
    assert [m.timestamp for m in messages] == ([None] * 3 if magic == 0 else [TIMESTAMP, TIMESTAMP + 1, TIMESTAMP])


def test_messages_before_the_fetch_offset_and_transaction_markers_are_left_out():
    records = batch(0, [b"a", b"b", b"c"]) + control_batch(3) + batch(4, [b"d"])

    messages = message_set(down_convert(records, 1, 1, 1 << 20).records)

    assert [(m.offset, m.value) for m in messages] == [(1, b"b"), (2, b"c"), (4, b"d")]


def test_the_limit_keeps_whole_messages_and_the_first_one_whatever_its_size():
    records = batch(0, [b"x" * 100, b"y" * 100, b"z" * 100])
    message_size = 12 + 14 + 2 + 100  # offset and size, magic 0's header, the key "k0", the value

    assert [m.offset for m in message_set(down_convert(records, 0, 0, 10).records)] == [0]
    assert [m.offset for m in message_set(down_convert(records, 0, 0, 2 * message_size).records)] == [0, 1]
    assert [m.offset for m in message_set(down_convert(records, 0, 0, 2 * message_size - 1).records)] == [0]


def test_a_batch_cut_short_at_the_end_of_the_answer_is_left_out():
    records = batch(0, [b"a"]) + batch(1, [b"b"])

    assert [m.offset for m in message_set(down_convert(records[:-5], 0, 0, 1 << 20).records)] == [0]
    assert down_convert(None, 0, 0, 1 << 20).records == b""


def test_records_of_a_codec_whose_library_is_missing_cannot_be_converted():
    if importlib.util.find_spec("zstandard") is not None:
        pytest.skip("zstandard is installed: the batch would be read")
    records = bytearray(batch(0, [b"a"]))
    records[21:23] = ZSTD.to_bytes(2, "big")  # the batch's attributes: zstd, which no library here reads

    with pytest.raises(CannotConvert, match="zstd"):
        down_convert(bytes(records), 0, 0, 1 << 20)


@pytest.mark.parametrize(("timestamp", "max_num", "at_or_after", "expected"), [
    (-1, 10, -1, [7, 2]),  # the latest: the log end, then the start of the one segment
    (-1, 1, -1, [7]),
    (-1, 0, -1, []),
    (-2, 10, -1, [2]),  # the earliest: the start alone
    (1_000, 10, -1, [7, 2]),  # after every message: as the latest
    (1_000, 10, 4, []),  # before the segment was last written to
    (-3, 10, -1, []),
])
def test_list_offsets_v0_answers_as_kafka_0_10_for_a_log_of_one_segment(timestamp, max_num, at_or_after, expected):
    assert old_style_offsets(timestamp, max_num, start=2, end=7, at_or_after=at_or_after) == expected


def test_an_empty_log_s_latest_is_its_start_alone():
    assert old_style_offsets(-1, 10, start=5, end=5, at_or_after=-1) == [5]


def test_api_versions_start_at_the_old_versions_the_front_answers_where_they_join_the_range():
    broker = {1: (4, 15), 2: (1, 9), 8: (2, 9), 9: (1, 9)}
    legacy = {1: range(0, 4), 2: range(0, 1), 9: range(0, 1), 8: range(0, 1)}

    ranges = negotiate(broker, {}, legacy)

    assert (ranges[1], ranges[2], ranges[9]) == ((0, 15), (0, 9), (0, 9))
    assert ranges[8] == (2, 9)  # v0 without v1 (a front whose group APIs the broker answers) would leave a gap


def old_message_set(magic: int, values: list[bytes], compression: int = 0) -> bytes:
    builder = LegacyRecordBatchBuilder(magic, compression, 1 << 20)
    for offset, value in enumerate(values):
        builder.append(offset, TIMESTAMP + offset, f"k{offset}".encode(), value)
    return bytes(builder.build())


@pytest.mark.parametrize("magic", [0, 1])
@pytest.mark.parametrize("compression", [0, GZIP])
def test_an_old_producer_s_message_set_becomes_one_record_batch_of_the_same_messages(magic, compression):
    converted = up_convert(old_message_set(magic, [b"a", b"b"], compression))

    batch, = MemoryRecords(converted.records)
    assert converted.messages == 2
    assert (batch.magic, batch.compression_type, batch.validate_crc()) == (2, 0, True)
    assert [(r.offset, r.key, r.value, r.timestamp) for r in batch] == [
        (0, b"k0", b"a", -1 if magic == 0 else TIMESTAMP), (1, b"k1", b"b", -1 if magic == 0 else TIMESTAMP + 1)]
    # and back, as an old consumer reads it
    assert [m.value for m in message_set(down_convert(converted.records, magic, 0, 1 << 20).records)] == [b"a", b"b"]


def test_a_message_set_cut_short_flipped_or_of_magic_2_is_corrupt():
    whole = old_message_set(1, [b"a"])
    flipped = bytearray(whole)
    flipped[-1] ^= 1

    for corrupt in (whole[:-2], bytes(flipped), batch(0, [b"a"])):
        with pytest.raises(CorruptRecords):
            up_convert(corrupt)
    assert up_convert(b"").messages == 0


def test_megabytes_are_converted_off_the_event_loop_and_a_little_on_it():
    async def converting_thread(size: int) -> int:
        return await _off_the_loop(size, threading.get_ident)

    assert asyncio.run(converting_thread(INLINE_BYTES)) == threading.get_ident()
    assert asyncio.run(converting_thread(INLINE_BYTES + 1)) != threading.get_ident()
