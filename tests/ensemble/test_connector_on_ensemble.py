"""The connector's server tests that matter for failover, as they are, on a three-server ensemble (this folder's
``zookeeper_connect``): registration, rebalances, ownership, offsets, ephemerals across a session's end and session
expiry. They are the tests of tests/consumer and tests/zk, imported, so they check here exactly what they check
there."""

from __future__ import annotations

import pytest
from consumer.test_connector import (
    test_commit_writes_only_changed_offsets_and_the_next_offset_to_read,
    test_consumers_joining_one_by_one_share_the_partitions_and_commit_what_they_took,
    test_registration_and_layout_read_as_the_kafka_tools_read_them,
    test_session_expiry_re_registers_and_rebalances,
)
from zk.test_checked_ephemeral import test_another_sessions_node_is_waited_out

pytestmark = pytest.mark.servers

__all__ = [
    "test_registration_and_layout_read_as_the_kafka_tools_read_them",
    "test_consumers_joining_one_by_one_share_the_partitions_and_commit_what_they_took",
    "test_commit_writes_only_changed_offsets_and_the_next_offset_to_read",
    "test_another_sessions_node_is_waited_out",
    "test_session_expiry_re_registers_and_rebalances",
]


def test_the_connect_string_lists_every_server_of_the_ensemble(zookeeper_connect, zookeeper_ensemble):
    """What makes the tests above run on the ensemble: three servers, one leader, every one in the connect string."""
    addresses = zookeeper_connect.split(",")
    assert len(addresses) == 3
    assert addresses == [server.address for server in zookeeper_ensemble.servers]
    assert sorted(zookeeper_ensemble.modes().values()) == ["follower", "follower", "leader"]
