"""The front in front of the real broker: confluent-kafka and kafka-python produce, consume, commit and resume through
it; the answers that name brokers name the front; bad requests end only their own connection; a local API answers
in the connection's order."""

from __future__ import annotations

import asyncio
import datetime
import json
import random
import socket
import struct
import threading
import time
import uuid

import pytest
from confluent_kafka import Consumer, KafkaError, TopicPartition
from kio.schema.api_versions.v4.request import ApiVersionsRequest
from kio.schema.describe_cluster.v1.request import DescribeClusterRequest
from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest as FindCoordinatorRequestV3
from kio.schema.find_coordinator.v4.request import FindCoordinatorRequest
from kio.schema.list_groups.v4.request import ListGroupsRequest
from kio.schema.list_groups.v4.response import ListedGroup, ListGroupsResponse
from kio.schema.metadata.v0.request import MetadataRequest as MetadataRequestV0
from kio.schema.metadata.v12.request import MetadataRequest
from kio.static.primitive import i8, i16, i32, i32Timedelta
from support import produce, wait_for
from time_scale import bounded

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.background import front_in_thread
from zkconsumer.front.proxy.client import api_versions_request, exchange, exchange_on, read_answer
from zkconsumer.front.proxy.config import FrontConfig
from zkconsumer.front.proxy.handlers import LocalApi, local_table
from zkconsumer.front.proxy.wire import decode_response, encode_request, response_correlation_id
from zkconsumer.kafka.topics import create_topic


@pytest.fixture(scope="module")
def front(bootstrap_servers, tmp_path_factory):
    with FrontProcess(bootstrap_servers, tmp_path_factory.mktemp("front")) as process:
        yield process
    # Whatever the tests sent, the front met no failure it did not expect.
    assert named(process, "front.connection_failed") == []


def events(front: FrontProcess) -> list[dict]:
    lines = front.log_path.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def named(front: FrontProcess, name: str) -> list[dict]:
    return [e for e in events(front) if e["event"] == name]


def consume_all(consumer: Consumer, count: int, timeout: float = 30.0) -> list:
    """Up to ``count`` messages; stops early only at ``timeout`` (the reference machine's figure, bounded)."""
    messages: list = []
    deadline = time.monotonic() + bounded(timeout)
    while len(messages) < count and time.monotonic() < deadline:
        message = consumer.poll(0.5)
        if message is not None and message.error() is None:
            messages.append(message)
        elif message is not None and message.error().code() != KafkaError._PARTITION_EOF:
            raise AssertionError(message.error())
    return messages


@pytest.mark.timeout(180)  # its waits: 10 + 3 x 30 + 10 s, and three productions of up to 10 s
def test_assigned_and_subscribed_confluent_consumers_consume_commit_and_resume_through_the_front(front, topic_name):
    create_topic(front.address, topic_name, 2)
    for partition in (0, 1):  # ten to each, so both partitions have a committed offset
        produce(front.address, topic_name, [f"first-{i}".encode() for i in range(partition, 20, 2)],
                partition=partition)
    group = f"g-{uuid.uuid4().hex[:6]}"
    # The broker's coordinator holds a join for half the session timeout: a short one keeps the test short.
    config = {"bootstrap.servers": front.address, "group.id": group, "auto.offset.reset": "earliest",
              "enable.auto.commit": False, "session.timeout.ms": 6000, "heartbeat.interval.ms": 500}

    assigned = Consumer(config)
    assert {f"{b.host}:{b.port}" for b in assigned.list_topics(timeout=bounded(10)).brokers.values()} == {front.address}
    assigned.assign([TopicPartition(topic_name, 0, 0), TopicPartition(topic_name, 1, 0)])
    first = consume_all(assigned, 20)
    assert sorted(m.value() for m in first) == sorted(f"first-{i}".encode() for i in range(20))
    assigned.commit(asynchronous=False)
    assigned.close()

    produce(front.address, topic_name, [f"second-{i}".encode() for i in range(10)])
    subscribed = Consumer(config)
    subscribed.subscribe([topic_name])
    second = consume_all(subscribed, 10)
    assert sorted(m.value() for m in second) == sorted(f"second-{i}".encode() for i in range(10))
    assert subscribed.assignment() and {tp.partition for tp in subscribed.assignment()} == {0, 1}
    subscribed.commit(asynchronous=False)
    committed = subscribed.committed([TopicPartition(topic_name, p) for p in (0, 1)], timeout=bounded(10))
    subscribed.close()
    assert sum(tp.offset for tp in committed) == 30

    produce(front.address, topic_name, [b"third"])
    resumed = Consumer(config)
    resumed.subscribe([topic_name])
    assert [m.value() for m in consume_all(resumed, 1)] == [b"third"]
    resumed.close()


def test_kafka_python_s_group_consumer_consumes_commits_and_resumes_through_the_front(front, topic_name):
    from kafka import KafkaConsumer

    create_topic(front.address, topic_name, 2)
    produce(front.address, topic_name, [f"m-{i}".encode() for i in range(10)])
    group = f"kp-{uuid.uuid4().hex[:6]}"

    def consumer() -> KafkaConsumer:
        return KafkaConsumer(topic_name, bootstrap_servers=front.address, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False,
                             consumer_timeout_ms=int(bounded(30) * 1000), session_timeout_ms=6000,
                             heartbeat_interval_ms=500)

    first = consumer()
    values = []
    for message in first:
        values.append(message.value)
        if len(values) == 10:
            break
    assert sorted(values) == sorted(f"m-{i}".encode() for i in range(10))
    first.commit()
    first.close()

    produce(front.address, topic_name, [b"after"])
    second = consumer()
    assert next(iter(second)).value == b"after"
    second.close()
    # The front's own coordinator ran the group (it answers the group APIs by default).
    assert len([e for e in named(front, "front.group.member_joined") if e["group"] == group]) == 2


@pytest.mark.timeout(150)  # its waits: 6 x 10 (flushes) + 10 + 10 + 30 s
def test_a_produce_with_acks_0_is_relayed_without_waiting_for_an_answer_the_broker_never_sends(front, topic_name):
    from confluent_kafka import Producer

    create_topic(front.address, topic_name, 1)
    producer = Producer({"bootstrap.servers": front.address, "acks": 0, "linger.ms": 0})
    for i in range(5):
        producer.produce(topic_name, value=f"fire-{i}".encode(), partition=0)
        producer.flush(bounded(10))  # one request a message, each unanswered; the connection must not wait for one
    assert producer.flush(bounded(10)) == 0
    assert producer.list_topics(topic_name, timeout=bounded(10)).topics[topic_name].error is None  # the same connection
    reader = Consumer({"bootstrap.servers": front.address, "group.id": f"g-{uuid.uuid4().hex[:6]}",
                       "enable.auto.commit": False})
    # On one raw connection: an acks=0 produce, then an ApiVersions; the first answer on the connection must be the
    # ApiVersions' (exchange_on checks the correlation id), so the produce got none.
    with socket.create_connection(_split(front.address), timeout=bounded(10)) as sock:
        sock.sendall(encode_request(_acks_0_produce(topic_name, b"fire-5"), 7001, "c"))
        assert exchange_on(sock, api_versions_request()).error_code == ErrorCode.none
    reader.assign([TopicPartition(topic_name, 0, 0)])
    assert [m.value() for m in consume_all(reader, 6)] == [f"fire-{i}".encode() for i in range(6)]
    reader.close()


def _acks_0_produce(topic: str, value: bytes) -> object:
    """A Produce v9 with acks=0 of one message to partition 0; kafka-python's builder writes the record batch."""
    from kafka.record.memory_records import MemoryRecordsBuilder
    from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData

    batch = MemoryRecordsBuilder(magic=2, compression_type=0, batch_size=1024)
    batch.append(timestamp=None, key=None, value=value, headers=[])
    batch.close()
    records = PartitionProduceData(index=i32(0), records=bytes(batch.buffer()))
    return ProduceRequest(acks=i16(0), timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)),
                          topic_data=(TopicProduceData(name=topic, partition_data=(records,)),))


def test_a_failed_produce_with_acks_0_closes_the_connection_as_kafka_does(front, topic_name):
    from kio.schema.produce.v9.request import PartitionProduceData, ProduceRequest, TopicProduceData

    create_topic(front.address, topic_name, 1)
    nowhere = ProduceRequest(acks=i16(0), timeout=i32Timedelta.parse(datetime.timedelta(seconds=5)), topic_data=(
        TopicProduceData(name=topic_name, partition_data=(PartitionProduceData(index=i32(99), records=b""),)),))
    lost = len(named(front, "front.broker_lost"))
    with socket.create_connection(_split(front.address), timeout=bounded(10)) as sock:
        sock.sendall(encode_request(nowhere, 1, "c"))
        assert _closed_by_peer(sock)  # the one way an acks=0 producer learns of a failure
    assert len(named(front, "front.broker_lost")) == lost  # the front closed it, not the broker


def test_answers_that_name_brokers_name_the_front_with_the_broker_s_node_ids(front, bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    front_host, front_port = front.address.rsplit(":", 1)
    at_front = (front_host, int(front_port))
    direct = exchange(bootstrap_servers, MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                                         include_topic_authorized_operations=False))
    for request in (MetadataRequestV0(topics=()), MetadataRequest(
            topics=None, allow_auto_topic_creation=False, include_topic_authorized_operations=False)):
        answer = exchange(front.address, request)
        assert [b.node_id for b in answer.brokers] == [b.node_id for b in direct.brokers]
        assert {(b.host, b.port) for b in answer.brokers} == {at_front}

    group = f"g-{uuid.uuid4().hex[:6]}"
    v3 = exchange(front.address, FindCoordinatorRequestV3(key=group, key_type=i8(0)))
    assert v3.error_code == ErrorCode.none and (v3.host, v3.port) == at_front
    v4 = exchange(front.address, FindCoordinatorRequest(key_type=i8(0), coordinator_keys=(group, group + "-2")))
    assert [(c.key, c.host, c.port) for c in v4.coordinators] == [(group, *at_front), (group + "-2", *at_front)]
    cluster = exchange(front.address, DescribeClusterRequest(include_cluster_authorized_operations=False,
                                                             endpoint_type=i8(1)))
    assert cluster.brokers and {(b.host, b.port) for b in cluster.brokers} == {at_front}


def test_api_versions_advertise_the_front_s_ranges_and_refuse_a_version_it_cannot_read(front):
    answer = exchange(front.address, api_versions_request())
    ranges = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
    assert ranges[0][1] <= 9 and ranges[1][1] <= 15 and ranges[3][1] <= 13
    assert 55 not in ranges
    # A version after the ones the front reads: version 0's layout, UNSUPPORTED_VERSION, the versions it reads.
    with socket.create_connection(_split(front.address), timeout=bounded(10)) as sock:
        request = bytearray(encode_request(ApiVersionsRequest(client_software_name="x", client_software_version="1"),
                                           5, "c"))
        request[6:8] = struct.pack(">h", 99)
        sock.sendall(bytes(request))
        answer_frame = read_answer(sock)
        assert response_correlation_id(answer_frame) == 5
        refusal = decode_response(18, 0, answer_frame)
        assert refusal.error_code == ErrorCode.unsupported_version
        assert [(k.api_key, k.min_version, k.max_version) for k in refusal.api_keys] == [(18, 0, 4)]
        assert exchange_on(sock, api_versions_request()).error_code == ErrorCode.none  # the connection goes on


def _split(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host, int(port)


def _closed_by_peer(sock: socket.socket) -> bool:
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.mark.parametrize(("name", "data", "event"), [
    ("garbage", struct.pack(">i", 64) + b"\x7f\x00" + random.Random(64).randbytes(62), "front.request_invalid"),
    ("too short for a header", struct.pack(">i", 5) + b"\x00\x03\x00\x00\x00", "front.request_invalid"),
    ("a size no broker reads", struct.pack(">i", 2**31 - 1) + b"\x00" * 16, "front.request_invalid"),
    ("truncated", struct.pack(">i", 100) + b"\x00\x03\x00\x0c\x00\x00\x00\x01", "front.request_truncated"),
])
def test_a_bad_request_closes_only_its_own_connection(front, name, data, event):
    before = len(named(front, event))
    with socket.create_connection(_split(front.address), timeout=bounded(10)) as bystander, \
            socket.create_connection(_split(front.address), timeout=bounded(10)) as bad:
        assert exchange_on(bystander, api_versions_request()).error_code == ErrorCode.none
        bad.sendall(data)
        if name == "truncated":
            bad.shutdown(socket.SHUT_WR)  # the client gives up in the middle of its request
        assert _closed_by_peer(bad)
        assert exchange_on(bystander, api_versions_request()).error_code == ErrorCode.none
    assert exchange(front.address, api_versions_request()).error_code == ErrorCode.none
    wait_for(lambda: len(named(front, event)) > before)
    assert all("Traceback" not in line for line in front.log_path.read_text().splitlines())


def test_a_request_the_broker_cannot_read_leaves_the_front_serving_others(front):
    frame = encode_request(MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                           include_topic_authorized_operations=False), 3, "c")
    cut = struct.pack(">i", len(frame) - 6) + frame[4:-2]  # a whole frame whose body ends too soon
    with socket.create_connection(_split(front.address), timeout=bounded(10)) as bad:
        bad.sendall(cut)
        bad.settimeout(bounded(10))
        try:
            answered = read_answer(bad)
        except OSError:
            answered = None  # the broker closed the connection, and so did the front
        if answered is not None:
            assert response_correlation_id(answered) == 3
    assert exchange(front.address, api_versions_request()).error_code == ErrorCode.none


# --- a local API ----------------------------------------------------------------------------------------------------


def test_a_local_api_answers_in_the_connection_s_order_and_is_advertised(bootstrap_servers):
    release = threading.Event()
    asked: list[str | None] = []

    async def list_groups(context, request):
        asked.append(context.client_id)
        await asyncio.get_running_loop().run_in_executor(None, release.wait)  # as JoinGroup waits for its round
        return ListGroupsResponse(
            throttle_time=i32Timedelta.parse(datetime.timedelta(0)), error_code=ErrorCode.none,
            groups=(ListedGroup(group_id="from-the-front", protocol_type="consumer", group_state="Stable"),))

    local = local_table([LocalApi(16, 4, 4, list_groups)])
    with front_in_thread(FrontConfig.of(bootstrap_servers), local) as server:
        address = f"127.0.0.1:{server.port}"
        ranges = {k.api_key: (k.min_version, k.max_version)
                  for k in exchange(address, api_versions_request()).api_keys}
        assert ranges[16] == (4, 4)
        with socket.create_connection(("127.0.0.1", server.port), timeout=bounded(10)) as sock:
            sock.sendall(encode_request(ListGroupsRequest(states_filter=()), 1, "waiting-client")
                         + encode_request(MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                                          include_topic_authorized_operations=False), 2, "c"))
            wait_for(lambda: asked == ["waiting-client"])
            # While this connection waits, the others are served.
            assert exchange(address, api_versions_request()).error_code == ErrorCode.none
            release.set()
            first, second = read_answer(sock), read_answer(sock)
        assert (response_correlation_id(first), response_correlation_id(second)) == (1, 2)
        listed = decode_response(16, 4, first)
        assert [g.group_id for g in listed.groups] == ["from-the-front"]


def test_a_local_api_s_version_out_of_range_or_failing_handler_closes_only_that_connection(bootstrap_servers):
    async def failing(context, request):
        raise RuntimeError("a bug in a handler")

    local = local_table([LocalApi(16, 4, 4, failing)])
    with front_in_thread(FrontConfig.of(bootstrap_servers), local) as server:
        address = f"127.0.0.1:{server.port}"
        with socket.create_connection(("127.0.0.1", server.port), timeout=bounded(10)) as sock:
            sock.sendall(encode_request(ListGroupsRequest(states_filter=()), 1, "c"))
            assert _closed_by_peer(sock)
        with socket.create_connection(("127.0.0.1", server.port), timeout=bounded(10)) as sock:
            frame = bytearray(encode_request(ListGroupsRequest(states_filter=()), 1, "c"))
            frame[6:8] = struct.pack(">h", 3)  # a version the handler does not answer (and a v4 body)
            sock.sendall(bytes(frame))
            assert _closed_by_peer(sock)
        assert exchange(address, api_versions_request()).error_code == ErrorCode.none
