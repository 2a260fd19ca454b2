"""Offsets in Kafka (``offsets.storage=kafka``) against the real broker: the store alone (coordinator found through
the brokers registered in ZooKeeper, the guard against moving someone else's offset back, malformed offsets, an
unreachable broker), then the connector with and without dual commit. Group ids are unique per test: the broker,
and with it ``__consumer_offsets``, is shared by the whole session."""

from __future__ import annotations

import socket
import uuid

import pytest
from structlog.testing import capture_logs
from support import produce, take, wait_for
from time_scale import scaled

from zkconsumer import ConsumerConfig, create_connector
from zkconsumer.group.kafka_offset_store import KafkaOffsetStore
from zkconsumer.group.offset_storage import OffsetsCommitFailedError, OffsetStorage, dual_max
from zkconsumer.group.offset_store import ZooKeeperOffsetStore
from zkconsumer.kafka.group_offsets import GroupOffsetsClient, OffsetsUnavailableError
from zkconsumer.kafka.topics import create_topic
from zkconsumer.types import TopicPartition


def unique_group() -> str:
    return f"kafka-offsets-{uuid.uuid4().hex[:8]}"


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


def zk_offsets(zk, group: str, topic: str) -> dict[int, int]:
    base = f"/consumers/{group}/offsets/{topic}"
    if not zk.exists(base):
        return {}
    return {int(p): int(zk.get(f"{base}/{p}")[0]) for p in zk.get_children(base)}


def test_dual_max_is_kafkas_rule():
    a, b, c = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
    assert dual_max({a: 5, b: -1}, {a: 3, b: 7}, [a, b, c]) == {a: 5, b: 7}
    assert dual_max({}, {a: -1}, [a]) == {a: -1}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # kafka-python loads its schemas with importlib's old API
def test_the_store_finds_the_coordinator_through_zookeeper_and_keeps_a_higher_foreign_offset(
        zk, kafka_zk, bootstrap_servers, topic_name):
    group = unique_group()
    create_topic(bootstrap_servers, topic_name, 2)
    wait_for(lambda: zk.exists("/brokers/ids") and zk.get_children("/brokers/ids"))
    store = KafkaOffsetStore(zk, group, backoff_ms=50, socket_timeout_ms=5000)  # no bootstrap: /brokers/ids
    t0, t1 = TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)
    assert store.fetch([t0, t1]).offsets == {t0: -1, t1: -1}

    result = store.commit({t0: 5, t1: 7, TopicPartition(topic_name, 2): -1})  # -1: nothing to commit
    assert (result.written, result.failed, result.attempts) == ({t0: 5, t1: 7}, {}, 1)
    other = GroupOffsetsClient(bootstrap_servers, scaled(5))
    assert other.fetch(group, [t0, t1]).offsets == {t0: 5, t1: 7}

    # Someone else (the partition's next owner) committed 9 meanwhile: our 6 does not move it back.
    assert other.commit(group, {t0: 9}).committed == {t0: 9}
    result = store.commit({t0: 6, t1: 8})
    assert (result.written, result.kept_higher) == ({t1: 8}, {t0: 9})
    assert other.fetch(group, [t0]).offsets == {t0: 9}
    # Our own last value is not someone else's: going on from it is allowed, and so is committing it again.
    assert store.commit({t0: 10, t1: 8}).written == {t0: 10, t1: 8}

    # An offset that cannot be a position (another client wrote -5; librdkafka refuses to) is reported, never used.
    from kafka import KafkaAdminClient
    from kafka import TopicPartition as PyKafkaTopicPartition
    from kafka.structs import OffsetAndMetadata

    admin = KafkaAdminClient(bootstrap_servers=bootstrap_servers)
    try:
        admin.alter_group_offsets(group, {PyKafkaTopicPartition(topic_name, 1): OffsetAndMetadata(-5, "", -1)})
    finally:
        admin.close()
    got = KafkaOffsetStore(zk, group, socket_timeout_ms=5000).fetch([t0, t1])
    assert got.offsets == {t0: 10}
    assert got.malformed == {t1: f"Kafka holds offset -5 for group {group}; not a position in a log"}


def test_no_registered_broker_and_an_unreachable_broker_are_clear_errors(zk, topic_name):
    tp = TopicPartition(topic_name, 0)
    with pytest.raises(OffsetsUnavailableError, match=r"no broker is registered in ZooKeeper \(/brokers/ids\)"):
        KafkaOffsetStore(zk, "g", backoff_ms=10, socket_timeout_ms=300).fetch([tp])

    # Dual commit and no broker answering: Kafka takes nothing, so ZooKeeper gets nothing either.
    group = unique_group()
    kafka = KafkaOffsetStore(zk, group, backoff_ms=10, socket_timeout_ms=400, bootstrap=closed_port())
    storage = OffsetStorage(ZooKeeperOffsetStore(zk, group), kafka, dual_commit=True)
    result = storage.commit({tp: 3}, retries=2)
    assert result.written == {} and set(result.failed) == {tp}
    assert result.primary.batches == 3  # attempts: one, and offsets.commit.max.retries=2 more
    assert "Kafka did not take the offsets of" in result.primary.error and "Timed out" in result.primary.error
    assert [w.store for w in result.writes] == ["kafka", "zookeeper"]
    assert result.writes[1].written == {}
    assert zk.exists(f"/consumers/{group}/offsets/{topic_name}/0") is None


def consumer_config(zk_connect: str, group: str, **extra) -> ConsumerConfig:
    props = {
        "zookeeper.connect": zk_connect, "group.id": group, "consumer.id": "c1", "auto.offset.reset": "smallest",
        "consumer.timeout.ms": 200, "rebalance.backoff.ms": 200, "auto.commit.enable": "false",
        "refresh.leader.backoff.ms": 100, "offsets.channel.backoff.ms": 100,
        "offsets.channel.socket.timeout.ms": 5000,
    }
    props.update(extra)
    return ConsumerConfig(props)


@pytest.mark.timeout(180)  # its waits: 15 + 3 x 20 (takes) + 2 x 0.5 s, six productions of up to 10 s
def test_the_connector_commits_to_kafka_then_zookeeper_and_reads_the_larger(zk, kafka_zk, bootstrap_servers,
                                                                            topic_name):
    group = unique_group()
    create_topic(bootstrap_servers, topic_name, 2)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/1/state"))
    produce(bootstrap_servers, topic_name, [b"a", b"b", b"c"], partition=0)
    produce(bootstrap_servers, topic_name, [b"d", b"e"], partition=1)
    t0, t1 = TopicPartition(topic_name, 0), TopicPartition(topic_name, 1)
    kafka = GroupOffsetsClient(bootstrap_servers, scaled(5))

    # Dual commit is on by default with Kafka storage: Kafka first, then ZooKeeper, each event naming its store.
    config = consumer_config(kafka_zk, group, **{"offsets.storage": "kafka"})
    assert config.dual_commit_enabled is True
    with create_connector(config) as consumer, capture_logs() as events:
        stream = consumer.create_message_streams({topic_name: 1})[topic_name][0]
        assert len(take(stream, 5)) == 5
        consumer.commit_offsets()
        fetched = [e for e in events if e["event"] == "rebalance.fetch_offsets"][0]
        assert fetched["storage"] == "kafka" and "kafka_offsets" in fetched
    committed = [(e["store"], e["reason"], [(o["partition"], o["offset"]) for o in e["offsets"]])
                 for e in events if e["event"] == "offsets.committed"]
    assert ("kafka", "explicit", [(0, 3), (1, 2)]) in committed
    assert ("zookeeper", "explicit", [(0, 3), (1, 2)]) in committed
    assert [c[0] for c in committed if c[1] == "explicit"] == ["kafka", "zookeeper"]
    assert kafka.fetch(group, [t0, t1]).offsets == {t0: 3, t1: 2}
    assert zk_offsets(zk, group, topic_name) == {0: 3, 1: 2}

    # A member still on ZooKeeper storage got further on partition 0: with dual commit the larger offset wins.
    zk.set(f"/consumers/{group}/offsets/{topic_name}/0", b"2")  # lower in ZooKeeper...
    kafka.commit(group, {t1: 1})  # ...and lower in Kafka: each store's larger value is where consumption resumes
    produce(bootstrap_servers, topic_name, [b"f"], partition=0)
    produce(bootstrap_servers, topic_name, [b"g"], partition=1)
    with create_connector(config) as consumer:
        stream = consumer.create_message_streams({topic_name: 1})[topic_name][0]
        assert sorted(m.message for m in take(stream, 2)) == [b"f", b"g"]
        assert take(stream, 1, timeout=scaled(0.5)) == []  # nothing more comes
        consumer.commit_offsets()
    assert kafka.fetch(group, [t0, t1]).offsets == {t0: 4, t1: 3}
    assert zk_offsets(zk, group, topic_name) == {0: 4, 1: 3}

    # Without dual commit ZooKeeper is neither read nor written.
    config = consumer_config(kafka_zk, group, **{"offsets.storage": "kafka", "dual.commit.enabled": "false"})
    zk.set(f"/consumers/{group}/offsets/{topic_name}/1", b"0")
    produce(bootstrap_servers, topic_name, [b"h"], partition=1)
    with create_connector(config) as consumer:
        stream = consumer.create_message_streams({topic_name: 1})[topic_name][0]
        assert [m.message for m in take(stream, 1)] == [b"h"]  # from Kafka's 2, not ZooKeeper's 0
        assert take(stream, 1, timeout=scaled(0.5)) == []  # nothing more comes
        consumer.commit_offsets()
    assert kafka.fetch(group, [t0, t1]).offsets == {t0: 4, t1: 4}
    assert zk_offsets(zk, group, topic_name) == {0: 4, 1: 0}


def test_an_explicit_commit_kafka_refuses_raises_and_writes_no_znode(zk, kafka_zk, bootstrap_servers, topic_name):
    """A broker-side group with a live member (a modern consumer with the same id) refuses a member-less commit:
    the commit raises naming the partitions and the broker's reason, and ZooKeeper is not written."""
    from confluent_kafka import Consumer

    group = unique_group()
    create_topic(bootstrap_servers, topic_name, 1)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/0/state"))
    produce(bootstrap_servers, topic_name, [b"a", b"b"])
    # Tansu completes a join after about half the session timeout; the heartbeats keep the member alive
    modern = Consumer({"bootstrap.servers": bootstrap_servers, "group.id": group, "enable.auto.commit": False,
                       "session.timeout.ms": 3000, "heartbeat.interval.ms": 500, "max.poll.interval.ms": 60000})
    modern.subscribe([topic_name])
    try:
        wait_for(lambda: (modern.poll(0.2), _broker_members(bootstrap_servers, group))[1], timeout=20)
        config = consumer_config(kafka_zk, group, **{"offsets.storage": "kafka", "offsets.commit.max.retries": 1})
        with create_connector(config) as consumer, capture_logs() as events:
            stream = consumer.create_message_streams({topic_name: 1})[topic_name][0]
            assert len(take(stream, 2)) == 2
            with pytest.raises(OffsetsCommitFailedError, match=rf"group {group}: Kafka did not take the offsets of "
                               rf"{topic_name}-0 after 2 attempts: UNKNOWN_MEMBER_ID"):
                consumer.commit_offsets()
        failed = [e for e in events if e["event"] == "offsets.commit_failed"]
        assert failed and failed[0]["store"] == "kafka" and failed[0]["offsets"][0]["partition"] == 0
        assert zk_offsets(zk, group, topic_name) == {}
    finally:
        modern.close()


def _broker_members(bootstrap: str, group: str) -> bool:
    from zkconsumer.kafka.group_coordinator import describe_group, find_coordinator

    return bool(describe_group(find_coordinator(bootstrap, group, scaled(5)), group, scaled(5)).members)
