"""``zkconsumer migration compare`` interrupted or losing a member, on the real ZooKeeper and broker: the run is a
child process as a user starts it (one protocol, fast pace), and what it leaves is read from the outside (its
events, /proc, ZooKeeper, the broker's metadata), never from its own word."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import support
from time_scale import bounded, describe

from zkconsumer.kafka.metadata import admin_client
from zkconsumer.zk.client import close_client, open_client

pytestmark = pytest.mark.migration
PROTOCOL = "legacy-range"  # a ZooKeeper chroot and a topic to clean up, and the quickest rebalances


def start_compare(zookeeper: str, bootstrap: str, out: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "zkconsumer", "migration", "compare", "--zookeeper", zookeeper,
            "--bootstrap-server", bootstrap, "--protocols", PROTOCOL, "--scenario", "migration", "--partitions", "2",
            "--rate", "20", "--pace", "0.3", "--output-dir", str(out), "--json"]
    # SIGINT as a terminal's Ctrl-C finds it: a test run started in the background (make test's second pytest run)
    # has SIGINT ignored, which its children inherit, and Python then never turns SIGINT into KeyboardInterrupt.
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def events(out: Path) -> list[dict]:
    path = out / PROTOCOL / "events.jsonl"
    if not path.exists():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rows.append(json.loads(line))
        except ValueError:  # a line being written
            continue
    return rows


def wait_for(out: Path, process: subprocess.Popen, found: Callable[[list[dict]], bool],
             timeout: float = 90.0) -> list[dict]:
    """The run's events once ``found`` in them, the run still going; ``timeout`` as support.wait_for's."""
    limit = bounded(timeout)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        seen = events(out)
        if found(seen):
            return seen
        assert process.poll() is None, f"the run ended first: {process.communicate()[1][-2000:]}"
        time.sleep(0.1)
    raise AssertionError(f"not seen within {limit:.1f} s ({timeout:g} s at {describe()}); events: "
                         f"{[e.get('event') for e in events(out)]}")


def member_pids(seen: list[dict]) -> dict[str, int]:
    return {e["consumer_id"]: e["pid"] for e in seen if e.get("event") == "demo.member_started"}


def running(pid: int) -> bool:
    """The member process still runs (a zombie has ended; a pid reused by another program is not the member)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError):
        return False
    state = next((line.split()[1] for line in status.splitlines() if line.startswith("State:")), "?")
    return state != "Z" and b"zkconsumer.members.legacy_member" in cmdline


@pytest.fixture
def compare(zookeeper_connect, bootstrap_servers, tmp_path) -> Iterator[Callable[[], subprocess.Popen]]:
    """Starts the run; whatever the test does, the run and its members are gone after it."""
    started: list[subprocess.Popen] = []

    def start() -> subprocess.Popen:
        started.append(start_compare(zookeeper_connect, bootstrap_servers, tmp_path / "out"))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
            process.communicate()
    for pid in member_pids(events(tmp_path / "out")).values():
        if running(pid):
            os.kill(pid, signal.SIGKILL)


def assert_nothing_left(zookeeper: str, bootstrap: str, group: str) -> None:
    """The run's chroot (named after its run id, the group's last part) and its topic (named as its group)."""
    run_id = group.rsplit("-", 1)[1]
    root = open_client(zookeeper)
    try:
        assert root.exists(f"/zkconsumer-migration-{run_id}") is None
    finally:
        close_client(root)
    # Tansu answers the deletion before its metadata forgets the topic
    support.wait_for(lambda: group not in admin_client(bootstrap).list_topics(timeout=bounded(10)).topics, timeout=20,
                     interval=0.5)


@pytest.mark.timeout(240)  # its waits: 90 + 60 + 20 (+ 10 for a listing) s
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_run_leaves_no_process_chroot_or_topic(compare, zookeeper_connect, bootstrap_servers,
                                                              tmp_path, signum):
    process = compare()
    out = tmp_path / "out"
    # two members consuming: m2 has completed a rebalance
    seen = wait_for(out, process, lambda rows: any(e.get("event") == "rebalance.completed"
                                                   and str(e.get("consumer_id", "")).endswith("_m2") for e in rows))
    pids = member_pids(seen)
    assert len(pids) == 2 and all(running(pid) for pid in pids.values()), pids
    group = next(iter(pids)).rsplit("_", 1)[0]
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=bounded(60))
    assert process.returncode == 130, stderr[-2000:]
    assert "interrupted" in stderr and "Traceback" not in stderr, stderr[-2000:]
    assert not (out / "report.json").exists()  # no report of a script played in part
    assert [pid for pid in pids.values() if running(pid)] == []
    assert_nothing_left(zookeeper_connect, bootstrap_servers, group)


@pytest.mark.timeout(300)  # its waits: 90 + 120 + 20 (+ 10 for a listing) s
def test_a_member_that_dies_on_its_own_is_reported_and_fails_the_run(compare, zookeeper_connect,
                                                                     bootstrap_servers, tmp_path):
    """m1 is SIGKILLed from outside once m2 has joined (the script kills m2 in scene 4 and stops m1 in scene 5:
    m1's death is nobody's plan). The run goes on without it and says so."""
    process = compare()
    out = tmp_path / "out"
    seen = wait_for(out, process, lambda rows: any(e.get("event") == "rebalance.completed"
                                                   and str(e.get("consumer_id", "")).endswith("_m2") for e in rows))
    m1 = next(cid for cid in member_pids(seen) if cid.endswith("_m1"))
    os.kill(member_pids(seen)[m1], signal.SIGKILL)
    stdout, stderr = process.communicate(timeout=bounded(120))
    assert process.returncode == 1, stderr[-2000:]
    assert f"member {m1} exited on its own" in stderr and "Traceback" not in stderr, stderr[-2000:]
    report = json.loads(stdout)
    figures = report["protocols"][PROTOCOL]
    assert [(f["member"], f["returncode"]) for f in figures["member_failures"]] == [(m1, -signal.SIGKILL)]
    assert any(m1 in problem for problem in report["problems"])
    assert figures["error"] is None and figures["lost"] == 0  # the others took its partitions over
    assert [s["scene"] for s in figures["scenes"]] == [1, 2, 3, 4, 5]  # the script went on without it
    died = [e for e in events(out) if e.get("event") == "demo.member_died"]
    assert [e["consumer_id"] for e in died] == [m1]
    assert f"member {m1} exited on its own" in (out / "report.html").read_text()
    assert [pid for pid in member_pids(events(out)).values() if running(pid)] == []
    assert_nothing_left(zookeeper_connect, bootstrap_servers, m1.rsplit("_", 1)[0])
