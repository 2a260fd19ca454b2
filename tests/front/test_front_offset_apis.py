"""OffsetDelete and TxnOffsetCommit answered by the front's coordinators through a real front in front of the real
broker, with raw requests as a client sends them: OffsetDelete as Kafka's ``deleteOffsets`` (a subscribed topic's
offsets kept, GROUP_SUBSCRIBED_TO_TOPIC; the others' deleted in the broker; an unknown group GROUP_ID_NOT_FOUND; a
live classic group of another protocol type NON_EMPTY_GROUP), and TxnOffsetCommit fenced by the member epoch or the
generation and member before it reaches the broker (KIP-447)."""

from __future__ import annotations

import datetime
import uuid
from collections.abc import Iterator

import pytest
from kio.schema.consumer_group_heartbeat.v0.request import ConsumerGroupHeartbeatRequest
from kio.schema.errors import ErrorCode
from kio.schema.join_group.v5.request import JoinGroupRequest, JoinGroupRequestProtocol
from kio.schema.offset_commit.v9.request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from kio.schema.offset_delete.v0.request import (
    OffsetDeleteRequest,
    OffsetDeleteRequestPartition,
    OffsetDeleteRequestTopic,
)
from kio.schema.offset_fetch.v8.request import OffsetFetchRequest, OffsetFetchRequestGroup, OffsetFetchRequestTopics
from kio.schema.txn_offset_commit.v3.request import (
    TxnOffsetCommitRequest,
    TxnOffsetCommitRequestPartition,
    TxnOffsetCommitRequestTopic,
)
from kio.static.primitive import i16, i32, i32Timedelta, i64
from time_scale import bounded

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.proxy.client import exchange
from zkconsumer.kafka.topics import create_topic


@pytest.fixture(scope="module")
def front(broker_bootstrap, tmp_path_factory) -> Iterator[FrontProcess]:
    with FrontProcess(broker_bootstrap, tmp_path_factory.mktemp("front"),
                      options=("--group-min-session-timeout-ms", "1000")) as process:
        yield process


def _ask(front: FrontProcess, request: object) -> object:
    return exchange(front.address, request, bounded(10))


def _joined(front: FrontProcess, group: str, topic: str) -> tuple[str, int]:
    """A KIP-848 member of ``group`` subscribed to ``topic``: its id and epoch."""
    answer = _ask(front, ConsumerGroupHeartbeatRequest(
        group_id=group, member_id="", member_epoch=i32(0), instance_id=None, rack_id=None,
        rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=30)), subscribed_topic_names=(topic,),
        server_assignor=None, topic_partitions=()))
    assert answer.error_code == ErrorCode.none, answer
    return answer.member_id, answer.member_epoch


def _commit(front: FrontProcess, group: str, member: str, epoch: int, offsets: dict[str, int]) -> list[ErrorCode]:
    answer = _ask(front, OffsetCommitRequest(
        group_id=group, generation_id_or_member_epoch=i32(epoch), member_id=member, group_instance_id=None,
        topics=tuple(OffsetCommitRequestTopic(name=topic, partitions=(OffsetCommitRequestPartition(
            partition_index=i32(0), committed_offset=i64(offset), committed_leader_epoch=i32(-1),
            committed_metadata=""),)) for topic, offset in offsets.items())))
    return [p.error_code for t in answer.topics for p in t.partitions]


def _committed(front: FrontProcess, group: str, topics: list[str]) -> dict[str, int]:
    answer = _ask(front, OffsetFetchRequest(groups=(OffsetFetchRequestGroup(group_id=group, topics=tuple(
        OffsetFetchRequestTopics(name=topic, partition_indexes=(i32(0),)) for topic in topics)),),
        require_stable=False))
    return {t.name: p.committed_offset for g in answer.groups for t in g.topics for p in t.partitions}


def _delete(front: FrontProcess, group: str, topics: list[str]) -> object:
    return _ask(front, OffsetDeleteRequest(group_id=group, topics=tuple(OffsetDeleteRequestTopic(
        name=topic, partitions=(OffsetDeleteRequestPartition(partition_index=i32(0)),)) for topic in topics)))


def test_offset_delete_keeps_a_subscribed_topic_s_offsets_and_deletes_the_others(front):
    subscribed, other = (f"od-{uuid.uuid4().hex[:8]}" for _ in range(2))
    for topic in (subscribed, other):
        create_topic(front.address, topic, 1)
    group = f"od-{uuid.uuid4().hex[:8]}"
    member, epoch = _joined(front, group, subscribed)
    assert _commit(front, group, member, epoch, {subscribed: 5, other: 7}) == [ErrorCode.none] * 2

    answer = _delete(front, group, [subscribed, other])
    assert answer.error_code == ErrorCode.none
    assert {t.name: [p.error_code for p in t.partitions] for t in answer.topics} == {
        subscribed: [ErrorCode.group_subscribed_to_topic], other: [ErrorCode.none]}
    assert _committed(front, group, [subscribed, other]) == {subscribed: 5, other: -1}

    assert _delete(front, f"none-{uuid.uuid4().hex[:8]}", [other]).error_code == ErrorCode.group_id_not_found


def test_offset_delete_of_a_live_classic_group_of_another_protocol_type_is_non_empty_group(front):
    group = f"odc-{uuid.uuid4().hex[:8]}"
    six_seconds = i32Timedelta.parse(datetime.timedelta(seconds=6))
    joined = _ask(front, JoinGroupRequest(
        group_id=group, session_timeout=six_seconds, rebalance_timeout=six_seconds, member_id="",
        group_instance_id=None, protocol_type="connect", protocols=(JoinGroupRequestProtocol(name="x", metadata=b""),)))
    assert joined.error_code == 79  # MEMBER_ID_REQUIRED: the group now exists, a member pending
    joined = _ask(front, JoinGroupRequest(
        group_id=group, session_timeout=six_seconds, rebalance_timeout=six_seconds, member_id=joined.member_id,
        group_instance_id=None, protocol_type="connect", protocols=(JoinGroupRequestProtocol(name="x", metadata=b""),)))
    assert joined.error_code == ErrorCode.none
    assert _delete(front, group, ["t"]).error_code == ErrorCode.non_empty_group


def test_a_transactional_commit_of_a_stale_member_epoch_is_fenced_before_the_broker(front):
    topic = f"txn-{uuid.uuid4().hex[:8]}"
    create_topic(front.address, topic, 1)
    group = f"txn-{uuid.uuid4().hex[:8]}"
    member, epoch = _joined(front, group, topic)

    def txn_commit(member_id: str, generation: int) -> list[ErrorCode]:
        answer = _ask(front, TxnOffsetCommitRequest(
            transactional_id=f"tx-{group}", group_id=group, producer_id=i64(1), producer_epoch=i16(0),
            generation_id=i32(generation), member_id=member_id, group_instance_id=None,
            topics=(TxnOffsetCommitRequestTopic(name=topic, partitions=(TxnOffsetCommitRequestPartition(
                partition_index=i32(0), committed_offset=i64(3), committed_leader_epoch=i32(-1),
                committed_metadata=""),)),)))
        return [p.error_code for t in answer.topics for p in t.partitions]

    assert txn_commit(member, epoch + 1) == [ErrorCode.illegal_generation]  # Kafka's answer to a stale epoch here
    assert txn_commit("someone-else", epoch) == [ErrorCode.unknown_member_id]
    assert _committed(front, group, [topic]) == {topic: -1}  # nothing of them reached the broker
