"""Three members in three processes share a topic; one is killed with SIGKILL. The survivors take its partitions
once its session expires, every message is delivered at least once, and the group's znodes read as the Kafka tools
read them (ConsumerOffsetChecker, VerifyConsumerRebalance)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from support import produce, wait_for
from time_scale import bounded

from zkconsumer.kafka.topics import create_topic

GROUP = "processes"
PARTITIONS = 6
SESSION_MS = 3000


def kafka_tools_view(zk: KazooClient, group: str, topic: str) -> tuple[dict[int, str], dict[int, int], set[str]]:
    """Owners, offsets and the registered members' threads exactly as Kafka's tools parse them, checking that every
    registration is TopicCount JSON. Whether every owner is a live thread (what VerifyConsumerRebalance checks) is
    for the caller: these are several reads, and one that races a join or an expiry sees an owner whose member is not
    (or no longer) listed, which only a settled group rules out."""
    threads = set()
    for member in zk.get_children(f"/consumers/{group}/ids"):
        registration = json.loads(zk.get(f"/consumers/{group}/ids/{member}")[0])
        assert registration["pattern"] in {"static", "white_list", "black_list"}
        assert isinstance(registration["timestamp"], str) and registration["version"] == 1
        streams = registration["subscription"].get(topic, 0)
        threads.update(f"{member}-{n}" for n in range(streams))
    owners_dir, offsets_dir = f"/consumers/{group}/owners/{topic}", f"/consumers/{group}/offsets/{topic}"
    owners = {int(p): zk.get(f"{owners_dir}/{p}")[0].decode() for p in zk.get_children(owners_dir)}
    offsets = {int(p): int(zk.get(f"{offsets_dir}/{p}")[0]) for p in zk.get_children(offsets_dir)}
    return owners, offsets, threads


def settled(check):
    """A predicate over the group that is simply "not yet" while a znode vanishes under the reader."""
    def run() -> bool:
        try:
            return check()
        except NoNodeError:
            return False
    return run


def delivered(outputs: list[Path]) -> set[str]:
    values = set()
    for path in outputs:
        if path.exists():
            values.update(line.split()[2] for line in path.read_text().splitlines() if len(line.split()) == 3)
    return values


@pytest.mark.timeout(240)  # its waits, summed: 15 + 30 + 30 + 10 + 40 + 40 + 30 s
def test_three_processes_survive_a_sigkill_with_at_least_once_delivery(tmp_path, zk, kafka_zk, bootstrap_servers,
                                                                       topic_name):
    create_topic(bootstrap_servers, topic_name, PARTITIONS)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/{PARTITIONS - 1}/state"))
    outputs = [tmp_path / f"m{i}.txt" for i in range(3)]
    members = [
        subprocess.Popen([sys.executable, "-m", "zkconsumer.members.legacy_member", "--zookeeper", kafka_zk,
                          "--group", GROUP,
                          "--topic", topic_name, "--consumer-id", f"m{i}", "--output", str(outputs[i]),
                          "--session-timeout-ms", str(SESSION_MS), "--events", "none"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for i in range(3)
    ]
    try:
        # The checks are on the read that showed the group spread: a member whose watch fired once more (a join
        # it heard of late) rebalances again and releases its partitions for a moment, so a later read can race that.
        def spread() -> dict[int, str] | bool:
            owners, _, threads = kafka_tools_view(zk, GROUP, topic_name)
            return len(owners) == PARTITIONS and sorted(owners.values()).count(f"{GROUP}_m1-0") == 2 \
                and len(set(owners.values())) == 3 and set(owners.values()) <= threads and owners

        owners = wait_for(settled(spread), timeout=30)
        assert sorted(owners.values()) == [f"{GROUP}_m{m}-0" for m in (0, 0, 1, 1, 2, 2)]
        first = [f"a{i}" for i in range(300)]
        for p in range(PARTITIONS):
            produce(bootstrap_servers, topic_name, [v.encode() for v in first[p::PARTITIONS]], partition=p)
        wait_for(lambda: set(first) <= delivered(outputs), timeout=30)

        members[1].send_signal(signal.SIGKILL)
        members[1].wait(bounded(10))
        second = [f"b{i}" for i in range(300)]
        for p in range(PARTITIONS):
            produce(bootstrap_servers, topic_name, [v.encode() for v in second[p::PARTITIONS]], partition=p)

        # After the session timeout the killed member's registration and owner znodes go, and the survivors
        # split all six partitions between them.
        def survivors_own_everything() -> dict[int, str] | bool:
            owners, _, threads = kafka_tools_view(zk, GROUP, topic_name)
            return len(owners) == PARTITIONS and set(owners.values()) == {f"{GROUP}_m0-0", f"{GROUP}_m2-0"} \
                and threads == {f"{GROUP}_m0-0", f"{GROUP}_m2-0"} and owners

        owners = wait_for(settled(survivors_own_everything), timeout=40)
        assert set(owners.values()) == {f"{GROUP}_m0-0", f"{GROUP}_m2-0"}  # every owner a live thread, in that read
        wait_for(lambda: set(first + second) <= delivered(outputs), timeout=40)
    finally:
        for member in (members[0], members[2]):
            if member.poll() is None:
                member.send_signal(signal.SIGTERM)
        exits = [m.wait(bounded(30)) for m in (members[0], members[2])]
        for member in members:
            if member.poll() is None:
                member.kill()
    assert exits == [0, 0]
    # Clean shutdown committed everything consumed: each partition's offset is its message count.
    assert zk.get_children(f"/consumers/{GROUP}/ids") == []
    _, offsets, _ = kafka_tools_view(zk, GROUP, topic_name)
    assert offsets == {p: 100 for p in range(PARTITIONS)}
