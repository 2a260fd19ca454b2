"""Apache Kafka 4.x from its artifacts, as :class:`~zkconsumer.embedded.kafka_broker.LocalKafkaKRaft` runs it: one
KRaft node (broker and controller) that takes a topic, a message, and a KIP-848 consumer, its own coordinator
assigning it the partition. One node for the module: a JVM start is several seconds."""

from __future__ import annotations

import uuid

import pytest
from support import poll_values, produce, require_kafka

from zkconsumer.embedded.kafka_broker import LocalKafkaKRaft
from zkconsumer.kafka.topics import create_topic

pytestmark = pytest.mark.servers


@pytest.fixture(scope="module")
def kafka4(tmp_path_factory):
    require_kafka("kafka-4")
    with LocalKafkaKRaft(tmp_path_factory.mktemp("kafka-4")) as broker:
        yield broker


def test_a_kip848_consumer_is_assigned_and_reads_what_was_produced(kafka4):
    from confluent_kafka import Consumer

    assert kafka4.description.startswith("Apache Kafka 4.")
    topic = f"kraft-{uuid.uuid4().hex[:8]}"
    create_topic(kafka4.bootstrap, topic, partitions=2)
    produce(kafka4.bootstrap, topic, [b"hello"], partition=1)
    consumer = Consumer({"bootstrap.servers": kafka4.bootstrap, "group.id": f"g-{topic}",
                         "group.protocol": "consumer", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        assert poll_values(consumer, 1) == [b"hello"]
        # Kafka's own KIP-848 coordinator gave the one member both partitions
        assert {(tp.topic, tp.partition) for tp in consumer.assignment()} == {(topic, 0), (topic, 1)}
    finally:
        consumer.close()

