"""What each protocol runs with, without servers: ``--settings same`` (one session for all) and ``stock`` (each
protocol at its own defaults), the members' configurations, the run's front's options, the page's settings table
from what the coordinator reported, the refusals a coordinator's settings call for, and the verdict's word on scenes
that measured a setting rather than a protocol."""

from __future__ import annotations

from dataclasses import replace

import pytest

from zkconsumer.errors import UsageError
from zkconsumer.kafka.coordinator_identity import CoordinatorIdentity
from zkconsumer.members import legacy_member, modern_member
from zkconsumer.migration.comparison import (
    front_settings,
    grows_topics,
    plan,
    with_group_timeouts,
    without_kip848_at_broker,
)
from zkconsumer.migration.run import member_settings
from zkconsumer.migration.scenes import check_playable, parse_protocols
from zkconsumer.migration.timeouts import session_scenes, too_short
from zkconsumer.migration.verdict import verdict
from zkconsumer.scenarios.parse import load

pytestmark = pytest.mark.migration
ALL = "legacy-range,range,cooperative-sticky,consumer"
#: a front run with Kafka's defaults but a short classic minimum, as ``local up``'s
LOCAL_UP = {"group.min.session.timeout.ms": "1000", "group.consumer.session.timeout.ms": "45000",
            "group.consumer.heartbeat.interval.ms": "5000"}


def front(settings: dict[str, str]) -> CoordinatorIdentity:
    return CoordinatorIdentity("127.0.0.1:9092", "front", "tansu_cluster", "zkconsumer 0.1.0", settings)


def table(planned) -> dict[str, dict[str, str]]:
    return {m.family: dict(m.settings) for m in member_settings(planned)}


def test_same_runs_every_protocol_on_the_scenario_s_session(tmp_path):
    planned = plan(tmp_path / "out", protocols=ALL)
    assert planned.settings_mode == "same" and planned.session_timeout_ms == 4000
    planned = replace(planned, identity=front({**LOCAL_UP, "group.consumer.session.timeout.ms": "4000",
                                               "group.consumer.heartbeat.interval.ms": "1110"}))
    timeouts = {p.name: planned.timeouts(p) for p in planned.protocols}
    assert {name: (t.session_ms, t.heartbeat_ms) for name, t in timeouts.items()} == {
        "legacy-range": (4000, None), "range": (4000, 666), "cooperative-sticky": (4000, 666),
        "consumer-uniform": (4000, 1110)}
    assert timeouts["consumer-uniform"].source == ("the coordinator's group.consumer.session.timeout.ms, "
                                                   "group.consumer.heartbeat.interval.ms")
    # the run's own front: its KIP-848 groups on the classic session, a classic session under Kafka's minimum allowed
    options = front_settings(planned)
    assert options[:2] == ("--group-min-session-timeout-ms", "1000")
    assert dict(zip(options[2::2], options[3::2], strict=True))["--group-consumer-session-timeout-ms"] == "4000"


def test_stock_runs_every_protocol_at_its_own_defaults(tmp_path):
    planned = plan(tmp_path / "out", protocols=ALL, settings="stock")
    assert planned.settings_mode == "stock" and front_settings(planned) == ()  # the front at Kafka's defaults
    planned = replace(planned, identity=front(LOCAL_UP))
    assert {p.name: (planned.timeouts(p).session_ms, planned.timeouts(p).heartbeat_ms)
            for p in planned.protocols} == {"legacy-range": (6000, None), "range": (45000, 3000),
                                            "cooperative-sticky": (45000, 3000), "consumer-uniform": (45000, 5000)}
    shown = table(planned)  # the page's settings table, as the members are configured
    assert shown["legacy"]["zookeeper.session.timeout.ms"] == "6000"
    assert (shown["modern"]["session.timeout.ms"], shown["modern"]["heartbeat.interval.ms"]) == ("45000", "3000")
    assert shown["consumer"]["session and heartbeat"] == (
        "the coordinator's, as it reported them: group.consumer.session.timeout.ms 45000, "
        "group.consumer.heartbeat.interval.ms 5000")
    # what the members are started with says the same
    argv = modern_member.command(bootstrap="b", group="g", topic="t", consumer_id="c", session_timeout_ms=45000,
                                 heartbeat_interval_ms=3000)
    parsed = modern_member.build_parser().parse_args(argv[3:])
    config = modern_member.consumer_config(bootstrap="b", group="g", consumer_id="c",
                                           session_timeout_ms=parsed.session_timeout_ms,
                                           heartbeat_interval_ms=parsed.heartbeat_interval_ms)
    assert (config["session.timeout.ms"], config["heartbeat.interval.ms"]) == (45000, 3000)
    assert legacy_member.member_config(zookeeper="z", group="g", consumer_id="c", session_timeout_ms=6000)[
        "zookeeper.session.timeout.ms"] == 6000
    with pytest.raises(UsageError, match="--settings 'kafka': expected one of same, stock"):
        plan(tmp_path / "other", settings="kafka")


def test_a_coordinator_that_did_not_say_its_kip848_settings_is_shown_as_such(tmp_path):
    planned = replace(plan(tmp_path / "out", protocols="consumer-range"),
                      identity=CoordinatorIdentity("b:9092", "broker", "c", None, {}))
    (protocol,) = planned.protocols
    assert (planned.timeouts(protocol).session_ms, planned.timeouts(protocol).heartbeat_ms) == (None, None)
    assert table(planned)["consumer"]["session and heartbeat"] == (
        "the coordinator's, as it reported them: group.consumer.session.timeout.ms not reported by the coordinator")


def test_a_classic_session_under_the_coordinator_s_minimum_is_refused_in_words(tmp_path):
    planned = replace(plan(tmp_path / "out", protocols=ALL), identity=front({"group.min.session.timeout.ms": "6000"}))
    timeouts = {p.name: planned.timeouts(p) for p in planned.protocols}
    assert too_short(timeouts, planned.protocols, {"group.min.session.timeout.ms": "6000"}) == (
        "range, cooperative-sticky: session.timeout.ms 4000 is below the coordinator's group.min.session.timeout.ms "
        "6000, which refuses every JoinGroup of such a member (INVALID_SESSION_TIMEOUT)")
    assert too_short(timeouts, planned.protocols, LOCAL_UP) is None
    assert too_short(timeouts, planned.protocols, {}) is None  # a coordinator that does not say: nothing to check


def test_a_modern_group_grows_its_topic_at_a_front_or_a_kafka_broker_and_is_refused_elsewhere():
    scenario = load("demo")
    protocols = parse_protocols("legacy-range,cooperative-sticky,consumer")
    check_playable(scenario, protocols)
    assert grows_topics(front({})) and grows_topics(CoordinatorIdentity("k:9092", "broker", "x", None, LOCAL_UP))
    tansu = CoordinatorIdentity("t:9092", "broker", "tansu_cluster", None, {})
    assert not grows_topics(tansu)
    with pytest.raises(UsageError, match=r"scene 5, action 1: grow cannot be played by cooperative-sticky, "
                       r"consumer-uniform: a modern group sees a topic grow through a front's Metadata"):
        check_playable(scenario, protocols, modern_growth=grows_topics(tansu))
    check_playable(scenario, parse_protocols("legacy-range"), modern_growth=False)  # the bridge shows them


def test_the_verdict_says_which_scenes_measured_a_setting_when_sessions_differ():
    scenario = load("migration")
    assert session_scenes(scenario) == (4,)  # m2 SIGKILLed
    scenes = [{"scene": n, "label": f"{n}. s{n}", "partition_seconds_paused": float(n), "paused_partitions": 1,
               "max_pause_ms": 1000.0} for n in (1, 2, 3, 4, 5)]
    figures = {"produced": 10, "lost": 0, "duplicates": 0, "partition_seconds_paused": 15.0, "paused_partitions": 2,
               "max_pause_ms": 4000.0, "scenes": scenes}
    protocols = {"legacy-range": {**figures, "title": "legacy-range", "family": "legacy"},
                 "consumer-uniform": {**figures, "title": "KIP-848 consumer (uniform)", "family": "modern"}}
    same = {"legacy-range": {"session_timeout_ms": 4000}, "consumer-uniform": {"session_timeout_ms": 4000}}
    said = verdict(protocols, same, (4,))
    assert not any("session timeouts" in s for s in said.overall)
    assert not any("session timeouts" in sentence for _, sentence in said.scenes)
    differ = {"legacy-range": {"session_timeout_ms": 4000}, "consumer-uniform": {"session_timeout_ms": 45000}}
    said = verdict(protocols, differ, (4,))
    assert ("The protocols ran with different session timeouts (legacy-range 4 s, KIP-848 consumer (uniform) 45 s): "
            "the scenes where a member is SIGKILLed or paused (4. s4) measured that setting, not the protocols: a "
            "dead or frozen member's partitions wait out its session.") in said.overall
    by_label = dict(said.scenes)
    assert by_label["4. s4"].endswith(" This scene measured the session timeouts (legacy-range 4 s, KIP-848 "
                                      "consumer (uniform) 45 s), not the protocols.")
    assert "session timeouts" not in by_label["3. s3"]


#: a Kafka 4.x broker as ``local up --broker kafka-4`` runs it: KIP-848 on, its groups' bounds widened
KAFKA_4 = {**LOCAL_UP, "group.coordinator.rebalance.protocols": "classic,consumer,streams",
           "group.consumer.min.session.timeout.ms": "1000", "group.consumer.max.session.timeout.ms": "60000",
           "group.consumer.min.heartbeat.interval.ms": "100", "group.consumer.max.heartbeat.interval.ms": "15000"}


def kafka(settings: dict[str, str]) -> CoordinatorIdentity:
    return CoordinatorIdentity("k:9092", "broker", "x", None, settings, "Apache Kafka 4.4.0", "state.json")


def test_at_a_kafka_coordinator_kip848_plays_on_the_classic_session_set_on_each_group(tmp_path):
    notes: list[str] = []
    planned = plan(tmp_path / "out", protocols=ALL)
    at_kafka = without_kip848_at_broker(replace(planned, identity=kafka(KAFKA_4), coordinator="broker"), True,
                                        notes.append)
    assert at_kafka.protocols == planned.protocols and notes == []  # Kafka 4.x runs KIP-848: nothing left out
    tansu = CoordinatorIdentity("t:9092", "broker", "tansu_cluster", None, {})
    at_tansu = without_kip848_at_broker(replace(planned, identity=tansu, coordinator="broker"), True, notes.append)
    assert [p.name for p in at_tansu.protocols] == ["legacy-range", "range", "cooperative-sticky"] and len(notes) == 1
    # under --settings same the KIP-848 group gets the classic members' session as its own config
    given = with_group_timeouts(at_kafka)
    assert given.group_timeouts_ms == (4000, 1110)
    (consumer,) = [p for p in given.protocols if p.group_protocol == "consumer"]
    assert (given.timeouts(consumer).session_ms, given.timeouts(consumer).heartbeat_ms) == (4000, 1110)
    assert table(given)["consumer"]["session and heartbeat"] == (
        "the group's, set by the run: consumer.session.timeout.ms 4000, consumer.heartbeat.interval.ms 1110")
    # ... nowhere else: a front has its own options, stock runs Kafka's own
    assert with_group_timeouts(replace(at_kafka, identity=front(LOCAL_UP))).group_timeouts_ms is None
    assert with_group_timeouts(replace(at_kafka, settings_mode="stock")).group_timeouts_ms is None
    # a Kafka broker at its default bounds would refuse it: said before anything starts
    defaults = {**KAFKA_4, "group.consumer.min.session.timeout.ms": "45000"}
    with pytest.raises(UsageError, match=r"^the KIP-848 groups under --settings same: consumer.session.timeout.ms "
                       r"4000 is outside the coordinator's group.consumer.min.session.timeout.ms 45000 to "
                       r"group.consumer.max.session.timeout.ms 60000, which refuses it \(INVALID_CONFIG\); widen"):
        with_group_timeouts(replace(at_kafka, identity=kafka(defaults)))


def test_a_coordinator_is_named_with_its_version():
    assert kafka(KAFKA_4).name == "Apache Kafka 4.4.0's own group coordinator at k:9092 (cluster x)"
    assert kafka(KAFKA_4).coordinator == "Apache Kafka 4.4.0" and kafka(KAFKA_4).runs_kip848
    assert front({}).coordinator == "zkconsumer 0.1.0 (the front)" and front({}).runs_kip848
    unnamed = CoordinatorIdentity("t:9092", "broker", "tansu_cluster", None, {})
    assert (unnamed.coordinator, unnamed.runs_kip848) == ("an unnamed broker", False)
