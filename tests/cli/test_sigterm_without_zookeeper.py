"""Every long-running command stops promptly on SIGTERM while its ZooKeeper is gone: ``bridge``, ``consume``, ``local
up`` and the processes it leaves running, and the front.

ZooKeeper goes away by SIGSTOP, the harder case: a paused server still accepts connections and never answers, where a
dead one refuses them at once. Each test pauses a ZooKeeper of its own (the module's, or the one ``local up``
starts), never the suite's, and resumes it whatever happens. The front has no ZooKeeper: what it waits on is its
broker, so its own test pauses the broker with a request in flight, and the ``local down`` test stops it beside a
paused ZooKeeper.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import mirrored_topic, produce, wait_for, zkconsumer_cli
from time_scale import bounded

from zkconsumer.bridge.metadata_bridge import MetadataBridge
from zkconsumer.embedded.broker import LocalTansu
from zkconsumer.embedded.process import ProcessRecord
from zkconsumer.embedded.zookeeper import LocalZooKeeper
from zkconsumer.front.proxy.client import api_versions_request, exchange_on
from zkconsumer.zk import paths
from zkconsumer.zk.client import zookeeper

pytestmark = pytest.mark.servers  # the tests start ZooKeeper servers of their own

#: how long a stop may take on the reference machine: the commands give a step that waits on ZooKeeper their session
#: timeout (6 s by default, the bridge's), ``local down`` stops four processes one after the other
STOP_S = 15.0


class Command:
    """``zkconsumer ARGS`` as a process, its output lines gathered as they come."""

    def __init__(self, *args: str) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", "zkconsumer", *args], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.out: list[str] = []
        self.err: list[str] = []
        self._readers = [threading.Thread(target=self._read, args=(stream, lines), daemon=True)
                         for stream, lines in ((self.process.stdout, self.out), (self.process.stderr, self.err))]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _read(stream, lines: list[str]) -> None:
        for line in stream:
            lines.append(line.rstrip("\n"))

    def said(self, text: str) -> bool:
        return any(text in line for line in list(self.err))

    def terminate(self) -> tuple[int, list[str]]:
        """SIGTERM, then its exit status and what it wrote on stderr after the signal; it must exit within
        :data:`STOP_S`."""
        seen = len(self.err)
        self.process.send_signal(signal.SIGTERM)
        try:
            status = self.process.wait(bounded(STOP_S))
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {bounded(STOP_S):.0f} s after SIGTERM; stderr:\n"
                                 + "\n".join(self.err[-20:])) from None
        for reader in self._readers:
            reader.join(5)
        return status, self.err[seen:]

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


@contextlib.contextmanager
def paused(pid: int) -> Iterator[None]:
    """The process stopped (SIGSTOP) inside the block, resumed after it."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def alive(pid: int) -> bool:
    """Running (a zombie, exited but not yet reaped by whoever inherited it, is not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def children_of(pid: int) -> set[int]:
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def assert_one_line_at_most(lines: list[str]) -> None:
    """What a command writes on stderr once asked to stop: no traceback, and at most one line of its own."""
    assert not any("Traceback" in line for line in lines), "\n".join(lines)
    assert len(lines) <= 1, "\n".join(lines)


@pytest.fixture(scope="module")
def own_zookeeper(tmp_path_factory) -> Iterator[LocalZooKeeper]:
    """A ZooKeeper server for this module alone: its tests pause it."""
    server = LocalZooKeeper(tmp_path_factory.mktemp("own-zookeeper"))
    server.start()
    try:
        yield server
    finally:
        assert server.record is not None
        with contextlib.suppress(ProcessLookupError):
            os.kill(server.record.pid, signal.SIGCONT)
        server.stop()


@pytest.fixture
def chroot(own_zookeeper, request) -> str:
    """A connect string with a chroot of the test's own on the module's ZooKeeper."""
    path = f"/{request.node.name.replace('[', '-').rstrip(']')}"
    with zookeeper(own_zookeeper.connect) as zk:
        zk.ensure_path(path)
    return f"{own_zookeeper.connect}{path}"


def zookeeper_pid(server: LocalZooKeeper) -> int:
    assert server.record is not None
    return server.record.pid


def test_bridge_stops_while_waiting_on_a_paused_zookeeper(own_zookeeper, chroot, bootstrap_servers):
    bridge = Command("bridge", "--zookeeper", chroot, "--bootstrap-server", bootstrap_servers, "--interval-ms", "50")
    try:
        with zookeeper(chroot) as zk:
            wait_for(lambda: zk.exists(paths.BROKER_IDS_PATH) and zk.get_children(paths.BROKER_IDS_PATH), timeout=30)
        with paused(zookeeper_pid(own_zookeeper)):
            # The bridge has seen the connection go. Its next pass, 50 ms later, waits in a request kazoo queues until
            # a connection is made, which a paused server never lets happen. Nothing shows that wait from outside: the
            # signal comes twenty intervals later.
            wait_for(lambda: bridge.said("bridge.zookeeper_unavailable"))
            time.sleep(1.0)
            status, said = bridge.terminate()
    finally:
        bridge.close()
    assert status == 0, bridge.err
    assert_one_line_at_most(said)
    assert said == [] or said[0].startswith(f"zkconsumer bridge: ZooKeeper at {chroot} did not answer"), said


def persistent_cluster(connect: str, bootstrap: str, topic: str) -> None:
    """``topic`` and the broker in ZooKeeper at ``connect`` as the bridge writes them, the broker's registration made
    persistent: a bridge would keep a session on the ZooKeeper the test pauses, and be stopped by that too."""
    with MetadataBridge(connect, bootstrap, interval_ms=100).running(), zookeeper(connect) as zk:
        mirrored_topic(zk, bootstrap, topic)
        registrations = {paths.broker_path(int(b)): zk.get(paths.broker_path(int(b)))[0]
                         for b in zk.get_children(paths.BROKER_IDS_PATH)}
    with zookeeper(connect) as zk:
        for path, data in registrations.items():
            zk.create(path, data)


def test_consume_stops_while_its_commit_waits_on_a_paused_zookeeper(own_zookeeper, chroot, bootstrap_servers,
                                                                     topic_name):
    persistent_cluster(chroot, bootstrap_servers, topic_name)
    produce(bootstrap_servers, topic_name, [b"a", b"b"])
    consume = Command("consume", "--zookeeper", chroot, "--topic", topic_name, "--group", "stopped", "--from-beginning",
                      "--property", "zookeeper.session.timeout.ms=2000",
                      "--property", "auto.commit.interval.ms=600000")  # the offsets wait for the stop's commit
    try:
        wait_for(lambda: consume.out == ["a", "b"], timeout=30)
        with paused(zookeeper_pid(own_zookeeper)):
            # At once: the consumer still takes the server for alive, so its stop commits to one that never answers.
            status, said = consume.terminate()
    finally:
        consume.close()
    assert status == 0, consume.err
    assert said[-1:] == ["Processed a total of 2 messages"], said
    ours = [line for line in said[:-1] if line.startswith("zkconsumer consume:") or "Traceback" in line]
    assert_one_line_at_most(ours)


def test_consume_stops_while_its_join_waits_on_a_paused_zookeeper(own_zookeeper, chroot, bootstrap_servers,
                                                                   topic_name):
    persistent_cluster(chroot, bootstrap_servers, topic_name)
    with zookeeper(chroot) as zk:  # a registration of the same consumer id that never goes: the join waits for it
        zk.create("/consumers/joining/ids/joining_c1", b"{}", makepath=True)
    consume = Command("consume", "--zookeeper", chroot, "--topic", topic_name, "--group", "joining",
                      "--property", "consumer.id=c1", "--property", "zookeeper.session.timeout.ms=2000")
    try:
        wait_for(lambda: consume.said("consumer.registration_waiting"), timeout=30)
        with paused(zookeeper_pid(own_zookeeper)):
            status, said = consume.terminate()
    finally:
        consume.close()
    assert status == 0, consume.err
    assert said[-1:] == ["Processed a total of 0 messages"], said
    ours = [line for line in said[:-1] if line.startswith("zkconsumer consume:") or "Traceback" in line]
    assert_one_line_at_most(ours)


def test_front_stops_while_its_broker_is_paused_with_a_request_in_flight(tmp_path):
    broker = LocalTansu(tmp_path / "broker")
    broker.start()
    port_file = tmp_path / "front.port"
    front = Command("front", "--bootstrap-server", broker.bootstrap, "--port-file", str(port_file))
    try:
        wait_for(port_file.exists, timeout=30)
        client = socket.create_connection(("127.0.0.1", int(port_file.read_text())), timeout=30)
        exchange_on(client, api_versions_request())

        def ask() -> None:
            with contextlib.suppress(OSError):  # the front closes the connection as it stops
                exchange_on(client, api_versions_request())

        assert broker.record is not None
        with paused(broker.record.pid):
            threading.Thread(target=ask, daemon=True).start()
            status, said = front.terminate()
        client.close()
    finally:
        front.close()
        broker.stop()
    assert status == 0, front.err
    assert_one_line_at_most(said)


@pytest.fixture
def local_run_dir(tmp_path) -> Iterator[Path]:
    """A run directory for ``local up``, whose environment is stopped in the end whatever the test did."""
    path = tmp_path / "run"
    yield path
    if (path / "state.json").exists():
        zkconsumer_cli("local", "down", "--run-dir", str(path))


def test_local_up_interrupted_while_its_zookeeper_is_paused_stops_what_it_started(local_run_dir):
    up = Command("local", "up", "--run-dir", str(local_run_dir))

    def started(program: bytes) -> list[int]:
        assert up.process.poll() is None, up.err
        return [pid for pid in children_of(up.process.pid) if program in cmdline(pid)]

    children: set[int] = set()
    try:
        [server] = wait_for(lambda: started(b"QuorumPeerMain"), timeout=60)
        # The broker starts once ZooKeeper has answered. Paused from here on, ZooKeeper holds up one of the steps
        # left: reading what it holds (the topics the broker must have), or the bridge's registration.
        [broker] = wait_for(lambda: started(b"tansu"), timeout=60, interval=0.01)
        with paused(server):
            children = children_of(up.process.pid)
            status, said = up.terminate()
    finally:
        up.close()
    assert status == 130 and said == ["zkconsumer local: interrupted"], "\n".join(said)
    assert {server, broker} <= children and not [pid for pid in children if alive(pid)]
    assert not (local_run_dir / "state.json").exists()


def test_local_down_stops_every_process_while_zookeeper_is_paused(local_run_dir):
    up = zkconsumer_cli("local", "up", "--run-dir", str(local_run_dir), timeout=120)
    assert up.returncode == 0, up.stderr
    state = json.loads((local_run_dir / "state.json").read_text())
    records = {name: ProcessRecord(r["pid"], tuple(r["argv"]), r["log"]) for name, r in state["processes"].items()}
    bridge_log = Path(records["bridge"].log)
    with paused(records["zookeeper"].pid):
        # The bridge has seen the connection go: its next request waits for a server that never answers.
        wait_for(lambda: "bridge.zookeeper_unavailable" in bridge_log.read_text())
        started = time.monotonic()
        down = zkconsumer_cli("local", "down", "--run-dir", str(local_run_dir))
        took = time.monotonic() - started
    assert down.returncode == 0 and "stopped bridge, front, broker, zookeeper" in down.stdout, down.stderr
    assert took < bounded(STOP_S), f"local down took {took:.1f} s"
    assert not [name for name, record in records.items() if record.is_alive()]
    for log in (bridge_log, Path(records["front"].log)):
        assert "Traceback" not in log.read_text(), log
