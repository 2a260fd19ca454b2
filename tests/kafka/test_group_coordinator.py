"""The coordinator's arithmetic and codecs, without a broker: Kafka 0.10's partitionFor (Java's String.hashCode,
that version's Utils.abs), and FindCoordinator v0 / DescribeGroups v0 answers, well-formed and not."""

from __future__ import annotations

import struct

import pytest

from zkconsumer.errors import UsageError
from zkconsumer.kafka.consumer_protocol import decode_assignment
from zkconsumer.kafka.group_coordinator import (
    Coordinator,
    GroupDescription,
    MalformedAnswerError,
    decode_describe_groups,
    decode_find_coordinator,
    encode_describe_groups,
    encode_request,
)
from zkconsumer.tools.coordinator import kafka_abs, offsets_partition_for
from zkconsumer.types import TopicPartition


@pytest.mark.parametrize(("group", "partitions", "expected"), [
    ("hello", 50, 99162322 % 50),  # "hello".hashCode() == 99162322
    ("Hello World", 50, 26),  # hashCode -862545276: Math.abs, not n & 0x7fffffff (which gives 22)
    ("polygenelubricants", 50, 0),  # hashCode == Integer.MIN_VALUE: Utils.abs gives 0
    ("\U0001F600", 50, (31 * 0xD83D + 0xDE00) % 50),  # astral: two UTF-16 code units
    ("Hello World", 1, 0),
])
def test_partition_for_is_kafka_0_10s(group, partitions, expected):
    assert offsets_partition_for(group, partitions) == expected


def test_kafka_abs_and_a_bad_partition_count():
    assert (kafka_abs(-(2**31)), kafka_abs(-5), kafka_abs(7)) == (0, 5, 7)
    with pytest.raises(UsageError, match="--offsets-partitions must be at least 1"):
        offsets_partition_for("g", 0)


def _s(text: str) -> bytes:
    return struct.pack(">h", len(text)) + text.encode()


def _b(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


def test_requests_encode_and_answers_decode_as_the_protocol_lays_them_out():
    request = encode_request(15, 0, 7, "me", encode_describe_groups(["g"]))
    assert request == struct.pack(">ihhi", 19, 15, 0, 7) + _s("me") + struct.pack(">i", 1) + _s("g")
    assert decode_find_coordinator(struct.pack(">hi", 0, 3) + _s("b3") + struct.pack(">i", 9092)) == \
        Coordinator(3, "b3", 9092)
    assert decode_find_coordinator(struct.pack(">hi", 15, -1) + _s("") + struct.pack(">i", -1)) == 15

    assignment = struct.pack(">hi", 0, 2) + _s("b") + struct.pack(">ii", 1, 0) + _s("a") + \
        struct.pack(">iii", 2, 1, 0) + _b(b"")
    subscription = struct.pack(">hi", 1, 2) + _s("b") + _s("a") + _b(b"") + b"later versions' fields"
    member = _s("m-1") + _s("client-1") + _s("/10.0.0.1") + _b(subscription) + _b(assignment)
    answer = struct.pack(">i", 2) + struct.pack(">h", 0) + _s("g") + _s("Stable") + _s("consumer") + \
        _s("range") + struct.pack(">i", 1) + member + \
        struct.pack(">h", 16) + _s("h") + _s("") + _s("") + _s("") + struct.pack(">i", 0)
    described = decode_describe_groups(answer)
    assert described[1] == ("h", 16)
    first = described[0]
    assert isinstance(first, GroupDescription) and (first.state, first.protocol) == ("Stable", "range")
    assert first.members[0].subscription == ("a", "b")
    assert first.members[0].assignment == (TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0))
    assert sorted(decode_assignment(assignment)) == list(first.members[0].assignment)


def test_a_malformed_answer_is_one_clear_error():
    with pytest.raises(MalformedAnswerError, match="DescribeGroups answer: the answer ends at byte 11, 6 more "
                                                   "expected at byte 11"):
        decode_describe_groups(struct.pack(">ih", 1, 0) + _s("g") + b"\x00\x06")
    with pytest.raises(MalformedAnswerError, match="an array of -7 elements"):
        decode_describe_groups(struct.pack(">i", -7))
