"""The front's group APIs on the wire, spoken with kio's entities: what ApiVersions advertises for them, a JoinGroup
replaced by a newer one of the same member ends the connection it waited on (never a connection muted forever),
and groups whose offsets only the broker keeps are listed as Kafka lists them."""

from __future__ import annotations

import datetime
import socket
import struct
import uuid
from collections.abc import Iterator

import pytest
from kio.index import load_request_schema
from kio.schema.consumer_group_heartbeat.v0.request import ConsumerGroupHeartbeatRequest
from kio.schema.describe_groups.v0.request import DescribeGroupsRequest
from kio.schema.describe_groups.v5.request import DescribeGroupsRequest as DescribeGroupsV5
from kio.schema.errors import ErrorCode
from kio.schema.join_group.v5.request import JoinGroupRequest, JoinGroupRequestProtocol
from kio.schema.list_groups.v4.request import ListGroupsRequest
from kio.schema.offset_commit.v8 import request as commit
from kio.static.primitive import i32, i32Timedelta, i64
from support import wait_for
from time_scale import bounded

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.proxy.client import api_versions_request, exchange, exchange_on, read_answer
from zkconsumer.front.proxy.entities import build, nested
from zkconsumer.front.proxy.group_apis import VERSIONS
from zkconsumer.front.proxy.wire import decode_response, encode_request
from zkconsumer.kafka.topics import create_topic


@pytest.fixture(scope="module")
def front(broker_bootstrap, tmp_path_factory) -> Iterator[FrontProcess]:
    with FrontProcess(broker_bootstrap, tmp_path_factory.mktemp("front")) as process:
        yield process


def advertised(address: str) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in exchange(address, api_versions_request()).api_keys}


def test_api_versions_advertises_the_front_s_group_apis_or_the_broker_s(front, broker_bootstrap, tmp_path):
    ranges = advertised(front.address)
    # OffsetCommit from version 1, answered through its coordinator (front.legacy.legacy_versions)
    assert {key: ranges[key] for key in VERSIONS} == {**VERSIONS, 8: (1, VERSIONS[8][1])}
    assert ranges[68] == (0, 1)  # ConsumerGroupHeartbeat, which the broker behind does not have
    with FrontProcess(broker_bootstrap, tmp_path, options=("--group-coordinator", "broker")) as relaying:
        broker = advertised(broker_bootstrap)
        relayed = advertised(relaying.address)
        assert relayed[11] == broker[11]  # JoinGroup: the broker's own
        assert 68 not in relayed


def _join(group: str, member_id: str) -> JoinGroupRequest:
    timeout = i32Timedelta.parse(datetime.timedelta(seconds=10))
    subscription = struct.pack(">hi", 0, 0) + struct.pack(">i", -1)  # consumer protocol v0, no topics
    return JoinGroupRequest(group_id=group, session_timeout=timeout, rebalance_timeout=timeout, member_id=member_id,
                            group_instance_id=None, protocol_type="consumer",
                            protocols=(JoinGroupRequestProtocol(name="range", metadata=subscription),))


def test_a_join_replaced_by_a_newer_one_of_the_same_member_closes_the_connection_it_waited_on(front):
    group = f"gd-{uuid.uuid4().hex[:6]}"
    host, port = front.address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=bounded(20)) as first, \
            socket.create_connection((host, int(port)), timeout=bounded(20)) as second:
        member_id = exchange_on(first, _join(group, "")).member_id
        first.sendall(encode_request(_join(group, member_id), 1, "first"))  # waits out the initial delay
        wait_for(lambda: any(group in line and "front.group.member_joined" in line
                             for line in front.log_path.read_text().splitlines()))
        answer = exchange_on(second, _join(group, member_id))  # the same member, on another connection
        assert (answer.error_code, answer.member_id, answer.leader) == (ErrorCode.none, member_id, member_id)
        with pytest.raises(OSError):  # the replaced request is never answered: its connection is closed
            read_answer(first)
        # The connection that got the answer goes on.
        assert exchange_on(second, api_versions_request()).error_code == ErrorCode.none


def _commit_at_the_broker(broker: str, group: str, topic: str) -> None:
    """Offset 3 of the topic's partition 0, committed at the broker itself as an administrator."""
    stored = exchange(broker, commit.OffsetCommitRequest(
        group_id=group, generation_id_or_member_epoch=i32(-1), member_id="", group_instance_id=None,
        topics=(commit.OffsetCommitRequestTopic(name=topic, partitions=(commit.OffsetCommitRequestPartition(
            partition_index=i32(0), committed_offset=i64(3), committed_leader_epoch=i32(-1),
            committed_metadata=""),)),)))
    assert stored.topics[0].partitions[0].error_code == ErrorCode.none


def test_groups_whose_offsets_only_the_broker_keeps_are_listed_and_described_empty(front, broker_bootstrap, topic_name):
    create_topic(broker_bootstrap, topic_name, 1)
    group = f"go-{uuid.uuid4().hex[:6]}"
    _commit_at_the_broker(broker_bootstrap, group, topic_name)
    listed = exchange(front.address, ListGroupsRequest(states_filter=("Empty",)))
    assert [(g.group_state, g.protocol_type) for g in listed.groups if g.group_id == group] == [("Empty", "")]
    stable = exchange(front.address, ListGroupsRequest(states_filter=("Stable",)))
    assert group not in {g.group_id for g in stable.groups}
    never = f"gn-{uuid.uuid4().hex[:6]}"
    described = exchange(front.address, DescribeGroupsRequest(groups=(group, never)))
    assert [(g.group_id, g.group_state, g.protocol_type) for g in described.groups] == [
        (group, "Empty", ""), (never, "Dead", "")]


def test_every_version_of_list_groups_the_front_advertises_is_answered_in_its_own_layout(front):
    host, port = front.address.rsplit(":", 1)
    low, high = VERSIONS[16]
    with socket.create_connection((host, int(port)), timeout=bounded(10)) as sock:
        for version in range(low, high + 1):
            request = load_request_schema(16, version)()
            sock.sendall(encode_request(request, 100 + version, "versions"))
            answer = decode_response(16, version, read_answer(sock))
            assert answer.error_code == ErrorCode.none


@pytest.fixture(scope="module")
def undelayed_front(broker_bootstrap, tmp_path_factory) -> Iterator[FrontProcess]:
    """A front whose empty groups complete their first round at once (``group.initial.rebalance.delay.ms`` 0)."""
    with FrontProcess(broker_bootstrap, tmp_path_factory.mktemp("undelayed"),
                      options=("--group-initial-rebalance-delay-ms", "0")) as process:
        yield process


def _request(api_key: int, version: int, **fields: object) -> object:
    return build(load_request_schema(api_key, version), **fields)


@pytest.mark.parametrize("version", range(VERSIONS[11][0], VERSIONS[11][1] + 1))
def test_a_member_joins_syncs_heartbeats_is_described_and_leaves_in_every_version(undelayed_front, version):
    group = f"gv{version}-{uuid.uuid4().hex[:6]}"
    protocol_type = nested(load_request_schema(11, version), "JoinGroupRequestProtocol")
    sync_version, heartbeat_version, leave_version = min(version, 5), min(version, 4), min(version, 5)
    host, port = undelayed_front.address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=bounded(20)) as sock:
        def join(member_id: str) -> object:
            return exchange_on(sock, _request(
                11, version, group_id=group, session_timeout=10_000, rebalance_timeout=10_000, member_id=member_id,
                group_instance_id=None, protocol_type="consumer", reason=None,
                protocols=(build(protocol_type, name="range", metadata=b"subscription"),)))

        joined = join("")
        if version >= 4:  # KIP-394: a new member first gets its id
            assert joined.error_code == ErrorCode.member_id_required
            joined = join(joined.member_id)
        member_id = joined.member_id
        assert (joined.error_code, joined.generation_id, joined.leader) == (ErrorCode.none, 1, member_id)
        assert [(m.member_id, m.metadata) for m in joined.members] == [(member_id, b"subscription")]

        assignment_type = nested(load_request_schema(14, sync_version), "SyncGroupRequestAssignment")
        synced = exchange_on(sock, _request(
            14, sync_version, group_id=group, generation_id=1, member_id=member_id, group_instance_id=None,
            protocol_type="consumer", protocol_name="range",
            assignments=(build(assignment_type, member_id=member_id, assignment=b"yours"),)))
        assert (synced.error_code, synced.assignment) == (ErrorCode.none, b"yours")

        beat = exchange_on(sock, _request(12, heartbeat_version, group_id=group, generation_id=1,
                                          member_id=member_id, group_instance_id=None))
        assert beat.error_code == ErrorCode.none
        stale = exchange_on(sock, _request(12, heartbeat_version, group_id=group, generation_id=0,
                                           member_id=member_id, group_instance_id=None))
        assert stale.error_code == ErrorCode.illegal_generation

        described = exchange_on(sock, _request(15, min(version, 5), groups=(group,),
                                               include_authorized_operations=False)).groups[0]
        assert (described.group_state, described.protocol_data) == ("Stable", "range")
        assert [(m.member_id, m.member_assignment) for m in described.members] == [(member_id, b"yours")]

        if leave_version >= 3:
            identity = nested(load_request_schema(13, leave_version), "MemberIdentity")
            left = exchange_on(sock, _request(13, leave_version, group_id=group, members=(
                build(identity, member_id=member_id, group_instance_id=None, reason="done"),)))
            assert [(m.member_id, m.error_code) for m in left.members] == [(member_id, ErrorCode.none)]
        else:
            left = exchange_on(sock, _request(13, leave_version, group_id=group, member_id=member_id))
        assert left.error_code == ErrorCode.none
        listed = exchange_on(sock, ListGroupsRequest(states_filter=()))
        assert [g.group_state for g in listed.groups if g.group_id == group] == ["Empty"]


def test_a_consumer_group_described_through_describe_groups_is_dead_as_kafka_answers(front, broker_bootstrap,
                                                                                        topic_name):
    """Kafka 4.x's ``describeGroups`` finds no classic group of that id and answers Dead, with no error up to
    version 5 (the newest the front answers), even though the consumer group lives: its offsets in the broker do not
    make it an offsets-only Empty group."""
    create_topic(broker_bootstrap, topic_name, 1)
    group = f"gc-{uuid.uuid4().hex[:6]}"
    joined = exchange(front.address, ConsumerGroupHeartbeatRequest(
        group_id=group, member_id="", member_epoch=i32(0), instance_id=None, rack_id=None,
        rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=30)), subscribed_topic_names=(topic_name,),
        server_assignor=None, topic_partitions=()))
    assert joined.error_code == ErrorCode.none
    _commit_at_the_broker(broker_bootstrap, group, topic_name)
    described = exchange(front.address, DescribeGroupsV5(groups=(group,), include_authorized_operations=False))
    assert [(g.error_code, g.group_state, g.protocol_type, g.members) for g in described.groups] == [
        (ErrorCode.none, "Dead", "", ())]
