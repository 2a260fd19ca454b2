"""``demo --protocol``: a scenario played by a legacy and modern groups at once, on one clock, narrated as it goes
(the legacy steps, the modern member's callbacks), with every protocol's events and the page of their lanes; the
topic grows for every group (the legacy one through ZooKeeper, the modern ones through the front's Metadata)."""

from __future__ import annotations

import json
from functools import partial

import pytest
from support import TWO_JOIN_SCENARIO, zkconsumer_cli

from zkconsumer.cli import main
from zkconsumer.migration.run import delivery_of

SCENARIO = TWO_JOIN_SCENARIO + """
[[scenes]]
title = "the topic grows by 2"
actions = [{ grow = 2 }]
"""
PROTOCOLS = ("legacy-range", "cooperative-sticky", "consumer-uniform")


@pytest.mark.migration
@pytest.mark.timeout(240)  # the demo's 180 s end before it
def test_a_legacy_and_a_modern_group_play_one_scenario_side_by_side(tmp_path, zookeeper_connect, bootstrap_servers):
    path, out = tmp_path / "two.toml", tmp_path / "out"
    path.write_text(SCENARIO)
    done = zkconsumer_cli("demo", "--zookeeper", zookeeper_connect, "--bootstrap-server", bootstrap_servers,
                          "--scenario", str(path), "--protocol", "legacy-range,cooperative-sticky,consumer",
                          "--output-dir", str(out), timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    text = done.stdout
    assert text.count("== Scene 2: m2 joins ==") == 1  # one heading for both protocols: they begin it together
    assert "[legacy-range]     5 assign" in text and "[legacy-range] -> started class-legacy-range-" in text
    assert "[cooperative-sticky] -> started class-cooperative-sticky-" in text
    assert "[cooperative-sticky] class-cooperative-sticky-" in text and ": revoked " in text
    (run,) = out.iterdir()
    for protocol in PROTOCOLS:
        events = [json.loads(line) for line in (run / protocol / "events.jsonl").read_text().splitlines()]
        assert [e["scene"] for e in events if e["event"] == "demo.scene"] == [1, 2, 3], protocol
        assert {e["consumer_id"].rsplit("_", 1)[1] for e in events if e["event"] == "rebalance.completed"} == {
            "m1", "m2"}, protocol
        grown = [e for e in events if e["event"] == "demo.partitions_added"]
        assert [(e["before"], e["after"]) for e in grown] == [(2, 4)], protocol
        # the new partitions are delivered, by the members of every protocol
        delivered = {d.partition for path in (run / protocol / "members").glob("*.deliveries")
                     for d in map(partial(delivery_of, path.stem), path.read_text().splitlines()) if d is not None}
        assert delivered == {0, 1, 2, 3}, protocol
    report = json.loads((run / "report.json").read_text())
    assert list(report["protocols"]) == list(PROTOCOLS)
    assert all(f["lost"] == 0 and f["error"] is None for f in report["protocols"].values()), report["problems"]
    assert report["coordinator"] == "front" and report["timeouts"]["consumer-uniform"]["session_timeout_ms"] == 45000
    assert f"every protocol's lanes: {run / 'report.html'}" in text


def test_an_unknown_protocol_is_refused_before_anything_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ZKCONSUMER_RUN_DIR", str(tmp_path / "run"))
    capsys.readouterr()
    assert main(["demo", "--protocol", "sticky"]) == 2
    assert "unknown protocol 'sticky'" in capsys.readouterr().err
