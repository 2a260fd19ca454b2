"""An OffsetCommit's check and its write to the broker are one step for its group: a read of the group's offsets that
comes while a checked commit is on its way to the broker waits for it, so a partition's next owner never reads the
offsets from before a commit its previous owner made in time. The front's group APIs over the real broker, the
commit's write held at the broker's door until the test lets it through."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import sys
from typing import Any

from kio.index import load_request_schema
from kio.schema.errors import ErrorCode
from kio.static.primitive import i32, i32Timedelta, i64
from time_scale import bounded

from zkconsumer.front.groups.classic_group import ClassicGroupCoordinator
from zkconsumer.front.groups.consumer_group import ConsumerGroupCoordinator
from zkconsumer.front.groups.coordinator_runtime import CoordinatorRuntime
from zkconsumer.front.groups.offset_order import OffsetOrder
from zkconsumer.front.proxy.client import exchange
from zkconsumer.front.proxy.entities import build
from zkconsumer.front.proxy.group_apis import GroupApis
from zkconsumer.front.proxy.handlers import RequestContext
from zkconsumer.front.proxy.wire import RequestHead
from zkconsumer.kafka.topics import create_topic


def _nested(request_type: Any, name: str) -> Any:
    return getattr(sys.modules[request_type.__module__], name)


async def _to_broker(broker: str, body: Any) -> Any:
    """``body`` sent to the real broker, off the event loop."""
    return await asyncio.get_running_loop().run_in_executor(None, functools.partial(exchange, broker, body,
                                                                                    bounded(10)))


def _contexts(relay: Any) -> Any:
    def context(api_key: int, version: int) -> RequestContext:
        return RequestContext(RequestHead(api_key, version, 1), "test", "127.0.0.1:1", 1, relay)

    return context


async def _joined(apis: GroupApis, context: Any, group: str, topic: str) -> Any:
    """A KIP-848 member of ``group`` subscribed to ``topic``, through the front's handler."""
    joined = await apis.consumer_group_heartbeat(context(68, 0), build(
        load_request_schema(68, 0), group_id=group, member_id="", member_epoch=i32(0),
        rebalance_timeout=i32Timedelta.parse(datetime.timedelta(seconds=10)), subscribed_topic_names=(topic,),
        topic_partitions=()))
    assert joined.error_code == ErrorCode.none and joined.member_epoch > 0
    return joined


def test_a_read_waits_for_the_commit_checked_before_it(broker_bootstrap, topic_name):
    create_topic(broker_bootstrap, topic_name, 1)
    group = f"ordered-{topic_name}"
    relayed: list[str] = []  # what reached the broker, in order

    async def scenario() -> tuple[Any, Any]:
        gate = asyncio.Event()
        apis = GroupApis(CoordinatorRuntime(ClassicGroupCoordinator(), ConsumerGroupCoordinator()))

        async def relay(body: Any) -> Any:
            relayed.append(type(body).__name__)
            if type(body).__name__ == "OffsetCommitRequest":
                await asyncio.wait_for(gate.wait(), bounded(30))
            return await _to_broker(broker_bootstrap, body)

        context = _contexts(relay)
        joined = await _joined(apis, context, group, topic_name)
        commit_type = load_request_schema(8, 9)
        commit = asyncio.create_task(apis.offset_commit(context(8, 9), commit_type(
            group_id=group, generation_id_or_member_epoch=joined.member_epoch, member_id=joined.member_id,
            group_instance_id=None, topics=(_nested(commit_type, "OffsetCommitRequestTopic")(
                name=topic_name, partitions=(_nested(commit_type, "OffsetCommitRequestPartition")(
                    partition_index=i32(0), committed_offset=i64(42), committed_leader_epoch=i32(-1),
                    committed_metadata=""),)),))))
        while "OffsetCommitRequest" not in relayed:  # checked, and on its way to the broker
            await asyncio.sleep(0.01)
        fetch_type = load_request_schema(9, 8)
        fetch = asyncio.create_task(apis.offset_fetch(context(9, 8), fetch_type(groups=(
            _nested(fetch_type, "OffsetFetchRequestGroup")(group_id=group, topics=(
                _nested(fetch_type, "OffsetFetchRequestTopics")(name=topic_name, partition_indexes=(i32(0),)),)),),
            require_stable=False)))
        for _ in range(20):  # the read is not sent while the commit is held
            await asyncio.sleep(0)
        assert relayed[-1] == "OffsetCommitRequest" and not fetch.done()
        gate.set()
        return await asyncio.wait_for(commit, bounded(30)), await asyncio.wait_for(fetch, bounded(30))

    committed, fetched = asyncio.run(scenario())
    assert [p.error_code for t in committed.topics for p in t.partitions] == [ErrorCode.none]
    assert relayed[-2:] == ["OffsetCommitRequest", "OffsetFetchRequest"]
    (read,) = fetched.groups
    assert [(t.name, p.partition_index, p.committed_offset) for t in read.topics for p in t.partitions] == [
        (topic_name, 0, 42)]


def test_other_groups_do_not_wait_and_locks_are_dropped_when_done():
    async def scenario() -> list[str]:
        order = OffsetOrder()
        steps: list[str] = []
        release = asyncio.Event()

        async def hold(group: str) -> None:
            async with order.held((group,)):
                steps.append(f"{group} in")
                await asyncio.wait_for(release.wait(), bounded(10))
                steps.append(f"{group} out")

        async def take(groups: tuple[str, ...]) -> None:
            async with order.held(groups):
                steps.append("+".join(groups))

        held = asyncio.create_task(hold("a"))
        await asyncio.sleep(0)
        await asyncio.wait_for(take(("b",)), bounded(10))  # another group: not held up
        both = asyncio.create_task(take(("b", "a")))
        for _ in range(5):
            await asyncio.sleep(0)
        assert not both.done() and len(order) == 2
        release.set()
        await asyncio.wait_for(asyncio.gather(held, both), bounded(10))
        assert len(order) == 0
        return steps

    assert asyncio.run(scenario()) == ["a in", "b", "a out", "b+a"]


def _commit(group: str, topic: str, member_id: str, epoch: int, offset: int) -> Any:
    commit_type = load_request_schema(8, 9)
    return commit_type(group_id=group, generation_id_or_member_epoch=epoch, member_id=member_id,
                       group_instance_id=None, topics=(_nested(commit_type, "OffsetCommitRequestTopic")(
                           name=topic, partitions=(_nested(commit_type, "OffsetCommitRequestPartition")(
                               partition_index=i32(0), committed_offset=i64(offset), committed_leader_epoch=i32(-1),
                               committed_metadata=""),)),))


def test_a_commit_the_broker_does_not_store_in_time_is_answered_retriable_and_frees_the_group(broker_bootstrap,
                                                                                                topic_name):
    """A broker connection that hangs holds the group's lock only until offsets.commit.timeout.ms: the commit is
    answered COORDINATOR_NOT_AVAILABLE (the client retries), the lock is dropped, and the group's next commit and
    read go through."""
    create_topic(broker_bootstrap, topic_name, 1)
    group = f"hung-{topic_name}"
    hung = asyncio.Event()  # never set: the first commit's broker never answers

    async def scenario() -> tuple[Any, Any, Any, int]:
        apis = GroupApis(CoordinatorRuntime(ClassicGroupCoordinator(), ConsumerGroupCoordinator()),
                         commit_timeout_s=0.2)
        commits = 0

        async def relay(body: Any) -> Any:
            nonlocal commits
            if type(body).__name__ == "OffsetCommitRequest":
                commits += 1
                if commits == 1:
                    await asyncio.wait_for(hung.wait(), bounded(60))
            return await _to_broker(broker_bootstrap, body)

        context = _contexts(relay)
        joined = await _joined(apis, context, group, topic_name)
        first = await asyncio.wait_for(apis.offset_commit(context(8, 9), _commit(
            group, topic_name, joined.member_id, joined.member_epoch, 7)), bounded(10))
        locks = len(apis.offset_order)
        second = await asyncio.wait_for(apis.offset_commit(context(8, 9), _commit(
            group, topic_name, joined.member_id, joined.member_epoch, 9)), bounded(10))
        fetch_type = load_request_schema(9, 8)
        fetched = await asyncio.wait_for(apis.offset_fetch(context(9, 8), fetch_type(groups=(
            _nested(fetch_type, "OffsetFetchRequestGroup")(group_id=group, topics=(
                _nested(fetch_type, "OffsetFetchRequestTopics")(name=topic_name, partition_indexes=(i32(0),)),)),),
            require_stable=False)), bounded(10))
        return first, second, fetched, locks

    first, second, fetched, locks = asyncio.run(scenario())
    assert [p.error_code for t in first.topics for p in t.partitions] == [ErrorCode.coordinator_not_available]
    assert locks == 0
    assert [p.error_code for t in second.topics for p in t.partitions] == [ErrorCode.none]
    (read,) = fetched.groups
    assert [p.committed_offset for t in read.topics for p in t.partitions] == [9]


def test_an_exchange_given_up_leaves_its_broker_connection_abandoned_and_closed():
    """A deadline that cancels an exchange in flight marks the connection out of step and closes it, so that the
    server closes the client's connection after its answer (the late answer would otherwise be read as the next)."""
    from kio.schema.api_versions.v3.request import ApiVersionsRequest

    from zkconsumer.front.proxy.upstream import Upstream

    async def scenario() -> tuple[bool, bool]:
        silent = await asyncio.start_server(lambda reader, writer: None, "127.0.0.1", 0)  # takes, never answers
        port = silent.sockets[0].getsockname()[1]
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        upstream = Upstream(f"127.0.0.1:{port}", reader, writer)
        request = ApiVersionsRequest(client_software_name="t", client_software_version="1")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(upstream.exchange(request, 1, "test"), 0.1)
        abandoned, closing = upstream.abandoned, writer.is_closing()
        silent.close()
        return abandoned, closing

    assert asyncio.run(asyncio.wait_for(scenario(), bounded(10))) == (True, True)
