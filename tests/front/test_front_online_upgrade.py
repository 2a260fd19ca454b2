"""Kafka 4.x's online upgrade through the front, with confluent-kafka: an eager (roundrobin) group of three consuming
members is restarted member by member with ``group.protocol=consumer``. The first new member's ConsumerGroupHeartbeat
converts the live classic group into a consumer group whose remaining classic members go on with
JoinGroup/SyncGroup/Heartbeat; nothing is lost (every produced message consumed), no committed offset moves back, and
the group ends a consumer group of consumer-protocol members. And the way back: once the last consumer-protocol member
leaves a group whose classic members remain, it is a classic group again, which rebalances, and the classic member
reads every partition."""

from __future__ import annotations

import contextlib
import datetime
import uuid

import pytest
from confluent_kafka import Consumer, KafkaException, TopicPartition
from kio.schema.consumer_group_heartbeat.v0.request import ConsumerGroupHeartbeatRequest
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32, i32Timedelta
from support import produce, wait_for
from test_front_restart import events, start
from time_scale import bounded

from zkconsumer.embedded.front import consumer_group_options
from zkconsumer.front.proxy.client import exchange
from zkconsumer.kafka.topics import create_topic

PARTITIONS = 4
CLASSIC = {"partition.assignment.strategy": "cooperative-sticky", "session.timeout.ms": 10_000,
           "heartbeat.interval.ms": 500}
CONSUMER = {"group.protocol": "consumer"}
#: the upgraded group's assignor: an eager one, whose assignments carry no user data, so that the conversion never
#: depends on timing (librdkafka's cooperative-sticky leader writes each member's sticky state into its assignment,
#: which Kafka 4.0 on refuses to convert, KAFKA-18134: docs/migration-compare.md)
UPGRADED = {**CLASSIC, "partition.assignment.strategy": "roundrobin"}


class Member:
    """One consumer committing what it read after every message (a commit refused in a rebalance is retried by the
    next message: the messages after the last commit are read again, never skipped)."""

    def __init__(self, bootstrap: str, group: str, topic: str, settings: dict[str, object]) -> None:
        self.consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                                  "enable.auto.commit": False, **settings})
        self.consumer.subscribe([topic])
        self.values: set[bytes] = set()

    def poll(self) -> None:
        message = self.consumer.poll(0.05)
        if message is None:
            return
        if message.error() is not None:  # a JoinGroup refused while the group moves is reported, and retried
            if message.error().fatal():
                raise AssertionError(message.error())
            return
        self.values.add(message.value())
        with contextlib.suppress(KafkaException):  # refused while the group moves: read again by the next owner
            self.consumer.commit(message=message, asynchronous=False)

    def committed_after_committing_what_was_read(self, topic: str) -> list[int]:
        """Its positions committed, then the group's committed offsets: a partition it keeps through a cooperative
        rebalance is not read again, so a commit refused in that rebalance (REBALANCE_IN_PROGRESS while the group
        completes it: Kafka's GroupCoordinator as the front models it) has no next message to retry it."""
        with contextlib.suppress(KafkaException):
            self.consumer.commit(asynchronous=False)
        return committed(self, topic)


def send_each_partition(bootstrap: str, topic: str, prefix: str) -> list[bytes]:
    """Five messages to each partition, named by ``prefix``; what was sent."""
    sent = []
    for partition in range(PARTITIONS):
        values = [f"{prefix}-{partition}-{i}".encode() for i in range(5)]
        produce(bootstrap, topic, values, partition=partition)
        sent.extend(values)
    return sent


def committed(member: Member, topic: str) -> list[int]:
    return [tp.offset for tp in member.consumer.committed(
        [TopicPartition(topic, p) for p in range(PARTITIONS)], timeout=bounded(10))]


@pytest.mark.timeout(240)
def test_an_eager_group_upgraded_member_by_member_loses_nothing(broker_bootstrap, fronts, tmp_path, topic_name):
    options = ("--group-min-session-timeout-ms", "1000", *consumer_group_options(6000, 500))
    front = start(fronts, broker_bootstrap, tmp_path / "front", options)
    create_topic(front.address, topic_name, PARTITIONS)
    group = f"g-{uuid.uuid4().hex[:6]}"
    produced: set[bytes] = set()
    members = [Member(front.address, group, topic_name, UPGRADED) for _ in range(3)]
    gone: list[Member] = []
    marks: list[list[int]] = []

    def send(prefix: str) -> None:
        produced.update(send_each_partition(front.address, topic_name, prefix))

    def all_read() -> bool:
        for member in members:
            member.poll()
        return produced <= set().union(*(m.values for m in [*members, *gone]))

    try:
        send("start")
        wait_for(all_read, timeout=60)
        for step in range(len(members)):
            marks.append(committed(members[-1], topic_name))
            old = members.pop(0)
            old.consumer.close()
            gone.append(old)
            members.append(Member(front.address, group, topic_name, CONSUMER))
            send(f"step{step}")
            wait_for(all_read, timeout=90)
        # every member reads on: the last messages reach whoever holds their partitions now
        send("end")
        wait_for(all_read, timeout=60)
        everything = [len(produced) // PARTITIONS] * PARTITIONS
        wait_for(lambda: all_read() and committed(members[0], topic_name) == everything, timeout=60)
        marks.append(committed(members[0], topic_name))
    finally:
        for member in members:
            member.consumer.close()

    for before, after in zip(marks, marks[1:], strict=False):
        assert all(a >= b for a, b in zip(after, before, strict=True)), marks
    (upgraded,) = events(front, "front.consumer_group.upgraded", group)
    assert len(upgraded["members"]) == 2  # the two classic members left when the first new one came
    assert events(front, "front.consumer_group.upgrade_refused", group) == []
    # the classic members followed the consumer group's epochs through JoinGroup and SyncGroup
    advanced = {e["member_id"] for e in events(front, "front.consumer_group.member_epoch_advanced", group)}
    assert set(upgraded["members"]) & advanced
    joined = events(front, "front.consumer_group.member_joined", group)
    assert len({e["member_id"] for e in joined} - set(upgraded["members"])) == 3


@pytest.mark.timeout(180)
def test_a_group_left_by_its_last_consumer_member_is_classic_again_and_loses_nothing(broker_bootstrap, fronts,
                                                                                       tmp_path, topic_name):
    options = ("--group-min-session-timeout-ms", "1000", *consumer_group_options(6000, 500))
    front = start(fronts, broker_bootstrap, tmp_path / "front", options)
    create_topic(front.address, topic_name, PARTITIONS)
    group = f"g-{uuid.uuid4().hex[:6]}"
    produced: set[bytes] = set()
    stays = Member(front.address, group, topic_name, CLASSIC)
    polled, readers = [stays], [stays]

    def send(prefix: str) -> None:
        produced.update(send_each_partition(front.address, topic_name, prefix))

    def read() -> bool:
        for member in polled:
            member.poll()
        return produced <= set().union(*(m.values for m in readers))

    try:
        wait_for(lambda: read() and stays.consumer.assignment(), timeout=60)  # the classic group first
        goes = Member(front.address, group, topic_name, CONSUMER)
        polled.append(goes)
        readers.append(goes)
        send("both")
        wait_for(lambda: read() and events(front, "front.consumer_group.upgraded", group), timeout=30)
        wait_for(read, timeout=60)
        polled.remove(goes)
        goes.consumer.close()
        send("after")
        wait_for(lambda: read() and events(front, "front.consumer_group.downgraded", group), timeout=60)
        wait_for(lambda: read() and len(stays.consumer.assignment()) == PARTITIONS, timeout=60)
        everything = [len(produced) // PARTITIONS] * PARTITIONS
        wait_for(lambda: read() and stays.committed_after_committing_what_was_read(topic_name) == everything,
                 timeout=60)
    finally:
        for member in polled:
            member.consumer.close()
    (downgraded,) = events(front, "front.consumer_group.downgraded", group)
    assert len(downgraded["members"]) == 1
    completed = events(front, "front.group.round_completed", group)
    assert completed and completed[-1]["generation"] > downgraded["generation"]  # the classic group rebalanced


@pytest.mark.timeout(180)
def test_a_group_whose_last_consumer_member_s_session_expires_is_classic_again(broker_bootstrap, fronts, tmp_path,
                                                                               topic_name):
    """Kafka converts a consumer group back whenever a member leaves by any means: here the consumer-protocol member
    joins (upgrading the live classic group) and is never heard from again, so its session expires."""
    options = ("--group-min-session-timeout-ms", "1000", *consumer_group_options(3000, 500))
    front = start(fronts, broker_bootstrap, tmp_path / "front", options)
    create_topic(front.address, topic_name, PARTITIONS)
    group = f"g-{uuid.uuid4().hex[:6]}"
    stays = Member(front.address, group, topic_name, CLASSIC)
    produced = set(send_each_partition(front.address, topic_name, "before"))

    def read() -> bool:
        stays.poll()
        return produced <= stays.values

    try:
        wait_for(lambda: read() and len(stays.consumer.assignment()) == PARTITIONS, timeout=60)
        silent = exchange(front.address, ConsumerGroupHeartbeatRequest(
            group_id=group, member_id="", member_epoch=i32(0), instance_id=None, rack_id=None,
            rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=30)),
            subscribed_topic_names=(topic_name,), server_assignor=None, topic_partitions=()), bounded(10))
        assert silent.error_code == ErrorCode.none  # a consumer-protocol member: the group upgraded
        produced |= set(send_each_partition(front.address, topic_name, "after"))
        wait_for(lambda: read() and events(front, "front.consumer_group.downgraded", group), timeout=60)
        wait_for(lambda: read() and len(stays.consumer.assignment()) == PARTITIONS, timeout=60)
    finally:
        stays.consumer.close()
    assert [e["member_id"] for e in events(front, "front.consumer_group.member_expired", group)] == [
        silent.member_id]
    (downgraded,) = events(front, "front.consumer_group.downgraded", group)
    assert len(downgraded["members"]) == 1 and silent.member_id not in downgraded["members"]
