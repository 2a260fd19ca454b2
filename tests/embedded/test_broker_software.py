"""What software a broker runs, without a server: the release a KRaft broker's highest metadata.version names, and
the embedded environment's record of its broker found by the broker's address. (The broker's ApiVersions asked of a
real Kafka 4.4 node: tests/migration/test_compare_kafka.py.)"""

from __future__ import annotations

import json

from zkconsumer.embedded.broker_software import FROM_STATE, BrokerSoftware, recorded, release_of_level


def test_a_metadata_version_level_names_its_release():
    assert [release_of_level(level) for level in (6, 7, 21, 22, 25, 26, 31, 33, 34)] == [
        None, "3.3", "3.9", "4.0", "4.0", "4.1", "4.4", "4.4", "later than 4.4"]


def test_the_environment_s_record_names_its_own_broker_only(tmp_path):
    state = {"zookeeper": "127.0.0.1:2181", "bootstrap_servers": "127.0.0.1:9092", "broker": "127.0.0.1:9092",
             "broker_kind": "kafka-4", "broker_software": "Apache Kafka 4.4.0", "processes": {}}
    (tmp_path / "state.json").write_text(json.dumps(state))
    assert recorded("localhost:9092", tmp_path) == BrokerSoftware("Apache Kafka 4.4.0", FROM_STATE)
    assert recorded("127.0.0.1:9093", tmp_path) is None  # another broker
    assert recorded("127.0.0.1:9092", tmp_path / "none") is None  # no environment there
