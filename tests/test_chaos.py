"""The chaos run's short version (benchmarks/chaos.py): ten member processes, one group, two topics, a steady
producer and seeded faults of every kind that can run here; every invariant must hold. And a fault that cannot
run here is refused before anything starts. The invariants themselves, on hand-made timelines: tests/chaos/."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from support import REPO

CHAOS = REPO / "benchmarks" / "chaos.py"
FAULTS = "kill,pause,expire,zk-short,zk-long,leave,rolling"


@pytest.mark.chaos
@pytest.mark.servers
@pytest.mark.timeout(150)
def test_the_short_chaos_run_holds_every_invariant(tmp_path):
    report_path = tmp_path / "chaos.json"
    run = subprocess.run([sys.executable, str(CHAOS), "--duration-s", "25", "--seed", "7", "--faults", FAULTS,
                          "--fault-gap-s", "2", "--report", str(report_path)],
                         capture_output=True, text=True, timeout=140)
    verdict = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:]
    report = json.loads(report_path.read_text())
    assert run.returncode == 0, (verdict, report["violations"])
    assert verdict.startswith("chaos HELD")
    assert report["lost"] == 0 and report["produced"] > 1000
    assert report["delivered_distinct"] == report["produced"]
    assert sum(report["duplicates_by_fault"].values()) == report["duplicates"]
    assert len({f["kind"] for f in report["faults"]}) >= 3
    assert report["offsets_checked"] > 0 and report["violations"] == []


def test_a_fault_that_cannot_run_here_is_refused_before_anything_starts(tmp_path):
    started = time.monotonic()
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # where its working directory would go
    run = subprocess.run([sys.executable, str(CHAOS), "--duration-s", "5", "--faults", "kill,broker"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert run.returncode == 2 and time.monotonic() - started < 20
    assert run.stderr.startswith("chaos refused: fault 'broker' needs a broker with persistent storage")
    assert "Traceback" not in run.stderr
    unknown = subprocess.run([sys.executable, str(CHAOS), "--faults", "meteor"], capture_output=True, text=True,
                             timeout=60, env=env)
    assert unknown.returncode == 2 and "unknown fault kinds meteor" in unknown.stderr
    assert list(tmp_path.iterdir()) == []  # no working directory left behind
