"""Topics created, grown and described through the real ZooKeeper, as kafka-topics.sh --zookeeper did: the znodes
byte for byte, placements from the registered brokers and their racks, the version check of an addition."""

from __future__ import annotations

import random

import pytest

from zkconsumer.admin.replica_placement import (
    AdminOperationError,
    BrokerMetadata,
    RackAwareMode,
    assign_replicas_to_brokers,
)
from zkconsumer.admin.topic_plans import CreateRequest, TopicStateError
from zkconsumer.admin.zk_topics import (
    describe,
    prepare_addition,
    prepare_creation,
    read_broker_metadatas,
    write_addition,
    write_creation,
)
from zkconsumer.zk import cluster, paths
from zkconsumer.zk.cluster import BrokerInfo, PartitionState

# Kafka's AdminRackAwareTest cluster: six brokers on three racks
RACKS = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}


def register(zk, racks: dict[int, str | None]) -> None:
    """Brokers as a 0.10 broker registers itself (version 3 JSON, ``rack`` when it has one)."""
    for broker, rack in racks.items():
        info = BrokerInfo(broker, f"b{broker}", 9092, rack=rack)
        zk.create(paths.broker_path(broker), cluster.encode_broker(info), makepath=True)


def create(zk, request: CreateRequest, seed: int | None = None) -> None:
    write_creation(zk, prepare_creation(zk, request, random.Random(seed)))


def test_creation_writes_the_two_znodes_as_kafka_topics_did(zk):
    register(zk, {0: None, 1: None, 2: None})
    create(zk, CreateRequest("orders", replica_assignment="0:1,1:2,2:0",
                             config={"retention.ms": "1000", "cleanup.policy": "compact"}))
    assert zk.get("/brokers/topics/orders")[0] == b'{"version":1,"partitions":{"0":[0,1],"1":[1,2],"2":[2,0]}}'
    assert zk.get("/config/topics/orders")[0] == \
        b'{"version":1,"config":{"retention.ms":"1000","cleanup.policy":"compact"}}'
    assert zk.get_children("/brokers/topics/orders") == []  # partition states are the controller's work


def test_a_seeded_placement_is_assign_replicas_to_brokers_on_the_registered_brokers(zk):
    register(zk, {3: None, 1: None, 0: None, 2: None})
    create(zk, CreateRequest("seeded", partitions=8, replication_factor=3), seed=11)
    expected = assign_replicas_to_brokers([BrokerMetadata(i) for i in range(4)], 8, 3, rng=random.Random(11))
    written = cluster.read_topic(zk, "seeded").replicas
    assert written == {p: tuple(r) for p, r in expected.items()}
    leaders = [written[p][0] for p in range(8)]
    assert leaders == [(leaders[0] + p) % 4 for p in range(8)]  # round-robin from the drawn start
    assert zk.get("/config/topics/seeded")[0] == b'{"version":1,"config":{}}'


def test_racks_come_from_the_broker_registrations(zk):
    register(zk, RACKS)
    assert read_broker_metadatas(zk) == [BrokerMetadata(b, r) for b, r in sorted(RACKS.items())]
    create(zk, CreateRequest("racked", partitions=12, replication_factor=3), seed=5)
    expected = assign_replicas_to_brokers([BrokerMetadata(b, r) for b, r in sorted(RACKS.items())], 12, 3,
                                          rng=random.Random(5))
    written = cluster.read_topic(zk, "racked").replicas
    assert written == {p: tuple(r) for p, r in expected.items()}
    assert all(len({RACKS[b] for b in replicas}) == 3 for replicas in written.values())


def test_mixed_racks_are_refused_unless_rack_awareness_is_disabled(zk):
    register(zk, {0: "r1", 1: "r2", 2: None})
    with pytest.raises(AdminOperationError, match="Not all brokers have rack information"):
        prepare_creation(zk, CreateRequest("mixed", partitions=3, replication_factor=2))
    assert not zk.exists("/brokers/topics") and not zk.exists("/config")
    create(zk, CreateRequest("mixed", partitions=3, replication_factor=2,
                             rack_aware_mode=RackAwareMode.DISABLED), seed=1)
    assert cluster.read_topic(zk, "mixed").partitions == [0, 1, 2]


def test_adding_partitions_continues_the_placement_from_partition_zero_s_leader(zk):
    register(zk, {0: None, 1: None, 2: None, 3: None})
    create(zk, CreateRequest("grow", replica_assignment="1:2,2:3"))
    addition = prepare_addition(zk, "grow", 5)
    # Kafka's addPartitions: start index where partition 0's leader (1) sits, partitions numbered from 2
    assert addition.added == assign_replicas_to_brokers([BrokerMetadata(i) for i in range(4)], 3, 2, 1, 2)
    assert addition.added == {2: [3, 1], 3: [0, 2], 4: [1, 0]}  # the shift grows as partition 4 wraps the brokers
    write_addition(zk, addition)
    assert zk.get("/brokers/topics/grow")[0] == \
        b'{"version":1,"partitions":{"0":[1,2],"1":[2,3],"2":[3,1],"3":[0,2],"4":[1,0]}}'


def test_an_addition_planned_on_an_older_version_writes_nothing(zk):
    register(zk, {0: None, 1: None})
    create(zk, CreateRequest("raced", replica_assignment="0,1"))
    stale = prepare_addition(zk, "raced", 3)
    write_addition(zk, prepare_addition(zk, "raced", 4))
    after_first = zk.get("/brokers/topics/raced")[0]
    with pytest.raises(TopicStateError, match="changed while partitions were being added"):
        write_addition(zk, stale)
    assert zk.get("/brokers/topics/raced")[0] == after_first
    assert cluster.read_topic(zk, "raced").partitions == [0, 1, 2, 3]


def test_manual_additions_keep_the_existing_partitions_and_replication_factor(zk):
    register(zk, {0: None, 1: None, 2: None})
    create(zk, CreateRequest("manual", replica_assignment="0:1,1:2"))
    assert prepare_addition(zk, "manual", 3, "0:1,1:2,2:0").added == {2: [2, 0]}
    with pytest.raises(AdminOperationError, match="cannot move existing ones"):
        prepare_addition(zk, "manual", 3, "0:2,1:2,2:0")
    with pytest.raises(AdminOperationError, match="has different replication factor"):
        prepare_addition(zk, "manual", 3, "0:1,1:2,2")
    with pytest.raises(AdminOperationError, match="can only be increased"):
        prepare_addition(zk, "manual", 2)
    with pytest.raises(TopicStateError, match="Topic nothing does not exist"):
        prepare_addition(zk, "nothing", 2)


def test_describe_prints_kafka_topics_describe_lines(zk):
    register(zk, {0: None, 1: None, 2: None})
    create(zk, CreateRequest("b-topic", replica_assignment="0:1,1:2", config={"retention.ms": "60000"}))
    create(zk, CreateRequest("a-topic", replica_assignment="2"))
    zk.create(paths.partition_state_path("b-topic", 1), cluster.encode_partition_state(PartitionState(2, 3, 1, (2, 1))),
              makepath=True)
    assert describe(zk, "b-topic") == [
        "Topic:b-topic\tPartitionCount:2\tReplicationFactor:2\tConfigs:retention.ms=60000",
        "\tTopic: b-topic\tPartition: 0\tLeader: none\tReplicas: 0,1\tIsr: ",
        "\tTopic: b-topic\tPartition: 1\tLeader: 2\tReplicas: 1,2\tIsr: 2,1",
    ]
    assert describe(zk)[0] == "Topic:a-topic\tPartitionCount:1\tReplicationFactor:1\tConfigs:"
    assert len(describe(zk)) == 5
    with pytest.raises(TopicStateError, match="Topic c-topic does not exist"):
        describe(zk, "c-topic")


def test_a_refusal_that_is_not_a_race_is_named_and_nothing_is_written(zk):
    """A ZooKeeper that does not let us write /brokers/topics (an ACL) is not 'changed meanwhile, try again'."""
    from kazoo.security import make_acl

    register(zk, {0: None})
    zk.create(paths.BROKER_TOPICS_PATH, b"", acl=[make_acl("world", "anyone", read=True)])
    with pytest.raises(TopicStateError, match=r"ZooKeeper refused to create topic 'locked' \(NoAuthError"):
        create(zk, CreateRequest("locked", partitions=1, replication_factor=1))
    assert zk.exists("/config/topics/locked") is None and zk.get_children(paths.BROKER_TOPICS_PATH) == []
