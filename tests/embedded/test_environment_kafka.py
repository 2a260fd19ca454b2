"""`zkconsumer local up --broker kafka-4`, run as a user runs it: Apache Kafka 4.x is the broker and its own group
coordinator (no front), the bridge shows it in ZooKeeper, where a legacy member finds it and reads through it;
`local status` names what runs, and the run directory keeps its kind."""

from __future__ import annotations

import json

import pytest
from support import produce, require_kafka, zkconsumer_cli

from zkconsumer.zk.client import zookeeper

pytestmark = pytest.mark.servers  # `zkconsumer local up` starts its own servers


def local(run_dir, *args: str):
    return zkconsumer_cli(*args, "--run-dir", str(run_dir), timeout=120)


def test_up_with_kafka_4_serves_legacy_members_through_the_bridge(run_dir):
    require_kafka("kafka-4")
    up = local(run_dir, "local", "up", "--broker", "kafka-4", "--json")
    assert up.returncode == 0, up.stderr
    endpoints = json.loads(up.stdout)
    assert endpoints["bootstrap_servers"] == endpoints["broker"]  # Kafka is its own coordinator: no front
    assert set(json.loads((run_dir / "state.json").read_text())["processes"]) == {"zookeeper", "broker", "bridge"}

    assert local(run_dir, "topics", "create", "orders", "--partitions", "2").returncode == 0
    for partition in (0, 1):
        produce(endpoints["broker"], "orders", [b"a", b"b"], partition=partition)
    consumed = local(run_dir, "consume", "--group", "legacy", "--topic", "orders", "--from-beginning",
                     "--max-messages", "4")
    assert consumed.returncode == 0, consumed.stderr
    assert sorted(consumed.stdout.split()) == ["a", "a", "b", "b"]
    with zookeeper(endpoints["zookeeper"]) as zk:
        assert [zk.get(f"/consumers/legacy/offsets/orders/{p}")[0] for p in (0, 1)] == [b"2", b"2"]

    status = json.loads(local(run_dir, "local", "status", "--json").stdout)
    assert status["running"] and status["broker_ok"] and status["broker_kind"] == "kafka-4"
    assert status["broker_software"].startswith("Apache Kafka 4.") and status["registered_brokers"] == ["1"]
    shown = local(run_dir, "local", "status").stdout
    assert f"broker software    {status['broker_software']}  (--broker kafka-4)" in shown

    # the run directory holds Kafka's log: another kind is refused in one line, nothing stopped or started
    other = local(run_dir, "local", "up", "--broker", "tansu")
    assert other.returncode == 2 and "--broker kafka-4" in other.stderr and len(other.stderr.splitlines()) == 1
    down = local(run_dir, "local", "down")
    assert down.stdout.startswith("stopped bridge, broker, zookeeper")
