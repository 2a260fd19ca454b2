"""A scenario a teacher writes, played by the demo on the real servers: a member frozen (SIGSTOP) for less than its
session, which nobody notices, the topic grown by the demo's bridge, and a member's session expired (it registers
again and everyone rebalances); every action in the events, in order."""

from __future__ import annotations

import io
import json

import pytest
from time_scale import scaled

from zkconsumer.demo.rebalance_demo import DemoSettings, play_in_own_chroot
from zkconsumer.log import configure_logging
from zkconsumer.scenarios.parse import load

USER_SCENARIO = """
title = "Two members, a pause, a growth"
session_timeout_ms = 3000
[topic]
partitions = 2
[members.a]
[members.b]
streams = 2
[[scenes]]
title = "a, then b"
actions = [{ start = "a" }, { settle = true }, { start = "b" }]
[[scenes]]
title = "b frozen for less than its session"
note = "ZooKeeper keeps b's session: nobody rebalances."
actions = [{ pause = "b", seconds = 1 }]
[[scenes]]
title = "the topic grows by one"
actions = [{ grow = 1 }]
[[scenes]]
title = "a's session is expired"
actions = [{ expire = "a" }]
"""


@pytest.mark.timeout(200)  # its waits, summed: four scenes settling within 40 s each
def test_a_user_scenario_with_a_pause_and_a_growth_plays(tmp_path, zk_chroot, bootstrap_servers, topic_name):
    configure_logging(level="warning", stream=io.StringIO(), force=True)
    path = tmp_path / "mine.toml"
    path.write_text(USER_SCENARIO)
    scenario = load(str(path))
    settings = DemoSettings(zookeeper="", bootstrap="", topic=topic_name, partitions=2, session_timeout_ms=3000,
                            messages_per_partition=2, output_dir=tmp_path / "out", settle_timeout_s=scaled(40),
                            scenario=scenario)
    out = io.StringIO()
    result = play_in_own_chroot(zk_chroot, bootstrap_servers, settings, out=out, status=io.StringIO())

    assert [r.scene.number for r in result.scenes] == [1, 2, 3, 4]
    # range over a's thread and b's two: a-0 first, then b-0, b-1
    assert sorted(result.scenes[0].owners.values()) == ["demo_a-0", "demo_b-0"]
    assert result.scenes[1].owners == result.scenes[0].owners  # the pause moved nothing
    assert sorted(tp.partition for tp in result.scenes[2].owners) == [0, 1, 2]
    assert sorted(result.scenes[2].owners.values()) == ["demo_a-0", "demo_b-0", "demo_b-1"]
    events = [json.loads(line) for line in result.events_path.read_text().splitlines()]
    markers = [e["event"] for e in events if e["event"].startswith("demo.") and e["event"] != "demo.member_output"]
    assert markers[:9] == ["demo.scene", "demo.member_started", "demo.member_started", "demo.settled",
                           "demo.scene", "demo.member_paused", "demo.member_resumed", "demo.settled", "demo.scene"]
    paused = next(e for e in events if e["event"] == "demo.member_paused")
    assert (paused["consumer_id"], paused["seconds"]) == ("demo_b", 1.0)
    assert [e for e in events if e["event"] == "demo.partitions_added"][0]["after"] == 3
    # nobody rebalanced between the pause and the growth: b kept its session
    grown = next(e for e in events if e["event"] == "demo.partitions_added")
    between = events[events.index(paused):events.index(grown)]
    assert not [e for e in between if e["event"] == "rebalance.started"]
    expired = next(e for e in events if e["event"] == "demo.session_expired")
    assert (expired["consumer_id"], expired["forced"]) == ("demo_a", True)
    after = events[events.index(expired):]
    assert {e["consumer_id"] for e in after if e["event"] == "rebalance.completed"} == {"demo_a", "demo_b"}
    assert result.scenes[3].owners == result.scenes[2].owners  # the same members: range deals the same
    text = out.getvalue()
    assert "Scenario 'mine': Two members, a pause, a growth" in text and "-> froze b with SIGSTOP for 1 s" in text
