"""``demo --protocol``: a scenario played by a legacy and a modern group at once, on one clock, narrated as it goes
(the legacy steps, the modern member's callbacks), with every protocol's events and the page of their lanes."""

from __future__ import annotations

import json

import pytest
from support import TWO_JOIN_SCENARIO, zkconsumer_cli

from zkconsumer.cli import main

SCENARIO = TWO_JOIN_SCENARIO


@pytest.mark.migration
@pytest.mark.timeout(240)  # the demo's 180 s end before it
def test_a_legacy_and_a_modern_group_play_one_scenario_side_by_side(tmp_path, zookeeper_connect, bootstrap_servers):
    path, out = tmp_path / "two.toml", tmp_path / "out"
    path.write_text(SCENARIO)
    done = zkconsumer_cli("demo", "--zookeeper", zookeeper_connect, "--bootstrap-server", bootstrap_servers,
                          "--scenario", str(path), "--protocol", "legacy-range,cooperative-sticky",
                          "--output-dir", str(out), timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout
    assert text.count("== Scene 2: m2 joins ==") == 1  # one heading for both protocols: they begin it together
    assert "[legacy-range]     5 assign" in text and "[legacy-range] -> started class-legacy-range-" in text
    assert "[cooperative-sticky] -> started class-cooperative-sticky-" in text
    assert "[cooperative-sticky] class-cooperative-sticky-" in text and ": revoked " in text
    (run,) = out.iterdir()
    for protocol in ("legacy-range", "cooperative-sticky"):
        events = [json.loads(line) for line in (run / protocol / "events.jsonl").read_text().splitlines()]
        assert [e["scene"] for e in events if e["event"] == "demo.scene"] == [1, 2], protocol
        assert {e["consumer_id"].rsplit("_", 1)[1] for e in events if e["event"] == "rebalance.completed"} == {
            "m1", "m2"}, protocol
    report = json.loads((run / "report.json").read_text())
    assert list(report["protocols"]) == ["legacy-range", "cooperative-sticky"]
    assert f"every protocol's lanes: {run / 'report.html'}" in text


def test_a_growth_is_refused_for_a_modern_protocol_before_anything_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ZKCONSUMER_RUN_DIR", str(tmp_path / "run"))
    capsys.readouterr()
    assert main(["demo", "--protocol", "legacy-range,consumer", "--output-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and (
        "shipped scenario demo: scene 5, action 1: grow cannot be played by consumer-uniform" in err), err
    assert not (tmp_path / "run").exists() and not (tmp_path / "out").exists()
    assert main(["demo", "--protocol", "sticky"]) == 2
    assert "unknown protocol 'sticky'" in capsys.readouterr().err
