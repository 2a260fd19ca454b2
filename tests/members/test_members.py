"""The member-process module: the settle rule, the member's event lines, the command lines the starters build, and
a legacy member run with the chaos run's options against the real servers."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest
from support import produce, wait_for
from time_scale import bounded

from zkconsumer.errors import UsageError
from zkconsumer.kafka.topics import create_topic
from zkconsumer.members import legacy_member, modern_member
from zkconsumer.members.group import MemberGroup
from zkconsumer.members.inbox import as_event
from zkconsumer.members.settle import MemberState, settled
from zkconsumer.types import TopicPartition


def completed(owned: list[tuple[str, int, str]], timestamp: str = "2026-01-01T00:00:10.000000Z") -> dict:
    return {"event": "rebalance.completed", "timestamp": timestamp,
            "owned": [{"topic": t, "partition": p, "thread": thread} for t, p, thread in owned]}


def test_a_member_state_follows_its_rebalance_events():
    state = MemberState()
    state.observe({"event": "rebalance.started", "timestamp": "2026-01-01T00:00:09Z"})
    assert state.rebalancing and state.completed == 0
    state.observe(completed([("t", 0, "g_c1-0"), ("t", 1, "g_c1-0")]))
    assert not state.rebalancing and state.completed == 1
    assert state.owned == {TopicPartition("t", 0): "g_c1-0", TopicPartition("t", 1): "g_c1-0"}
    assert state.last_completed == pytest.approx(1767225610.0)
    state.observe({"event": "rebalance.stop_fetchers"})  # other steps change nothing
    assert state.owned and not state.rebalancing


def test_settled_needs_every_live_member_done_quiet_and_every_partition_owned():
    one, two = MemberState(), MemberState()
    one.observe(completed([("t", 0, "a"), ("t", 1, "a")]))
    two.observe(completed([("t", 2, "b"), ("t", 3, "b")]))
    assert settled([one, two], 4, quiet_for=2.0, quiet_s=1.0)
    assert not settled([], 4, quiet_for=2.0, quiet_s=1.0)  # nobody is there to own anything
    assert not settled([one, two], 4, quiet_for=0.5, quiet_s=1.0)  # a rebalance event just came
    assert not settled([one], 4, quiet_for=2.0, quiet_s=1.0)  # partitions 2 and 3 have no owner
    assert not settled([one, two, MemberState()], 4, quiet_for=2.0, quiet_s=1.0)  # a member never completed
    two.observe({"event": "rebalance.started"})
    assert not settled([one, two], 4, quiet_for=2.0, quiet_s=1.0)
    two.observe(completed([("t", 2, "b"), ("t", 3, "b")], timestamp="2026-01-01T00:00:20Z"))
    # Completed, but one of them before the action the caller waits on.
    assert not settled([one, two], 4, quiet_for=2.0, quiet_s=1.0, completed_after=1767225615.0)
    assert settled([two], 2, quiet_for=2.0, quiet_s=1.0, completed_after=1767225615.0)


def test_a_member_line_that_is_no_event_is_kept_on_its_lane():
    assert as_event('{"event": "rebalance.started", "consumer_id": "g_c1"}\n', "g_c1") == {
        "event": "rebalance.started", "consumer_id": "g_c1"}
    assert as_event("   \n", "g_c1") is None
    crash = as_event("Traceback (most recent call last):" + "x" * 600, "g_c1")
    assert crash is not None and crash["event"] == "demo.member_output" and crash["consumer_id"] == "g_c1"
    assert crash["level"] == "warning" and crash["line"].startswith("Traceback") and len(crash["line"]) == 500
    assert as_event("[1, 2]", "g_c1")["event"] == "demo.member_output"  # type: ignore[index]


def test_the_command_lines_are_what_the_members_parse():
    argv = legacy_member.command(zookeeper="zk:2181/x", group="g", topic="a:1,b:2", consumer_id="m1",
                                 session_timeout_ms=4000, config={"auto.commit.interval.ms": 500},
                                 output=Path("/tmp/d"), delivery_format="timed", events_file=Path("/tmp/e"),
                                 session_file=Path("/tmp/s"), stop_at_stdin_eof=True)
    assert argv[1:3] == ["-m", "zkconsumer.members.legacy_member"]
    args = legacy_member.build_parser().parse_args(argv[3:])
    assert (args.zookeeper, args.group, args.consumer_id, args.session_timeout_ms) == ("zk:2181/x", "g", "m1", 4000)
    assert legacy_member.parse_topics(args.topic) == {"a": 1, "b": 2}
    assert legacy_member.parse_settings(args.config) == {"auto.commit.interval.ms": "500"}
    assert (args.output, args.delivery_format, args.events_file, args.session_file) == ("/tmp/d", "timed", "/tmp/e",
                                                                                      "/tmp/s")
    assert args.stop_at_stdin_eof
    config = legacy_member.member_config(zookeeper="z", group="g", consumer_id="m1",
                                         overrides=legacy_member.parse_settings(args.config))
    assert config["auto.commit.interval.ms"] == "500" and config["rebalance.backoff.ms"] == 300
    with pytest.raises(UsageError, match="KEY=VALUE"):
        legacy_member.parse_settings(["no-equals-sign"])

    modern = modern_member.command(bootstrap="b:9092", group="g", topic="t", consumer_id="g_m1",
                                   strategy="cooperative-sticky", output=Path("/tmp/d"), stop_at_stdin_eof=True)
    assert modern[1:3] == ["-m", "zkconsumer.members.modern_member"]
    parsed = modern_member.build_parser().parse_args(modern[3:])
    assert (parsed.bootstrap, parsed.strategy, parsed.output, parsed.stop_at_stdin_eof) == (
        "b:9092", "cooperative-sticky", "/tmp/d", True)


def test_a_member_group_follows_events_and_notices_a_death(tmp_path):
    script = ("import json, sys; print(json.dumps({'event': 'rebalance.completed', 'consumer_id': 'g_x', "
              "'timestamp': '2026-01-01T00:00:10Z', 'owned': [{'topic': 't', 'partition': 0, 'thread': 'g_x-0'}]}));"
              "print('not an event'); sys.exit(3)")
    group = MemberGroup(tmp_path)
    member = group.start("x", "g_x", [sys.executable, "-c", script])
    wait_for(lambda: member.process.poll() is not None)
    events = group.close()
    assert [e["event"] for e in events] == ["rebalance.completed", "demo.member_output"]
    assert member.state.owned == {TopicPartition("t", 0): "g_x-0"} and group.last_rebalance_event > 0
    assert group.died() == [member] and member.process.returncode == 3 and not member.alive
    assert group.died() == []  # reported once


def test_a_member_that_does_not_leave_is_killed_with_its_stacks_in_its_log(tmp_path):
    script = ("import faulthandler, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
              "faulthandler.register(signal.SIGUSR1, all_threads=True); print('ready', flush=True); time.sleep(60)")
    group = MemberGroup(tmp_path)
    member = group.start("x", "g_x", [sys.executable, "-c", script], follow=False)
    log = tmp_path / "x.log"
    wait_for(lambda: "ready" in log.read_text())
    group.stop(member, timeout=0.5)
    assert member.hung and not member.alive and member.process.returncode == -signal.SIGKILL
    assert "most recent call first" in log.read_text()  # faulthandler's stack dump
    group.close()


@pytest.mark.timeout(150)  # its waits: 2 x 15 + 30 + 15 + 30 s, and two productions of up to 10 s
def test_a_legacy_member_with_the_chaos_runs_options(tmp_path, kafka_zk, zk, bootstrap_servers, topic_name):
    """Events in a file, timed deliveries of two topics, the session kept in a file, a setting given on the command
    line; SIGTERM leaves the group."""
    other = f"{topic_name}-b"
    create_topic(bootstrap_servers, topic_name, 2)
    create_topic(bootstrap_servers, other, 1)
    for topic, partitions in ((topic_name, 2), (other, 1)):
        wait_for(lambda t=topic, n=partitions: zk.exists(f"/brokers/topics/{t}/partitions/{n - 1}/state"))
    events, deliveries, session = tmp_path / "m0.events", tmp_path / "m0.deliveries", tmp_path / "m0.session"
    group = MemberGroup(tmp_path)
    argv = legacy_member.command(zookeeper=kafka_zk, group="chaos-like", topic=f"{topic_name}:2,{other}:1",
                                 consumer_id="m0", session_timeout_ms=4000,
                                 config={"auto.commit.interval.ms": 500, "rebalance.backoff.jitter.ms": 300},
                                 output=deliveries, delivery_format="timed", events_file=events,
                                 session_file=session)
    member = group.start("m0", "chaos-like_m0", argv, follow=False)
    try:
        produce(bootstrap_servers, topic_name, [b"a0", b"a1"], partition=0)
        produce(bootstrap_servers, other, [b"b0"], partition=0)
        before = time.time()
        wait_for(lambda: deliveries.exists() and len(deliveries.read_text().splitlines()) == 3, timeout=30)
        rows = [line.split() for line in deliveries.read_text().splitlines()]
        assert sorted((r[1], r[2], r[3], r[4]) for r in rows) == sorted([
            (other, "0", "0", "b0"), (topic_name, "0", "0", "a0"), (topic_name, "0", "1", "a1")])
        assert all(before - 60 < float(r[0]) <= time.time() for r in rows)
        wait_for(session.exists)
        sid, password = session.read_text().split()
        assert session.stat().st_mode & 0o777 == 0o600  # the password takes the session over: owner only
        registered = zk.get("/consumers/chaos-like/ids/chaos-like_m0")[1]
        assert int(sid) == registered.ephemeralOwner and bytes.fromhex(password)
        group.stop(member, timeout=bounded(30))
        assert member.process.returncode == 0
        names = [json.loads(line)["event"] for line in events.read_text().splitlines()]
        assert "rebalance.completed" in names and "consumer.shutdown" in names
        assert zk.get_children("/consumers/chaos-like/ids") == []
    finally:
        if member.process.poll() is None:
            member.process.send_signal(signal.SIGKILL)
            member.process.wait()
        group.close()


def test_expiring_a_session_that_is_gone_already_expires_nothing_and_says_so(zookeeper_connect, tmp_path):
    from kazoo.client import KazooClient

    from zkconsumer.members.faults import expire_session

    live = KazooClient(hosts=zookeeper_connect, timeout=10.0)
    live.start(bounded(10))
    sid, password = live.client_id
    session_file = tmp_path / "m.session"
    session_file.write_text(f"{sid} {password.hex()}", encoding="utf-8")
    assert expire_session(zookeeper_connect, session_file)  # the live session: closed under its owner
    assert wait_for(lambda: live.client_state == "EXPIRED_SESSION" or not live.connected, timeout=20)
    live.stop()
    live.close()
    assert not expire_session(zookeeper_connect, session_file)  # gone already: nothing to expire
