"""The comparison's protocols as data and as member configurations, without servers: every protocol's member gets a
configuration librdkafka accepts (the classic-only settings it refuses under ``group.protocol=consumer`` are left
out), every protocol is compared by default (the KIP-848 ones not at the broker's own coordinator), and the scene
clock starts every scene for every protocol at once."""

from __future__ import annotations

import argparse
import io
import json
import threading
import time
from dataclasses import replace

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from time_scale import bounded

from zkconsumer.cli.migration import say, validate
from zkconsumer.errors import UsageError
from zkconsumer.log import configure_logging
from zkconsumer.members import modern_member
from zkconsumer.migration.comparison import without_kip848_at_broker
from zkconsumer.migration.run import SceneClock
from zkconsumer.migration.scenes import KIP848_PROTOCOLS, KNOWN, PROTOCOLS, parse_protocols
from zkconsumer.scenarios.parse import load

pytestmark = pytest.mark.migration
CLASSIC_ONLY = ("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy")
UNREACHABLE = "127.0.0.1:9"  # creating a consumer connects nowhere yet


def config_of(name: str) -> dict[str, object]:
    protocol = KNOWN[name]
    group_protocol = "consumer" if protocol.group_protocol == "consumer" else "classic"
    return modern_member.consumer_config(bootstrap=UNREACHABLE, group="g", consumer_id="g_m1",
                                         strategy=protocol.strategy, session_timeout_ms=4000,
                                         group_protocol=group_protocol)


def test_every_protocol_is_compared_by_default_but_kip848_s_not_at_the_broker_s_own_coordinator(tmp_path, capsys):
    args = argparse.Namespace(protocols=None, partitions=4, rate=50.0, pace=2.0, bootstrap_server=None,
                              zookeeper=None, output_dir=tmp_path / "out")
    settings = validate(args)
    assert [p.name for p in settings.protocols] == list(KNOWN)
    at_broker = without_kip848_at_broker(replace(settings, coordinator="broker"), default_protocols=True, say=say)
    assert [p.name for p in at_broker.protocols] == list(PROTOCOLS)
    assert capsys.readouterr().err == (
        "zkconsumer migration: consumer-uniform, consumer-range left out: the broker's own group coordinator does "
        "not run KIP-848 (name them in --protocols to try)\n")
    at_front = replace(settings, coordinator="front")
    assert without_kip848_at_broker(at_front, default_protocols=True, say=say) == at_front
    asked = replace(settings, coordinator="broker", protocols=parse_protocols("consumer-uniform,legacy-range"))
    assert without_kip848_at_broker(asked, default_protocols=False, say=say) == asked
    assert capsys.readouterr().err == ""


def test_the_kip848_groups_keep_the_classic_session_and_kafka_s_ratio_of_heartbeats():
    assert config_of("range")["heartbeat.interval.ms"] == modern_member.classic_heartbeat_interval_ms(4000) == 666
    # Kafka's defaults: group.consumer.heartbeat.interval.ms 5000 against heartbeat.interval.ms 3000
    assert modern_member.consumer_group_timeouts_ms(4000) == (4000, 1110)


def test_the_kip848_protocols_are_known_but_not_in_the_classic_list():
    assert list(KIP848_PROTOCOLS) == ["consumer-uniform", "consumer-range"]
    assert not set(KIP848_PROTOCOLS) & set(PROTOCOLS)
    assert [p.name for p in parse_protocols("consumer-range,legacy-range")] == ["consumer-range", "legacy-range"]
    kinds = {name: (p.kind, p.title, p.rebalancing) for name, p in KNOWN.items()}
    assert kinds == {
        "legacy-range": ("legacy ZooKeeper", "legacy-range", "eager"),
        "legacy-roundrobin": ("legacy ZooKeeper", "legacy-roundrobin", "eager"),
        "range": ("classic", "eager range", "eager"),
        "roundrobin": ("classic", "eager roundrobin", "eager"),
        "cooperative-sticky": ("classic", "cooperative-sticky", "cooperative"),
        "consumer-uniform": ("KIP-848 consumer", "KIP-848 consumer (uniform)", "incremental"),
        "consumer-range": ("KIP-848 consumer", "KIP-848 consumer (range)", "incremental"),
    }
    # ``consumer`` alone is KIP-848 with Kafka's default assignor, as ``demo --protocol consumer`` takes it
    assert [p.name for p in parse_protocols("consumer,legacy-range")] == ["consumer-uniform", "legacy-range"]
    with pytest.raises(UsageError, match="unknown protocol 'consumers'.*consumer-uniform, consumer-range"):
        parse_protocols("consumers")


@pytest.mark.parametrize("name", ["range", "roundrobin", "cooperative-sticky"])
def test_a_classic_member_has_the_legacy_members_timings(name):
    config = config_of(name)
    assert config["partition.assignment.strategy"] == KNOWN[name].strategy
    assert (config["session.timeout.ms"], config["heartbeat.interval.ms"]) == (4000, 666)
    assert "group.protocol" not in config and "group.remote.assignor" not in config
    Consumer(config).close()  # librdkafka takes it


@pytest.mark.parametrize(("name", "assignor"), [("consumer-uniform", "uniform"), ("consumer-range", "range")])
def test_a_kip848_member_asks_for_its_server_assignor_and_leaves_the_rest_to_the_coordinator(name, assignor):
    config = config_of(name)
    assert (config["group.protocol"], config["group.remote.assignor"]) == ("consumer", assignor)
    assert not set(CLASSIC_ONLY) & set(config)
    assert config["enable.auto.commit"] is True and config["auto.commit.interval.ms"] == 200
    Consumer(config).close()  # librdkafka takes it
    for key, value in (("session.timeout.ms", 4000), ("heartbeat.interval.ms", 666),
                       ("partition.assignment.strategy", "range")):  # why they are left out: refused
        with pytest.raises(KafkaException, match=f"`{key}` is not supported for `group.protocol=consumer`"):
            Consumer({**config, key: value})
    argv = modern_member.command(bootstrap="b:9092", group="g", topic="t", consumer_id="g_m1", strategy=assignor,
                                 group_protocol="consumer")
    parsed = modern_member.build_parser().parse_args(argv[3:])
    assert (parsed.group_protocol, parsed.strategy) == ("consumer", assignor)
    assert modern_member.incremental(parsed.strategy, parsed.group_protocol)


def test_a_strategy_of_the_other_protocol_is_refused():
    with pytest.raises(ValueError, match="--strategy roundrobin is not an assignor of the consumer protocol"):
        modern_member.consumer_config(bootstrap="b", group="g", consumer_id="c", strategy="roundrobin",
                                      group_protocol="consumer")
    with pytest.raises(ValueError, match="--strategy uniform is not an assignor of the classic protocol"):
        modern_member.consumer_config(bootstrap="b", group="g", consumer_id="c", strategy="uniform")
    assert not modern_member.incremental("range") and modern_member.incremental("cooperative-sticky")
    assert "--group-protocol" not in modern_member.command(bootstrap="b", group="g", topic="t", consumer_id="c")


def test_the_clock_starts_each_scene_for_every_player_at_once_and_lets_a_leaver_go():
    stop = threading.Event()
    scenes = load("migration").scenes  # five scenes
    clock = SceneClock(3, stop, len(scenes))
    ready: dict[int, dict[int, float]] = {0: {}, 1: {}, 2: {}}  # player -> scene -> when it was ready for it
    began: dict[int, dict[int, float]] = {0: {}, 1: {}, 2: {}}  # ... and when it began it
    failures: list[BaseException] = []  # a failed assertion in a player's thread, for the test to raise

    def play(player: int, delay: float, leave_after: int | None = None) -> None:
        try:
            for scene in scenes:
                time.sleep(delay)  # settling, at its own speed
                if leave_after is not None and scene.number > leave_after:
                    return
                ready[player][scene.number] = time.monotonic()
                assert clock.arrive(player, scene.number)
                began[player][scene.number] = time.monotonic()
                assert clock.producing and clock.scene == scene.number
            assert clock.arrive(player, clock.end)
        except BaseException as failure:
            failures.append(failure)
        finally:
            clock.leave(player)

    assert clock.scene == 0 and not clock.producing
    threads = [threading.Thread(target=play, args=(0, 0.0)), threading.Thread(target=play, args=(1, 0.05)),
               threading.Thread(target=play, args=(2, 0.0, 2))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(bounded(10))
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    assert list(began[0]) == list(began[1]) == [1, 2, 3, 4, 5] and list(began[2]) == [1, 2]
    for number in began[0]:  # nobody began a scene before every player still playing was ready for it
        last_ready = max(ready[player][number] for player in ready if number in ready[player])
        assert min(began[player][number] for player in began if number in began[player]) >= last_ready
    assert clock.scene == clock.end and not clock.producing
    stopped = SceneClock(2, stop, len(scenes))
    stop.set()
    assert stopped.arrive(0, 1) is False  # an interrupted run waits for nobody


@pytest.mark.parametrize(("strategy", "group_protocol"), [("uniform", "consumer"), ("cooperative-sticky", "classic")])
def test_the_callbacks_hand_over_only_what_moves_and_kip848_completes_each_step(strategy, group_protocol):
    """The member's callbacks on a real (unconnected) consumer: incremental under both, and under KIP-848 a
    revocation is a step complete in itself (no follow-up round), so the settle rule is not left waiting."""
    stream = io.StringIO()
    configure_logging(json=True, level="info", stream=stream, force=True)
    config = modern_member.consumer_config(bootstrap=UNREACHABLE, group="g", consumer_id="g_m1", strategy=strategy,
                                           group_protocol=group_protocol)
    consumer = Consumer(config)
    events = modern_member.RebalanceEvents("g_m1", "g", strategy, group_protocol)
    events.consumer = consumer
    try:
        events.on_assign(consumer, [TopicPartition("t", 0), TopicPartition("t", 1)])
        events.on_revoke(consumer, [TopicPartition("t", 1)])
        events.on_assign(consumer, [TopicPartition("t", 2)])
        assert sorted(p.partition for p in consumer.assignment()) == [0, 2]  # 0 was never given up
    finally:
        consumer.close()
    said = [json.loads(line) for line in stream.getvalue().splitlines()]
    completed = [(e["rebalance_id"], [p["partition"] for p in e["owned"]]) for e in said
                 if e["event"] == "rebalance.completed"]
    released = [[p["partition"] for p in e["released"]] for e in said if e["event"] == "rebalance.release"]
    assert released == [[1]] and not [e for e in said if e["event"] == "rebalance.stop_fetchers"]
    if group_protocol == "consumer":
        assert completed == [(1, [0, 1]), (2, [0]), (3, [0, 2])]
    else:  # cooperative-sticky: the revocation completes with the follow-up round's assignment
        assert completed == [(1, [0, 1]), (2, [0, 2])]
