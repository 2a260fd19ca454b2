"""A restart of the front, its broker kept: its groups are read back from the broker's topic where it keeps them
(``front.proxy.group_store``), so a classic group (cooperative-sticky) and a KIP-848 group each go on at their
generation or epoch, with their assignment, with no rebalance: confluent-kafka consumers see no revocation and no new
assignment, their commits through the new front are accepted (a commit of the old generation would be refused), and
their committed offsets are where they were. The fronts keep their groups in the broker's default groups topic, which
every front of the test session shares, each reading back its own."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient
from support import RecordedConsumer, produce, wait_for
from time_scale import bounded

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.kafka.topics import create_topic

PARTITIONS = 4


def listed_topics(bootstrap: str) -> set[str]:
    """The topics an all-topics Metadata request to ``bootstrap`` lists."""
    return set(AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=bounded(10)).topics)


def events_named(front: FrontProcess, name: str) -> list[dict]:
    lines = front.log_path.read_text(encoding="utf-8").splitlines()
    return [e for e in (json.loads(line) for line in lines if line.startswith("{")) if e["event"] == name]


def events(front: FrontProcess, name: str, group: str) -> list[dict]:
    return [e for e in events_named(front, name) if e.get("group") == group]


def start(fronts: list[FrontProcess], broker: str, workdir: Path, options: tuple[str, ...]) -> FrontProcess:
    workdir.mkdir()
    front = FrontProcess(broker, workdir, options=options)
    fronts.append(front)
    return front.start()


def fill(front: FrontProcess, topic: str, prefix: str) -> None:
    """Two messages to each partition."""
    for partition in range(PARTITIONS):
        produce(front.address, topic, [f"{prefix}-{i}".encode() for i in (2 * partition, 2 * partition + 1)],
                partition=partition)


PROTOCOLS = {
    "cooperative-sticky": ({"partition.assignment.strategy": "cooperative-sticky", "session.timeout.ms": 20_000,
                            "heartbeat.interval.ms": 500}, "front.group.loaded", "generation"),
    "consumer": ({"group.protocol": "consumer"}, "front.consumer_group.loaded", "group_epoch"),
}


@pytest.mark.timeout(180)
@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_a_group_keeps_its_generation_and_assignment_across_a_restart_of_the_front(
        broker_bootstrap, fronts, tmp_path, topic_name, protocol):
    settings, loaded_event, epoch_field = PROTOCOLS[protocol]
    options = ("--group-min-session-timeout-ms", "1000")  # the groups in the default topic, every front's
    front = start(fronts, broker_bootstrap, tmp_path / "before", options)
    create_topic(front.address, topic_name, PARTITIONS)
    fill(front, topic_name, "before")
    group = f"g-{uuid.uuid4().hex[:6]}"
    member = RecordedConsumer({"bootstrap.servers": front.address, "group.id": group,
                               "auto.offset.reset": "earliest", "enable.auto.commit": False, **settings}, topic_name)
    try:
        wait_for(lambda: member.poll_until(8), timeout=60)
        member.consumer.commit(asynchronous=False)
        assignment = member.assigned()
        assert assignment == list(range(PARTITIONS))
        calls_before = list(member.calls)
        if protocol == "consumer":
            epoch = events(front, "front.consumer_group.state_changed", group)[-1]["group_epoch"]
        else:
            epoch = events(front, "front.group.round_completed", group)[-1]["generation"]
        port = front.port
        front.stop()

        restarted = start(fronts, broker_bootstrap, tmp_path / "after", (*options, "--port", str(port)))
        (store,) = events_named(restarted, "front.groups_loaded")
        assert (store["topic"], store["coordinator"]) == ("__zkconsumer_groups", restarted.address)
        # the store is the front's state, at the broker: a client of the front lists only the cluster's topics
        assert "__zkconsumer_groups" in listed_topics(broker_bootstrap)
        assert "__zkconsumer_groups" not in listed_topics(restarted.address) and topic_name in listed_topics(
            restarted.address)
        (loaded,) = events(restarted, loaded_event, group)
        assert loaded[epoch_field] == epoch
        assert len(loaded["members"]) == 1

        fill(restarted, topic_name, "after")
        wait_for(lambda: member.poll_until(16), timeout=60)
        member.consumer.commit(asynchronous=False)  # accepted: the same member at the same generation or epoch
        assert sorted(member.values) == sorted([f"before-{i}".encode() for i in range(8)]
                                               + [f"after-{i}".encode() for i in range(8)])
        assert member.calls == calls_before  # no revocation, no new assignment
        assert member.assigned() == assignment
        for name in ("front.group.round_started", "front.group.member_joined", "front.consumer_group.member_joined",
                     "front.consumer_group.epoch_bumped", "front.group.member_expired",
                     "front.consumer_group.member_expired"):
            assert events(restarted, name, group) == [], name
        committed = member.consumer.committed([TopicPartition(topic_name, p) for p in range(PARTITIONS)],
                                              timeout=bounded(10))
        assert [tp.offset for tp in committed] == [4] * PARTITIONS  # two before and two after, each partition
    finally:
        member.consumer.close()


@pytest.mark.servers
@pytest.mark.timeout(240)  # its waits: 60 + 60 + 10 s, an object store, and a broker and two fronts started twice
def test_a_classic_group_outlives_a_restart_of_both_the_front_and_a_broker_that_keeps_its_storage(tmp_path, fronts):
    from zkconsumer.embedded.broker import LocalTansu
    from zkconsumer.embedded.object_store import LocalObjectStore

    topic, group = "kept", f"g-{uuid.uuid4().hex[:6]}"
    settings, _, _ = PROTOCOLS["cooperative-sticky"]
    with LocalObjectStore(tmp_path / "s3", buckets=("tansu",)) as store:
        broker = LocalTansu.on_object_store(tmp_path / "broker", store)
        with broker:
            front = start(fronts, broker.bootstrap, tmp_path / "before", ())
            create_topic(front.address, topic, PARTITIONS)
            fill(front, topic, "before")
            member = RecordedConsumer({"bootstrap.servers": front.address, "group.id": group,
                                       "auto.offset.reset": "earliest", "enable.auto.commit": False, **settings}, topic)
            try:
                wait_for(lambda: member.poll_until(8), timeout=60)
                member.consumer.commit(asynchronous=False)
                calls_before = list(member.calls)
                generation = events(front, "front.group.round_completed", group)[-1]["generation"]
                port = front.port
                front.stop()
                assert broker.record is not None
                broker.record.stop(0.1)  # SIGTERM, SIGKILL 0.1 s later
                broker.record = None
                broker.start()

                restarted = start(fronts, broker.bootstrap, tmp_path / "after", ("--port", str(port)))
                (loaded,) = events(restarted, "front.group.loaded", group)
                assert loaded["generation"] == generation
                fill(restarted, topic, "after")
                wait_for(lambda: member.poll_until(16), timeout=60)
                member.consumer.commit(asynchronous=False)
                assert member.calls == calls_before
                assert events(restarted, "front.group.round_started", group) == []
                committed = member.consumer.committed([TopicPartition(topic, p) for p in range(PARTITIONS)],
                                                      timeout=bounded(10))
                assert [tp.offset for tp in committed] == [4] * PARTITIONS
            finally:
                member.consumer.close()
