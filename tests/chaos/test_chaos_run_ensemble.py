"""The chaos run's short version on an ensemble of three ZooKeeper servers (benchmarks/chaos.py; on one server:
tests/test_chaos.py): server faults and a broker restart, every invariant must hold."""

from __future__ import annotations

import pytest
from support import chaos_run_held
from time_scale import scaled

ENSEMBLE_FAULTS = "broker,zk-leader,zk-cutoff"  # the pause, with its stale check: tests/test_chaos.py


@pytest.mark.chaos
@pytest.mark.servers
@pytest.mark.timeout(200)
def test_the_short_chaos_run_on_an_ensemble_holds_through_server_faults_and_a_broker_restart(tmp_path):
    """Three ZooKeeper servers; the broker restarted on its object store, the leader killed, the busiest server cut off
    from its peers: nothing lost, the broker's committed offsets kept. Every one of the three happens: the run goes
    on past its 15 s until it has had them all (at most 60 s at this machine's time scale)."""
    report = chaos_run_held(tmp_path / "chaos.json", "--duration-s", "15", "--members", "6", "--seed", "11",
                            "--zookeeper-servers", "3",
                            "--faults", ENSEMBLE_FAULTS, "--fault-gap-s", "1.5", "--min-fault-kinds", "3",
                            "--max-duration-s", f"{scaled(60):.0f}")
    assert report["lost"] == 0 and report["delivered_distinct"] >= report["produced"] > 1000
    assert [f["kind"] for f in report["faults"]][:3] == ENSEMBLE_FAULTS.split(",")
    assert report["violations"] == []
    [restart] = report["broker_restarts"]
    assert restart["committed_offsets_kept"] and restart["acknowledged_before"] > 0
    assert restart["acknowledged_before_delivered"] == restart["acknowledged_before"]
    assert report["zookeeper_servers_killed"] and report["zookeeper_servers"] == 3
    cut = next(f for f in report["faults"] if f["kind"] == "zk-cutoff")
    assert ": not serving at its end" in cut["detail"]  # out of the quorum while cut, its client port still open
