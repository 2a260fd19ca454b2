"""A mixed ZooKeeper-era group through the front: a kafka-node 3 HighLevelConsumer (its own ZooKeeper client, Fetch
v0 and OffsetCommit v0 through the front) and this project's legacy member share one group in ZooKeeper, split its
partitions by the range assignment both compute, and consume every message once between them; kafka-node's commits
land at the legacy path, where the legacy member reads them. Through a SIGKILL of kafka-node's process and a second
kafka-node member's join, nothing produced is lost: the legacy member takes the killed member's partitions over from its
commits, the newcomer takes half of them back from the legacy member's, and ``zkconsumer groups describe`` reads every
commit of both kinds of member.

kafka-node is installed from npm at the pinned lockfile (``tests/front/kafka_node``), once per session; the test is
skipped where Node.js or npm is missing, or npm cannot install it."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from kazoo.exceptions import NoNodeError
from support import connector_config, mirrored_topic, produce, take, wait_for, zkconsumer_cli
from time_scale import bounded

from zkconsumer import create_connector
from zkconsumer.bridge.metadata_bridge import MetadataBridge
from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.errors import ConsumerTimeoutException
from zkconsumer.tools.verify_rebalance import FAILURE

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

    def __init__(self, workdir: Path, zookeeper: str, topic: str, session_timeout_ms: int | None = None) -> None:
        self.events: list[dict] = []
        args = [] if session_timeout_ms is None else [str(session_timeout_ms)]
        self.process = subprocess.Popen(["node", "member.js", zookeeper, GROUP, topic, *args], cwd=workdir,
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

    def values(self) -> set[bytes]:
        return {e["value"].encode() for e in self.named("message")}

    def kill(self) -> None:
        """SIGKILL: no commit, no leaving; its registration and claims stay until its ZooKeeper session expires."""
        self.process.kill()
        self.process.wait(bounded(5))

    def close(self) -> int:
        """Close stdin (the member commits and leaves); its exit status."""
        if self.process.poll() is not None:
            return self.process.returncode
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
        try:  # an owner znode comes and goes as the members rebalance
            found[partition] = zk.get(f"/consumers/{GROUP}/owners/{topic}/{partition}")[0].decode()
        except NoNodeError:
            continue
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
                wait_for(lambda p=partition: offset(zk, topic, p) == 4, timeout=20)
        finally:
            status = node.close()
            if legacy is not None:
                legacy.shutdown()
        assert status == 0 and node.named("closed")[0]["error"] is None, node.events


class LegacyReader:
    """Reads a legacy member's stream on a thread of its own, through its rebalances, until stopped."""

    def __init__(self, stream) -> None:
        self.messages: list = []
        self._stream = stream
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        while not self._stopping.is_set():
            try:
                for message in self._stream:  # consumer.timeout.ms ends each pass, so the flag is seen
                    self.messages.append(message)
                    if self._stopping.is_set():
                        return
            except ConsumerTimeoutException:
                continue

    def values(self) -> set[bytes]:
        return {m.message for m in list(self.messages)}

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(bounded(10))


@pytest.mark.timeout(240)
def test_the_mixed_group_loses_nothing_through_a_sigkill_and_a_join(kafka_node, zk, zk_chroot, broker_bootstrap,
                                                                     tmp_path, topic_name):
    """kafka-node's member is killed mid-stream and the legacy member takes its partitions over from its commits; a
    second kafka-node member joins and takes half back from the legacy member's commits; every message produced is
    consumed at least once, and ``groups describe`` reads both kinds of member's commits.
    ``groups verify`` fails kafka-node's claims, as Kafka's VerifyConsumerRebalance did: it writes its bare consumer
    id as the owner, where the tool wants one of the member's thread ids (``<consumer id>-<thread>``)."""
    legacy_thread = f"{GROUP}_legacy-0"
    produced: list[bytes] = []

    def produce_round(name: str) -> None:
        values = [f"{name}{i}".encode() for i in range(4 * PARTITIONS)]
        for partition in range(PARTITIONS):
            produce(front.address, topic, values[partition::PARTITIONS], partition=partition)
        produced.extend(values)

    with FrontProcess(broker_bootstrap, tmp_path / "front", options=("--zookeeper", zk_chroot)) as front, \
            MetadataBridge(zk_chroot, front.address, interval_ms=250).running():
        topic = mirrored_topic(zk, front.address, topic_name, PARTITIONS)
        # A short ZooKeeper session, so that the killed member's claims go within seconds.
        first = NodeMember(kafka_node, zk_chroot, topic, session_timeout_ms=3000)
        second = legacy = reader = None
        try:
            wait_for(lambda: first.named("error") or len(owners(zk, topic)) == PARTITIONS, timeout=30)
            assert not first.named("error"), first.events
            first_id = first.named("started")[0]["id"]
            legacy = create_connector(connector_config(zk_chroot, "legacy", **{"group.id": GROUP}))
            reader = LegacyReader(legacy.create_message_streams({topic: 1})[topic][0])
            wait_for(lambda: sorted(owners(zk, topic).values()) == sorted([first_id, legacy_thread] * 2), timeout=60)
            first_partitions = {p for p, owner in owners(zk, topic).items() if owner == first_id}

            def delivered() -> set[bytes]:
                return first.values() | reader.values() | (second.values() if second is not None else set())

            produce_round("a")
            wait_for(lambda: set(produced) <= delivered(), timeout=30)
            for partition in first_partitions:  # kafka-node's commits of round a, OffsetCommit v0 through the front
                wait_for(lambda p=partition: offset(zk, topic, p) == 4, timeout=20)

            # Round b is produced and kafka-node killed once it has read some of it, its last commits of it made or
            # not: whatever it had not committed, the legacy member reads again, from kafka-node's last commit.
            produce_round("b")
            wait_for(lambda: len(first.named("message")) > 8, timeout=30)
            first.kill()
            wait_for(lambda: owners(zk, topic) == dict.fromkeys(range(PARTITIONS), legacy_thread), timeout=30)
            produce_round("c")
            wait_for(lambda: set(produced) <= delivered(), timeout=30)
            taken_over = [m for m in list(reader.messages) if m.partition in first_partitions]
            assert taken_over and all(m.offset >= 4 for m in taken_over)  # from kafka-node's commit, not the start

            second = NodeMember(kafka_node, zk_chroot, topic, session_timeout_ms=3000)
            wait_for(lambda: second.named("error") or second.named("started"), timeout=10)
            second_id = second.named("started")[0]["id"]
            wait_for(lambda: sorted(owners(zk, topic).values()) == sorted([second_id, legacy_thread] * 2),
                     timeout=60)
            second_partitions = {p for p, owner in owners(zk, topic).items() if owner == second_id}
            produce_round("d")
            wait_for(lambda: set(produced) <= delivered(), timeout=30)
            assert not first.named("error") and not second.named("error"), (first.events, second.events)
            # The legacy member had read rounds a to c and committed them before it let the partitions go (OffsetFetch
            # v0 through the front gives kafka-node the legacy member's commits): the newcomer reads round d only.
            assert {e["partition"] for e in second.named("message")} == second_partitions
            assert all(e["offset"] >= 12 for e in second.named("message")), second.named("message")

            # Every message read and committed: 16 a partition, at the legacy path, by both kinds of member.
            wait_for(lambda: all(offset(zk, topic, p) == 16 for p in range(PARTITIONS)), timeout=30)
            described = zkconsumer_cli("groups", "describe", "--group", GROUP, "--json", "--zookeeper", zk_chroot)
            assert (described.returncode, described.stderr) == (0, "")
            assert [(r["partition"], r["offset"], r["log_size"], r["lag"], r["owner"])
                    for r in json.loads(described.stdout)] == [
                (p, 16, 16, 0, second_id if p in second_partitions else legacy_thread) for p in range(PARTITIONS)]

            verified = zkconsumer_cli("groups", "verify", "--group", GROUP, "--zookeeper", zk_chroot)
            assert verified.returncode == 1
            assert verified.stdout == "".join(
                f"Owner {second_id} for partition [{topic},{p}] is not a valid member of consumer group {GROUP}\n"
                for p in sorted(second_partitions)) + f"{FAILURE}\n"
        finally:
            if reader is not None:
                reader.stop()
            status = second.close() if second is not None else 0
            if first.process.poll() is None:
                first.close()
            if legacy is not None:
                legacy.shutdown()
        assert status == 0 and second.named("closed")[0]["error"] is None, second.events


def offset(zk, topic: str, partition: int) -> int | None:
    try:
        return int(zk.get(f"/consumers/{GROUP}/offsets/{topic}/{partition}")[0])
    except NoNodeError:
        return None
