"""The front's wire format, rewrites and ApiVersions ranges, without a broker: requests and answers are made with
kio's entities, as a client and a broker make them."""

from __future__ import annotations

import asyncio
import datetime
import io
from dataclasses import replace

import pytest
from kio.schema.api_versions.v0.response import ApiVersionsResponse as ApiVersionsResponseV0
from kio.schema.api_versions.v3.response import ApiVersion, ApiVersionsResponse
from kio.schema.describe_cluster.v1.response import DescribeClusterBroker, DescribeClusterResponse
from kio.schema.errors import ErrorCode
from kio.schema.find_coordinator.v3.response import FindCoordinatorResponse as FindCoordinatorResponseV3
from kio.schema.find_coordinator.v4.response import Coordinator, FindCoordinatorResponse
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.metadata.v12.response import MetadataResponse, MetadataResponseBroker
from kio.schema.produce.v3.request import ProduceRequest as ProduceRequestV3
from kio.schema.produce.v9.request import ProduceRequest as ProduceRequestV9
from kio.schema.types import BrokerId
from kio.serial import entity_writer
from kio.static.primitive import i16, i32, i32Timedelta

from zkconsumer.errors import UsageError
from zkconsumer.front.proxy import wire
from zkconsumer.front.proxy.api_versions import advertise, negotiate
from zkconsumer.front.proxy.config import FrontConfig, parse_address
from zkconsumer.front.proxy.handlers import LocalApi, local_ranges, local_table
from zkconsumer.front.proxy.rewrite import Advertised, rewrite_brokers

FRONT = Advertised("front.example", 19092)
NO_THROTTLE = i32Timedelta.parse(datetime.timedelta(0))


def unframed(data: bytes) -> bytes:
    return data[4:]


def test_a_request_s_head_is_read_and_a_garbled_one_refused():
    frame = unframed(wire.encode_request(MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                                    include_topic_authorized_operations=False), 42, "c"))
    assert wire.read_request_head(frame) == wire.RequestHead(3, 12, 42)
    assert wire.decode_request(wire.read_request_head(frame), frame).allow_auto_topic_creation is False
    with pytest.raises(wire.MalformedRequest, match="shorter than a request header"):
        wire.read_request_head(frame[:7])
    with pytest.raises(wire.MalformedRequest, match="unknown API key 4242"):
        wire.read_request_head(b"\x10\x92" + frame[2:])
    with pytest.raises(wire.MalformedRequest, match="negative version"):
        wire.read_request_head(frame[:2] + b"\xff\xfe" + frame[4:])
    with pytest.raises(wire.MalformedRequest, match="unreadable body"):
        wire.decode_request(wire.read_request_head(frame), frame[:-2])
    with pytest.raises(wire.MalformedRequest, match="2 bytes after the body"):
        wire.decode_request(wire.read_request_head(frame), frame + b"\x00\x00")
    with pytest.raises(wire.MalformedRequest, match="version 99 of API key 3 is not supported"):
        wire.decode_request(wire.RequestHead(3, 99, 1), frame)


@pytest.mark.parametrize("schema", [ProduceRequestV3, ProduceRequestV9])
@pytest.mark.parametrize("acks", [0, 1, -1])
def test_a_produce_s_acks_are_read_and_replaced_in_place(schema, acks):
    request = schema(transactional_id="a-transaction", acks=i16(acks), timeout=i32Timedelta.parse(
        datetime.timedelta(seconds=1)), topic_data=())
    frame = unframed(wire.encode_request(request, 7, "producer"))
    head = wire.read_request_head(frame)
    read, offset = wire.produce_acks(head, frame)
    assert read == acks
    assert wire.decode_request(head, wire.with_acks(frame, offset, 1)) == replace(request, acks=1)
    with pytest.raises(wire.MalformedRequest, match="too short to hold its acks"):
        wire.produce_acks(head, frame[:len(frame) - len(_body(request)) + 3])


def _body(entity) -> bytes:
    out = io.BytesIO()
    entity_writer(type(entity))(out, entity)
    return out.getvalue()


def test_frames_are_read_whole_and_bad_sizes_refused():
    async def frames(data: bytes, max_bytes: int = 100) -> list:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        reader.feed_eof()
        out: list = []
        try:
            while (frame := await wire.read_frame(reader, max_bytes)) is not None:
                out.append(frame)
        except (wire.MalformedRequest, wire.TruncatedFrame) as exc:
            out.append(exc)
        return out

    assert asyncio.run(frames(b"\x00\x00\x00\x02ab\x00\x00\x00\x00")) == [b"ab", b""]
    negative, too_big, truncated, short_prefix = (asyncio.run(frames(data)) for data in (
        b"\xff\xff\xff\xfe", b"\x00\x00\x00\x65" + b"x" * 101, b"\x00\x00\x00\x0aabc", b"\x00\x00"))
    assert isinstance(negative[0], wire.MalformedRequest) and "-2 outside 0..100" in str(negative[0])
    assert isinstance(too_big[0], wire.MalformedRequest) and "101 outside" in str(too_big[0])
    assert isinstance(truncated[0], wire.TruncatedFrame) and "after 3 of 10 bytes" in str(truncated[0])
    assert isinstance(short_prefix[0], wire.TruncatedFrame)


def _metadata() -> MetadataResponse:
    brokers = tuple(MetadataResponseBroker(node_id=BrokerId(n), host=f"b{n}", port=i32(9092), rack=None)
                    for n in (1, 2))
    return MetadataResponse(throttle_time=NO_THROTTLE, brokers=brokers, cluster_id="c", controller_id=BrokerId(1),
                            topics=())


def test_metadata_and_describe_cluster_name_the_front_for_every_broker_with_the_same_ids():
    rewritten = rewrite_brokers(3, _metadata(), FRONT)
    assert [(b.node_id, b.host, b.port) for b in rewritten.brokers] == [(1, "front.example", 19092),
                                                                         (2, "front.example", 19092)]
    assert rewritten.controller_id == 1 and rewritten.cluster_id == "c"
    cluster = DescribeClusterResponse(
        throttle_time=NO_THROTTLE, error_code=ErrorCode.none, error_message=None, endpoint_type=1, cluster_id="c",
        controller_id=BrokerId(7), brokers=(DescribeClusterBroker(broker_id=BrokerId(7), host="b7", port=i32(1),
                                                                  rack=None),), cluster_authorized_operations=0)
    assert [(b.broker_id, b.host, b.port) for b in rewrite_brokers(60, cluster, FRONT).brokers] == \
        [(7, "front.example", 19092)]


def test_a_coordinator_is_rewritten_unless_the_answer_is_an_error():
    found = FindCoordinatorResponseV3(throttle_time=NO_THROTTLE, error_code=ErrorCode.none, error_message=None,
                                      node_id=BrokerId(3), host="b3", port=i32(9092))
    assert (rewrite_brokers(10, found, FRONT).host, rewrite_brokers(10, found, FRONT).port) == ("front.example", 19092)
    missing = FindCoordinatorResponseV3(throttle_time=NO_THROTTLE, error_code=ErrorCode.coordinator_not_available,
                                        error_message=None, node_id=BrokerId(-1), host="", port=i32(-1))
    assert rewrite_brokers(10, missing, FRONT) == missing
    batched = FindCoordinatorResponse(throttle_time=NO_THROTTLE, coordinators=(
        Coordinator(key="g1", node_id=BrokerId(3), host="b3", port=i32(9092), error_code=ErrorCode.none,
                    error_message=None),
        Coordinator(key="g2", node_id=BrokerId(-1), host="", port=i32(-1),
                    error_code=ErrorCode.coordinator_not_available, error_message=None)))
    assert [(c.key, c.host, c.port) for c in rewrite_brokers(10, batched, FRONT).coordinators] == \
        [("g1", "front.example", 19092), ("g2", "", -1)]


def test_api_versions_narrow_the_broker_s_ranges_to_what_the_front_stands_behind():
    broker = {0: (0, 11), 1: (0, 17), 3: (0, 99), 10: (0, 6), 18: (0, 9), 19: (2, 7), 55: (0, 2), 4242: (0, 1),
              11: (0, 9)}
    local = {11: (2, 5), 68: (0, 0)}
    assert negotiate(broker, local) == {
        0: (0, 9),  # Produce: before KIP-951's node endpoints
        1: (0, 15),  # Fetch: likewise
        3: (0, 13),  # Metadata: what kio parses
        10: (0, 6),
        11: (2, 5),  # the front's own range replaces the broker's
        18: (0, 4),
        19: (2, 7),  # relayed unread: the broker's
        68: (0, 0),  # the front's own, which the broker lacks
    }  # 55 (DescribeQuorum names nodes) and 4242 (an API key Kafka does not define) are not advertised


def test_the_broker_s_api_versions_answer_is_rewritten_and_its_unsupported_version_layout_read():
    answer = ApiVersionsResponse(error_code=ErrorCode.none, api_keys=(
        ApiVersion(api_key=i16(1), min_version=i16(4), max_version=i16(17)),
        ApiVersion(api_key=i16(55), min_version=i16(0), max_version=i16(2))), throttle_time=NO_THROTTLE)
    assert [(k.api_key, k.min_version, k.max_version) for k in advertise(answer, {68: (0, 1)}).api_keys] == \
        [(1, 4, 15), (68, 0, 1)]
    # A broker that does not know the ApiVersions version asked answers in version 0's layout (KIP-511).
    unsupported = ApiVersionsResponseV0(error_code=ErrorCode.unsupported_version, api_keys=())
    assert wire.decode_response(18, 3, unframed(wire.encode_response(9, unsupported))) == unsupported
    with pytest.raises(wire.MalformedResponse, match="API key 3 v12"):
        wire.decode_response(3, 12, unframed(wire.encode_response(9, _metadata()))[:-3])


def test_local_apis_are_one_per_key_within_what_kio_parses():
    async def answer(context, request):
        raise AssertionError("not called")

    api = LocalApi(16, 0, 4, answer)
    assert local_ranges(local_table([api])) == {16: (0, 4)}
    with pytest.raises(ValueError, match="two handlers for API key 16"):
        local_table([api, api])
    with pytest.raises(ValueError, match="not all parsed by kio"):
        LocalApi(16, 0, 99, answer)


def test_a_front_needs_a_broker_address_it_can_read():
    assert FrontConfig.of(" 127.0.0.1:9092, [::1]:9093 ").bootstrap == ("127.0.0.1:9092", "[::1]:9093")
    assert parse_address("[::1]:9093") == ("::1", 9093)
    assert Advertised("::1", 9093).address == "[::1]:9093"
    with pytest.raises(UsageError, match="needs the broker's address"):
        FrontConfig.of(" , ")
    with pytest.raises(UsageError, match="broker address 'broker' is not HOST:PORT"):
        FrontConfig.of("broker")
