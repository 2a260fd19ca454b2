"""Fuzzed cluster znodes (broker registrations, topic assignments, partition states): whatever a znode holds, the
parser returns a value or raises ZnodeFormatError naming the znode; nothing else escapes, nothing hangs."""

from __future__ import annotations

from fuzzing import FUZZ, znode_data
from hypothesis import given
from hypothesis import strategies as st

from zkconsumer.errors import ZnodeFormatError
from zkconsumer.zk.cluster import BrokerInfo, parse_broker, parse_partition_state, parse_topic

BROKER = {"jmx_port": -1, "timestamp": "1", "endpoints": ["PLAINTEXT://127.0.0.1:9092"], "host": "127.0.0.1",
          "version": 3, "port": 9092, "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"}}
TOPIC = {"version": 1, "partitions": {"0": [1], "1": [1, 2]}}
STATE = {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1]}


@FUZZ
@given(znode_data(BROKER), st.integers(0, 2**31 - 1))
def test_any_broker_registration_parses_or_fails_naming_its_path(data, broker_id):
    try:
        broker = parse_broker(broker_id, data)
    except ZnodeFormatError as exc:
        assert exc.path == f"/brokers/ids/{broker_id}"
        return
    assert isinstance(broker, BrokerInfo) and isinstance(broker.port, int) and isinstance(broker.host, str)


@FUZZ
@given(znode_data(TOPIC))
def test_any_topic_assignment_parses_or_fails_naming_its_path(data):
    try:
        assignment = parse_topic("t", data)
    except ZnodeFormatError as exc:
        assert exc.path == "/brokers/topics/t"
        return
    assert all(isinstance(p, int) and p >= 0 for p in assignment.partitions)


@FUZZ
@given(znode_data(STATE))
def test_any_partition_state_parses_or_fails_naming_its_path(data):
    try:
        state = parse_partition_state("t", 0, data)
    except ZnodeFormatError as exc:
        assert exc.path == "/brokers/topics/t/partitions/0/state"
        return
    assert isinstance(state.leader, int) and all(isinstance(r, int) for r in state.isr)
