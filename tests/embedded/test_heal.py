"""`zkconsumer local up` on a run directory where a process died heals it in place, as a user runs it: the front killed
with SIGKILL under a classic group and a KIP-848 group (confluent-kafka, two members each), `local up` again starts
only the front, on its port, and the groups' clients see no rebalance: no callback, the same generation and epoch
(their commits are accepted), the same assignment, and the broker's logs as they were. A port taken meanwhile by
another program: one line, and nothing started, stopped or removed."""

from __future__ import annotations

import json
import os
import signal
import socket
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient
from event_lines import invalid_event_lines
from support import RecordedConsumer, produce, wait_for, zkconsumer_cli
from test_environment import state_records
from time_scale import bounded, scaled

from zkconsumer.embedded.front import BrokerAddresses
from zkconsumer.embedded.front_process import on_port
from zkconsumer.embedded.healing import HealRefused, Restart, check_ports_kept, plan, taken, waves
from zkconsumer.embedded.process import port_in_use
from zkconsumer.kafka.topics import create_topic

TOPIC, PARTITIONS = "orders", 4
#: what each group's clients are given: the classic one, eager range (every rebalance would revoke all), sessions
#: longer than the front is down for; the KIP-848 one, Kafka's defaults
GROUPS = {
    "classic": {"partition.assignment.strategy": "range", "heartbeat.interval.ms": 500},
    "kip848": {"group.protocol": "consumer"},
}
#: the front's events that a rebalance, a join or an expiry writes
REBALANCE_EVENTS = ("front.group.round_started", "front.group.member_joined", "front.group.member_expired",
                    "front.consumer_group.member_joined", "front.consumer_group.epoch_bumped",
                    "front.consumer_group.member_expired")

pytestmark = pytest.mark.servers  # `zkconsumer local up` starts its own servers


def local_up(run_dir: Path, log: Path):
    """``local up``, its events as JSON lines in ``log``."""
    return zkconsumer_cli("--log-file", str(log), "--log-json", "local", "up", "--json", "--run-dir", str(run_dir))


def front_events(run_dir: Path) -> list[dict]:
    lines = (run_dir / "front" / "front.log").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def last(events: list[dict], name: str, group: str) -> dict:
    return [e for e in events if e["event"] == name and e.get("group") == group][-1]


def described(bootstrap: str, groups: list[str]) -> dict[str, list[tuple[str, list[int]]]]:
    """Each group's members and their partitions, as the group's describe answers (DescribeGroups for the classic
    group, ConsumerGroupDescribe for the KIP-848 one)."""
    admin = AdminClient({"bootstrap.servers": bootstrap})
    answers = {g: f.result() for g, f in admin.describe_consumer_groups(groups, request_timeout=bounded(10)).items()}
    return {g: sorted((m.member_id, sorted(tp.partition for tp in m.assignment.topic_partitions))
                      for m in d.members) for g, d in answers.items()}


def settled(members: list[RecordedConsumer], values: list[bytes]) -> bool:
    """Each member holds half the partitions and has read every one of ``values`` in them: a member that took over
    partitions another one had read first (the group's first rebalances) has read them again, so its offsets are
    stored and its commit has something to write."""
    for member in members:
        member.poll(0.05)
    return (all(len(m.assigned()) == PARTITIONS // 2 for m in members)
            and sorted(p for m in members for p in m.assigned()) == list(range(PARTITIONS))
            and all(set(m.values) >= {v for v in values if partition_of(v) in m.assigned()} for m in members))


def partition_of(value: bytes) -> int:
    return int(value.split(b"-")[1])


def fill(bootstrap: str, prefix: str) -> list[bytes]:
    values = []
    for partition in range(PARTITIONS):
        sent = [f"{prefix}-{partition}-{i}".encode() for i in range(2)]
        produce(bootstrap, TOPIC, sent, partition=partition)
        values += sent
    return values


@pytest.mark.timeout(240)  # an environment started once, the front twice more; two groups settled, read twice
def test_a_killed_front_is_restarted_on_its_port_and_its_groups_see_no_rebalance(run_dir, tmp_path):
    cli_log = tmp_path / "cli.log"
    up = local_up(run_dir, cli_log)
    assert up.returncode == 0, up.stderr
    endpoints = json.loads(up.stdout)
    bootstrap = endpoints["bootstrap_servers"]
    create_topic(bootstrap, TOPIC, PARTITIONS)
    before = fill(bootstrap, "before")
    members = {group: [RecordedConsumer({
        "bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
        "enable.auto.commit": False, "reconnect.backoff.max.ms": 500,
        **settings, **({"session.timeout.ms": int(scaled(30_000))} if group == "classic" else {})}, TOPIC)
        for _ in range(2)] for group, settings in GROUPS.items()}
    everyone = [m for group in members.values() for m in group]
    try:
        # 1. both groups settle: two partitions each member, every message read
        wait_for(lambda: all([settled(group, before) for group in members.values()]), timeout=60)
        for member in everyone:
            member.consumer.commit(asynchronous=False)
        read = [len(m.values) for m in everyone]
        calls = [list(m.calls) for m in everyone]
        assignments = [m.assigned() for m in everyone]
        events = front_events(run_dir)
        generation = last(events, "front.group.round_completed", "classic")["generation"]
        epoch = last(events, "front.consumer_group.state_changed", "kip848")["group_epoch"]
        description = described(bootstrap, list(members))
        assert [len(d) for d in description.values()] == [2, 2]
        old = state_records(run_dir)

        # 2. the front dies; `local up` restarts it, and only it, on its port
        written = len(front_events(run_dir))
        os.kill(old["front"].pid, signal.SIGKILL)
        wait_for(lambda: not old["front"].is_alive())
        healed = local_up(run_dir, cli_log)
        assert healed.returncode == 0, healed.stderr
        assert json.loads(healed.stdout) == endpoints
        said = [line for line in healed.stderr.splitlines() if line.startswith("zkconsumer local: ")]
        assert said == [f"zkconsumer local: restarted front on {bootstrap} in place; left running: zookeeper, broker, "
                        f"bridge"], healed.stderr
        new = state_records(run_dir)
        assert {n: r for n, r in new.items() if n != "front"} == {n: r for n, r in old.items() if n != "front"}
        assert new["front"].pid != old["front"].pid and new["front"].is_alive()
        assert new["front"].argv == tuple(on_port(old["front"].argv, int(bootstrap.rsplit(":", 1)[1])))

        # 3. the front replayed both groups at their generation and epoch, with both members each
        restarted = front_events(run_dir)[written:]
        classic, kip848 = last(restarted, "front.group.loaded", "classic"), last(
            restarted, "front.consumer_group.loaded", "kip848")
        assert (classic["generation"], len(classic["members"])) == (generation, 2)
        assert (kip848["group_epoch"], len(kip848["members"])) == (epoch, 2)

        # 4. the clients go on through it: new messages read, commits of their generation and epoch accepted, no
        # callback, the same assignment, the same members in the group's describe
        after = fill(bootstrap, "after")
        for group in members.values():
            wait_for(lambda group=group: settled(group, after), timeout=60)
        # the logs as they were: what the members read since is what was produced since, once each
        assert sorted(v for m, n in zip(everyone, read, strict=True) for v in m.values[n:]) == sorted(after * 2)
        for member in everyone:
            member.consumer.commit(asynchronous=False)  # ILLEGAL_GENERATION / STALE_MEMBER_EPOCH after a rebalance
        assert [m.calls for m in everyone] == calls
        assert [m.assigned() for m in everyone] == assignments
        assert described(bootstrap, list(members)) == description
        assert [e for e in front_events(run_dir)[written:] if e["event"] in REBALANCE_EVENTS] == []
        committed = everyone[0].consumer.committed([TopicPartition(TOPIC, p) for p in range(PARTITIONS)],
                                                   timeout=bounded(10))
        assert [tp.offset for tp in committed] == [4] * PARTITIONS  # two before the restart, two after
    finally:
        for member in everyone:
            member.consumer.close()

    # 5. the front dies again and another program takes its port: one line, nothing started, stopped or removed
    state = (run_dir / "state.json").read_bytes()
    front = state_records(run_dir)["front"]
    os.kill(front.pid, signal.SIGKILL)
    host, port = bootstrap.rsplit(":", 1)
    wait_for(lambda: not front.is_alive() and not port_in_use(int(port)))  # its socket closes after its command line
    with socket.socket() as squatter:
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind((host, int(port)))
        squatter.listen()
        refused = local_up(run_dir, cli_log)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.splitlines() == [
        f"zkconsumer local: cannot restart front where it was: front's address {bootstrap} is now in use by another "
        f"program; stop that program and run `zkconsumer local up` again, or `zkconsumer local down`, then "
        f"`zkconsumer local up` starts a new environment on new ports"], refused.stderr
    assert (run_dir / "state.json").read_bytes() == state
    assert all(r.is_alive() for n, r in state_records(run_dir).items() if n != "front")

    checked, invalid = invalid_event_lines([cli_log, run_dir / "front" / "front.log"])
    assert invalid == [] and checked
    logged = [json.loads(line)["event"] for line in cli_log.read_text().splitlines() if '"local.' in line]
    assert "local.healed" in logged and "local.heal_refused" in logged


def test_a_heal_is_planned_in_start_order_each_process_where_it_was():
    addresses = BrokerAddresses("127.0.0.1:9092", "127.0.0.1:9093")
    ensemble = "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183"
    restarts = plan(["zookeeper-1", "zookeeper-3", "broker", "front", "bridge"], ensemble, addresses)
    assert restarts == [Restart("zookeeper-1", "127.0.0.1:2181"), Restart("zookeeper-3", "127.0.0.1:2183"),
                        Restart("broker", "127.0.0.1:9093"), Restart("front", "127.0.0.1:9092"),
                        Restart("bridge", ensemble, listens=False)]
    assert [[r.name for r in wave] for wave in waves(restarts)] == [
        ["zookeeper-1", "zookeeper-3"], ["broker"], ["front"], ["bridge"]]  # an ensemble's servers start together
    assert taken(restarts, lambda port, host: port in (2183, 9092)) == [restarts[1], restarts[3]]
    with pytest.raises(HealRefused, match="no way known to start kafka-controller again"):
        plan(["kafka-controller"], "127.0.0.1:2181", addresses)
    with pytest.raises(HealRefused, match="no way known to start front"):  # no front recorded (--direct-broker)
        plan(["front"], "127.0.0.1:2181", BrokerAddresses("127.0.0.1:9093", "127.0.0.1:9093"))


def test_a_heal_keeps_the_ports_and_refuses_others_asked_for():
    addresses = BrokerAddresses("127.0.0.1:9092", "127.0.0.1:9093")
    check_ports_kept(["front"], "127.0.0.1:2181", addresses, 2181, 9093)  # the same: nothing to say
    check_ports_kept(["front"], "127.0.0.1:2181", addresses)
    with pytest.raises(HealRefused) as refused:
        check_ports_kept(["front"], "127.0.0.1:2181", addresses, None, 9999)
    assert "not on --broker-port 9999 (it is on 9093)" in str(refused.value)
    assert on_port(["python", "-m", "zkconsumer.front", "--port", "0", "--port-file", "f"], 9092) == [
        "python", "-m", "zkconsumer.front", "--port", "9092", "--port-file", "f"]
    assert on_port(["front"], 9092) == ["front", "--port", "9092"]
