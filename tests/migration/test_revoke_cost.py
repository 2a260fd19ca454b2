"""The application's cost of giving partitions up (``revoke_ms``): read from a scenario and ``--revoke-ms``, one line
for a bad value, played by every kind of member, measured as a pause of everything the member fetched while it is
spent, and spent by real members on a revocation only."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta

import pytest
from support import wait_for
from time_scale import bounded

from zkconsumer.cli.migration import validate
from zkconsumer.errors import UsageError
from zkconsumer.kafka.topics import create_topic
from zkconsumer.members import legacy_member, modern_member
from zkconsumer.members.group import MemberGroup
from zkconsumer.migration.measures import REVOKE_WORK, measure
from zkconsumer.migration.scenes import check_playable, parse_protocols
from zkconsumer.scenarios.parse import ScenarioError, parse
from zkconsumer.trace.timeline import Event
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.cluster import wait_for_topic

pytestmark = pytest.mark.migration
REVOKE_MS = 400

FILE = """
[topic]
partitions = 2
[members.a]
revoke_ms = 500
[members.b]
[[scenes]]
title = "both"
actions = [{ start = "a" }, { start = "b" }]
"""


def test_revoke_ms_is_read_for_every_kind_of_member_and_bad_values_are_one_line(tmp_path):
    scenario = parse(FILE, "mine", "scenario mine.toml")
    assert (scenario.member("a").revoke_ms, scenario.member("b").revoke_ms) == (500, 0)
    check_playable(scenario, parse_protocols("legacy-range,range,cooperative-sticky,consumer-uniform"))
    for value, problem in (("-1", "must be from 0 to 30000, not -1"), ("30001", "must be from 0 to 30000, not 30001"),
                           ('"500"', "must be a whole number, not a string"),
                           ("0.5", "must be a whole number, not a number")):
        with pytest.raises(ScenarioError) as caught:
            parse(FILE.replace("revoke_ms = 500", f"revoke_ms = {value}"), "mine", "scenario mine.toml")
        assert str(caught.value) == f"scenario mine.toml: members.a.revoke_ms: {problem}"
    args = argparse.Namespace(protocols="legacy-range,range", partitions=None, rate=None, pace=2.0,
                              bootstrap_server=None, zookeeper=None, output_dir=tmp_path / "out", revoke_ms=None)
    settings = validate(args)
    assert settings.revoke_ms is None and settings.member_revoke_ms("m1") == 0 and settings.revoke_costs() == "0 ms"
    settings = validate(argparse.Namespace(**{**vars(args), "revoke_ms": 500}))
    assert settings.member_revoke_ms("m3") == 500 and settings.revoke_costs() == "500 ms"
    with pytest.raises(UsageError, match=r"^--revoke-ms must be from 0 to 30000 ms, not -5$"):
        validate(argparse.Namespace(**{**vars(args), "revoke_ms": -5}))
    argv = modern_member.command(bootstrap="b:1", group="g", topic="t", consumer_id="g_a", revoke_ms=500)
    assert modern_member.build_parser().parse_args(argv[3:]).revoke_ms == 500
    argv = legacy_member.command(zookeeper="z:1", group="g", topic="t", consumer_id="a", revoke_ms=500)
    assert legacy_member.build_parser().parse_args(argv[3:]).revoke_ms == 500


def _event(name: str, at: float, **fields) -> Event:
    stamp = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(seconds=at)
    return Event(int(at * 1000), name, stamp, {"event": name, "consumer_id": "a", **fields})


def refs(*partitions: int) -> list[dict]:
    return [{"topic": "t", "partition": p, "thread": "a"} for p in partitions]


def test_the_revoke_work_pauses_everything_the_member_fetched_and_resumes_what_it_keeps():
    events = [_event("rebalance.completed", 0.0, owned=refs(0, 1, 2)),
              _event(REVOKE_WORK, 3.5, duration_ms=500.0, revoked=refs(2), kept=refs(0, 1)),
              _event("rebalance.release", 3.5, released=refs(2), duration_ms=0.0)]
    pauses = {(p.partition, p.start, p.end) for p in measure("x", events, [], [], "t").pauses}
    # 0 and 1 wait for the application's work and resume; 2 is given up from its start and nobody fetches it again
    assert pauses == {(0, 3.0, 3.5), (1, 3.0, 3.5), (2, 3.0, None)}


def _play(tmp_path, argv_of) -> dict[str, list[dict]]:
    """a starts alone (it gives nothing up), then b joins (a gives partitions up, b nothing); each member's events
    until then, before they leave."""
    group = MemberGroup(tmp_path)
    events: list[dict] = []
    a, b = "g_a", "g_b"  # the consumer ids the members' events carry

    def settled_with(members: int) -> bool:
        events.extend(group.receive(0.1))
        return len(group.live()) == members and group.settled(2, quiet_s=0.5)

    try:
        group.start("a", a, argv_of("a"))
        wait_for(lambda: settled_with(1), timeout=30)
        group.start("b", b, argv_of("b"))
        wait_for(lambda: settled_with(2) and any(e["event"] == "rebalance.completed" and e["consumer_id"] == b
                                                 for e in events), timeout=30)
    finally:
        group.stop_all(timeout=bounded(15))
        group.close()
    by_member: dict[str, list[dict]] = {}
    for event in events:
        by_member.setdefault(str(event.get("consumer_id")), []).append(event)
    return by_member


def _check_spent_on_revocation_only(by_member: dict[str, list[dict]]) -> None:
    """Each listener step lasts REVOKE_MS or more exactly when the release after it gives something up."""
    seen = []
    for member, events in by_member.items():
        names = [e["event"] for e in events]
        for i, event in enumerate(events):
            if event["event"] != REVOKE_WORK:
                continue
            release = next(e for e in events[i:] if e["event"] == "rebalance.release")
            gave_up = bool(release.get("released"))
            seen.append((member, gave_up))
            assert (event["duration_ms"] >= REVOKE_MS) == gave_up, (member, event, release)
        assert names.count("rebalance.completed") >= 1, names
    assert seen.count(("g_a", True)) >= 1, seen  # a gave partitions to b, and paid for it
    assert ("g_b", True) not in seen, seen  # b never gave any up


def test_a_legacy_member_spends_its_revoke_cost_on_a_revocation_only(tmp_path, kafka_zk, bootstrap_servers,
                                                                     topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    with zookeeper(kafka_zk) as zk:
        wait_for_topic(zk, topic_name, 2)
    by_member = _play(tmp_path, lambda name: legacy_member.command(
        zookeeper=kafka_zk, group="g", topic=topic_name, consumer_id=name, session_timeout_ms=4000,
        stop_at_stdin_eof=True, revoke_ms=REVOKE_MS))
    _check_spent_on_revocation_only(by_member)
    # the connector calls its listener at every rebalance: b's first, owning nothing, spends nothing
    first = next(e for e in by_member["g_b"] if e["event"] == REVOKE_WORK)
    assert first["duration_ms"] < REVOKE_MS


def test_a_modern_member_spends_its_revoke_cost_on_a_revocation_only(tmp_path, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    by_member = _play(tmp_path, lambda name: modern_member.command(
        bootstrap=bootstrap_servers, group=topic_name, topic=topic_name, consumer_id=f"g_{name}",
        strategy="cooperative-sticky", session_timeout_ms=4000, stop_at_stdin_eof=True, revoke_ms=REVOKE_MS))
    _check_spent_on_revocation_only(by_member)
    kept = [e["kept"] for e in by_member["g_a"] if e["event"] == REVOKE_WORK and e["spent"]]
    assert kept and all(len(k) == 1 for k in kept), kept  # cooperative: a keeps one of its two partitions
