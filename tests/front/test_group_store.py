"""The coordinators' records written to the real broker before the answers that depend on them: a leader's SyncGroup
(the round's assignment, the record Kafka writes) and a heartbeat behind it are answered only once the record is
stored, the write held at the store until the test lets it through; a new runtime reads the group back at its
generation, Stable, with its assignment; a store the broker does not take is logged and the answers go out."""

from __future__ import annotations

import asyncio
import dataclasses
import struct
import uuid
from collections.abc import Sequence

from kio.index import load_request_schema
from structlog.testing import capture_logs
from time_scale import bounded

from zkconsumer.assignors.topic_ids import generated_topic_id
from zkconsumer.front.groups.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.front.groups.classic_group_messages import (
    ErrorCode,
    GroupState,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupResponse,
    Protocol,
    SyncGroup,
    SyncGroupResponse,
)
from zkconsumer.front.groups.consumer_group import ConsumerGroupConfig, ConsumerGroupCoordinator
from zkconsumer.front.groups.consumer_group_messages import ConsumerGroupHeartbeat, TopicMetadata
from zkconsumer.front.groups.coordinator_runtime import CoordinatorRuntime
from zkconsumer.front.groups.group_records import (
    ClassicGroupRecord,
    ClassicMemberRecord,
    ConsumerGroupRecord,
    decode,
    encode_key,
    encode_value,
)
from zkconsumer.front.proxy.config import FrontConfig
from zkconsumer.front.proxy.entities import build
from zkconsumer.front.proxy.group_apis import GroupApis
from zkconsumer.front.proxy.group_store import EMPTY_FETCHES, GroupStore, StoreFailed, load_groups
from zkconsumer.front.proxy.handlers import RequestContext
from zkconsumer.front.proxy.wire import RequestHead
from zkconsumer.kafka.consumer_protocol import encode_assignment

FRONT = "127.0.0.1:19092"
GROUP = "g"


class HeldStore(GroupStore):
    """The real store, each write waiting for the test's gate first."""

    def __init__(self, config: FrontConfig, topic: str) -> None:
        super().__init__(config, topic)
        self.gate = asyncio.Event()
        self.writes: list[list[str]] = []

    async def write(self, records: Sequence[tuple[str, bytes | None]]) -> None:
        self.writes.append([group_id for group_id, _ in records])
        await asyncio.wait_for(self.gate.wait(), bounded(30))
        await super().write(records)


def runtime_of(store: GroupStore) -> CoordinatorRuntime:
    return CoordinatorRuntime(ClassicGroupCoordinator(ClassicGroupConfig(initial_rebalance_delay_ms=0)),
                              ConsumerGroupCoordinator(), store=store)


def join(request_id: int) -> JoinGroup:
    return JoinGroup(request_id, GROUP, "", "consumer", (Protocol("range", b"meta"),), 10_000, 10_000, api_version=3)


def test_a_round_s_record_is_stored_before_its_assignment_is_answered(broker_bootstrap):
    config = FrontConfig.of(broker_bootstrap)
    topic = f"__zkconsumer_groups_{uuid.uuid4().hex[:8]}"

    async def scenario() -> tuple[bool, bool, SyncGroupResponse, HeartbeatResponse, list[list[str]]]:
        store = HeldStore(config, topic)
        runtime = runtime_of(store)
        await load_groups(runtime, store, FRONT)
        joined = await runtime.classic_request(join)  # no record mid-round: answered at once
        assert isinstance(joined, JoinGroupResponse) and joined.generation_id == 1
        member = joined.member_id
        sync = asyncio.ensure_future(runtime.classic_request(lambda rid: SyncGroup(
            rid, GROUP, 1, member, None, None, None, ((member, b"partitions"),))))
        while not store.writes:
            await asyncio.sleep(0.01)
        heartbeat = asyncio.ensure_future(runtime.classic_request(lambda rid: Heartbeat(rid, GROUP, 1, member)))
        await asyncio.sleep(0.05)  # a window in which either answer, were it not held, would have gone out
        held = not sync.done() and not heartbeat.done()
        store.gate.set()
        synced, beat = await sync, await heartbeat
        stored = runtime.classic.state_of(GROUP) is GroupState.STABLE
        await runtime.aclose()
        await store.close()
        assert isinstance(synced, SyncGroupResponse) and isinstance(beat, HeartbeatResponse)
        return held, stored, synced, beat, store.writes

    held, stable, synced, beat, writes = asyncio.run(asyncio.wait_for(scenario(), bounded(60)))
    assert held
    assert stable and synced.error_code is ErrorCode.none and synced.assignment == b"partitions"
    assert beat.error_code is ErrorCode.none
    assert writes == [[GROUP]]

    async def reload() -> tuple[dict, CoordinatorRuntime]:
        reader = GroupStore(config, topic, FRONT)
        groups, _, invalid = await reader.read()
        assert invalid == []
        runtime = runtime_of(GroupStore(config, topic))
        await load_groups(runtime, runtime.store, FRONT)  # type: ignore[arg-type]
        runtime.close()
        await reader.close()
        return groups, runtime

    groups, reloaded = asyncio.run(asyncio.wait_for(reload(), bounded(30)))
    record = groups[GROUP]
    assert isinstance(record, ClassicGroupRecord)
    assert (record.generation, record.protocol, [m.assignment for m in record.members]) == (1, "range",
                                                                                           [b"partitions"])
    assert reloaded.classic.state_of(GROUP) is GroupState.STABLE
    assert reloaded.classic.generation_of(GROUP) == 1


def test_a_write_the_broker_does_not_take_is_logged_and_the_answer_goes_out():
    config = FrontConfig.of("127.0.0.1:1", connect_timeout=1.0)  # nothing listens there

    async def scenario() -> SyncGroupResponse:
        runtime = runtime_of(GroupStore(config, "__zkconsumer_groups", FRONT))
        joined = await runtime.classic_request(join)
        assert isinstance(joined, JoinGroupResponse)
        member = joined.member_id
        synced = await runtime.classic_request(lambda rid: SyncGroup(
            rid, GROUP, 1, member, None, None, None, ((member, b"partitions"),)))
        runtime.close()
        assert isinstance(synced, SyncGroupResponse)
        return synced

    with capture_logs() as events:
        synced = asyncio.run(asyncio.wait_for(scenario(), bounded(30)))
    assert synced.error_code is ErrorCode.none and synced.assignment == b"partitions"
    failed = [e for e in events if e["event"] == "front.groups_store_failed"]
    assert [(e["operation"], e["groups"]) for e in failed] == [("write", [GROUP])]
    assert "no broker accepts a connection" in failed[0]["error"]
    assert "\n" not in failed[0]["error"]


# --- the consumer groups' writes: merged while one is under way, a downgrade's in one, answers after them -----------

TOPIC = "t"


class RecordingStore(HeldStore):
    """The held store, keeping each write's values too."""

    def __init__(self, config: FrontConfig, topic: str) -> None:
        super().__init__(config, topic)
        self.values: list[list[tuple[str, bytes | None]]] = []

    async def write(self, records: Sequence[tuple[str, bytes | None]]) -> None:
        self.values.append(list(records))
        await super().write(records)


def _subscription(*owned: int) -> bytes:
    """A ConsumerProtocol v1 Subscription of ``TOPIC`` owning ``owned``."""
    name = TOPIC.encode()
    head = struct.pack(f">hih{len(name)}si", 1, 1, len(name), name, -1)
    return head + struct.pack(f">ih{len(name)}si{len(owned)}i", 1, len(name), name, len(owned), *owned)


def _classic_group() -> ClassicGroupRecord:
    return ClassicGroupRecord("consumer", 5, "cooperative-sticky", "a", (
        ClassicMemberRecord("a", None, "ca", "/h", 60_000, 10_000, _subscription(0, 1),
                            encode_assignment({TOPIC: frozenset({0, 1})})),
        ClassicMemberRecord("b", None, "cb", "/h", 60_000, 10_000, _subscription(2, 3),
                            encode_assignment({TOPIC: frozenset({2, 3})}))))


def _upgraded(runtime: CoordinatorRuntime) -> None:
    """The classic group ``_classic_group`` a consumer group, taken over by the KIP-848 machine as the online upgrade
    does, directly: stored by the next input that names the group, as any change is."""
    runtime.apply(runtime.coordinator.set_topics([TopicMetadata(TOPIC, generated_topic_id(TOPIC), 4)], runtime.now()))
    runtime.log_events(runtime.consumer.upgrade(GROUP, _classic_group(), "Stable", runtime.now()))


def _consumer_join(runtime: CoordinatorRuntime, member_id: str) -> None:
    result = runtime.coordinator.consumer_group_heartbeat(0, ConsumerGroupHeartbeat(
        GROUP, member_id, 0, rebalance_timeout_ms=60_000, subscribed_topic_names=(TOPIC,), owned={}, api_version=1),
        runtime.now())
    response = result.response(0)
    assert response is not None and response.error_code is ErrorCode.none  # type: ignore[attr-defined]
    runtime.apply(result)


def test_changes_made_while_a_write_is_under_way_are_written_once_each_group_s_latest(broker_bootstrap):
    config = FrontConfig.of(broker_bootstrap)
    topic = f"__zkconsumer_groups_{uuid.uuid4().hex[:8]}"

    async def scenario() -> list[list[str]]:
        store = HeldStore(config, topic)
        runtime = runtime_of(store)
        await load_groups(runtime, store, FRONT)
        _consumer_join(runtime, "m0")
        while not store.writes:  # the first write under way, held
            await asyncio.sleep(0.01)
        for n in range(1, 6):
            _consumer_join(runtime, f"m{n}")
        store.gate.set()
        await asyncio.wait_for(runtime.stored(), bounded(30))
        await runtime.aclose()
        await store.close()
        return store.writes

    writes = asyncio.run(asyncio.wait_for(scenario(), bounded(60)))
    assert writes == [[GROUP], [GROUP]]  # not one write per change

    async def read() -> dict:
        reader = GroupStore(config, topic, FRONT)
        groups, _, _ = await reader.read()
        await reader.close()
        return groups

    record = asyncio.run(asyncio.wait_for(read(), bounded(30)))[GROUP]
    assert isinstance(record, ConsumerGroupRecord)
    assert sorted(m.member_id for m in record.members) == [f"m{n}" for n in range(6)]


def test_a_consumer_group_whose_last_consumer_member_expires_is_stored_classic_in_one_write(broker_bootstrap):
    """Kafka converts a consumer group back whenever a member leaves by any means, its session's expiry too; the
    classic record takes the consumer group's place in one write, never behind a tombstone of the group."""
    config = FrontConfig.of(broker_bootstrap)
    topic = f"__zkconsumer_groups_{uuid.uuid4().hex[:8]}"
    clock = [1_000]

    async def scenario() -> tuple[bool, bool, list[list[tuple[str, bytes | None]]]]:
        store = RecordingStore(config, topic)
        store.gate.set()
        runtime = CoordinatorRuntime(ClassicGroupCoordinator(ClassicGroupConfig(initial_rebalance_delay_ms=0)),
                                     ConsumerGroupCoordinator(ConsumerGroupConfig(session_timeout_ms=5_000)),
                                     clock=lambda: clock[0], store=store)
        await load_groups(runtime, store, FRONT)
        _upgraded(runtime)
        _consumer_join(runtime, "c")
        await asyncio.wait_for(runtime.stored(), bounded(30))
        written = len(store.values)
        clock[0] += 6_000  # c's 5 s session passes without a heartbeat, the classic members' 10 s do not
        runtime._arm()  # the timer re-armed on the clock moved: due at once
        for _ in range(200):
            if not runtime.consumer.has_group(GROUP):
                break
            await asyncio.sleep(0.01)
        await asyncio.wait_for(runtime.stored(), bounded(30))
        classic_now = GROUP in runtime.classic.group_ids() and not runtime.consumer.has_group(GROUP)
        await runtime.aclose()
        await store.close()
        return classic_now, written > 0, store.values[written:]

    classic_now, stored_before, after = asyncio.run(asyncio.wait_for(scenario(), bounded(60)))
    assert classic_now and stored_before
    values = [value for write in after for group_id, value in write if group_id == GROUP]
    assert values and None not in values  # no tombstone of the group, ever
    _, record = decode(encode_key(FRONT, GROUP), values[-1])
    assert isinstance(record, ClassicGroupRecord)
    assert record.generation >= 5 and [m.member_id for m in record.members] == ["a", "b"]


def test_a_classic_member_s_heartbeat_and_sync_to_a_consumer_group_wait_for_the_write_under_way(broker_bootstrap):
    config = FrontConfig.of(broker_bootstrap)
    topic = f"__zkconsumer_groups_{uuid.uuid4().hex[:8]}"

    async def scenario() -> tuple[bool, bool, int, int]:
        store = HeldStore(config, topic)
        runtime = runtime_of(store)
        await load_groups(runtime, store, FRONT)
        apis = GroupApis(runtime)
        _upgraded(runtime)  # stored by the heartbeat below, which names the group: that write held

        def context(api_key: int, version: int) -> RequestContext:
            return RequestContext(RequestHead(api_key, version, 1), "test", "127.0.0.1:1", 1, None)

        beat = asyncio.ensure_future(apis.heartbeat(context(12, 3), build(
            load_request_schema(12, 3), group_id=GROUP, generation_id=5, member_id="a", group_instance_id=None)))
        while not store.writes:
            await asyncio.sleep(0.01)
        sync = asyncio.ensure_future(apis.sync_group(context(14, 3), build(
            load_request_schema(14, 3), group_id=GROUP, generation_id=5, member_id="b", group_instance_id=None,
            assignments=())))
        await asyncio.sleep(0.05)  # a window in which either answer, were it not held, would have gone out
        held = not beat.done() and not sync.done()
        store.gate.set()
        beaten, synced = await beat, await sync
        await runtime.aclose()
        await store.close()
        return held, True, int(beaten.error_code), int(synced.error_code)

    held, _, beat_code, sync_code = asyncio.run(asyncio.wait_for(scenario(), bounded(60)))
    assert held
    assert (beat_code, sync_code) == (0, 0)


class EmptiedFetches(GroupStore):
    """The real store reading the real broker, every Fetch answer's records left out on the way back: a broker that
    answers nothing below its high watermark."""

    async def _exchange(self, request: object) -> object:
        answer = await super()._exchange(request)
        if type(answer).__name__ != "FetchResponse":
            return answer
        return dataclasses.replace(answer, responses=tuple(
            dataclasses.replace(topic, partitions=tuple(dataclasses.replace(p, records=None) for p in topic.partitions))
            for topic in answer.responses))


def test_a_read_the_broker_answers_with_nothing_below_its_high_watermark_fails_in_one_line(broker_bootstrap):
    config = FrontConfig.of(broker_bootstrap)
    topic = f"__zkconsumer_groups_{uuid.uuid4().hex[:8]}"

    async def scenario() -> str:
        writer = GroupStore(config, topic, FRONT)
        await writer._create_topic()
        await writer.write([(GROUP, encode_value(_classic_group()))])
        await writer.close()
        reader = EmptiedFetches(config, topic, FRONT)
        try:
            await reader.read()
        except StoreFailed as exc:
            return str(exc)
        finally:
            await reader.close()
        return "read, no failure"

    message = asyncio.run(asyncio.wait_for(scenario(), bounded(60)))
    assert message.startswith(f"the broker answered {EMPTY_FETCHES} fetches of {topic} at offset 0 with nothing")
    assert "high watermark 1" in message and "\n" not in message
