"""The migration from ZooKeeper-stored offsets to the Java consumer, as Kafka's documentation and KIP-125 describe it,
end to end against the real ZooKeeper and broker, under continuous production:

0. a group of two legacy members with ``offsets.storage=zookeeper``;
1. a rolling bounce to ``offsets.storage=kafka`` (dual commit on, its default): for a while the group is mixed,
   and the member on Kafka storage starts from the larger of the two stores' offsets;
2. a second rolling bounce with ``dual.commit.enabled=false``: ZooKeeper's offsets stop moving;
3. every legacy member stopped, then modern confluent-kafka consumers (``subscribe``, same group id) that continue
   exactly from the offsets in Kafka;
4. the rollback: the modern consumers stopped, ``offsets migrate --to zookeeper``, and a legacy member on ZooKeeper
   storage continues from there.

Every message produced is delivered at least once over the whole walk, and ``groups describe --offsets-storage
both`` shows each step's state (the README's migration section walks through the same commands).
"""

from __future__ import annotations

import json
import threading
import uuid

import pytest
from support import produce, wait_for
from time_scale import bounded, scaled

from zkconsumer import ConsumerConfig, ConsumerTimeoutException, cli, create_connector
from zkconsumer.kafka.group_offsets import GroupOffsetsClient
from zkconsumer.kafka.topics import create_topic
from zkconsumer.types import TopicPartition

PARTITIONS = 2


class Producer(threading.Thread):
    """Produces ``v0, v1, ...`` round robin over the partitions until stopped; ``delivered`` are the acknowledged."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        super().__init__(daemon=True, name="producer")
        from confluent_kafka import Producer as KafkaProducer

        self.topic = topic
        self.producer = KafkaProducer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        self.delivered: set[str] = set()
        self.stop = threading.Event()

    def _acked(self, err, msg) -> None:
        if err is None:
            self.delivered.add(msg.value().decode())

    def run(self) -> None:
        n = 0
        while not self.stop.wait(0.02):
            self.producer.produce(self.topic, value=f"v{n}".encode(), partition=n % PARTITIONS,
                                  on_delivery=self._acked)
            self.producer.poll(0)
            n += 1
        assert self.producer.flush(bounded(10)) == 0


class LegacyMember:
    """A legacy connector with one stream, read by a thread that records every message it is handed."""

    def __init__(self, zk_connect: str, group: str, topic: str, name: str, received: list, **props: str) -> None:
        self.connector = create_connector(ConsumerConfig({
            "zookeeper.connect": zk_connect, "group.id": group, "consumer.id": name, "auto.offset.reset": "smallest",
            "consumer.timeout.ms": 100, "rebalance.backoff.ms": 200, "refresh.leader.backoff.ms": 100,
            "auto.commit.interval.ms": 300, "offsets.channel.backoff.ms": 100, **props,
        }))
        self.stream = self.connector.create_message_streams({topic: 1})[topic][0]
        self.received = received
        self.thread = threading.Thread(target=self._read, daemon=True, name=name)
        self.thread.start()

    def _read(self) -> None:
        while True:
            try:
                for message in self.stream:
                    self.received.append((message.partition, message.offset, message.message.decode()))
                return  # the stream ended: shut down
            except ConsumerTimeoutException:
                continue

    def stop(self) -> None:
        self.connector.shutdown()  # auto-commit: what was handed out is committed on the way out
        self.thread.join(bounded(10))


def run_cli(capsys, *args: str) -> str:
    """The command in this process (a child process costs more to start than the command takes)."""
    capsys.readouterr()
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    assert status == 0, err
    return out


def describe_both(capsys, zk_connect: str, group: str) -> dict[int, dict]:
    out = run_cli(capsys, "groups", "describe", "--group", group, "--offsets-storage", "both", "--json",
                  "--zookeeper", zk_connect)
    return {row["partition"]: row for row in json.loads(out)}


def kafka_offsets(kafka: GroupOffsetsClient, group: str, topic: str) -> dict[int, int]:
    answer = kafka.fetch(group, [TopicPartition(topic, p) for p in range(PARTITIONS)])
    return {tp.partition: offset for tp, offset in answer.offsets.items()}


def consumed_more(received: list, than: int, by: int = 10) -> bool:
    return len(received) >= than + by


@pytest.mark.timeout(400)  # its waits: 13 of 15 or 30 s (225 s), 6 member stops of 10 s, 15 + 10 + 2 x 10 s
def test_zookeeper_to_kafka_to_the_java_consumer_and_back(zk, kafka_zk, bootstrap_servers, topic_name, capsys):
    from confluent_kafka import Consumer, KafkaError, KafkaException

    group = f"walk-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap_servers, topic_name, PARTITIONS)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/{PARTITIONS - 1}/state"))
    kafka = GroupOffsetsClient(bootstrap_servers, scaled(5))
    received: list[tuple[int, int, str]] = []
    producer = Producer(bootstrap_servers, topic_name)
    producer.start()
    members: list[LegacyMember] = []
    modern: list = []
    try:
        # 0. ZooKeeper storage: offsets in znodes only.
        members = [LegacyMember(kafka_zk, group, topic_name, f"c{i}", received) for i in (1, 2)]
        wait_for(lambda: consumed_more(received, 0, 30))
        rows = wait_for(lambda: (r := describe_both(capsys, kafka_zk, group)) and all(
            r.get(p, {}).get("offset") is not None for p in range(PARTITIONS)) and r)
        assert all(rows[p]["kafka_offset"] is None for p in range(PARTITIONS))

        # 1. Rolling bounce to offsets.storage=kafka (dual commit is on by default).
        for i, old in enumerate(list(members)):
            seen = len(received)
            old.stop()
            members[i] = LegacyMember(kafka_zk, group, topic_name, f"c{i + 1}", received,
                                      **{"offsets.storage": "kafka"})
            wait_for(lambda seen=seen: consumed_more(received, seen))
        rows = wait_for(lambda: (r := describe_both(capsys, kafka_zk, group)) and all(
            r[p]["kafka_offset"] is not None for p in range(PARTITIONS)) and r)
        for p in range(PARTITIONS):  # ZooKeeper is written after Kafka, and read before it here
            assert rows[p]["offset"] is not None and rows[p]["kafka_offset"] >= rows[p]["offset"]

        # 2. Second rolling bounce: dual commit off, ZooKeeper's offsets stop there.
        for i, old in enumerate(list(members)):
            seen = len(received)
            old.stop()
            members[i] = LegacyMember(kafka_zk, group, topic_name, f"c{i + 1}", received,
                                      **{"offsets.storage": "kafka", "dual.commit.enabled": "false"})
            wait_for(lambda seen=seen: consumed_more(received, seen))
        frozen = {p: int(zk.get(f"/consumers/{group}/offsets/{topic_name}/{p}")[0]) for p in range(PARTITIONS)}
        rows = wait_for(lambda: (r := describe_both(capsys, kafka_zk, group)) and all(
            r[p]["kafka_offset"] > frozen[p] for p in range(PARTITIONS)) and r)
        assert {p: rows[p]["offset"] for p in range(PARTITIONS)} == frozen
        listed = run_cli(capsys, "groups", "list", "--zookeeper", kafka_zk, "--bootstrap-server", bootstrap_servers)
        lines = [line.split() for line in listed.splitlines()]
        ours = [line for line in lines if line[0] == group]
        # the znodes are still there: delete them when done (the two columns scripts read; then where the group lives,
        # its type and state at the broker)
        assert [line[:2] for line in ours] == [[group, "both"]]
        assert ours == [[group, "both", "zookeeper+broker", "classic", "Empty"]]
        # every other group is one the broker's coordinator knows and this test's ZooKeeper does not
        assert all(line[2] == "broker" for line in lines if line not in ours)

        # 3. Stop the legacy group; the Java consumers continue from the offsets in Kafka.
        for member in members:
            member.stop()
        members = []
        start = kafka_offsets(kafka, group, topic_name)
        modern_received: list[tuple[int, int, str]] = []
        modern = [Consumer({"bootstrap.servers": bootstrap_servers, "group.id": group, "client.id": f"java-{i}",
                            "auto.offset.reset": "latest", "auto.commit.interval.ms": 300,
                            "session.timeout.ms": 3000, "heartbeat.interval.ms": 500,
                            "max.poll.interval.ms": 60000}) for i in (1, 2)]
        for consumer in modern:
            consumer.subscribe([topic_name])

        def poll_all() -> None:
            for consumer in modern:
                message = consumer.poll(0.05)
                if message is not None and message.error() is None:
                    modern_received.append((message.partition(), message.offset(), message.value().decode()))

        wait_for(lambda: (poll_all(), len({p for p, _, _ in modern_received}) == PARTITIONS)[1], timeout=30)
        producer.stop.set()
        producer.join(bounded(15))

        def everything_delivered() -> bool:
            poll_all()
            return {v for _, _, v in received + modern_received} >= producer.delivered

        wait_for(everything_delivered, timeout=30)  # at least once, across every step
        assert len(producer.delivered) > 100
        # Duplicates come only from what was consumed but not committed when a partition changed hands; every hand-over
        # here is clean (auto-commit before a rebalance releases, and at shutdown), so there are none.
        values = [v for _, _, v in received + modern_received]
        assert len(values) == len(set(values))
        firsts = {p: min(o for q, o, _ in modern_received if q == p) for p in range(PARTITIONS)}
        assert firsts == start  # exactly where the legacy group left off: auto.offset.reset=latest never applied
        for consumer in modern:
            try:
                consumer.commit(asynchronous=False)
            except KafkaException as exc:  # nothing new since the last auto-commit
                assert exc.args[0].code() == KafkaError._NO_OFFSET
        rows = wait_for(lambda: (r := describe_both(capsys, kafka_zk, group)) and all(
            r[p]["kafka_lag"] == 0 for p in range(PARTITIONS)) and r)
        assert {p: rows[p]["offset"] for p in range(PARTITIONS)} == frozen

        # 4. Rollback: stop the Java consumers, copy Kafka's offsets to ZooKeeper, go back to ZooKeeper storage.
        for consumer in modern:
            consumer.close()
        modern = []
        ends = kafka_offsets(kafka, group, topic_name)
        run_cli(capsys, "offsets", "migrate", "--group", group, "--to", "zookeeper", "--zookeeper", kafka_zk)
        rows = describe_both(capsys, kafka_zk, group)
        assert {p: (rows[p]["offset"], rows[p]["kafka_offset"]) for p in range(PARTITIONS)} == \
            {p: (ends[p], ends[p]) for p in range(PARTITIONS)}
        produce(bootstrap_servers, topic_name, [b"after-0"], partition=0)
        produce(bootstrap_servers, topic_name, [b"after-1"], partition=1)
        back = LegacyMember(kafka_zk, group, topic_name, "c1", [])
        members = [back]
        wait_for(lambda: sorted(v for _, _, v in back.received) == ["after-0", "after-1"])
        assert sorted((p, o) for p, o, _ in back.received) == [(0, ends[0]), (1, ends[1])]
    finally:
        producer.stop.set()
        for member in members:
            member.stop()
        for consumer in modern:
            consumer.close()
