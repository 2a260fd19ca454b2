"""Registration JSON, topic filters and ids, as Kafka 0.10.0.1 wrote and read them (Kafka's TopicCount)."""

from __future__ import annotations

import uuid

import pytest

from zkconsumer.errors import UsageError, ZnodeFormatError
from zkconsumer.group.topic_count import (
    Blacklist,
    TopicCount,
    Whitelist,
    consumer_id_string,
    json_escape,
    parse_registration,
)

PATH = "/consumers/group1/ids/group1_consumer1"


def test_static_registration_is_byte_compatible():
    count = TopicCount.static("group1_consumer1", {"topic1": 1})
    assert count.registration(1466462213254) == (
        b'{"version":1,"subscription":{"topic1":1},"pattern":"static","timestamp":"1466462213254"}'
    )
    empty = TopicCount.static("c", {}).registration(1)
    assert empty == b'{"version":1,"subscription":{},"pattern":"static","timestamp":"1"}'


def test_wildcard_registration_escapes_the_normalized_regex():
    count = TopicCount.wildcard("g_c", Whitelist(' "white1, white2" '), 2)
    assert count.registration(5) == (
        b'{"version":1,"subscription":{"white1|white2":2},"pattern":"white_list","timestamp":"5"}'
    )
    slashes = TopicCount.wildcard("g_c", Blacklist("a/b\\d+"), 1)
    assert slashes.registration(5) == (
        b'{"version":1,"subscription":{"a\\/b\\\\d+":1},"pattern":"black_list","timestamp":"5"}'
    )
    parsed = parse_registration("g_c", slashes.registration(5), PATH)
    assert parsed.filter.regex == "a/b\\d+" and parsed.pattern == "black_list" and parsed.num_streams == 1


def test_json_escape_matches_kafka():
    assert json_escape('q"b\\s/\b\f\n\r\t\x01\x7f\x9f\xa0') == 'q\\"b\\\\s\\/\\b\\f\\n\\r\\t\\u0001\\u007f\\u009f\xa0'


@pytest.mark.parametrize(
    "data",
    [
        b'{"version":1,"subscription":{"topic1":1,"topic2":3},"pattern":"static","timestamp":"1466462213254"}',
        # Kafka 0.8.0 wrote it by hand, sorted and spaced
        b'{ "pattern":"static", "subscription":{ "topic1": 1, "topic2": 3 }, "timestamp":"1", "version":1 }',
        # an unknown pattern is read as static, as constructTopicCount did
        b'{"subscription":{"topic1":1,"topic2":3},"pattern":"something"}',
    ],
)
def test_reads_static_registrations_of_every_version(data):
    count = parse_registration("group1_consumer1", data, PATH)
    assert count.pattern in ("static", "something") or count.filter is None
    assert count.thread_ids_per_topic() == {
        "topic1": ["group1_consumer1-0"],
        "topic2": ["group1_consumer1-0", "group1_consumer1-1", "group1_consumer1-2"],
    }


def test_wildcard_expands_against_the_readers_topics():
    data = b'{"version":1,"subscription":{"orders.*":2},"pattern":"white_list","timestamp":"1"}'
    count = parse_registration("g_c", data, PATH)
    topics = ["orders", "orders-eu", "payments", "__consumer_offsets"]
    assert count.thread_ids_per_topic(topics) == {"orders": ["g_c-0", "g_c-1"], "orders-eu": ["g_c-0", "g_c-1"]}
    black = parse_registration("g_c", b'{"subscription":{"orders.*":1},"pattern":"black_list"}', PATH)
    assert black.streams_per_topic(topics) == {"payments": 1}
    assert black.streams_per_topic(topics, exclude_internal=False) == {"__consumer_offsets": 1, "payments": 1}
    # An empty wildcard subscription is a static count with no topics.
    assert parse_registration("g_c", b'{"subscription":{},"pattern":"white_list"}', PATH).filter is None


def test_filters_match_whole_topic_names():
    assert Whitelist("white.*").is_topic_allowed("white1")
    assert not Whitelist("white").is_topic_allowed("white1")  # anchored, like Java's String.matches
    assert not Whitelist(".*").is_topic_allowed("__consumer_offsets")
    assert Whitelist(".*").is_topic_allowed("__consumer_offsets", exclude_internal=False)
    assert Blacklist("black.*").is_topic_allowed("white") and not Blacklist("black.*").is_topic_allowed("black1")
    with pytest.raises(UsageError, match="is an invalid regex"):
        Whitelist("(")


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"events", "is not valid JSON"),  # what pykafka-style nodes held (DCMonitor#42)
        (b'{"version":1,"subscription":{"t":1}}', "has no field 'pattern'"),
        (b'{"version":1,"pattern":"static"}', "has no field 'subscription'"),
        (b'{"pattern":"static","subscription":{"t":"1"}}', "stream count of 't' is '1'"),
        (b'{"pattern":"white_list","subscription":{"(":1}}', "is an invalid regex"),
    ],
)
def test_malformed_registrations_name_the_znode(data, problem):
    with pytest.raises(ZnodeFormatError, match=f"znode {PATH}: ") as err:
        parse_registration("group1_consumer1", data, PATH)
    assert problem in str(err.value)


def test_consumer_id_string():
    assert consumer_id_string("group1", "consumer1") == "group1_consumer1"
    fixed = uuid.UUID("03fa2b1c-9000-4000-8000-000000000000")
    # Long.toHexString drops leading zeros, so the 8 characters start at the first non-zero digit.
    assert consumer_id_string("group1", None, "myhost", 1466462213254, fixed) == "group1_myhost-1466462213254-3fa2b1c9"


def test_stream_counts_must_be_positive():
    with pytest.raises(UsageError, match="stream count of topic 't'"):
        TopicCount.static("c", {"t": 0})
    with pytest.raises(UsageError, match="at least 1"):
        TopicCount.wildcard("c", Whitelist(".*"), 0)
