"""ConsumerGroupHeartbeat v0 (KIP-848's first version, which the front advertises): it has no subscribed topic
regex, and the coordinator gives the member its id; a member speaking it joins and heartbeats, as Kafka 4.x answers
it, through the real front."""

from __future__ import annotations

import datetime
import socket
import uuid
from collections.abc import Iterator

import pytest
from kio.index import load_request_schema
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32, i32Timedelta
from time_scale import bounded

from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.proxy.client import exchange_on
from zkconsumer.front.proxy.entities import build


@pytest.fixture(scope="module")
def front(broker_bootstrap, tmp_path_factory) -> Iterator[FrontProcess]:
    with FrontProcess(broker_bootstrap, tmp_path_factory.mktemp("front-v0")) as process:
        yield process


def test_a_v0_member_joins_and_heartbeats_on_one_connection(front):
    group = f"v0-{uuid.uuid4().hex[:6]}"
    schema = load_request_schema(68, 0)
    assert "subscribed_topic_regex" not in schema.__dataclass_fields__
    host, port = front.address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=bounded(20)) as sock:
        joined = exchange_on(sock, build(
            schema, group_id=group, member_id="", member_epoch=i32(0),
            rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)), subscribed_topic_names=("t",),
            topic_partitions=()))
        assert joined.error_code == ErrorCode.none and joined.member_id and joined.member_epoch >= 1
        beat = exchange_on(sock, build(schema, group_id=group, member_id=joined.member_id,
                                       member_epoch=joined.member_epoch, topic_partitions=None))
        assert (beat.error_code, beat.member_id, beat.member_epoch) == (
            ErrorCode.none, joined.member_id, joined.member_epoch)
