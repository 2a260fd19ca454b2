"""Registration znodes that must be ours (ZKCheckedEphemeral), against a real ZooKeeper."""

from __future__ import annotations

import threading

import pytest
from time_scale import bounded

from zkconsumer.zk.checked_ephemeral import NodeHeldElsewhereError, create_checked_ephemeral
from zkconsumer.zk.client import close_client, open_client

PATH = "/consumers/g/ids/g_c"


def test_creates_with_persistent_parents_holding_empty_bytes(zk):
    """Kafka 0.10's createRecursive made the missing parents with an empty byte array, not null
    (tests/consumer/test_original_consumer.py reads what Kafka's own console consumer leaves); parents already
    there keep their data."""
    zk.create("/consumers", None)
    assert create_checked_ephemeral(zk, PATH, b"one") is False
    assert zk.exists(PATH).ephemeralOwner == zk.client_id[0]
    assert zk.exists("/consumers/g/ids").ephemeralOwner == 0
    assert zk.get("/consumers/g")[0] == b"" and zk.get("/consumers/g/ids")[0] == b""
    assert zk.get("/consumers")[0] is None


def test_our_own_node_is_success_and_gets_the_new_data(zk):
    """A create that reached the server before the connection dropped comes back as NodeExists (KAFKA-1387)."""
    zk.create(PATH, b"old", ephemeral=True, makepath=True)
    assert create_checked_ephemeral(zk, PATH, b"new") is True
    assert zk.get(PATH)[0] == b"new"


def test_another_sessions_node_is_waited_out(zk, zk_chroot):
    previous_run = open_client(zk_chroot)
    previous_run.create(PATH, b"stale", ephemeral=True, makepath=True)
    waited = []
    threading.Timer(0.5, lambda: close_client(previous_run)).start()
    assert create_checked_ephemeral(zk, PATH, b"mine", wait_s=bounded(10), on_wait=waited.append) is False
    assert waited and waited[0] != zk.client_id[0]
    assert zk.get(PATH)[0] == b"mine"


def test_gives_up_naming_the_node_and_its_owner(zk, zk_chroot):
    other = open_client(zk_chroot)
    try:
        other.create(PATH, b"theirs", ephemeral=True, makepath=True)
        with pytest.raises(NodeHeldElsewhereError, match=f"{PATH} is held by ZooKeeper session 0x"):
            create_checked_ephemeral(zk, PATH, b"mine", wait_s=0.3)
        assert zk.get(PATH)[0] == b"theirs"
    finally:
        close_client(other)
