"""The teaching demo on the real servers: the story's ownership is Kafka's range assignment at every scene, and
what an operator sees meanwhile (``groups describe --json``, ``groups verify``) agrees with the members' own
events, also in the window after a SIGKILL when the dead member's znodes are still there."""

from __future__ import annotations

import io
import json
import re
import subprocess

import pytest
from browser import dump_dom
from event_lines import invalid_event_lines
from support import wait_for, zkconsumer_cli
from time_scale import bounded, scaled

from zkconsumer.cli import main
from zkconsumer.demo.rebalance_demo import (
    CHROOT,
    DemoSettings,
    Scene,
    SceneResult,
    fresh_chroot,
    play_against,
    play_in_own_chroot,
)
from zkconsumer.errors import UsageError
from zkconsumer.log import configure_logging
from zkconsumer.types import TopicPartition

EXPECTED_RANGE = {  # scene -> partition -> owner thread (Kafka's RangeAssignor over sorted thread ids)
    1: {0: "demo_c1-0", 1: "demo_c1-0", 2: "demo_c1-0", 3: "demo_c1-0"},
    2: {0: "demo_c1-0", 1: "demo_c1-0", 2: "demo_c2-0", 3: "demo_c2-0"},
    3: {0: "demo_c1-0", 1: "demo_c2-0", 2: "demo_c3-0", 3: "demo_c3-1"},  # demo_c3-2 idle
    4: {0: "demo_c1-0", 1: "demo_c3-0", 2: "demo_c3-1", 3: "demo_c3-2"},
    5: {0: "demo_c1-0", 1: "demo_c1-0", 2: "demo_c3-0", 3: "demo_c3-0", 4: "demo_c3-1", 5: "demo_c3-2"},
}


def cli_json(capsys, *args: str) -> tuple[int, list[dict]]:
    capsys.readouterr()
    status = main(list(args))
    out = capsys.readouterr().out
    return status, json.loads(out) if status == 0 else []


def cli_status(capsys, *args: str) -> tuple[int, str]:
    capsys.readouterr()
    status = main(list(args))
    return status, capsys.readouterr().out


@pytest.mark.browser
@pytest.mark.timeout(300)  # its waits, summed: five scenes settling within 45 s each, 45 s for the browser
def test_demo_story_and_what_operators_see(tmp_path, zk_chroot, bootstrap_servers, topic_name, capsys):
    configure_logging(level="warning", stream=io.StringIO(), force=True)  # stdout carries only the CLI's output
    connect = zk_chroot + CHROOT
    seen: dict[int, SceneResult] = {}
    during_kill: dict[str, object] = {}

    def on_action(scene: Scene) -> None:
        if scene.number == 4:  # c2 was just SIGKILLed; its session (8 s) has not expired yet
            during_kill["describe"] = cli_json(capsys, "groups", "describe", "--group", "demo", "--json",
                                               "--zookeeper", connect)
            during_kill["verify"] = cli_status(capsys, "groups", "verify", "--group", "demo", "--zookeeper", connect)

    def on_settled(result: SceneResult) -> None:
        seen[result.scene.number] = result
        status, rows = cli_json(capsys, "groups", "describe", "--group", "demo", "--json", "--zookeeper", connect)
        assert status == 0
        assert {r["partition"]: r["owner"] for r in rows} == EXPECTED_RANGE[result.scene.number]
        assert {TopicPartition(r["topic"], r["partition"]): r["owner"] for r in rows} == result.owners
        assert all(r["offset"] is not None and r["log_size"] is not None and 0 <= r["offset"] <= r["log_size"]
                   and r["lag"] == r["log_size"] - r["offset"] for r in rows), rows
        status, text = cli_status(capsys, "groups", "verify", "--group", "demo", "--zookeeper", connect)
        assert (status, text.strip()) == (0, "Rebalance operation successful !")

    out = io.StringIO()
    settings = DemoSettings(zookeeper="", bootstrap="", topic=topic_name, session_timeout_ms=8000,
                            messages_per_partition=5, output_dir=tmp_path / "out", settle_timeout_s=scaled(45))
    result = play_in_own_chroot(zk_chroot, bootstrap_servers, settings, out=out, status=io.StringIO(),
                                on_action=on_action, on_settled=on_settled)

    assert sorted(seen) == [1, 2, 3, 4, 5]
    assert [r.scene.number for r in result.scenes] == [1, 2, 3, 4, 5]
    assert subprocess.run(["pgrep", "-f", f"--zookeeper {connect} "], capture_output=True).stdout == b"", \
        "a member process outlived the demo"
    status, rows = during_kill["describe"]
    assert status == 0 and {r["owner"] for r in rows} >= {"demo_c2-0"}, "c2's owner znodes outlive the process"
    assert during_kill["verify"][0] == 0  # the znodes are intact: the legacy tool also called this valid
    narration = out.getvalue()
    assert "Idle threads (nothing assigned): demo_c3-2" in narration
    assert "s later:" in narration  # the session-expiry wait is visible
    for title in ("stop fetchers", "commit offsets", "release ownership", "assign", "claim ownership",
                  "rebuild topicRegistry", "restart fetchers"):
        assert title in narration
    events = [json.loads(line) for line in result.events_path.read_text().splitlines()]
    assert [e["scene"] for e in events if e["event"] == "demo.scene"] == [1, 2, 3, 4, 5]
    assert {e["consumer_id"] for e in events if e["event"] == "rebalance.completed"} == {
        "demo_c1", "demo_c2", "demo_c3"}
    assert [e for e in events if e["event"] == "demo.partitions_added"][0]["after"] == 6
    # The epilogue: c1 leaves first, and c3 takes over every partition before it leaves too.
    stopped = [e["consumer_id"] for e in events if e["event"] == "demo.member_stopped"]
    assert stopped == ["demo_c1", "demo_c3"]
    last_c3 = [e for e in events if e["event"] == "rebalance.completed" and e["consumer_id"] == "demo_c3"][-1]
    assert len(last_c3["owned"]) == 6
    assert result.timeline_path is not None
    dom = dump_dom(result.timeline_path)  # the page a demo leaves behind, in a real browser
    assert 'data-rendered="ok"' in dom and "data-errors" not in dom
    assert set(re.findall(r'<g class="lane" data-consumer="([^"]+)">', dom)) == {"demo_c1", "demo_c2", "demo_c3"}


@pytest.mark.servers  # `local up` starts the embedded environment
@pytest.mark.timeout(480)  # its waits, summed: 240 s for the demo, 2 x 60 s for its hints, 60 s for `local down`
def test_readme_command_runs_the_demo_on_a_fresh_environment(tmp_path):
    """What `make demo` runs, with a run directory of its own: starts the servers, plays, leaves the timeline."""
    run_dir, out_dir = tmp_path / "run", tmp_path / "out"
    try:
        done = zkconsumer_cli("demo", "--run-dir", str(run_dir), "--output-dir", str(out_dir), "--strategy",
                              "roundrobin", "--compare", "--session-timeout-ms", "2000", timeout=240)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "== Scene 5: Partitions are added to the topic ==" in done.stdout
        assert "legacy-roundrobin" in done.stdout and "cooperative-sticky" in done.stdout
        assert "roundrobin over members demo_c1, demo_c2, demo_c3" in done.stdout
        assert "Traceback" not in done.stderr
        assert (out_dir / "timeline.html").stat().st_size > 0
        assert (out_dir / "events.jsonl").stat().st_size > 0
        # every event line the demo, its comparison, the front and the bridge wrote keeps the catalogue's contract
        logs = [run_dir / "front" / "front.log", run_dir / "bridge.log"]
        checked, invalid = invalid_event_lines([*sorted(out_dir.rglob("*.jsonl")), *logs])
        assert checked > 100 and not invalid, "\n".join(invalid[:40])
        # a topic of the run's own, so the offsets shown start at 0 whatever ran before on the broker
        assert re.search(r"^Group 'demo' on topic 'demo-\d{8}-\d{6}' \(4 partitions\)", done.stdout, re.M)
        # the closing hints run as printed, the servers still up: the group's table finds the broker
        hints = dict(line.split(":", 1) for line in done.stdout.splitlines()[-6:] if ":" in line)
        stop = hints["the embedded servers stay up for these commands; stop them with"].strip()
        assert stop.endswith(f"zkconsumer local down --run-dir {run_dir}"), stop
        described = subprocess.run(hints["the group's znodes"].strip(), shell=True, capture_output=True, text=True,
                                   timeout=bounded(60))
        assert described.returncode == 0 and "warning" not in described.stderr + described.stdout, described
        # partition 0: 25 messages at the start of each of the 5 scenes, all consumed and committed
        assert re.search(r"demo-\d{8}-\d{6}\s+0\s+125\s+125\s+0\s", described.stdout), described.stdout
        shown = subprocess.run(hints["replay on a terminal"].strip(), shell=True, capture_output=True, text=True,
                               timeout=bounded(60))
        assert shown.returncode == 0 and "demo_c3" in shown.stdout, shown.stderr
    finally:
        zkconsumer_cli("local", "down", "--run-dir", str(run_dir))


def test_a_chroot_the_demo_did_not_make_is_left_alone(zk):
    zk.create(CHROOT, b"somebody's data")
    zk.create(f"{CHROOT}/child", b"x")
    with pytest.raises(UsageError, match="was not made by the demo"):
        fresh_chroot(zk)
    assert zk.get(f"{CHROOT}/child")[0] == b"x"


def test_bad_options_and_unreachable_zookeeper_are_one_line(tmp_path):
    bad = zkconsumer_cli("demo", "--partitions", "0")
    assert bad.returncode != 0 and bad.stderr.strip() == "zkconsumer demo: --partitions must be at least 1"
    down = zkconsumer_cli("demo", "--zookeeper", "127.0.0.1:1", "--output-dir", str(tmp_path))
    assert down.returncode != 0 and len(down.stderr.strip().splitlines()) == 1 and "Traceback" not in down.stderr
    assert "127.0.0.1:1" in down.stderr


@pytest.mark.timeout(300)  # its waits, summed: 15 s for the broker, four scenes settling within 60 s each
def test_against_given_servers_a_broker_without_createpartitions_skips_scene_5(tmp_path, zk, kafka_zk, topic_name):
    """--zookeeper: the demo's own topic and group on the servers as they are; Tansu refuses to add partitions."""
    wait_for(lambda: zk.exists("/brokers/ids") and zk.get_children("/brokers/ids"))
    configure_logging(level="warning", stream=io.StringIO(), force=True)
    out = io.StringIO()
    settings = DemoSettings(zookeeper="", bootstrap="", topic=topic_name, group=f"{topic_name}-g",
                            session_timeout_ms=2000, messages_per_partition=2, output_dir=tmp_path / "out",
                            settle_timeout_s=scaled(60))  # the demo's own default, on the suite's time scale
    result = play_against(kafka_zk, None, settings, out=out, status=io.StringIO())
    assert [r.scene.number for r in result.scenes] == [1, 2, 3, 4]
    assert "-> cannot add partitions here:" in out.getvalue() and "CreatePartitions" in out.getvalue()
    group = settings.group
    assert result.scenes[-1].owners == {
        TopicPartition(topic_name, p): thread.replace("demo_", f"{group}_") for p, thread in EXPECTED_RANGE[4].items()}
    with pytest.raises(UsageError, match="already exists"):  # never into somebody's topic or group
        play_against(kafka_zk, None, settings)
