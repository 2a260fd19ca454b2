"""The chaos run's short version (benchmarks/chaos.py): ten member processes, one group, two topics, a steady
producer and seeded faults of every kind that can run here; every invariant must hold. And a fault that cannot
run here is refused before anything starts."""

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


def _chaos_module():
    """benchmarks/chaos.py as a module: its ownership analysis is pure, tested here on made-up timelines."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("chaos_under_test", CHAOS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _claim(at, *partitions):
    return {"event": "rebalance.claim", "at": at, "claimed": [{"topic": "t", "partition": p} for p in partitions],
            "already_ours": [], "conflicts": []}


def _end(at, name="rebalance.stop_fetchers"):
    return {"event": name, "at": at}


def test_a_quick_back_and_forth_of_ownership_is_no_overlap():
    """m0 -> m1 -> m0 on one partition within two seconds, each delivering while it owned it: the old reading of
    the deliveries alone (Y..X..Y within 2 s) called this a 1.5 s overlap in the rolling restart of seed 1."""
    chaos = _chaos_module()
    t0 = chaos.tenures("m0", [_claim(1.0, 0), _end(3.0), _claim(6.5, 0)], [], end_of_run=10.0)
    t1 = chaos.tenures("m1", [_claim(3.5, 0), _end(6.0)], [], end_of_run=10.0)
    deliveries = [chaos.Delivery(at, "t", 0, i, f"m{i}", member) for i, (at, member) in
                  enumerate([(1.5, "m0"), (2.9, "m0"), (3.6, "m1"), (5.9, "m1"), (6.6, "m0")])]
    assert [(t.start, t.end, t.ended_by) for t in t0] == [(1.0, 3.0, "rebalance.stop_fetchers"),
                                                           (6.5, 10.0, "end of run")]
    assert chaos.overlaps(t0 + t1, deliveries) == []
    assert chaos.handovers(t0 + t1) == 2
    assert chaos.late_deliveries(t0 + t1, deliveries) == []


def test_a_paused_owner_overlaps_until_it_notices_its_session_is_gone():
    chaos = _chaos_module()
    paused = chaos.tenures("m0", [_claim(1.0, 0, 1), _end(20.0, "session.expired")], [], end_of_run=30.0)
    taker = chaos.tenures("m1", [_claim(10.0, 0)], [], end_of_run=30.0)
    deliveries = [chaos.Delivery(10.5, "t", 0, 5, "a", "m1"), chaos.Delivery(19.0, "t", 0, 3, "b", "m0"),
                  chaos.Delivery(19.5, "t", 0, 4, "c", "m0"), chaos.Delivery(20.4, "t", 1, 9, "d", "m0")]
    [overlap] = chaos.overlaps(paused + taker, deliveries)
    assert (overlap.old, overlap.new, overlap.event_ms) == ("m0", "m1", 10000.0)
    assert round(overlap.delivery_ms) == 9000  # m0's last delivery (19.5) after m1's first (10.5)
    [(late, late_ms)] = chaos.late_deliveries(paused + taker, deliveries)
    assert late.value == "d" and round(late_ms) == 400


def test_a_killed_owner_s_tenure_ends_with_its_process():
    chaos = _chaos_module()
    killed = chaos.tenures("m0", [_claim(1.0, 0), {"event": "consumer.connected", "at": 6.0}, _claim(7.0, 1)],
                           deaths=[4.0], end_of_run=9.0)
    assert [(t.partition, t.start, t.end, t.ended_by) for t in killed] == [(0, 1.0, 4.0, "death"),
                                                                          (1, 7.0, 9.0, "end of run")]
    taker = chaos.tenures("m1", [_claim(4.5, 0)], [], end_of_run=9.0)
    assert chaos.overlaps(killed + taker, []) == []
    conflicted = {"event": "rebalance.claim", "at": 2.0, "claimed": [], "already_ours": [],
                  "conflicts": [{"topic": "t", "partition": 0, "holder": "x"}]}
    assert chaos.tenures("m2", [conflicted], [], end_of_run=9.0) == []


def test_a_member_woken_from_a_pause_is_live_again_only_from_its_sigcont_and_its_stale_deliveries_are_named():
    """m0 owns t/0 and is stopped at 5 s; its session expires and m1 claims t/0 at 10 s; m0 wakes at 12 s and hands
    out two messages it had fetched before the pause, then notices (session.expired at 12.05 s)."""
    chaos = _chaos_module()
    m0 = chaos.tenures("m0", [_claim(1.0, 0), _end(12.05, "session.expired")], [], end_of_run=20.0)
    m1 = chaos.tenures("m1", [_claim(10.0, 0)], [], end_of_run=20.0)
    deliveries = [chaos.Delivery(4.9, "t", 0, 9, "a", "m0"), chaos.Delivery(10.2, "t", 0, 10, "b", "m1"),
                  chaos.Delivery(12.01, "t", 0, 10, "b", "m0"), chaos.Delivery(12.02, "t", 0, 11, "c", "m0")]
    pauses = [chaos.Pause("m0", stopped=5.0, resumed=12.0)]
    [overlap] = chaos.overlaps(m0 + m1, deliveries, pauses)
    assert round(overlap.delivery_ms) == 20  # live from 12.0, last delivery at 12.02; not the 1.8 s since 10.2
    [wake] = chaos.stale_wakes(m0 + m1, deliveries, pauses)
    assert (wake.member, wake.deliveries, wake.partitions, round(wake.last_ms)) == ("m0", 2, ("t/0",), 20)
    untouched = chaos.tenures("m2", [_claim(1.0, 1)], [], end_of_run=20.0)  # nobody claimed t/1 meanwhile
    assert chaos.stale_wakes(untouched, [chaos.Delivery(12.01, "t", 1, 3, "x", "m2")],
                             [chaos.Pause("m2", 5.0, 12.0)]) == []


def test_a_duplicate_is_charged_to_the_fault_that_interrupted_its_commit():
    chaos = _chaos_module()
    kill, rolling = chaos.FaultSpan("kill", 23.9, 25.4), chaos.FaultSpan("rolling", 27.6, 39.6)
    pause = chaos.FaultSpan("pause", 10.5, 17.0)
    # delivered at 23.5, killed before its commit at 23.9, delivered again at 29.3 during the rolling restart
    assert chaos.blame([pause, kill, rolling], first=23.5, again=29.3) is kill
    # delivered by the new owner at 14.9 while the old one was stopped; the old one repeats it on waking at 17.0
    assert chaos.blame([pause, kill, rolling], first=14.9, again=17.0) is pause
    assert chaos.blame([kill], first=40.0, again=41.0) is kill  # long after: the latest before the repeat
    assert chaos.blame([kill], first=1.0, again=2.0) is None  # before any fault


def test_a_partition_nobody_fetches_is_found_whoever_holds_its_owner_znode():
    chaos = _chaos_module()
    ts = (chaos.tenures("m2", [_claim(1.0, 3), _end(18.4)], [], end_of_run=90.0)
          + chaos.tenures("m3", [_claim(1.0, 4)], [], end_of_run=90.0))
    zk_down = [chaos.FaultSpan("zk-long", 18.6, 24.3)]
    spans = chaos.unfetched_spans(ts, [("t", 3), ("t", 4)], start=5.0, end=90.0, excused=zk_down)
    assert [(topic, p, a, b) for topic, p, a, b, _ in spans] == [("t", 3, 18.4, 90.0)]
    assert round(spans[0][4], 1) == round(90.0 - 18.4 - 5.7, 1)  # ZooKeeper's 5.7 s down are excused
