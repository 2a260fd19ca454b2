"""The handover: the Spark member alone in its group, then a legacy zkconsumer member joins and takes its range share
at the next rebalance, then leaves and the Spark member takes everything back, all under continuous production.
Nothing is lost: what the sink and the legacy member got together is every message produced; and the partitions
Spark regains resume where the legacy member left them, not where Spark had lost them."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from confluent_kafka import Producer
from support import wait_for
from time_scale import bounded

from zkconsumer import ConsumerTimeoutException, create_connector
from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk.reads import children, value_or_none

GROUP = "spark-handover"
PARTITIONS = 4


class ContinuousProducer(threading.Thread):
    """About 100 messages a second over the partitions, each value unique; ``sent`` holds the acknowledged ones."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True, name="producer")
        self.topic = topic
        self.producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "logger": LIBRDKAFKA_LOGGER})
        self.sent: set[bytes] = set()
        self.failed: list[str] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        i = 0
        while not self.stopping.is_set():
            for _ in range(10):
                value = f"v{i}".encode()
                self.producer.produce(self.topic, value=value, partition=i % PARTITIONS, on_delivery=self._delivered)
                i += 1
            self.producer.poll(0)
            time.sleep(0.1)
        assert self.producer.flush(bounded(15)) == 0

    def _delivered(self, err, message) -> None:
        if err is None:
            self.sent.add(message.value())
        else:
            self.failed.append(str(err))


class LegacyMember(threading.Thread):
    """A legacy member of the group, consuming into ``got`` (partition, offset, value) until stopped."""

    def __init__(self, zk_connect: str, topic: str) -> None:
        super().__init__(daemon=True, name="legacy-member")
        self.connector = create_connector({
            "zookeeper.connect": zk_connect, "group.id": GROUP, "consumer.id": "legacy",
            "auto.offset.reset": "smallest", "consumer.timeout.ms": 200, "rebalance.backoff.ms": 500,
            "auto.commit.interval.ms": 1000, "refresh.leader.backoff.ms": 100,
        })
        self.stream = self.connector.create_message_streams({topic: 1})[topic][0]
        self.got: list[tuple[int, int, bytes]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            try:
                for message in self.stream:
                    self.got.append((message.partition, message.offset, message.message))
                    if self.stopping.is_set():
                        return
            except ConsumerTimeoutException:
                continue

    def leave(self) -> None:
        """Stop taking messages first, so that every message handed out is in ``got``; then leave (committing)."""
        self.stopping.set()
        self.join(bounded(10))
        self.connector.shutdown()


def owners(zk, topic: str) -> dict[int, str]:
    base = f"/consumers/{GROUP}/owners/{topic}"
    read = {int(p): value_or_none(zk.get_async(f"{base}/{p}")) for p in children(zk, base)}
    return {p: got[0].decode() for p, got in read.items() if got is not None}


@pytest.mark.timeout(780)  # its waits: 15 + 180 + 5 x 60 + 10 + 30 + 15 (the producer's flush) + 120 s
def test_a_legacy_member_takes_its_share_and_gives_it_back_without_losing_a_message(
        spark, zk, kafka_zk, bootstrap_servers, topic_name):
    topic = topic_name
    create_topic(bootstrap_servers, topic, PARTITIONS)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic}/partitions/{PARTITIONS - 1}/state"))
    producer = ContinuousProducer(bootstrap_servers, topic)
    producer.start()
    reader = spark.readStream.format("zkconsumer")
    for key, value in {"zookeeper.connect": kafka_zk, "group.id": GROUP, "topics": topic,
                       "auto.offset.reset": "smallest", "rebalance.backoff.ms": "500"}.items():
        reader = reader.option(key, value)
    name = f"handover_{uuid.uuid4().hex[:8]}"
    query = reader.load().writeStream.format("memory").queryName(name).trigger(processingTime="300 milliseconds") \
        .start()

    def sink() -> list[tuple[int, int, bytes]]:
        if not query.isActive:  # fail at once, with the query's own error, rather than at a wait's timeout
            raise AssertionError(f"the query stopped: {query.exception()}")
        return [(r.partition, r.offset, bytes(r.value)) for r in spark.sql(f"select * from {name}").collect()]

    legacy = None
    try:
        # 1. Spark alone owns every partition, and streams.
        wait_for(lambda: len(owners(zk, topic)) == PARTITIONS and len(sink()) > 50, timeout=180)
        (spark_member,) = {owner.rsplit("-", 1)[0] for owner in owners(zk, topic).values()}

        # 2. A legacy member joins: range gives it partitions 0 and 1 ("spark-handover_legacy-0" sorts first).
        legacy = LegacyMember(kafka_zk, topic)
        legacy.start()
        wait_for(lambda: owners(zk, topic) == {0: f"{GROUP}_legacy-0", 1: f"{GROUP}_legacy-0",
                                               2: f"{spark_member}-0", 3: f"{spark_member}-0"}, timeout=60)
        wait_for(lambda: len(legacy.got) > 150, timeout=60)
        sink_during = len(sink())
        wait_for(lambda: len(sink()) > sink_during + 50, timeout=60)  # Spark goes on with its share

        # 3. It leaves (committing what it consumed): Spark takes everything back.
        legacy.leave()
        wait_for(lambda: owners(zk, topic) == {p: f"{spark_member}-0" for p in range(PARTITIONS)}, timeout=60)
        # production goes on until Spark streams the regained partitions past where the legacy member stopped
        stopped_at = {p: max(offset for q, offset, _ in legacy.got if q == p) for p in (0, 1)}
        wait_for(lambda: all(any(q == p and offset > stopped_at[p] for q, offset, _ in sink()) for p in (0, 1)),
                 timeout=60)
    finally:
        producer.stopping.set()
        producer.join(bounded(30))
        if legacy is not None and legacy.is_alive():
            legacy.leave()
    try:
        assert not producer.failed
        legacy_values = {value for _, _, value in legacy.got}
        wait_for(lambda: producer.sent <= {value for _, _, value in sink()} | legacy_values, timeout=120)
        got = sink()
        assert {value for _, _, value in got} | legacy_values == producer.sent  # nothing lost, nothing invented
        assert {p for p, _, _ in legacy.got} == {0, 1}
        # Spark resumed the regained partitions at the legacy member's committed offset: it did not read again the
        # last message the legacy member consumed there (it would have, resuming at its own old position).
        for p in (0, 1):
            last = max(offset for q, offset, _ in legacy.got if q == p)
            assert (p, last) not in {(q, offset) for q, offset, _ in got}, p
            assert any(q == p and offset > last for q, offset, _ in got)  # and it goes on from there
    finally:
        query.stop()
