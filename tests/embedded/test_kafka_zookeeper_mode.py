"""Apache Kafka 3.9 in ZooKeeper mode from its artifacts, as
:class:`~zkconsumer.embedded.kafka_broker.LocalKafkaZooKeeperMode` runs it: the broker registers itself in
``/brokers/ids`` of its chroot with the PLAINTEXT endpoint a ZooKeeper-era consumer reads (no bridge), writes its
topics there, and serves a message. The session's broker (conftest.py's ``kafka_zookeeper_mode``): a JVM
start is several seconds."""

from __future__ import annotations

import uuid

import pytest
from support import poll_values, produce, wait_for

from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.cluster import read_brokers, read_partition_state, read_topic

pytestmark = pytest.mark.servers


def test_the_broker_registers_itself_and_its_topics_in_its_chroot(kafka_zookeeper_mode):
    from confluent_kafka import Consumer, TopicPartition

    kafka39 = kafka_zookeeper_mode
    assert kafka39.description.startswith("Apache Kafka 3.9.")
    with zookeeper(kafka39.zookeeper_connect, quiet=True) as zk:
        [registered] = read_brokers(zk)
        assert (registered.id, registered.address) == (kafka39.broker_id, kafka39.address)
        assert [e.connection_string for e in registered.endpoints] == [f"PLAINTEXT://{kafka39.address}"]

        topic = f"zkmode-{uuid.uuid4().hex[:8]}"
        create_topic(kafka39.bootstrap, topic, partitions=2)
        assert read_topic(zk, topic).replicas == {0: (kafka39.broker_id,), 1: (kafka39.broker_id,)}
        wait_for(lambda: zk.exists(f"/brokers/topics/{topic}/partitions/1/state"))
        assert read_partition_state(zk, topic, 1).leader == kafka39.broker_id

    produce(kafka39.bootstrap, topic, [b"hello"], partition=1)
    consumer = Consumer({"bootstrap.servers": kafka39.bootstrap, "group.id": f"g-{topic}",
                         "enable.auto.commit": False})
    try:
        consumer.assign([TopicPartition(topic, 1, 0)])
        assert poll_values(consumer, 1) == [b"hello"]
    finally:
        consumer.close()
