"""Parents as Kafka's ZooKeeper client left them (null data), against the real server."""

from __future__ import annotations

import pytest
from kazoo.security import OPEN_ACL_UNSAFE

from zkconsumer.zk import paths
from zkconsumer.zk.batched_transaction import Create, commit_async, failed
from zkconsumer.zk.persistent import create_with_parents, ensure_broker_paths, ensure_path


def test_kazoos_own_parents_hold_empty_bytes_where_kafkas_held_null(zk):
    zk.ensure_path("/kazoo/made")
    ensure_path(zk, "/ours/made")
    assert zk.get("/kazoo/made")[0] == b""
    data, stat = zk.get("/ours/made")
    assert data is None and stat.dataLength == 0


def test_every_missing_ancestor_is_created_with_null_data_and_existing_ones_are_kept(zk):
    zk.create("/consumers", b"someone else's")
    ensure_path(zk, "/consumers/g/offsets/t")
    assert zk.get("/consumers")[0] == b"someone else's"
    for path in ("/consumers/g", "/consumers/g/offsets", "/consumers/g/offsets/t"):
        assert zk.get(path)[0] is None, path
    version = zk.exists("/consumers/g/offsets/t").version
    ensure_path(zk, "/consumers/g/offsets/t")  # already there: nothing written
    assert zk.exists("/consumers/g/offsets/t").version == version


def test_a_node_created_with_its_parents_keeps_its_own_data(zk):
    create_with_parents(zk, "/consumers/g/ids/c-1", b'{"version":1}', ephemeral=True)
    data, stat = zk.get("/consumers/g/ids/c-1")
    assert data == b'{"version":1}' and stat.ephemeralOwner == zk.client_id[0]
    assert zk.get("/consumers/g/ids")[0] is None
    create_with_parents(zk, "/consumers/g/ids/c-2", b"x")  # parents there: one plain create
    assert zk.get("/consumers/g/ids/c-2")[0] == b"x"


def test_a_create_without_data_in_a_multi_op_is_a_null_parent(zk):
    zk.create("/brokers/topics/t", b"{}", makepath=True)
    batch = [Create("/brokers/topics/t/partitions"), Create("/brokers/topics/t/partitions/0"),
             Create("/brokers/topics/t/partitions/0/state", b'{"leader":1}')]
    assert not failed(commit_async(zk, batch).get())
    assert zk.get("/brokers/topics/t/partitions")[0] is None
    assert zk.get("/brokers/topics/t/partitions/0")[0] is None
    assert zk.get("/brokers/topics/t/partitions/0/state")[0] == b'{"leader":1}'


def test_a_brokers_persistent_paths_are_created_once_with_consumers_open_to_all(zk):
    zk.create(paths.BROKER_IDS_PATH, b"kept", makepath=True)
    created = ensure_broker_paths(zk)
    assert created == [p for p in paths.BROKER_PERSISTENT_PATHS if p != paths.BROKER_IDS_PATH]
    assert zk.get(paths.BROKER_IDS_PATH)[0] == b"kept"
    for path in created:
        assert zk.get(path)[0] is None, path
    assert zk.get_acls(paths.CONSUMERS_PATH)[0] == list(OPEN_ACL_UNSAFE)
    assert ensure_broker_paths(zk) == []


@pytest.mark.parametrize("path", ["", "/"])
def test_the_root_is_never_created(zk, path):
    ensure_path(zk, path)
    assert zk.exists("/") is not None
