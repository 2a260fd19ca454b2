"""The front's group settings: Kafka's defaults unless told otherwise, Kafka's checks of KIP-848's bounds, and the
embedded environment's shorter settings given as options that say so."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest
from time_scale import bounded

from zkconsumer.embedded.front import SHORT_CLASSIC_SESSIONS, consumer_group_options, front_options
from zkconsumer.errors import UsageError
from zkconsumer.front.command_line import add_front_options, config_of

#: Kafka 4.x's broker defaults (``GroupCoordinatorConfig``), as DescribeConfigs answers them
KAFKA_DEFAULTS = {
    "group.initial.rebalance.delay.ms": "3000",
    "group.min.session.timeout.ms": "6000",
    "group.max.session.timeout.ms": "1800000",
    "group.max.size": "2147483647",
    "group.consumer.session.timeout.ms": "45000",
    "group.consumer.min.session.timeout.ms": "45000",
    "group.consumer.max.session.timeout.ms": "60000",
    "group.consumer.heartbeat.interval.ms": "5000",
    "group.consumer.min.heartbeat.interval.ms": "5000",
    "group.consumer.max.heartbeat.interval.ms": "15000",
    "group.consumer.assignors": "uniform,range",
    "group.consumer.max.size": "2147483647",
    "group.consumer.migration.policy": "bidirectional",
    "offsets.commit.timeout.ms": "5000",
}


def _config(*argv: str):
    parser = argparse.ArgumentParser()
    add_front_options(parser)
    return config_of(parser.parse_args(list(argv)), "127.0.0.1:9092")


def test_a_front_told_nothing_runs_kafka_s_defaults():
    assert _config().group_settings() == KAFKA_DEFAULTS


def test_a_front_relaying_the_group_apis_has_no_group_settings():
    assert _config("--group-coordinator", "broker").group_settings() == {}


def test_the_embedded_environment_s_short_classic_sessions_are_its_one_change():
    settings = _config(*front_options()).group_settings()
    assert {k: v for k, v in settings.items() if KAFKA_DEFAULTS[k] != v} == {"group.min.session.timeout.ms": "1000"}
    assert SHORT_CLASSIC_SESSIONS == ("--group-min-session-timeout-ms", "1000")


@pytest.mark.parametrize("argv, words", [
    (("--group-consumer-session-timeout-ms", "4000"),
     "group.consumer.session.timeout.ms (4000) must be greater than or equal to "
     "group.consumer.min.session.timeout.ms (45000)"),
    (("--group-consumer-session-timeout-ms", "90000"),
     "group.consumer.max.session.timeout.ms (60000) must be greater than or equal to "
     "group.consumer.session.timeout.ms (90000)"),
    (("--group-consumer-heartbeat-interval-ms", "1000"),
     "group.consumer.heartbeat.interval.ms (1000) must be greater than or equal to "
     "group.consumer.min.heartbeat.interval.ms (5000)"),
    (("--group-consumer-min-session-timeout-ms", "1000", "--group-consumer-session-timeout-ms", "4000",
      "--group-consumer-min-heartbeat-interval-ms", "100", "--group-consumer-heartbeat-interval-ms", "4000"),
     "group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms"),
])
def test_kip_848_settings_outside_kafka_s_bounds_are_refused_in_kafka_s_words(argv, words):
    with pytest.raises(UsageError) as refused:
        _config(*argv)
    assert str(refused.value) == words


def test_shorter_kip_848_settings_come_with_their_bounds():
    settings = _config(*consumer_group_options(session_timeout_ms=4000, heartbeat_interval_ms=1110)).group_settings()
    assert {k: v for k, v in settings.items() if KAFKA_DEFAULTS[k] != v} == {
        "group.consumer.session.timeout.ms": "4000", "group.consumer.min.session.timeout.ms": "4000",
        "group.consumer.heartbeat.interval.ms": "1110", "group.consumer.min.heartbeat.interval.ms": "1110"}
    longer = _config(*consumer_group_options(session_timeout_ms=90_000, heartbeat_interval_ms=20_000)).group_settings()
    assert (longer["group.consumer.max.session.timeout.ms"], longer["group.consumer.max.heartbeat.interval.ms"]) == (
        "90000", "20000")


def test_the_front_refuses_a_setting_out_of_bounds_in_one_line():
    done = subprocess.run([sys.executable, "-m", "zkconsumer.front", "--bootstrap-server", "127.0.0.1:9",
                           "--group-consumer-session-timeout-ms", "4000"],
                          capture_output=True, text=True, timeout=bounded(60))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "zkconsumer front: group.consumer.session.timeout.ms (4000) must be greater than or equal to "
        "group.consumer.min.session.timeout.ms (45000)"]
