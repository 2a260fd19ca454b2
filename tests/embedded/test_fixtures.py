"""The session fixtures give real servers, and chroots keep tests apart."""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from support import CHROOT_BASE
from time_scale import bounded

from zkconsumer.embedded.broker import provide_broker
from zkconsumer.embedded.front import front_coordinates_groups, front_options
from zkconsumer.embedded.process import free_port
from zkconsumer.embedded.servers import SESSION, ServerOptions, kafka_server
from zkconsumer.embedded.zookeeper import provide_zookeeper, ruok
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.kafka.metadata import admin_client, broker_answers, fetch_metadata
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
    assert producer.flush(bounded(10)) == 0
    consumer = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": "unused", "enable.auto.commit": False})
    consumer.assign([TopicPartition(topic_name, 1, 0)])
    got = []
    deadline = time.monotonic() + bounded(20)
    while len(got) < 5 and time.monotonic() < deadline:
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append((msg.partition(), msg.offset(), msg.value()))
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


def test_clients_bootstrap_through_a_front_and_the_broker_is_reachable_beside_it(bootstrap_servers, broker_bootstrap,
                                                                               kafka_addresses):
    if not kafka_addresses.fronted:
        pytest.skip("KAFKA_BOOTSTRAP names a broker: no front is put in front of it")
    assert bootstrap_servers != broker_bootstrap
    assert broker_answers(broker_bootstrap)
    through = fetch_metadata(admin_client(bootstrap_servers), bootstrap_servers)
    assert [b.address for b in through.brokers.values()] == [bootstrap_servers]  # the front names itself
    direct = fetch_metadata(admin_client(broker_bootstrap), broker_bootstrap)
    assert [b.address for b in direct.brokers.values()] == [broker_bootstrap]


def test_a_broker_in_kafka_bootstrap_gets_no_front(broker_bootstrap, tmp_path, monkeypatch):
    monkeypatch.setenv("KAFKA_BOOTSTRAP", broker_bootstrap)
    with kafka_server(ServerOptions(embedded=SESSION, workdir=tmp_path, front=True)) as addresses:
        assert addresses.bootstrap == addresses.broker == broker_bootstrap and not addresses.fronted
    assert not (tmp_path / "front").exists()


def test_a_front_is_started_in_front_of_a_local_broker_and_stopped_with_it(tmp_path, monkeypatch):
    monkeypatch.delenv("KAFKA_BOOTSTRAP", raising=False)
    monkeypatch.setenv("ZKCONSUMER_NO_DOCKER", "1")
    fronted = ServerOptions(embedded=SESSION, workdir=tmp_path, front=True, front_options=front_options())
    with kafka_server(fronted) as addresses:
        assert addresses.fronted and broker_answers(addresses.bootstrap) and broker_answers(addresses.broker)
        assert (tmp_path / "front" / "front.log").exists()
    assert not broker_answers(addresses.bootstrap, timeout=0.5) and not broker_answers(addresses.broker, timeout=0.5)
    with kafka_server(ServerOptions(embedded=SESSION, workdir=tmp_path / "direct")) as direct:
        assert not direct.fronted and broker_answers(direct.bootstrap)


def test_whether_a_front_answers_the_group_apis_is_read_from_its_last_start(tmp_path):
    log = tmp_path / "front.log"
    assert not front_coordinates_groups(log)  # no log: no front
    log.write_text('{"event": "front.started", "local_apis": []}\nnot json\n')
    assert not front_coordinates_groups(log)  # a relaying front leaves the groups to the broker
    with log.open("a") as f:
        f.write('{"event": "front.started", "local_apis": [8, 9, 11, 12]}\n{"event": "front.stopped"}\n')
    assert front_coordinates_groups(log)
