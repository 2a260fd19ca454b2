"""The chaos run's short version (benchmarks/chaos.py): ten member processes, one group, two topics, a steady
producer and seeded faults on one ZooKeeper server; every invariant must hold. And a fault that cannot run here is
refused before anything starts. The same on an ensemble of three: tests/chaos/test_chaos_run_ensemble.py (a module of
its own, so that the two runs, the suite's longest tests, go to two workers); the invariants themselves, on hand-made
timelines: tests/chaos/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from event_lines import invalid_event_lines
from support import CHAOS, chaos_run_held
from time_scale import bounded, scaled

FAULTS = "kill,pause,expire,zk-short,zk-long,leave,rolling"
#: its servers are the chaos run's own: in the Spark run, whose second worker ended a minute before the main run
#: (docs/development.md, run 72)
pytestmark = pytest.mark.spark_run


@pytest.mark.chaos
@pytest.mark.servers
@pytest.mark.timeout(200)
def test_the_short_chaos_run_holds_every_invariant(tmp_path):
    """Six members; at least three kinds of fault: the run goes on past its 15 s until it has had them (at most 60 s
    at this machine's time scale), rather than counting on three of them fitting in 15 s."""
    report = chaos_run_held(tmp_path / "chaos.json", "--duration-s", "15", "--members", "6", "--seed", "7",
                            "--faults", FAULTS,
                            "--fault-gap-s", "2", "--min-fault-kinds", "3", "--max-duration-s", f"{scaled(60):.0f}",
                            "--broker-storage", "memory", "--keep-workdir")
    assert report["lost"] == 0 and report["produced"] > 1000
    assert report["delivered_distinct"] == report["produced"]
    assert sum(report["duplicates_by_fault"].values()) == report["duplicates"]
    assert len({f["kind"] for f in report["faults"]}) >= 3
    assert report["offsets_checked"] > 0 and report["violations"] == []
    assert report["stale_after_pause"] == []  # a woken member hands out nothing another claimed meanwhile
    # every event line the members wrote, under faults, keeps the catalogue's contract
    workdir = Path(report["workdir"])
    try:
        checked, invalid = invalid_event_lines(sorted(workdir.glob("*.events")))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    assert checked > 100 and not invalid, "\n".join(invalid[:40])


def test_a_fault_that_cannot_run_here_is_refused_before_anything_starts(tmp_path):
    started = time.monotonic()
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # where its working directory would go
    run = subprocess.run([sys.executable, str(CHAOS), "--duration-s", "5", "--faults", "kill,broker",
                          "--broker-storage", "memory"], capture_output=True, text=True, timeout=bounded(60), env=env)
    assert run.returncode == 2 and time.monotonic() - started < scaled(20)
    assert run.stderr.startswith("chaos refused: fault 'broker' needs a broker with persistent storage")
    assert "Traceback" not in run.stderr
    unknown = subprocess.run([sys.executable, str(CHAOS), "--faults", "meteor"], capture_output=True, text=True,
                             timeout=bounded(60), env=env)
    assert unknown.returncode == 2 and "unknown fault kinds meteor" in unknown.stderr
    one_server = subprocess.run([sys.executable, str(CHAOS), "--faults", "kill,zk-leader"], capture_output=True,
                                text=True, timeout=bounded(60), env=env)
    assert one_server.returncode == 2
    assert one_server.stderr == ("chaos refused: faults zk-leader need an ensemble of three servers or more "
                                 "(--zookeeper-servers 3), not 1\n")
    too_many = subprocess.run([sys.executable, str(CHAOS), "--faults", "kill,pause", "--min-fault-kinds", "3",
                               "--broker-storage", "memory"], capture_output=True, text=True, timeout=bounded(60),
                              env=env)
    assert too_many.returncode == 2
    assert too_many.stderr == "chaos refused: --min-fault-kinds 3: only 2 fault kinds can run (kill, pause)\n"
    assert list(tmp_path.iterdir()) == []  # no working directory left behind
