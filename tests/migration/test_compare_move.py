"""The move from ZooKeeper played in one group id, at the run's own front before the session's broker: legacy members
(offsets in ZooKeeper) restarted with dual commit, then cut over to KIP-848 members that resume from the offsets in
Kafka: nothing skipped. Without the first step, the same cutover finds no offset in Kafka and ``latest`` (Kafka's
default) skips what was produced while the group was down."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from time_scale import scaled

from zkconsumer.embedded.servers import ServerOptions
from zkconsumer.migration.comparison import compare, plan
from zkconsumer.migration.report import MOVE_NOTE, NOTE
from zkconsumer.scenarios.model import (
    BOUNCE,
    CUTOVER,
    DUAL_COMMIT,
    SETTLE,
    START,
    Action,
    Member,
    Production,
    Scenario,
    Scene,
    Topic,
)

pytestmark = pytest.mark.migration


def move(dual_commit: bool) -> Scenario:
    """Two legacy members on two partitions; with ``dual_commit``, both restarted with it (the first step); then the
    cutover, offsets as the legacy members left them in Kafka."""
    start = Scene(1, "legacy", "", (Action(START, "a"), Action(START, "b")))
    bounce = Scene(2, "dual commit", "", (Action(DUAL_COMMIT, "a"), Action(SETTLE), Action(DUAL_COMMIT, "b")))
    cutover = Scene(3 if dual_commit else 2, "cutover", "", (Action(CUTOVER, offsets="kafka", reset="latest"),))
    return Scenario("move", "a move", "", Topic("move", 2), Production(rate=20), (Member("a"), Member("b")),
                    (start, bounce, cutover) if dual_commit else (start, cutover), session_timeout_ms=4000,
                    source="the test's move")


def played(tmp_path, zookeeper_connect: str, broker_bootstrap: str, scenario: Scenario) -> tuple[dict, object]:
    settings = plan(tmp_path / "out", scenario=scenario, protocols=["consumer"], pace=0.3)
    # what the skipped path never delivers is not waited for long
    settings = replace(settings, drain_timeout_s=scaled(4), settle_timeout_s=scaled(30))
    done = compare(settings, ServerOptions(zookeeper_connect, broker_bootstrap, front=True))
    return json.loads(done.result.report.read_text()), done.result["consumer-uniform"]


@pytest.mark.timeout(120)
def test_the_dual_commit_path_skips_nothing(tmp_path, zookeeper_connect, broker_bootstrap):
    report, outcome = played(tmp_path, zookeeper_connect, broker_bootstrap, move(dual_commit=True))
    assert outcome.error is None and not outcome.member_failures
    assert outcome.produced > 0 and outcome.lost == 0 and outcome.delivered == outcome.produced
    # the legacy members committed to Kafka as well as ZooKeeper once restarted, and the modern ones resumed there
    events = [json.loads(line) for line in outcome.events.read_text().splitlines()]
    stores = {e["store"] for e in events if e["event"] == "offsets.committed"}
    assert stores >= {"zookeeper", "kafka"}, stores
    cutover = next(e for e in events if e["event"] == "demo.cutover")
    assert (cutover["offsets"], cutover["reset"], cutover["members"]) == ("kafka", "latest", ["a", "b"])
    subscribed = [e for e in events if e["event"] == "consumer.subscribed"]
    assert sorted(e["consumer_id"].rsplit("_", 1)[1] for e in subscribed) == ["a", "b"]
    assert {e["group_protocol"] for e in subscribed} == {"consumer"}
    # the report and its page lead with the move's figures
    figures = report["move"]["protocols"]["consumer-uniform"]
    assert figures["skipped"] == 0 and figures["duplicates"] == outcome.duplicates
    assert 0 < figures["cutover_downtime_s"] <= figures["downtime_s"] == round(outcome.downtime_ms / 1000, 2)
    assert report["move"]["dual_commit"] and report["move"]["cutover_scene"] == 3
    page = outcome.events.parent.parent.joinpath("report.html").read_text()
    assert "The move from ZooKeeper, per target protocol" in page
    # and say how its groups relate: one group id moved at once, not a group per kind of member
    assert report["note"] == MOVE_NOTE and "within it one group id throughout" in page
    assert "the two ignore each other" in NOTE and "the two ignore each other" not in page


@pytest.mark.timeout(120)
def test_a_cutover_without_the_first_step_skips_what_was_produced_meanwhile(tmp_path, zookeeper_connect,
                                                                              broker_bootstrap):
    report, outcome = played(tmp_path, zookeeper_connect, broker_bootstrap, move(dual_commit=False))
    assert outcome.error is None and not outcome.member_failures
    assert outcome.lost > 0 and report["move"]["protocols"]["consumer-uniform"]["skipped"] == outcome.lost
    events = [json.loads(line) for line in outcome.events.read_text().splitlines()]
    committed = [e for e in events if e["event"] == "offsets.committed"]
    assert committed and {e["store"] for e in committed} == {"zookeeper"}  # the legacy members' only
    # what was skipped lies after the legacy members' last commit: the backlog the modern members never saw
    last: dict[int, int] = {}
    for e in committed:
        for o in e["offsets"]:
            last[o["partition"]] = max(last.get(o["partition"], 0), o["offset"])
    assert all(m.offset >= last[m.partition] for m in outcome.lost_messages), (last, outcome.lost_messages[:3])


@pytest.mark.timeout(120)
def test_a_static_member_s_bounce_moves_nothing(tmp_path, zookeeper_connect, broker_bootstrap):
    """Two static members (``group.instance.id``, KIP-345) under eager range and under KIP-848: the bounced member
    keeps its place, the other one is not even told of a rebalance, no partition changes owner."""
    members = (Member("a", static=True), Member("b", static=True))
    scenario = Scenario("static", "a static bounce", "", Topic("static", 2), Production(rate=20), members,
                        (Scene(1, "two static members", "", (Action(START, "a"), Action(START, "b"))),
                         Scene(2, "a bounced", "", (Action(BOUNCE, "a"),))),
                        session_timeout_ms=6000, source="the test's static bounce")
    settings = replace(plan(tmp_path / "out", scenario=scenario, protocols=["range", "consumer"], pace=0.3),
                       settle_timeout_s=scaled(30))
    done = compare(settings, ServerOptions(zookeeper_connect, broker_bootstrap, front=True))
    done.result.assert_nothing_lost()
    report = json.loads(done.result.report.read_text())
    for protocol in ("range", "consumer-uniform"):
        outcome = done.result[protocol]
        events = [json.loads(line) for line in outcome.events.read_text().splitlines()]
        started = [e for e in events if e["event"] == "demo.member_started"]
        assert [e["consumer_id"].rsplit("_", 1)[1] for e in started] == ["a", "b", "a"], protocol
        bounced = next(e["timestamp"] for e in events if e["event"] == "demo.scene" and e["scene"] == 2)
        drained = next(e["timestamp"] for e in events if e["event"] == "demo.draining")
        told = [e for e in events if e["event"] == "rebalance.started" and e.get("consumer_id", "").endswith("_b")
                and bounced < e["timestamp"] < drained]
        assert told == [], (protocol, told)
        assert report["protocols"][protocol]["scenes"][1]["moved_partitions"] == 0, protocol


def test_a_downtime_over_the_bound_fails_in_one_sentence(tmp_path):
    from zkconsumer.migration.measures import Figures
    from zkconsumer.migration.outcome import ComparisonResult, outcome

    figures = Figures(produced=0, delivered=0, lost=0, duplicates=0, rebalances=1, failed_attempts=0,
                      partition_seconds_paused=0.0, max_pause_ms=0.0, paused_partitions=0, moved_partitions=0,
                      settle_ms=0.0, downtime_ms=9350.0)
    moved = outcome("range", figures, (), (), (), (), None, tmp_path / "events.jsonl", tmp_path, "Apache Kafka 4.4.0")
    result = ComparisonResult({"range": moved}, tmp_path / "report.json", tmp_path / "report.html")
    result.assert_downtime_at_most(9350)
    with pytest.raises(AssertionError) as caught:
        result.assert_downtime_at_most(5000)
    assert str(caught.value) == ("range (at Apache Kafka 4.4.0) fetched no partition at all for 9350 ms, more than "
                                 "5000 ms")
