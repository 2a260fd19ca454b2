"""The coordinators' records written to the real broker before the answers that depend on them: a leader's SyncGroup
(the round's assignment, the record Kafka writes) and a heartbeat behind it are answered only once the record is
stored, the write held at the store until the test lets it through; a new runtime reads the group back at its
generation, Stable, with its assignment; a store the broker does not take is logged and the answers go out."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Sequence

from structlog.testing import capture_logs
from time_scale import bounded

from zkconsumer.front.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.front.classic_group_messages import (
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
from zkconsumer.front.config import FrontConfig
from zkconsumer.front.consumer_group import ConsumerGroupCoordinator
from zkconsumer.front.coordinator_runtime import CoordinatorRuntime
from zkconsumer.front.group_records import ClassicGroupRecord
from zkconsumer.front.group_store import GroupStore, load_groups

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
