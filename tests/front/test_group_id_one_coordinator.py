"""One group id lives in one coordinator even when a KIP-848 member and a classic member of it join at once (the
migration case): the KIP-848 heartbeat reads the cluster's topics from the broker before it checks the classic
coordinator, so nothing awaits between that check and the KIP-848 group's creation. The broker's Metadata answer is
held on an event while a classic JoinGroup of the same group id comes in, the interleaving that would otherwise put the
group in both coordinators. The heartbeat then converts the live classic group (Kafka's online upgrade) and the waiting
JoinGroup is answered REBALANCE_IN_PROGRESS; with ``group.consumer.migration.policy`` disabled it is refused and the
classic group goes on."""

from __future__ import annotations

import asyncio
import datetime
import struct
import uuid
from typing import Any

import pytest
from kio.schema.consumer_group_heartbeat.v0.request import ConsumerGroupHeartbeatRequest
from kio.schema.join_group.v3.request import JoinGroupRequest, JoinGroupRequestProtocol
from kio.static.primitive import i32, i32Timedelta
from time_scale import bounded

from zkconsumer.front.groups.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.front.groups.classic_group_messages import ErrorCode, GroupState
from zkconsumer.front.groups.consumer_group import ConsumerGroupConfig, ConsumerGroupCoordinator
from zkconsumer.front.groups.coordinator_runtime import CoordinatorRuntime
from zkconsumer.front.proxy.group_apis import GroupApis
from zkconsumer.front.proxy.handlers import RequestContext
from zkconsumer.front.proxy.upstream import COPY_CHUNK, Upstream
from zkconsumer.front.proxy.wire import RequestHead
from zkconsumer.kafka.api_keys import CONSUMER_GROUP_HEARTBEAT, JOIN_GROUP

TIMEOUT = i32Timedelta.parse(datetime.timedelta(seconds=10))


def _join(group: str) -> JoinGroupRequest:
    subscription = struct.pack(">hi", 0, 0) + struct.pack(">i", -1)  # consumer protocol v0, no topics
    return JoinGroupRequest(group_id=group, session_timeout=TIMEOUT, rebalance_timeout=TIMEOUT, member_id="",
                            protocol_type="consumer",
                            protocols=(JoinGroupRequestProtocol(name="range", metadata=subscription),))


def _heartbeat(group: str) -> ConsumerGroupHeartbeatRequest:
    return ConsumerGroupHeartbeatRequest(group_id=group, member_id=uuid.uuid4().hex, member_epoch=i32(0),
                                         rebalance_timeout=TIMEOUT, subscribed_topic_names=("t",),
                                         server_assignor=None, topic_partitions=())


@pytest.mark.parametrize("policy", ["bidirectional", "disabled"])
def test_a_classic_join_during_a_kip848_heartbeat_s_topic_refresh_leaves_the_group_in_one_coordinator(
        broker_bootstrap, policy):
    group = f"both-{uuid.uuid4().hex[:6]}"

    async def scenario() -> tuple[Any, Any, bool, bool, GroupState | None]:
        runtime = CoordinatorRuntime(ClassicGroupCoordinator(ClassicGroupConfig(initial_rebalance_delay_ms=10_000)),
                                     ConsumerGroupCoordinator(ConsumerGroupConfig(migration_policy=policy)))
        apis = GroupApis(runtime)
        host, port = broker_bootstrap.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port), limit=COPY_CHUNK)
        upstream = Upstream(broker_bootstrap, reader, writer)
        metadata_asked, release = asyncio.Event(), asyncio.Event()

        async def held_relay(body: Any) -> Any:  # the broker's real answer, handed on once the test releases it
            metadata_asked.set()
            answer = await upstream.exchange(body, 1, "held")
            await release.wait()
            return answer

        heartbeat = asyncio.ensure_future(apis.consumer_group_heartbeat(
            RequestContext(RequestHead(CONSUMER_GROUP_HEARTBEAT, 0, 1), "kip848", "127.0.0.1:1", 1, held_relay),
            _heartbeat(group)))
        await metadata_asked.wait()
        join = asyncio.ensure_future(apis.join_group(
            RequestContext(RequestHead(JOIN_GROUP, 3, 1), "classic", "127.0.0.1:2", 2), _join(group)))
        while group not in runtime.classic.group_ids():  # the join is in: it waits for the initial rebalance delay
            await asyncio.sleep(0.01)
        release.set()
        answered = await heartbeat
        in_classic = group in runtime.classic.group_ids()
        in_consumer = runtime.consumer.has_group(group)
        state = runtime.classic.state_of(group) if in_classic else None
        joined = await join if in_consumer else None
        join.cancel()
        runtime.close()
        await upstream.close()
        return answered, joined, in_classic, in_consumer, state

    answered, joined, in_classic, in_consumer, state = asyncio.run(asyncio.wait_for(scenario(), bounded(30)))
    if policy == "disabled":
        assert (in_classic, in_consumer) == (True, False)
        assert state is GroupState.PREPARING_REBALANCE
        assert int(answered.error_code) == ErrorCode.group_id_not_found
        assert answered.error_message == (f"Cannot upgrade classic group {group} to consumer group because online "
                                          "upgrade is disabled.")
    else:
        assert (in_classic, in_consumer) == (False, True)
        assert int(answered.error_code) == ErrorCode.none
        assert int(joined.error_code) == ErrorCode.rebalance_in_progress  # the classic member joins the new group
