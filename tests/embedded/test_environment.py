"""`zkconsumer local up|status|down`, `topics create|alter` and the demo, run as a user runs them."""

from __future__ import annotations

import json
import os
import signal
import socket

import pytest
from confluent_kafka.admin import AdminClient
from kafka.protocol.old.commit import OffsetCommitRequest_v0, OffsetCommitResponse_v0
from support import wait_for, zkconsumer_cli
from time_scale import scaled

from zkconsumer.embedded.process import ProcessRecord
from zkconsumer.embedded.servers import ServerOptions, provide_servers
from zkconsumer.front.proxy.client import read_answer
from zkconsumer.front.proxy.config import parse_address
from zkconsumer.kafka.metadata import broker_answers
from zkconsumer.zk import cluster
from zkconsumer.zk.client import zookeeper

pytestmark = pytest.mark.servers  # `zkconsumer local up` starts its own servers


def state_records(run_dir) -> dict[str, ProcessRecord]:
    state = json.loads((run_dir / "state.json").read_text())
    return {n: ProcessRecord(r["pid"], tuple(r["argv"]), r["log"]) for n, r in state["processes"].items()}


def commit_v0(address: str, group: str, topic: str, partition: int, offset: int) -> int:
    """An OffsetCommit v0 of one partition, as kafka-node sends it; its error code."""
    request = OffsetCommitRequest_v0(group_id=group, topics=[(topic, [(partition, offset, "")])])
    request.with_header(correlation_id=1, client_id="old-client")
    with socket.create_connection(parse_address(address), timeout=scaled(10)) as sock:
        sock.sendall(request.encode(header=True, framed=True))
        (_, [(_, error)]), = OffsetCommitResponse_v0.decode(read_answer(sock)[4:]).topics
    return error


def test_up_topics_create_status_down(run_dir, tmp_path):
    up = zkconsumer_cli("local", "up", "--json", "--run-dir", str(run_dir))
    assert up.returncode == 0, up.stderr
    endpoints = json.loads(up.stdout)
    assert set(endpoints) == {"zookeeper", "bootstrap_servers", "broker"}
    assert endpoints["bootstrap_servers"] != endpoints["broker"]  # clients are given the front
    records = state_records(run_dir)
    assert set(records) == {"zookeeper", "broker", "front", "bridge"} and all(r.is_alive() for r in records.values())
    assert records["front"].log == str(run_dir / "front" / "front.log")

    # No --bootstrap-server: the running environment is found through its run directory.
    created = zkconsumer_cli("topics", "create", "demo", "--partitions", "3", "--run-dir", str(run_dir))
    assert created.returncode == 0, created.stderr
    with zookeeper(endpoints["zookeeper"]) as zk:
        # written into ZooKeeper by the time the command returns, so a `consume` right after it finds the topic
        assert "demo" in cluster.read_topic_names(zk)
        brokers = cluster.read_brokers(zk)
        assert [b.address for b in brokers] == [endpoints["bootstrap_servers"]]  # legacy consumers fetch via the front
        assert cluster.read_topic(zk, "demo").partitions == [0, 1, 2]
        assert all(cluster.read_partition_state(zk, "demo", p).leader == brokers[0].id for p in range(3))
        # A ZooKeeper-era client's version-0 commit, through the front, lands where Kafka 0.10 kept it.
        assert commit_v0(endpoints["bootstrap_servers"], "old-client", "demo", 1, 5) == 0
        assert zk.get("/consumers/old-client/offsets/demo/1")[0] == b"5"

    status = zkconsumer_cli("local", "status", "--json", "--run-dir", str(run_dir))
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["running"] and report["zookeeper_ok"] and report["broker_ok"] and report["direct_broker_ok"]
    assert report["bootstrap_servers"] == endpoints["bootstrap_servers"] and report["broker"] == endpoints["broker"]
    assert report["broker_kind"] == "tansu" and report["broker_software"].startswith("Tansu ")  # the default kind
    shown = zkconsumer_cli("local", "status", "--run-dir", str(run_dir))
    assert f"bootstrap servers  {endpoints['bootstrap_servers']}  ok  (the front)" in shown.stdout
    assert f"broker             {endpoints['broker']}  ok" in shown.stdout
    assert report["topics"] == ["demo"] and report["registered_brokers"] == [str(brokers[0].id)]

    again = zkconsumer_cli("local", "up", "--json", "--run-dir", str(run_dir))
    assert json.loads(again.stdout) == endpoints  # idempotent: the same environment, nothing new started
    assert state_records(run_dir) == records

    # A run on it (the comparison, the demo) puts a front of its own before its broker in place of its front, for the
    # block only, and leaves the environment it found running.
    with provide_servers(ServerOptions(run_dir=run_dir, front=True, workdir=tmp_path / "run-front")) as servers:
        assert (servers.zookeeper, servers.broker) == (endpoints["zookeeper"], endpoints["broker"])
        assert servers.bootstrap not in (endpoints["bootstrap_servers"], endpoints["broker"])
        assert servers.front_log is not None and broker_answers(servers.bootstrap)
        assert servers.environment == "already running, left running"
    assert not broker_answers(servers.bootstrap, timeout=0.5) and all(r.is_alive() for r in records.values())

    down = zkconsumer_cli("local", "down", "--run-dir", str(run_dir))
    assert down.returncode == 0 and "stopped bridge, front, broker, zookeeper" in down.stdout
    assert not any(r.is_alive() for r in records.values())
    assert not (run_dir / "state.json").exists()
    assert (run_dir / "bridge.log").exists()  # logs are kept
    stopped = zkconsumer_cli("local", "status", "--run-dir", str(run_dir))
    assert stopped.returncode == 1 and "no local environment" in stopped.stdout


def test_direct_broker_starts_no_front(run_dir):
    up = zkconsumer_cli("local", "up", "--direct-broker", "--json", "--run-dir", str(run_dir))
    assert up.returncode == 0, up.stderr
    endpoints = json.loads(up.stdout)
    assert endpoints["bootstrap_servers"] == endpoints["broker"]
    records = state_records(run_dir)
    assert set(records) == {"zookeeper", "broker", "bridge"}
    with zookeeper(endpoints["zookeeper"]) as zk:
        assert [b.address for b in cluster.read_brokers(zk)] == [endpoints["broker"]]
    shown = zkconsumer_cli("local", "status", "--run-dir", str(run_dir))
    assert shown.returncode == 0 and "(the front)" not in shown.stdout
    # a run asking for a front of its own keeps the environment's choice: the broker's own coordinator
    with provide_servers(ServerOptions(run_dir=run_dir, front=True, workdir=run_dir / "run-front")) as servers:
        assert servers.bootstrap == servers.broker == endpoints["broker"] and servers.front_log is None
    down = zkconsumer_cli("local", "down", "--run-dir", str(run_dir))
    assert down.returncode == 0 and "stopped bridge, broker, zookeeper" in down.stdout
    assert not any(r.is_alive() for r in records.values())


@pytest.mark.parametrize("dead", ["zookeeper", "broker"])
def test_a_dead_server_is_restarted_in_place_on_its_data(run_dir, dead):
    """ZooKeeper restarts on its data directory; Tansu on memory storage cannot keep its log across its own death,
    which `local up` says in one line, creating again the topics ZooKeeper records and the running front's groups
    topic. The front is killed under groups in tests/embedded/test_heal.py."""
    up = zkconsumer_cli("local", "up", "--json", "--run-dir", str(run_dir))
    assert up.returncode == 0, up.stderr
    endpoints = json.loads(up.stdout)
    assert zkconsumer_cli("topics", "create", "kept", "--partitions", "2", "--run-dir", str(run_dir)).returncode == 0
    old = state_records(run_dir)
    os.kill(old[dead].pid, signal.SIGKILL)
    wait_for(lambda: not old[dead].is_alive())
    healed = zkconsumer_cli("local", "up", "--json", "--run-dir", str(run_dir))
    assert healed.returncode == 0, healed.stderr
    assert json.loads(healed.stdout) == endpoints  # the same addresses
    said = [line for line in healed.stderr.splitlines() if line.startswith("zkconsumer local: ")]
    address = endpoints["zookeeper" if dead == "zookeeper" else "broker"]
    # a broker restarting empty takes the bridge with it: left running, it would mirror the empty broker into
    # ZooKeeper and delete the topics to be created again from there
    restarted = {"zookeeper": ["zookeeper"], "broker": ["broker", "bridge"]}[dead]
    kept = ", ".join(n for n in ("zookeeper", "broker", "front", "bridge") if n not in restarted)
    started = f"{dead} on {address}" + (", bridge" if dead == "broker" else "")
    assert said[0].startswith(f"zkconsumer local: restarted {started} in place; left running: {kept}")
    new = state_records(run_dir)
    assert {n: r for n, r in new.items() if n not in restarted} == {
        n: r for n, r in old.items() if n not in restarted}
    assert all(new[n].pid != old[n].pid for n in restarted) and all(r.is_alive() for r in new.values())
    assert not any(old[n].is_alive() for n in restarted)
    with zookeeper(endpoints["zookeeper"]) as zk:
        assert cluster.read_topic(zk, "kept").partitions == [0, 1]  # ZooKeeper's data kept
    in_broker = set(AdminClient({"bootstrap.servers": endpoints["broker"]}).list_topics(timeout=scaled(10)).topics)
    if dead == "broker":
        assert said[0].endswith("broker kept its log in memory (Tansu's memory storage), so it restarted empty: its "
                                "messages, the offsets committed to it and the groups the front stored in it are gone "
                                "(the running front holds its groups on, and stores each again at its next change)")
        assert said[1:] == ["zkconsumer local: recreated 1 topic ZooKeeper records, with empty logs: kept (2 "
                            "partitions)"], healed.stderr
        assert in_broker == {"kept", "__zkconsumer_groups"}
    else:
        assert len(said) == 1, healed.stderr


def test_down_never_signals_a_pid_that_now_runs_something_else(run_dir):
    run_dir.mkdir(parents=True)
    me = ProcessRecord(os.getpid(), ("not", "this", "command"), "x.log")
    (run_dir / "state.json").write_text(json.dumps({
        "zookeeper": "x", "bootstrap_servers": "y",
        "processes": {"zookeeper": {"pid": me.pid, "argv": list(me.argv), "log": me.log}},
    }))
    down = zkconsumer_cli("local", "down", "--run-dir", str(run_dir))
    assert down.returncode == 0 and "no local environment was running" in down.stdout  # and we are still alive


def test_busy_port_is_said_plainly(run_dir):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        up = zkconsumer_cli("local", "up", "--zookeeper-port", str(port), "--run-dir", str(run_dir))
    assert up.returncode == 1
    assert f"port 127.0.0.1:{port} for ZooKeeper is already in use" in up.stderr
    assert "Traceback" not in up.stderr


def test_missing_java_is_said_plainly(run_dir, tmp_path):
    env = {"PATH": str(tmp_path / "empty-bin"), "JAVA_HOME": ""}
    up = zkconsumer_cli("local", "up", "--run-dir", str(run_dir), env=env)
    assert up.returncode == 1
    assert "no Java runtime found" in up.stderr and "Traceback" not in up.stderr


def test_adding_partitions_on_tansu_says_why_it_cannot(bootstrap_servers, topic_name):
    def topics(*args: str):
        return zkconsumer_cli("topics", *args, "--bootstrap-server", bootstrap_servers)

    assert topics("create", topic_name, "--partitions", "1").returncode == 0
    alter = topics("alter", topic_name, "--partitions", "2")
    assert alter.returncode == 1 and "Traceback" not in alter.stderr
    assert "does not implement CreatePartitions" in alter.stderr
    shrink = topics("alter", topic_name, "--partitions", "1")
    assert shrink.returncode == 2 and "can only add partitions" in shrink.stderr
    exists = topics("create", topic_name, "--partitions", "1")
    assert exists.returncode == 1 and "already exists" in exists.stderr
    bad = topics("create", "no/slash", "--partitions", "1")
    assert bad.returncode == 2 and "illegal topic name" in bad.stderr


def test_commands_without_an_environment_say_what_to_do(tmp_path):
    result = zkconsumer_cli("topics", "create", "t", "--partitions", "1", "--run-dir", str(tmp_path / "none"),
                            env={"KAFKA_BOOTSTRAP": ""})
    assert result.returncode == 2
    assert "no --bootstrap-server given" in result.stderr and "Traceback" not in result.stderr


def test_help_lists_the_commands_and_no_command_is_a_usage_error():
    help_ = zkconsumer_cli("--help")
    assert help_.returncode == 0
    for command in ("local", "topics", "bridge", "demo"):
        assert command in help_.stdout
    assert zkconsumer_cli().returncode == 2  # no command: the help, and a usage status
