"""The coordinators on an event loop: a JoinGroup is answered when the state machine's timer fires on the loop's own
timer, a replaced one raises :class:`RequestDropped`, a session expires with nothing but time passing, every event is
logged under its name with ``group`` and ``at_ms``, and a coordinator whose tick raises is logged and ticked again."""

from __future__ import annotations

import asyncio
import time

from structlog.testing import capture_logs
from time_scale import bounded

from zkconsumer.front.groups.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.front.groups.classic_group_messages import (
    ErrorCode,
    GroupEvent,
    JoinGroup,
    JoinGroupResponse,
    Protocol,
    Step,
)
from zkconsumer.front.groups.consumer_group import ConsumerGroupCoordinator
from zkconsumer.front.groups.coordinator_runtime import CoordinatorRuntime, RequestDropped

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
        joined, waited, runtime = asyncio.run(asyncio.wait_for(scenario(), bounded(10)))
    assert joined.error_code is ErrorCode.none and joined.generation_id == 1
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

    dropped, newer_waits = asyncio.run(asyncio.wait_for(scenario(), bounded(10)))
    assert isinstance(dropped, RequestDropped)
    assert newer_waits  # the newer one waits for the round, as the older did


class _ClassicFailingOnce(ClassicGroupCoordinator):
    """A classic coordinator whose first tick raises, as a bug in it would."""

    def __init__(self, config: ClassicGroupConfig) -> None:
        super().__init__(config)
        self.failures = 1

    def tick(self, now_ms: int) -> Step:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("tick failed")
        return super().tick(now_ms)


class _ConsumerFailingOnce(ConsumerGroupCoordinator):
    """A KIP-848 coordinator whose first tick raises, as a bug in it would."""

    def __init__(self) -> None:
        super().__init__()
        self.failures = 1

    def tick(self, now_ms: int) -> tuple[GroupEvent, ...]:
        if self.failures:
            self.failures -= 1
            raise ValueError("consumer tick failed")
        return super().tick(now_ms)


def _join_answered(runtime: CoordinatorRuntime) -> JoinGroupResponse:
    async def scenario() -> JoinGroupResponse:
        try:
            return await runtime.classic_request(_join(""))  # type: ignore[return-value]
        finally:
            runtime.close()

    return asyncio.run(asyncio.wait_for(scenario(), bounded(10)))


def test_a_classic_tick_that_raises_is_logged_and_the_next_timer_still_fires():
    classic = _ClassicFailingOnce(ClassicGroupConfig(initial_rebalance_delay_ms=DELAY_MS, min_session_timeout_ms=10))
    with capture_logs() as events:
        joined = _join_answered(CoordinatorRuntime(classic, ConsumerGroupCoordinator()))
    # The tick at the end of the initial delay raised; the timer fired again and completed the round.
    assert classic.failures == 0
    assert joined.error_code is ErrorCode.none and joined.generation_id == 1
    errors = [e for e in events if e["event"] == "front.coordinator_error"]
    assert [(e["log_level"], e["coordinator"], e["error"]) for e in errors] == [
        ("error", "classic", "RuntimeError: tick failed")]


def test_a_kip848_tick_that_raises_does_not_stop_the_classic_timers():
    consumer = _ConsumerFailingOnce()
    with capture_logs() as events:
        joined = _join_answered(CoordinatorRuntime(
            ClassicGroupCoordinator(ClassicGroupConfig(initial_rebalance_delay_ms=DELAY_MS, min_session_timeout_ms=10)),
            consumer))
    assert consumer.failures == 0
    assert joined.error_code is ErrorCode.none and joined.generation_id == 1
    errors = [e for e in events if e["event"] == "front.coordinator_error"]
    assert [(e["log_level"], e["coordinator"], e["error"]) for e in errors] == [
        ("error", "consumer", "ValueError: consumer tick failed")]


def test_an_event_is_logged_at_the_level_it_declares():
    """The runtime logs each event at its declared level, not at info whatever it declares (a debug event of the
    catalogue stands in for a coordinator's: every one of theirs is info today)."""
    from zkconsumer.events import catalogue as ev

    runtime = _runtime()
    with capture_logs() as events:
        runtime.log_events([GroupEvent(ev.FRONT_CONNECTION_OPENED, "g", 5, {}),
                            GroupEvent(ev.FRONT_GROUP_CREATED, "g", 6, {"protocol_type": "consumer"})])
    assert [(e["event"], e["log_level"], e["group"], e["at_ms"]) for e in events] == [
        ("front.connection_opened", "debug", "g", 5), ("front.group.created", "info", "g", 6)]
