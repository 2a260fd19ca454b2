"""The session fixtures give real servers, and chroots keep tests apart."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from support import CHROOT_BASE

from zkconsumer.embedded.broker import provide_broker
from zkconsumer.embedded.process import free_port
from zkconsumer.embedded.zookeeper import provide_zookeeper, ruok
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.kafka.metadata import broker_answers
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk.client import zookeeper

pytestmark = pytest.mark.servers  # the launchers themselves


def test_zookeeper_fixture_answers_ruok(zookeeper_connect):
    assert ruok(zookeeper_connect)


def test_chroots_do_not_see_each_other(zookeeper_connect, zk, zk_chroot):
    zk.create("/mine", b"x")
    other_chroot = f"{CHROOT_BASE}/other-{uuid.uuid4().hex[:6]}"
    with zookeeper(zookeeper_connect) as root:
        root.ensure_path(other_chroot)
        try:
            with zookeeper(zookeeper_connect + other_chroot) as other:
                assert not other.exists("/mine")
            # ... while the node is there, at its full path from the root.
            assert root.get(zk_chroot[len(zookeeper_connect):] + "/mine")[0] == b"x"
        finally:
            root.delete(other_chroot, recursive=True)


def test_broker_fixture_produces_and_fetches_with_assign(bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    producer = Producer({"bootstrap.servers": bootstrap_servers})
    for i in range(10):
        producer.produce(topic_name, key=str(i).encode(), value=f"m{i}".encode(), partition=i % 2)
    assert producer.flush(10) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": "unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic_name, 1, 0)])
    got = []
    for _ in range(100):
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append((msg.partition(), msg.offset(), msg.value()))
        if len(got) == 5:
            break
    consumer.close()
    assert got == [(1, i, f"m{2 * i + 1}".encode()) for i in range(5)]


def test_an_ensemble_in_zk_connect_is_used_as_it_is(zookeeper_connect, tmp_path, monkeypatch):
    monkeypatch.setenv("ZK_CONNECT", zookeeper_connect)
    with provide_zookeeper(tmp_path) as connect:
        assert connect == zookeeper_connect
    assert not any(tmp_path.iterdir())  # no local server was started
    monkeypatch.setenv("ZK_CONNECT", f"127.0.0.1:{free_port()}")
    with pytest.raises(ServerUnavailableError, match="did not answer"), provide_zookeeper(tmp_path):
        pass


def test_a_broker_in_kafka_bootstrap_is_used_as_it_is(bootstrap_servers, tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_BOOTSTRAP", bootstrap_servers)
    with provide_broker(tmp_path) as bootstrap:
        assert bootstrap == bootstrap_servers
    assert not any(tmp_path.iterdir())
    monkeypatch.setenv("KAFKA_BOOTSTRAP", f"127.0.0.1:{free_port()}")
    with pytest.raises(ServerUnavailableError, match="no Kafka-protocol broker answers"), provide_broker(tmp_path):
        pass


def test_without_docker_or_addresses_local_servers_are_started_and_stopped(tmp_path, monkeypatch):
    monkeypatch.delenv("ZK_CONNECT", raising=False)
    monkeypatch.delenv("KAFKA_BOOTSTRAP", raising=False)
    monkeypatch.setenv("ZKCONSUMER_NO_DOCKER", "1")
    with provide_zookeeper(tmp_path / "zk") as connect, provide_broker(tmp_path / "broker") as bootstrap:
        assert ruok(connect) and broker_answers(bootstrap)
    assert not ruok(connect, timeout=0.5) and not broker_answers(bootstrap, timeout=0.5)
