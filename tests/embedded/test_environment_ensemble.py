"""`zkconsumer local up --zookeeper-servers 3`: an ensemble in the embedded environment, as a user runs it."""

from __future__ import annotations

import json

import pytest
from support import zkconsumer_cli

from zkconsumer.embedded.ensemble import server_mode
from zkconsumer.embedded.process import ProcessRecord
from zkconsumer.zk import cluster
from zkconsumer.zk.client import zookeeper

pytestmark = pytest.mark.servers  # `zkconsumer local up` starts its own servers


def test_up_with_three_zookeeper_servers_lists_them_all_and_down_stops_them(run_dir):
    up = zkconsumer_cli("local", "up", "--zookeeper-servers", "3", "--direct-broker", "--json",
                        "--run-dir", str(run_dir))
    assert up.returncode == 0, up.stderr
    addresses = json.loads(up.stdout)["zookeeper"].split(",")
    assert len(addresses) == 3
    assert sorted(server_mode(a) for a in addresses) == ["follower", "follower", "leader"]
    state = json.loads((run_dir / "state.json").read_text())
    records = {n: ProcessRecord(r["pid"], tuple(r["argv"]), r["log"]) for n, r in state["processes"].items()}
    assert set(records) == {"zookeeper-1", "zookeeper-2", "zookeeper-3", "broker", "bridge"}
    assert all(r.is_alive() for r in records.values())
    for sid in (1, 2, 3):
        assert (run_dir / "zookeeper" / str(sid) / "data" / "myid").read_text().strip() == str(sid)
    # Every server holds what the bridge wrote through the connect string.
    for address in addresses:
        with zookeeper(address) as zk:
            zk.sync("/brokers/ids")
            assert cluster.read_brokers(zk)

    status = zkconsumer_cli("local", "status", "--json", "--run-dir", str(run_dir))
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["zookeeper_ok"] and [a for a, _ in report["zookeeper_servers"]] == addresses
    assert sorted(mode for _, mode in report["zookeeper_servers"]) == ["follower", "follower", "leader"]
    shown = zkconsumer_cli("local", "status", "--run-dir", str(run_dir)).stdout
    assert all(f"  {a:<21} " in shown for a in addresses), shown

    down = zkconsumer_cli("local", "down", "--run-dir", str(run_dir))
    assert "stopped bridge, broker, zookeeper-3, zookeeper-2, zookeeper-1" in down.stdout, down.stdout
    assert not any(r.is_alive() for r in records.values())


def test_no_zookeeper_server_is_one_line(run_dir):
    up = zkconsumer_cli("local", "up", "--zookeeper-servers", "0", "--run-dir", str(run_dir))
    assert up.returncode == 2
    assert up.stderr.strip().splitlines() == [
        "zkconsumer local: --zookeeper-servers 0: a ZooKeeper ensemble needs at least one server"], up.stderr
