"""The front answers ZooKeeper-era clients as a Kafka 0.10 broker did, against the real broker and ZooKeeper: Fetch
v0-v3 down-converted to message sets (each message's magic and CRC checked byte by byte, with a reader of the test's
own), Produce v0-v2's message sets stored, ListOffsets v0 with its offsets array, OffsetCommit and OffsetFetch v0 kept
in ZooKeeper at the legacy path, OffsetCommit v1 through the front's coordinator, and librdkafka speaking to a 0.9
broker. The requests are kafka-python's structs of the old versions, sent on a plain socket as an old client sends
them."""

from __future__ import annotations

import socket
import struct
import uuid

import pytest
from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from kafka.protocol.old.commit import (
    OffsetCommitRequest_v0,
    OffsetCommitRequest_v1,
    OffsetCommitResponse_v0,
    OffsetCommitResponse_v1,
    OffsetFetchRequest_v0,
    OffsetFetchResponse_v0,
)
from kafka.protocol.old.fetch import (
    FetchRequest_v0,
    FetchRequest_v1,
    FetchRequest_v2,
    FetchRequest_v3,
    FetchResponse_v0,
    FetchResponse_v1,
    FetchResponse_v2,
    FetchResponse_v3,
)
from kafka.protocol.old.list_offsets import ListOffsetsRequest_v0, ListOffsetsResponse_v0
from kafka.protocol.old.produce import (
    ProduceRequest_v0,
    ProduceRequest_v1,
    ProduceRequest_v2,
    ProduceResponse_v0,
    ProduceResponse_v1,
    ProduceResponse_v2,
)
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kio.schema.offset_fetch.v1.request import OffsetFetchRequest, OffsetFetchRequestTopic
from kio.static.primitive import i32
from message_sets import message_set
from support import delete_tree, produce, wait_for
from time_scale import scaled

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.proxy.client import api_versions_request, exchange, read_answer
from zkconsumer.front.proxy.config import parse_address
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk.client import close_client, open_client

FETCH = {0: (FetchRequest_v0, FetchResponse_v0), 1: (FetchRequest_v1, FetchResponse_v1),
         2: (FetchRequest_v2, FetchResponse_v2), 3: (FetchRequest_v3, FetchResponse_v3)}
PRODUCE = {0: (ProduceRequest_v0, ProduceResponse_v0), 1: (ProduceRequest_v1, ProduceResponse_v1),
           2: (ProduceRequest_v2, ProduceResponse_v2)}
UNKNOWN_TOPIC_OR_PARTITION, CORRUPT_MESSAGE, UNKNOWN = 3, 2, -1
TIMESTAMP = 1_700_000_000_000
GZIP = 1


@pytest.fixture(scope="module")
def zookeeper(zookeeper_connect):
    """A chroot of the module's own, where the front keeps version-0 offsets."""
    chroot = f"/zkconsumer-tests/front-legacy-{uuid.uuid4().hex[:8]}"
    root = open_client(zookeeper_connect)
    root.ensure_path(chroot)
    try:
        client = open_client(f"{zookeeper_connect}{chroot}")
        yield f"{zookeeper_connect}{chroot}", client
        close_client(client)
    finally:
        delete_tree(root, chroot)
        close_client(root)


@pytest.fixture(scope="module")
def front(bootstrap_servers, zookeeper, tmp_path_factory):
    options = ("--zookeeper", zookeeper[0])
    with FrontProcess(bootstrap_servers, tmp_path_factory.mktemp("front"), options=options) as process:
        yield process
    # Whatever the tests sent, the front met no failure it did not expect.
    assert '"front.connection_failed"' not in process.log_path.read_text(encoding="utf-8")


@pytest.fixture
def connection(front):
    with socket.create_connection(parse_address(front.address), timeout=scaled(10)) as sock:
        yield sock


def ask(sock: socket.socket, request, response_type, correlation_id: int = 7):
    """Send an old version's request as its clients did and read the answer with its version's struct."""
    request.with_header(correlation_id=correlation_id, client_id="old-client")
    sock.sendall(request.encode(header=True, framed=True))
    answer = read_answer(sock)
    assert struct.unpack_from(">i", answer)[0] == correlation_id
    return response_type.decode(answer[4:])


def fetch(sock: socket.socket, version: int, topic: str, partition: int, offset: int, max_bytes: int = 1 << 20):
    request_type, response_type = FETCH[version]
    fields = {"replica_id": -1, "max_wait_ms": 100, "min_bytes": 1,
              "topics": [(topic, [(partition, offset, max_bytes)])]}
    if version == 3:
        fields["max_bytes"] = 1 << 20
    (name, [(index, error, high_watermark, records)]), = ask(sock, request_type(**fields), response_type).topics
    assert (name, index) == (topic, partition)
    return error, high_watermark, records


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_fetch_v0_to_v3_answers_message_sets_of_the_magic_the_version_reads(front, connection, topic_name, version):
    create_topic(front.address, topic_name, 1)
    values = [f"message-{i}".encode() for i in range(5)]
    produce(front.address, topic_name, values, partition=0)

    error, high_watermark, records = fetch(connection, version, topic_name, 0, 0)

    messages = message_set(records)
    assert (error, high_watermark) == (0, 5)
    assert [m.offset for m in messages] == [0, 1, 2, 3, 4]
    assert [m.value for m in messages] == values
    assert {m.magic for m in messages} == {0 if version < 2 else 1}
    assert {m.attributes for m in messages} == {0}  # uncompressed
    if version >= 2:
        assert all(m.timestamp > 1_600_000_000_000 for m in messages)
    # From an offset inside the broker's batch: the messages before it are left out.
    assert [m.offset for m in message_set(fetch(connection, version, topic_name, 0, 3)[2])] == [3, 4]


def test_fetches_of_megabytes_are_converted_whole(front, connection, topic_name):
    create_topic(front.address, topic_name, 1)
    values = [bytes([i % 256]) * 10_000 for i in range(200)]  # 2 MB, converted off the front's event loop
    produce(front.address, topic_name, values, partition=0)

    received: list[bytes] = []

    def all_fetched() -> bool:  # as many fetches as the broker takes to hand over its batches
        messages = message_set(fetch(connection, 1, topic_name, 0, len(received), max_bytes=4 << 20)[2])
        assert [m.offset for m in messages] == list(range(len(received), len(received) + len(messages)))
        received.extend(m.value for m in messages)
        return len(received) >= len(values)

    wait_for(all_fetched, timeout=20)
    assert received == values


def test_fetch_v0_keeps_to_the_partition_s_limit_but_returns_a_first_message_larger_than_it(front, connection,
                                                                                         topic_name):
    create_topic(front.address, topic_name, 1)
    produce(front.address, topic_name, [b"x" * 100 for _ in range(5)], partition=0)

    one = message_set(fetch(connection, 0, topic_name, 0, 0, max_bytes=10)[2])
    two = message_set(fetch(connection, 0, topic_name, 0, 0, max_bytes=2 * (12 + 14 + 100) + 50)[2])

    assert [m.offset for m in one] == [0]
    assert [m.offset for m in two] == [0, 1]


def test_fetch_v0_of_a_topic_that_does_not_exist_is_answered_with_the_broker_s_error(front, connection):
    error, _, records = fetch(connection, 0, f"no-such-topic-{uuid.uuid4().hex[:6]}", 0, 0)

    assert error != 0
    assert records == b""
    assert exchange(front.address, api_versions_request()).error_code == 0  # the front goes on


def test_list_offsets_v0_answers_an_offsets_array_as_kafka_0_10_did_for_one_segment(front, connection, topic_name):
    create_topic(front.address, topic_name, 2)
    produce(front.address, topic_name, [b"a", b"b", b"c"], partition=0)
    missing = f"no-such-topic-{uuid.uuid4().hex[:6]}"

    def offsets(topic, partition, timestamp, max_num):
        request = ListOffsetsRequest_v0(replica_id=-1, topics=[(topic, [(partition, timestamp, max_num)])])
        (name, [(index, error, found)]), = ask(connection, request, ListOffsetsResponse_v0).topics
        assert (name, index) == (topic, partition)
        return error, found

    assert offsets(topic_name, 0, -1, 10) == (0, [3, 0])
    assert offsets(topic_name, 0, -1, 1) == (0, [3])
    assert offsets(topic_name, 0, -2, 10) == (0, [0])
    assert offsets(topic_name, 1, -1, 10) == (0, [0])  # an empty log: its end is its start
    assert offsets(topic_name, 0, 4_000_000_000_000, 10) == (0, [3, 0])  # after every message: as the latest
    assert offsets(topic_name, 0, 0, 10) == (0, [])  # before the segment was last written to
    assert offsets(missing, 0, -1, 1) == (UNKNOWN_TOPIC_OR_PARTITION, [])


def test_offset_commit_and_fetch_v0_keep_offsets_in_zookeeper_at_the_legacy_path(front, connection, zookeeper,
                                                                                   topic_name):
    create_topic(front.address, topic_name, 2)
    _connect, zk = zookeeper
    group = f"old-group-{uuid.uuid4().hex[:6]}"
    missing = f"no-such-topic-{uuid.uuid4().hex[:6]}"

    committed = ask(connection, OffsetCommitRequest_v0(group_id=group, topics=[
        (topic_name, [(0, 42, "kafka-node")]), (missing, [(0, 7, "")])]), OffsetCommitResponse_v0)

    assert committed.topics == [(topic_name, [(0, 0)]), (missing, [(0, UNKNOWN_TOPIC_OR_PARTITION)])]
    assert zk.get(f"/consumers/{group}/offsets/{topic_name}/0")[0] == b"42"
    assert zk.exists(f"/consumers/{group}/offsets/{missing}") is None  # nothing Kafka 0.10 would not have written

    fetched = ask(connection, OffsetFetchRequest_v0(group_id=group, topics=[(topic_name, [0, 1]), (missing, [0])]),
                  OffsetFetchResponse_v0)

    assert fetched.topics == [(topic_name, [(0, 42, "", 0), (1, -1, "", UNKNOWN_TOPIC_OR_PARTITION)]),
                              (missing, [(0, -1, "", UNKNOWN_TOPIC_OR_PARTITION)])]
    # A legacy member's commit, written where Kafka 0.8.2-0.10 wrote it, is what version 0 reads.
    zk.set(f"/consumers/{group}/offsets/{topic_name}/0", b"43")
    fetched = ask(connection, OffsetFetchRequest_v0(group_id=group, topics=[(topic_name, [0])]),
                  OffsetFetchResponse_v0)
    assert fetched.topics == [(topic_name, [(0, 43, "", 0)])]


def test_api_versions_advertise_the_old_versions_the_front_answers(front):
    ranges = {key.api_key: (key.min_version, key.max_version)
              for key in exchange(front.address, api_versions_request()).api_keys}

    assert ranges[1][0] == 0  # Fetch
    assert ranges[2][0] == 0  # ListOffsets
    assert ranges[9][0] == 0  # OffsetFetch
    assert ranges[8][0] == 0  # OffsetCommit


def test_a_malformed_old_request_closes_only_its_own_connection(front, connection):
    request = FetchRequest_v0(replica_id=-1, max_wait_ms=100, min_bytes=1, topics=[("t", [(0, 0, 1024)])])
    request.with_header(correlation_id=1, client_id="old-client")
    frame = request.encode(header=True, framed=False)[:-3]  # the last partition cut short

    connection.sendall(struct.pack(">i", len(frame)) + frame)

    assert connection.recv(1) == b""  # closed, as Kafka closes a connection whose request it cannot read
    assert exchange(front.address, api_versions_request()).error_code == 0


@pytest.mark.timeout(60)
def test_librdkafka_speaking_to_a_0_9_broker_consumes_through_the_front(front, topic_name):
    create_topic(front.address, topic_name, 1)
    values = [f"old-{i}".encode() for i in range(10)]
    produce(front.address, topic_name, values, partition=0)
    consumer = Consumer({"bootstrap.servers": front.address, "group.id": f"g-{uuid.uuid4().hex[:6]}",
                         "api.version.request": False, "broker.version.fallback": "0.9.0",
                         "enable.auto.commit": False, "enable.partition.eof": False})
    try:
        consumer.assign([TopicPartition(topic_name, 0, OFFSET_BEGINNING)])
        received: list[bytes] = []

        def consumed() -> bool:
            message = consumer.poll(0.2)
            if message is not None:
                assert message.error() is None, message.error()
                received.append(message.value())
            return len(received) >= len(values)

        wait_for(consumed, timeout=30)
        assert received == values
        consumer.commit(asynchronous=False)
        committed, = consumer.committed([TopicPartition(topic_name, 0)], timeout=scaled(10))
        assert committed.offset == len(values)
    finally:
        consumer.close()


def message_set_of(magic: int, messages: list[tuple[bytes | None, bytes]], compression: int = 0) -> bytes:
    """What an old producer sends: kafka-python's builder of magic 0 and 1, as its producer used it."""
    builder = LegacyRecordBatchBuilder(magic, compression, 1 << 20)
    for offset, (key, value) in enumerate(messages):
        builder.append(offset, TIMESTAMP + offset, key, value)
    return bytes(builder.build())


def produce_old(sock: socket.socket, version: int, topic: str, partition: int, message_set: bytes, acks: int = 1):
    request_type, response_type = PRODUCE[version]
    request = request_type(required_acks=acks, timeout=5000, topic_data=[(topic, [(partition, message_set)])])
    if acks == 0:
        request.with_header(correlation_id=9, client_id="old-client")
        sock.sendall(request.encode(header=True, framed=True))
        return None
    (name, [(index, error, base_offset, *_)]), = ask(sock, request, response_type).topics
    assert (name, index) == (topic, partition)
    return error, base_offset


@pytest.mark.parametrize(("version", "magic", "compression"), [(0, 0, 0), (1, 0, GZIP), (2, 1, 0), (2, 1, GZIP)])
def test_produce_v0_to_v2_message_sets_are_stored_and_read_back_by_old_and_new_clients(front, connection, topic_name,
                                                                                       version, magic, compression):
    create_topic(front.address, topic_name, 1)
    sent = [(b"k0", b"first"), (None, b"second")]

    assert produce_old(connection, version, topic_name, 0, message_set_of(magic, sent, compression)) == (0, 0)
    assert produce_old(connection, version, topic_name, 0, message_set_of(magic, [(b"k2", b"third")])) == (0, 2)

    messages = message_set(fetch(connection, 1, topic_name, 0, 0)[2])
    assert [(m.offset, m.key, m.value) for m in messages] == [(0, b"k0", b"first"), (1, None, b"second"),
                                                              (2, b"k2", b"third")]
    consumer = Consumer({"bootstrap.servers": front.address, "group.id": "unused", "enable.partition.eof": True})
    try:
        consumer.assign([TopicPartition(topic_name, 0, OFFSET_BEGINNING)])
        received = []

        def all_read() -> bool:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                received.append(message)
            return len(received) >= 3

        wait_for(all_read, timeout=20)
    finally:
        consumer.close()
    assert [(m.key(), m.value()) for m in received] == [(b"k0", b"first"), (None, b"second"), (b"k2", b"third")]
    if magic == 1:
        assert [m.timestamp()[1] for m in received] == [TIMESTAMP, TIMESTAMP + 1, TIMESTAMP]


def test_produce_v0_with_acks_0_gets_no_answer_and_a_corrupt_message_set_corrupt_message(front, connection,
                                                                                        topic_name):
    create_topic(front.address, topic_name, 1)
    produce_old(connection, 0, topic_name, 0, message_set_of(0, [(None, b"unanswered")]), acks=0)
    corrupt = bytearray(message_set_of(0, [(None, b"flipped")]))
    corrupt[-1] ^= 1

    # The next answer on the connection is the next request's: the acks=0 one got none.
    assert produce_old(connection, 0, topic_name, 0, bytes(corrupt)) == (CORRUPT_MESSAGE, -1)
    assert [m.value for m in message_set(fetch(connection, 0, topic_name, 0, 0)[2])] == [b"unanswered"]


@pytest.mark.parametrize("group", ["", None])
def test_a_group_id_that_names_no_znode_is_answered_unknown_and_nothing_is_written(front, connection, zookeeper,
                                                                                    topic_name, group):
    create_topic(front.address, topic_name, 1)
    _connect, zk = zookeeper
    before = zk.get_children("/consumers") if zk.exists("/consumers") else []

    committed = ask(connection, OffsetCommitRequest_v0(group_id=group, topics=[(topic_name, [(0, 5, "")])]),
                    OffsetCommitResponse_v0)
    fetched = ask(connection, OffsetFetchRequest_v0(group_id=group, topics=[(topic_name, [0])]),
                  OffsetFetchResponse_v0)

    assert committed.topics == [(topic_name, [(0, UNKNOWN)])]
    assert fetched.topics == [(topic_name, [(0, -1, "", UNKNOWN)])]
    assert (zk.get_children("/consumers") if zk.exists("/consumers") else []) == before


def test_offset_commit_v1_is_checked_by_the_front_s_coordinator_and_kept_in_the_broker(front, connection, zookeeper,
                                                                                        topic_name):
    create_topic(front.address, topic_name, 1)
    _connect, zk = zookeeper
    group = f"v1-group-{uuid.uuid4().hex[:6]}"

    def commit(generation: int, member: str, offset: int) -> int:
        request = OffsetCommitRequest_v1(group_id=group, generation_id_or_member_epoch=generation, member_id=member,
                                         topics=[(topic_name, [(0, offset, -1, "")])])
        (_, [(_, error)]), = ask(connection, request, OffsetCommitResponse_v1).topics
        return error

    def committed() -> int:
        answer = exchange(front.address, OffsetFetchRequest(group_id=group, topics=(
            OffsetFetchRequestTopic(name=topic_name, partition_indexes=(i32(0),)),)))
        return answer.topics[0].partitions[0].committed_offset

    assert commit(-1, "", 42) == 0  # a consumer of assigned partitions: no generation, no member
    assert committed() == 42
    assert commit(5, "nobody", 43) != 0  # a member the coordinator does not know
    assert committed() == 42
    assert zk.exists(f"/consumers/{group}") is None  # version 1 kept offsets in the broker, never in ZooKeeper
