"""The broker on an object store (SeaweedFS, zkconsumer.embedded.object_store) keeps, across a crash and a restart on
the same port, every message it acknowledged and the offsets committed to it: what the chaos run's broker fault
relies on."""

from __future__ import annotations

import time

import pytest
from time_scale import bounded

from zkconsumer.embedded.broker import LocalTansu
from zkconsumer.embedded.object_store import LocalObjectStore
from zkconsumer.kafka.topics import create_topic

# its waits: 30 + 20 + 60 + 20 + 30 s, and a broker started twice
pytestmark = [pytest.mark.servers, pytest.mark.timeout(240)]
TOPIC = "kept"


def produce_acknowledged(bootstrap: str, n: int) -> set[str]:
    from confluent_kafka import Producer

    acked: set[str] = set()
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for i in range(n):
        producer.produce(TOPIC, value=f"m{i}".encode(), partition=i % 2,
                         on_delivery=lambda err, msg: err is None and acked.add(msg.value().decode()))
    producer.flush(bounded(30))
    return acked


def read_all(bootstrap: str, expected: int) -> set[str]:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "reader", "enable.auto.commit": False,
                         "enable.partition.eof": True})
    consumer.assign([TopicPartition(TOPIC, p, 0) for p in range(2)])
    seen: set[str] = set()
    ends = 0
    try:
        deadline = time.monotonic() + bounded(60)
        while time.monotonic() < deadline:
            message = consumer.poll(0.1)
            if message is None:
                continue
            if message.error():
                ends += message.error().code() == -191  # _PARTITION_EOF
                if ends >= 2 and len(seen) >= expected:
                    break
                continue
            seen.add(message.value().decode())
    finally:
        consumer.close()
    return seen


def committed(bootstrap: str, offsets: dict[int, int] | None = None) -> dict[int, int]:
    """Commit ``offsets`` for the group ``keeper`` (when given), and read back what the broker holds."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "keeper", "enable.auto.commit": False})
    try:
        if offsets:
            consumer.commit(offsets=[TopicPartition(TOPIC, p, o) for p, o in offsets.items()], asynchronous=False)
        return {tp.partition: tp.offset
                for tp in consumer.committed([TopicPartition(TOPIC, p) for p in range(2)], timeout=bounded(20))}
    finally:
        consumer.close()


def test_a_broker_on_the_object_store_keeps_messages_and_committed_offsets_across_a_crash(tmp_path):
    with LocalObjectStore(tmp_path / "s3", buckets=("tansu",)) as store:
        broker = LocalTansu.on_object_store(tmp_path / "broker", store)
        with broker:
            create_topic(broker.bootstrap, TOPIC, 2)
            acked = produce_acknowledged(broker.bootstrap, 200)
            assert len(acked) == 200
            assert committed(broker.bootstrap, {0: 40, 1: 55}) == {0: 40, 1: 55}
            port = broker.port
            assert broker.record is not None
            broker.record.stop(0.1)  # SIGTERM, SIGKILL 0.1 s later: a crash, near enough
            broker.record = None
            broker.start()
            assert broker.port == port
            assert read_all(broker.bootstrap, len(acked)) >= acked
            assert committed(broker.bootstrap) == {0: 40, 1: 55}
            more = produce_acknowledged(broker.bootstrap, 10)  # and it goes on taking messages
            assert len(more) == 10
    assert not any(path.exists() for path in store.grpc_sockets())  # nothing of it left outside its directory
