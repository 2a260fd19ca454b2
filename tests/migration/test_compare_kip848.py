"""A KIP-848 protocol asked of a broker whose own group coordinator does not run it (the embedded broker: no
ConsumerGroupHeartbeat): ``migration compare`` stops that protocol at once with one line saying so, the member says
it in its events, the other protocols play on, and nothing is left running."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path

import pytest
from support import zkconsumer_cli
from time_scale import scaled

pytestmark = pytest.mark.migration
#: migration compare's limit for a scene to settle (CompareSettings.settle_timeout_s)
SETTLE_LIMIT_S = 60.0


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def compare_at_broker(zookeeper_connect: str, broker_bootstrap: str, out: Path, protocols: str,
                      scenario: str) -> tuple[dict, list[str]]:
    """``migration compare`` at the broker's own coordinator, which does not run KIP-848: the report it printed, and
    the lines of its problems (it exits 1, without a traceback)."""
    result = zkconsumer_cli("migration", "compare", "--zookeeper", zookeeper_connect, "--bootstrap-server",
                            broker_bootstrap, "--coordinator", "broker", "--protocols", protocols,
                            "--scenario", scenario, "--partitions", "2", "--rate", "10", "--pace", "0.3",
                            "--output-dir", str(out), "--json", timeout=180)
    assert result.returncode == 1, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    return (json.loads(result.stdout),
            [line for line in result.stderr.splitlines() if line.startswith("zkconsumer migration: ")])


@pytest.mark.timeout(240)  # the command's 180 s
def test_a_coordinator_without_kip848_stops_that_protocol_in_one_line(zookeeper_connect, broker_bootstrap,
                                                                     tmp_path):
    out = tmp_path / "out"
    began = time.monotonic()
    report, problems = compare_at_broker(zookeeper_connect, broker_bootstrap, out, "consumer-uniform,legacy-range",
                                         "migration")
    assert problems == [
        f"zkconsumer migration: consumer-uniform: the run stopped early: the broker's own group coordinator at "
        f"{broker_bootstrap} does not run KIP-848 consumer groups (ConsumerGroupHeartbeatRequest not supported by "
        f"broker)"], problems
    kip848, legacy = report["protocols"]["consumer-uniform"], report["protocols"]["legacy-range"]
    assert kip848["error"] == problems[0].split("the run stopped early: ", 1)[1]
    assert kip848["member_failures"] == [] and kip848["kind"] == "KIP-848 consumer"
    assert kip848["group_protocol"] == "consumer" and kip848["strategy"] == "uniform"
    assert report["coordinator"] == "broker" and report["member_settings"]["consumer"]["group.protocol"] == "consumer"
    # the other protocol played the whole script, undisturbed
    assert legacy["error"] is None and legacy["lost"] == 0
    assert [s["scene"] for s in legacy["scenes"]] == [1, 2, 3, 4, 5]
    assert report["verdict"]["overall"][-1].startswith("Stopped early, left out of the comparison: KIP-848 consumer")
    # the member said why, in its events, before it left; no member is still running
    events = [json.loads(line) for line in (out / "consumer-uniform" / "events.jsonl").read_text().splitlines()]
    said = [e for e in events if e["event"] == "consumer.group_protocol_unsupported"]
    assert len(said) == 1 and "ConsumerGroupHeartbeatRequest not supported by broker" in said[0]["reason"]
    stamps = [datetime.fromisoformat(e["timestamp"].replace("Z", "+00:00")) for e in events]
    # stopped at once, not after a settle limit (however slow the machine, less than one)
    assert (max(stamps) - min(stamps)).total_seconds() < min(scaled(20), SETTLE_LIMIT_S)
    started = [e for e in events if e["event"] == "demo.member_started"]
    assert [e["consumer_id"].rsplit("_", 1)[1] for e in started] == ["m1"]  # the script went no further
    pids = [e["pid"] for name in ("consumer-uniform", "legacy-range")
            for e in map(json.loads, (out / name / "events.jsonl").read_text().splitlines())
            if e["event"] == "demo.member_started"]
    assert pids and not [pid for pid in pids if alive(pid)]
    assert time.monotonic() - began < min(scaled(150), 5 * SETTLE_LIMIT_S)  # not a wait for a settle limit per scene
