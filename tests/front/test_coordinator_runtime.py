"""The coordinators on an event loop: a JoinGroup is answered when the state machine's timer fires on the loop's own
timer, a replaced one raises :class:`RequestDropped`, a session expires with nothing but time passing, and every
event is logged under its name with ``group`` and ``at_ms``."""

from __future__ import annotations

import asyncio
import time

from structlog.testing import capture_logs

from zkconsumer.front.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.front.classic_group_messages import ErrorCode, JoinGroup, JoinGroupResponse, Protocol
from zkconsumer.front.consumer_group import ConsumerGroupCoordinator
from zkconsumer.front.coordinator_runtime import CoordinatorRuntime, RequestDropped

DELAY_MS = 50


def _runtime() -> CoordinatorRuntime:
    return CoordinatorRuntime(ClassicGroupCoordinator(ClassicGroupConfig(initial_rebalance_delay_ms=DELAY_MS,
                                                                          min_session_timeout_ms=10)),
                              ConsumerGroupCoordinator())


def _join(member_id: str, session_ms: int = 100, api_version: int = 3) -> object:
    return lambda request_id: JoinGroup(request_id, "g", member_id, "consumer", (Protocol("range"),), session_ms,
                                        session_ms, api_version=api_version)


def test_a_join_is_answered_when_the_initial_delay_passes_and_the_session_expires_on_its_own():
    async def scenario() -> tuple[JoinGroupResponse, float, CoordinatorRuntime]:
        runtime = _runtime()
        started = time.monotonic()
        joined = await runtime.classic_request(_join(""))
        waited = time.monotonic() - started
        # No heartbeat follows: the member's session (100 ms) expires on the runtime's timer alone.
        while runtime.classic.members_of("g"):
            await asyncio.sleep(0.01)
        runtime.close()
        return joined, waited, runtime  # type: ignore[return-value]

    with capture_logs() as events:
        joined, waited, runtime = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert joined.error_code is ErrorCode.NONE and joined.generation_id == 1
    assert waited >= DELAY_MS / 1000
    names = [e["event"] for e in events if e["event"].startswith("front.group.")]
    assert names[:2] == ["front.group.created", "front.group.member_joined"]
    assert "front.group.round_completed" in names
    expired = [e for e in events if e["event"] == "front.group.member_expired"]
    assert [(e["group"], e["member_id"], e["cause"]) for e in expired] == [("g", joined.member_id, "session_timeout")]
    assert all(isinstance(e["at_ms"], int) for e in events if e["event"].startswith("front.group."))


def test_a_join_replaced_by_a_newer_one_of_the_same_member_raises_request_dropped():
    async def scenario() -> tuple[BaseException | None, bool]:
        runtime = _runtime()
        await runtime.classic_request(_join("", 10_000))  # a first member: generation 1
        # A second member gets its id (KIP-394) and joins: its join waits for the first member to rejoin.
        second = (await runtime.classic_request(_join("", 10_000, api_version=4))).member_id  # type: ignore[attr-defined]
        older = asyncio.ensure_future(runtime.classic_request(_join(second, 10_000, api_version=4)))
        await asyncio.sleep(0.01)
        assert not older.done()
        newer = asyncio.ensure_future(runtime.classic_request(_join(second, 10_000, api_version=4)))
        dropped = await asyncio.gather(older, return_exceptions=True)
        newer_waits = not newer.done()
        newer.cancel()
        runtime.close()
        return dropped[0], newer_waits

    dropped, newer_waits = asyncio.run(asyncio.wait_for(scenario(), 10))
    assert isinstance(dropped, RequestDropped)
    assert newer_waits  # the newer one waits for the round, as the older did
