"""The session fixtures give real servers, and chroots keep tests apart."""

from __future__ import annotations

import uuid

from confluent_kafka import Consumer, Producer, TopicPartition
from conftest import CHROOT_BASE

from zkconsumer.embedded.zookeeper import ruok
from zkconsumer.topics import create_topic
from zkconsumer.zkclient import zookeeper


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
