"""Fuzzed group znodes: registrations and offsets parse to a value or to the project's typed error (a
MalformedZnode for an offset), and a group whose znodes hold anything is still read: the snapshot lists what is
malformed and keeps every well-formed member (real ZooKeeper for that one)."""

from __future__ import annotations

from fuzzing import FUZZ, JSON_VALUES, znode_data
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zkconsumer.errors import ZnodeFormatError
from zkconsumer.group.offset_store import parse_offset
from zkconsumer.group.snapshot import MalformedZnode, read_group_snapshot
from zkconsumer.group.topic_count import TopicCount, parse_registration

REGISTRATION = {"version": 1, "subscription": {"t": 1}, "pattern": "static", "timestamp": "1"}
WILDCARD = {"version": 1, "subscription": {"t.*": 2}, "pattern": "white_list", "timestamp": "1"}
PATH = "/consumers/g/ids/g_c"


@FUZZ
@given(st.one_of(znode_data(REGISTRATION), znode_data(WILDCARD)))
def test_any_registration_znode_parses_or_fails_naming_its_path(data):
    try:
        count = parse_registration("g_c", data, PATH)
    except ZnodeFormatError as exc:
        assert exc.path == PATH and PATH in str(exc)
        return
    assert isinstance(count, TopicCount)
    count.streams_per_topic(["t", "t1", "u"], True)  # what the rebalance does next with it


@FUZZ
@given(st.one_of(st.none(), st.binary(max_size=40), st.integers().map(lambda n: str(n).encode()),
                 st.text(max_size=30).map(str.encode), st.sampled_from([b"1_000", b"\xd9\xa1", b" 12 ", b"9" * 5000])))
def test_any_offset_znode_parses_to_a_long_or_is_reported_malformed(data):
    got = parse_offset("/consumers/g/offsets/t/0", data)
    if isinstance(got, MalformedZnode):
        assert got.path == "/consumers/g/offsets/t/0"
        return
    assert isinstance(got, int) and -(2**63) <= got < 2**63
    text = (data or b"").decode().strip()
    assert text.lstrip("+-").isascii() and int(text) == got  # what Long.parseLong reads, no more


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(znode_data(REGISTRATION), znode_data({"version": 1, "partitions": {"0": [1]}}), JSON_VALUES)
def test_a_group_with_malformed_znodes_is_still_read(zk, registration, topic, _noise):
    zk.ensure_path("/consumers/g/ids")
    zk.ensure_path("/brokers/topics")
    good = b'{"version":1,"subscription":{"t":1,"u":1},"pattern":"static","timestamp":"1"}'
    topic_u = b'{"version":1,"partitions":{"0":[1]}}'
    for path, data in (("/consumers/g/ids/g_good", good), ("/consumers/g/ids/g_bad", registration or b""),
                       ("/brokers/topics/t", topic or b""), ("/brokers/topics/u", topic_u)):
        if zk.exists(path):
            zk.set(path, data)
        else:
            zk.create(path, data)
    snapshot = read_group_snapshot(zk, "g")
    assert "g_good" in snapshot.members and snapshot.partitions["u"] == (0,)
    assert ("g_bad" in snapshot.members) != any(m.path == "/consumers/g/ids/g_bad" for m in snapshot.malformed)
    snapshot.streams_per_member(True)
