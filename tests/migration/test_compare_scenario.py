"""``migration compare --scenario FILE`` on the real servers: a scenario a team writes, with a pause and a partition
growth, played by a legacy protocol (the bridge shows it the growth); the report follows the file's scenes."""

from __future__ import annotations

import json

import pytest
from support import zkconsumer_cli

from zkconsumer.trace.timeline import read_events

pytestmark = pytest.mark.migration

TEAM_SCENARIO = """
title = "Our group: a GC pause and a growth"
session_timeout_ms = 3000
[topic]
partitions = 2
[production]
rate = 20
[members.m1]
[members.m2]
[[scenes]]
title = "two members"
actions = [{ start = "m1" }, { start = "m2" }]
[[scenes]]
title = "m2 paused 1 s"
actions = [{ pause = "m2", seconds = 1 }]
[[scenes]]
title = "topic grows to 4"
actions = [{ grow = 2 }]
"""


@pytest.mark.timeout(240)  # the command's 180 s
def test_a_team_scenario_with_a_pause_and_a_growth_plays(tmp_path, zookeeper_connect, bootstrap_servers):
    path, out = tmp_path / "team.toml", tmp_path / "out"
    path.write_text(TEAM_SCENARIO)
    done = zkconsumer_cli("migration", "compare", "--zookeeper", zookeeper_connect, "--bootstrap-server",
                          bootstrap_servers, "--scenario", str(path), "--protocols", "legacy-range", "--pace", "0.3",
                          "--output-dir", str(out), "--json", timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "playing 3 scenes of 'team' for legacy-range (2 partitions, 20 msg/s each" in done.stderr
    report = json.loads(done.stdout)
    figures = report["protocols"]["legacy-range"]
    assert report["session_timeout_ms"] == 3000 and report["partitions"] == 2 and report["scenario"] == "team"
    assert [s["label"] for s in figures["scenes"]] == ["1. two members", "2. m2 paused 1 s", "3. topic grows to 4"]
    assert figures["lost"] == 0 and figures["produced"] > 0 and figures["delivered"] == figures["produced"]
    events = read_events((out / "legacy-range" / "events.jsonl").read_text().splitlines()).events
    names = [e.name for e in events]
    assert names.index("demo.member_paused") < names.index("demo.member_resumed") < names.index(
        "demo.partitions_added")
    grown = next(e for e in events if e.name == "demo.partitions_added")
    assert (grown.fields["before"], grown.fields["after"]) == (2, 4)
    played = events[:names.index("demo.draining")]  # the members' own stop at the end is no part of the story
    last = {e.consumer_id: e for e in played if e.name == "rebalance.completed"}
    assert sorted(p["partition"] for e in last.values() for p in e.fields["owned"]) == [0, 1, 2, 3]
    produced = {int(line.split(" ")[0]) for line in (out / "legacy-range" / "produced.txt").read_text().splitlines()}
    assert produced == {0, 1, 2, 3}  # the producer writes to the new partitions once the topic has grown
