"""Offsets and refusals at Apache Kafka 4.x and at the front, the groups made by real clients (:mod:`differential`):
OffsetDelete of a live group's subscribed and unsubscribed topics (and of a group whose subscriptions cannot be
read), a transactional producer's offsets naming no member, an upgrade refused for a custom assignor's userData."""

from __future__ import annotations

import datetime
import uuid

import pytest
from differential import (
    PROTOCOLS,
    Coordinator,
    Member,
    Observed,
    closing,
    differences,
    listed,
    play,
    report,
    settle,
    split_evenly,
)
from kio.schema.errors import ErrorCode
from time_scale import bounded

from zkconsumer.front.proxy.client import exchange

pytestmark = pytest.mark.servers


def new_group() -> str:
    return f"g-{uuid.uuid4().hex[:6]}"


def offset_delete(c: Coordinator, group: str, topics: list[str]) -> object:
    """OffsetDelete of partition 0 of each topic, as Kafka's admin client sends it (``deleteConsumerGroupOffsets``):
    the group's error, or each topic's partition error, by name."""
    from kio.schema.offset_delete.v0.request import (
        OffsetDeleteRequest,
        OffsetDeleteRequestPartition,
        OffsetDeleteRequestTopic,
    )
    from kio.static.primitive import i32

    answer = exchange(c.bootstrap, OffsetDeleteRequest(group_id=group, topics=tuple(OffsetDeleteRequestTopic(
        name=topic, partitions=(OffsetDeleteRequestPartition(partition_index=i32(0)),)) for topic in topics)),
        bounded(10))
    if answer.error_code != ErrorCode.none:
        return ErrorCode(answer.error_code).name
    by_topic = {t.name: ErrorCode(t.partitions[0].error_code).name for t in answer.topics}
    return [by_topic[topic] for topic in topics]


def committed(member: Member, topic: str) -> int:
    from confluent_kafka import TopicPartition

    (tp,) = member.consumer.committed([TopicPartition(topic, 0)], timeout=bounded(10))
    return tp.offset


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", ["range", "consumer"])
def test_offset_delete_of_a_live_group(pair, protocol):
    """A member subscribed to one topic commits offsets of it and of another; OffsetDelete of both keeps the
    subscribed topic's (GROUP_SUBSCRIBED_TO_TOPIC) and deletes the other's; an unknown group is GROUP_ID_NOT_FOUND."""
    settings = PROTOCOLS[protocol]

    def story(c: Coordinator) -> Observed:
        subscribed, other, group = c.topic(4), c.topic(4), new_group()
        from confluent_kafka import KafkaException, TopicPartition

        with closing([Member(c, group, [subscribed], settings)]) as members:
            settle(members, lambda: split_evenly(members, 4))
            try:
                members[0].consumer.commit(offsets=[TopicPartition(subscribed, 0, 5), TopicPartition(other, 0, 7)],
                                           asynchronous=False)
                commit = "NONE"
            except KafkaException as exc:
                commit = exc.args[0].name()
            before = [committed(members[0], t) for t in (subscribed, other)]
            deleted = offset_delete(c, group, [subscribed, other])
            after = [committed(members[0], t) for t in (subscribed, other)]
            return Observed({"commit": commit, "before": before, "delete": deleted, "after": after,
                             "unknown_group": offset_delete(c, new_group(), [other])})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", ["range", "consumer"])
def test_a_transactional_commit_naming_no_member(pair, protocol):
    """A transactional producer commits offsets for a live group with group metadata of no member (generation -1, no
    member id: a consumer of the group that never joined it), as an application consuming with ``assign()`` does."""
    settings = PROTOCOLS[protocol]

    def story(c: Coordinator) -> Observed:
        from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition

        topic, group = c.topic(4), new_group()
        with closing([Member(c, group, [topic], settings)]) as members:
            settle(members, lambda: split_evenly(members, 4))
            outsider = Consumer({"bootstrap.servers": c.bootstrap, "group.id": group})
            producer = Producer({"bootstrap.servers": c.bootstrap, "transactional.id": f"tx-{uuid.uuid4().hex[:8]}"})
            try:
                producer.init_transactions(bounded(20))
                producer.begin_transaction()
                producer.send_offsets_to_transaction([TopicPartition(topic, 0, 3)],
                                                     outsider.consumer_group_metadata(), bounded(20))
                producer.commit_transaction(bounded(20))
                outcome = "NONE"
            except KafkaException as exc:
                outcome = exc.args[0].name()
            finally:
                outsider.close()
            return Observed({"commit": outcome, "committed": committed(members[0], topic)})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


def raw_classic_member(c: Coordinator, group: str, metadata: bytes) -> str:
    """A classic member of protocol type ``consumer`` whose subscription is ``metadata`` as sent, joined and synced
    as the group's leader (no assignment), its session long enough for the story: a client that is not Kafka's
    consumer, whose bytes the coordinator cannot read as ConsumerProtocol's. Its member id."""
    from kio.schema.join_group.v5.request import JoinGroupRequest, JoinGroupRequestProtocol
    from kio.schema.sync_group.v3.request import SyncGroupRequest
    from kio.static.primitive import i32, i32Timedelta

    thirty = i32Timedelta.parse(datetime.timedelta(seconds=30))

    def join(member_id: str) -> object:
        return exchange(c.bootstrap, JoinGroupRequest(
            group_id=group, session_timeout=thirty, rebalance_timeout=thirty, member_id=member_id,
            group_instance_id=None, protocol_type="consumer",
            protocols=(JoinGroupRequestProtocol(name="range", metadata=metadata),)), bounded(20))

    first = join("")
    assert first.error_code == ErrorCode.member_id_required, first
    joined = join(first.member_id)
    assert joined.error_code == ErrorCode.none, joined
    synced = exchange(c.bootstrap, SyncGroupRequest(
        group_id=group, generation_id=i32(joined.generation_id), member_id=joined.member_id, group_instance_id=None,
        assignments=()), bounded(10))
    assert synced.error_code == ErrorCode.none, synced
    return joined.member_id


@pytest.mark.timeout(120)
def test_offset_delete_of_a_live_group_whose_subscriptions_cannot_be_read(pair):
    """A live classic group of protocol type ``consumer`` whose member's subscription does not read as
    ConsumerProtocol's: Kafka counts it subscribed to every topic (``ClassicGroup.isSubscribedToTopic``), so
    OffsetDelete deletes nothing."""

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(4), new_group()
        raw_classic_member(c, group, b"\x00\x07not a subscription")
        return Observed({"delete": offset_delete(c, group, [topic]), "type": listed(c, group)})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
def test_an_upgrade_is_refused_to_a_group_whose_assignment_carries_user_data(pair):
    """A classic group assigned by a custom assignor that writes userData into each member's assignment (kafka-python's
    range with some bytes added). A KIP-848 member's first heartbeat would convert it, and the userData be lost:
    Kafka 4.0 on refuses (KAFKA-18134), GROUP_ID_NOT_FOUND naming the custom assignor, and the group stays classic
    with its member's assignment."""
    from kafka import KafkaConsumer
    from kafka.coordinator.assignors.abstract import ConsumerProtocolAssignment
    from kafka.coordinator.assignors.range import RangePartitionAssignor

    class WithUserData(RangePartitionAssignor):
        name = "range"

        @classmethod
        def assign(cls, cluster, members):  # noqa: ANN001, ANN206 - kafka-python's assignor interface
            return {member_id: ConsumerProtocolAssignment(a.version, a.assignment, b"custom")
                    for member_id, a in super().assign(cluster, members).items()}

    def story(c: Coordinator) -> Observed:
        from kio.schema.consumer_group_heartbeat.v0.request import ConsumerGroupHeartbeatRequest
        from kio.static.primitive import i32, i32Timedelta

        topic, group = c.topic(4), new_group()
        classic = KafkaConsumer(topic, bootstrap_servers=c.bootstrap, group_id=group, session_timeout_ms=10_000,
                                heartbeat_interval_ms=500, partition_assignment_strategy=[WithUserData],
                                enable_auto_commit=False)
        try:
            def assigned() -> int:
                classic.poll(timeout_ms=20)
                return len(classic.assignment())

            settle([], lambda: assigned() == 4)
            answer = exchange(c.bootstrap, ConsumerGroupHeartbeatRequest(
                group_id=group, member_id="", member_epoch=i32(0), instance_id=None, rack_id=None,
                rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=30)), subscribed_topic_names=(topic,),
                server_assignor=None, topic_partitions=()), bounded(10))
            return Observed({"error": ErrorCode(answer.error_code).name,
                             "names_the_assignor": "custom assignor" in (answer.error_message or ""),
                             "type": listed(c, group), "classic_keeps": assigned()})
        finally:
            classic.close()

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


def heartbeat(c: Coordinator, group: str, member_id: str, epoch: int, topic: str | None = None,
              owned: tuple[int, ...] | None = None, topic_id: object = None) -> object:
    """A raw ConsumerGroupHeartbeat v1, as librdkafka sends it: a join with its subscription, or a beat owning
    ``owned`` of the topic."""
    from kio.schema.consumer_group_heartbeat.v1.request import ConsumerGroupHeartbeatRequest, TopicPartitions
    from kio.static.primitive import i32, i32Timedelta

    joining = epoch == 0
    answer = exchange(c.bootstrap, ConsumerGroupHeartbeatRequest(
        group_id=group, member_id=member_id, member_epoch=i32(epoch), instance_id=None, rack_id=None,
        rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=30 if joining else -0.001)),
        subscribed_topic_names=(topic,) if joining else None, subscribed_topic_regex=None, server_assignor=None,
        topic_partitions=() if joining else (TopicPartitions(topic_id=topic_id, partitions=tuple(
            i32(p) for p in owned or ())),)), bounded(10))
    assert answer.error_code == ErrorCode.none, answer
    return answer


def commit_v9(c: Coordinator, group: str, member_id: str, epoch: int, topic: str, partition: int) -> str:
    from kio.schema.offset_commit.v9.request import (
        OffsetCommitRequest,
        OffsetCommitRequestPartition,
        OffsetCommitRequestTopic,
    )
    from kio.static.primitive import i32, i64

    answer = exchange(c.bootstrap, OffsetCommitRequest(
        group_id=group, generation_id_or_member_epoch=i32(epoch), member_id=member_id, group_instance_id=None,
        topics=(OffsetCommitRequestTopic(name=topic, partitions=(OffsetCommitRequestPartition(
            partition_index=i32(partition), committed_offset=i64(1), committed_leader_epoch=i32(-1),
            committed_metadata=""),)),)), bounded(10))
    return ErrorCode(answer.topics[0].partitions[0].error_code).name


@pytest.mark.timeout(120)
def test_a_commit_at_the_previous_member_epoch(pair):
    """A KIP-848 member moved to a new epoch commits with the one before (a commit sent before its heartbeat's answer
    came): of a partition it kept, and of one it gave up. Kafka 4.3 on (KIP-1251) checks such a commit partition by
    partition against the epoch each partition was assigned at, and takes the kept one; the front, as Kafka before,
    refuses any epoch but the member's own: the one difference this story shows (docs/front.md)."""

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(4), new_group()
        first = heartbeat(c, group, "a" * 22, 0, topic)
        (assigned,) = first.assignment.topic_partitions
        topic_id, everything = assigned.topic_id, tuple(sorted(assigned.partitions))
        heartbeat(c, group, "b" * 22, 0, topic)
        revoking = heartbeat(c, group, "a" * 22, first.member_epoch, topic, everything, topic_id)
        kept = tuple(sorted(revoking.assignment.topic_partitions[0].partitions))
        moved = heartbeat(c, group, "a" * 22, revoking.member_epoch, topic, kept, topic_id)
        gone = sorted(set(everything) - set(kept))[0]
        return Observed({"epochs": [first.member_epoch, moved.member_epoch],
                         "kept": commit_v9(c, group, "a" * 22, first.member_epoch, topic, kept[0]),
                         "gone": commit_v9(c, group, "a" * 22, first.member_epoch, topic, gone),
                         "current": commit_v9(c, group, "a" * 22, moved.member_epoch, topic, kept[0])})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {"kept": ("none", "stale_member_epoch")}
