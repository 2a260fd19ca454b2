"""A mixed ZooKeeper-era group through the front: a kafka-node 3 HighLevelConsumer (its own ZooKeeper client, Fetch
v0 and OffsetCommit v0 through the front) and this project's legacy member share one group in ZooKeeper, split its
partitions by the range assignment both compute, and consume every message once between them; kafka-node's commits
land at the legacy path, where the legacy member reads them.

kafka-node is installed from npm at the pinned lockfile (``tests/front/kafka_node``), once per session; the test is
skipped where Node.js or npm is missing, or npm cannot install it."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from support import connector_config, mirrored_topic, produce, take, wait_for
from time_scale import bounded

from zkconsumer import create_connector
from zkconsumer.bridge.metadata_bridge import MetadataBridge
from zkconsumer.embedded.front_process import FrontProcess

KAFKA_NODE = Path(__file__).parent / "kafka_node"
GROUP = "mixed"
PARTITIONS = 4

pytestmark = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                                reason="needs Node.js and npm (kafka-node)")


@pytest.fixture(scope="session")
def kafka_node(tmp_path_factory) -> Path:
    """A directory with kafka-node installed and the member's script."""
    workdir = tmp_path_factory.mktemp("kafka-node")
    for name in ("package.json", "package-lock.json", "member.js"):
        shutil.copy(KAFKA_NODE / name, workdir / name)
    # --ignore-scripts: kafka-node's optional snappy would build a native module; its members here never compress
    try:
        installed = subprocess.run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], cwd=workdir,
                                   capture_output=True, text=True, timeout=bounded(180))
    except subprocess.TimeoutExpired:
        pytest.skip("npm could not install kafka-node within 180 s (no registry reachable?)")
    if installed.returncode != 0:
        pytest.skip(f"npm could not install kafka-node: {(installed.stderr.strip().splitlines() or ['?'])[-1]}")
    return workdir


class NodeMember:
    """kafka-node's member in its own process; its JSON lines collected as they come."""

    def __init__(self, workdir: Path, zookeeper: str, topic: str) -> None:
        self.events: list[dict] = []
        self.process = subprocess.Popen(["node", "member.js", zookeeper, GROUP, topic], cwd=workdir,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:  # no timeout: ends with the process, which the test ends
            if line.startswith("{"):
                self.events.append(json.loads(line))

    def named(self, name: str) -> list[dict]:
        return [e for e in list(self.events) if e["event"] == name]

    def close(self) -> int:
        """Close stdin (the member commits and leaves); its exit status."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(bounded(20))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(bounded(5))
            raise


def owners(zk, topic: str) -> dict[int, str]:
    found = {}
    for partition in range(PARTITIONS):
        path = f"/consumers/{GROUP}/owners/{topic}/{partition}"
        if zk.exists(path):
            found[partition] = zk.get(path)[0].decode()
    return found


@pytest.mark.timeout(180)
def test_kafka_node_and_a_legacy_member_share_a_group_through_the_front(kafka_node, zk, zk_chroot, broker_bootstrap,
                                                                        tmp_path, topic_name):
    with FrontProcess(broker_bootstrap, tmp_path / "front", options=("--zookeeper", zk_chroot)) as front, \
            MetadataBridge(zk_chroot, front.address, interval_ms=250).running():
        topic = mirrored_topic(zk, front.address, topic_name, PARTITIONS)
        node = NodeMember(kafka_node, zk_chroot, topic)
        legacy = None
        try:
            wait_for(lambda: node.named("error") or len(owners(zk, topic)) == PARTITIONS, timeout=30)
            assert not node.named("error"), node.events
            node_id = node.named("started")[0]["id"]
            assert set(owners(zk, topic).values()) == {node_id}  # alone, it owns every partition

            legacy = create_connector(connector_config(zk_chroot, "legacy", **{"group.id": GROUP}))
            stream = legacy.create_message_streams({topic: 1})[topic][0]
            legacy_thread = f"{GROUP}_legacy-0"
            # The range assignment over the sorted member ids, as both compute it: two partitions each.
            wait_for(lambda: sorted(owners(zk, topic).values()) == sorted([node_id, node_id, legacy_thread,
                                                                           legacy_thread]), timeout=60)
            split = owners(zk, topic)

            values = [f"m{i}".encode() for i in range(4 * PARTITIONS)]
            for partition in range(PARTITIONS):
                produce(front.address, topic, values[partition::PARTITIONS], partition=partition)
            legacy_partitions = {p for p, owner in split.items() if owner == legacy_thread}
            taken = take(stream, 4 * len(legacy_partitions), timeout=30)
            wait_for(lambda: len(node.named("message")) >= 4 * (PARTITIONS - len(legacy_partitions)), timeout=30)

            from_node = {(e["partition"], e["value"].encode()) for e in node.named("message")}
            from_legacy = {(m.partition, m.message) for m in taken}
            assert {p for p, _ in from_legacy} == legacy_partitions
            assert {p for p, _ in from_node} == set(split) - legacy_partitions
            assert len(node.named("message")) + len(taken) == len(values)  # each message once
            assert sorted(v for _, v in from_node | from_legacy) == sorted(values)

            # kafka-node's commits (OffsetCommit v0, through the front) are where the legacy member reads offsets.
            for partition in set(split) - legacy_partitions:
                wait_for(lambda p=partition: zk.exists(f"/consumers/{GROUP}/offsets/{topic}/{p}")
                         and zk.get(f"/consumers/{GROUP}/offsets/{topic}/{p}")[0] == b"4", timeout=20)
        finally:
            status = node.close()
            if legacy is not None:
                legacy.shutdown()
        assert status == 0 and node.named("closed")[0]["error"] is None, node.events
