"""ConsumerConfig: Kafka 0.10.0.1's keys and defaults, strings or native values, clear errors."""

from __future__ import annotations

import pytest
from structlog.testing import capture_logs

from zkconsumer.config import ConsumerConfig, InvalidConfigError

REQUIRED = {"zookeeper.connect": "127.0.0.1:2181", "group.id": "g1"}

DEFAULTS = {
    "consumer.id": None, "socket.timeout.ms": 30000, "socket.receive.buffer.bytes": 65536,
    "fetch.message.max.bytes": 1048576, "num.consumer.fetchers": 1, "auto.commit.enable": True,
    "auto.commit.interval.ms": 60000, "queued.max.message.chunks": 2, "rebalance.max.retries": 4,
    "fetch.min.bytes": 1, "fetch.wait.max.ms": 100, "rebalance.backoff.ms": 2000, "refresh.leader.backoff.ms": 200,
    "auto.offset.reset": "largest", "consumer.timeout.ms": -1, "exclude.internal.topics": True,
    "partition.assignment.strategy": "range", "client.id": "g1", "zookeeper.session.timeout.ms": 6000,
    "zookeeper.connection.timeout.ms": 6000, "zookeeper.sync.time.ms": 2000, "offsets.storage": "zookeeper",
    "dual.commit.enabled": False, "offsets.channel.backoff.ms": 1000, "offsets.channel.socket.timeout.ms": 10000,
    "offsets.commit.max.retries": 5, "rebalance.backoff.jitter.ms": 0,
}


def test_defaults_are_kafka_0_10_0_1():
    config = ConsumerConfig(REQUIRED)
    assert {key: config.get(key) for key in DEFAULTS} == DEFAULTS
    assert config.key_decoder(b"x") == b"x" and config.value_decoder(None) is None


def test_derived_defaults_follow_their_source():
    config = ConsumerConfig({**REQUIRED, "zookeeper.sync.time.ms": "200", "zookeeper.session.timeout.ms": "9000",
                             "offsets.storage": "Kafka"})
    assert config.rebalance_backoff_ms == 200
    assert config.zookeeper_connection_timeout_ms == 9000
    assert config.offsets_storage == "kafka" and config.dual_commit_enabled is True


def test_strings_and_native_values_parse_alike():
    as_strings = ConsumerConfig({**REQUIRED, "auto.commit.enable": "false", "consumer.timeout.ms": "1000",
                                 "auto.offset.reset": "smallest"})
    native = ConsumerConfig({**REQUIRED, "auto.commit.enable": False, "consumer.timeout.ms": 1000,
                             "auto.offset.reset": "smallest"})
    assert repr(as_strings) == repr(native)
    assert native.auto_commit_enable is False and native.consumer_timeout_ms == 1000


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("auto.offset.reset", "earliest", "config auto.offset.reset='earliest': must be one of smallest, largest"),
        ("partition.assignment.strategy", "sticky", "must be one of range, roundrobin"),
        ("auto.commit.enable", "yes", "config auto.commit.enable='yes': expected true or false"),
        ("rebalance.max.retries", "0", "config rebalance.max.retries='0': must be at least 1"),
        ("queued.max.message.chunks", "two", "expected a whole number"),
        ("consumer.timeout.ms", 1.5, "expected a whole number"),
        ("group.id", "bad group", "config group.id='bad group': only a-z A-Z 0-9 . _ - are allowed"),
        ("client.id", "a/b", "config client.id='a/b'"),
        ("socket.timeout.ms", "50", "socket.timeout.ms=50 must be at least fetch.wait.max.ms=100"),
        ("value.decoder", "utf-8", "config value.decoder='utf-8': expected a callable"),
    ],
)
def test_invalid_values_name_the_key(key, value, message):
    with pytest.raises(InvalidConfigError) as err:
        ConsumerConfig({**REQUIRED, key: value})
    assert message in str(err.value)


def test_group_id_and_zookeeper_connect_are_required():
    with pytest.raises(InvalidConfigError, match="config group.id is required"):
        ConsumerConfig({"zookeeper.connect": "x:1"})
    with pytest.raises(InvalidConfigError, match="config zookeeper.connect is required"):
        ConsumerConfig({"group.id": "g"})


def test_unknown_keys_warn_and_mirror_keys_are_accepted():
    with capture_logs() as events:
        ConsumerConfig({**REQUIRED, "fetch.size": "1", "mirror.consumer.numthreads": "2"})
    assert [(e["event"], e["key"]) for e in events] == [("config.unknown_key", "fetch.size")]


def test_a_config_cannot_be_changed_once_made():
    config = ConsumerConfig(REQUIRED)
    with pytest.raises(AttributeError, match="immutable"):
        config.group_id = "other"


def test_from_properties_reads_a_legacy_file(tmp_path):
    path = tmp_path / "consumer.properties"
    path.write_text(
        "# consumer.properties of a 0.8 deployment\n"
        "zookeeper.connect=zk1:2181,zk2:2181/kafka\n"
        "group.id : legacy-group\n"
        "! another comment style\n"
        "zookeeper.session.timeout.ms 400\\\n"
        "  0\n"
        "auto.offset.reset=smallest\n"
    )
    config = ConsumerConfig.from_properties(path, {"consumer.timeout.ms": 500})
    assert config.zookeeper_connect == "zk1:2181,zk2:2181/kafka"
    assert config.group_id == "legacy-group"
    assert config.zookeeper_session_timeout_ms == 4000
    assert config.auto_offset_reset == "smallest" and config.consumer_timeout_ms == 500
    with pytest.raises(InvalidConfigError, match="cannot read consumer properties"):
        ConsumerConfig.from_properties(tmp_path / "missing.properties")
