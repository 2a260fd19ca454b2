"""The front's group coordinator on its event loop: the facade (:mod:`.coordinator`) driven by one clock and one
timer, its answers handed to the requests that wait for them once the records they depend on are written, its events
logged.

The machines never see time pass by themselves: every input carries the monotonic clock in milliseconds, and one timer
of the loop, armed at the earliest of their deadlines after every input, ticks them when it is due (ticking late
fires each of their timers at its own deadline, so a busy loop changes nothing but latency). All of it runs on the
loop's one thread, so nothing needs a lock.

A request waits on a future keyed by the request id the runtime gave it (:meth:`CoordinatorRuntime.ask`). The
coordinator answers it with a ``Respond`` effect (the future's result), at once or in the result of a later input (a
JoinGroup waits for its round), or forgets it with a ``Drop``: Kafka leaves such a request unanswered (a newer request
of the same member took its place, or the member was removed while it waited), and the future then raises
:class:`RequestDropped` so that the connection it came on is closed rather than left waiting for an answer that will
never come (:mod:`zkconsumer.front.proxy.server`).

Events: each :class:`~zkconsumer.front.groups.classic_group_messages.GroupEvent` is logged under its own name
(``front.group.*`` and ``front.consumer_group.*``), at the level it declares, by the logger
``zkconsumer.front.coordinator``, with ``group`` (the group id), ``at_ms`` (the coordinator's clock) and its fields:
what ``zkconsumer trace`` draws as the coordinator lane.

A machine that raises while its timers fire (a bug) must not stop time for every group: the runtime logs
``front.coordinator_error`` (error; ``coordinator``, ``classic`` or ``consumer``, and ``error``, the exception's
type and message, one line without a traceback), ticks the other machine all the same, and re-arms the timer, no
sooner than :data:`RETRY_AFTER_ERROR_MS` so that a machine failing at a deadline already past does not spin the loop.
Requests go on being answered.

Durable state (:mod:`.group_records`): given a :class:`RecordWriter`, the runtime writes exactly the records each
result returns, and hands out that result's answers, and those of every result after it, only once the write is
done, as Kafka's runtime answers a request once the records it appended (and those before them) are committed. One
write is under way at a time; the records returned meanwhile wait as one pending write holding each group's latest
record only (a group that changes a thousand times while the broker is slow is written once more, not a thousand
times), and the answers wait for the write that holds their records. A write that fails is logged
(``front.groups_store_failed``) and the answers go out all the same; the coordinator is told, so that the group's next
record is returned whole whatever it is. :meth:`CoordinatorRuntime.load` takes in the groups replayed at start, whose
members are given a whole session timeout from then (Kafka's ``onLoaded``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol, cast

from zkconsumer.events import catalogue as ev
from zkconsumer.events.spec import Event
from zkconsumer.front.groups.classic_group import ClassicGroupCoordinator
from zkconsumer.front.groups.classic_group_messages import Drop, GroupEvent, Request, Respond, Response
from zkconsumer.front.groups.consumer_group import ConsumerGroupCoordinator
from zkconsumer.front.groups.coordinator import MACHINES, CoordinatorResult, GroupCoordinator
from zkconsumer.front.groups.group_records import GroupRecord
from zkconsumer.log import EventLogger, get_logger

#: how long a stopping front waits for the records under way
CLOSE_WAIT_S = 3.0
#: how long the timer waits, at least, after a tick that raised before it ticks again
RETRY_AFTER_ERROR_MS = 100


class RequestDropped(Exception):
    """The coordinator will never answer this request (Kafka leaves it unanswered)."""


class RecordWriter(Protocol):
    """Where the groups' records go (:class:`~zkconsumer.front.proxy.group_store.GroupStore`)."""

    async def write(self, records: Sequence[tuple[str, bytes | None]]) -> None:
        """Append ``(group id, encoded record or None for a tombstone)`` in order; return once they are stored."""


def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


class CoordinatorRuntime:
    """The group coordinator of one front, on the running event loop (build it inside the loop)."""

    def __init__(self, classic: ClassicGroupCoordinator, consumer: ConsumerGroupCoordinator,
                 clock: Callable[[], int] = monotonic_ms, store: RecordWriter | None = None) -> None:
        self.coordinator = GroupCoordinator(classic, consumer, keep_records=store is not None)
        self.clock = clock
        self.store = store
        #: the latest write, under way or pending: answers wait for it
        self._writing: asyncio.Future[None] | None = None
        #: the records not yet handed to the store, each group's latest only, and the future of their write
        self._pending: dict[str, bytes | None] = {}
        self._pending_done: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self.log: EventLogger = get_logger("zkconsumer.front.coordinator")
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._timer: asyncio.TimerHandle | None = None

    @property
    def classic(self) -> ClassicGroupCoordinator:
        """The classic machine, to look at (its state changes through :attr:`coordinator` only)."""
        return self.coordinator.classic

    @property
    def consumer(self) -> ConsumerGroupCoordinator:
        """The KIP-848 machine, to look at (its state changes through :attr:`coordinator` only)."""
        return self.coordinator.consumer

    def now(self) -> int:
        return self.clock()

    # --- inputs ---------------------------------------------------------------------------------------------------

    async def ask(self, run: Callable[[int, int], CoordinatorResult]) -> Any:
        """The answer to the request ``run(request_id, now_ms)`` hands the coordinator, once it gives it and the
        records it depends on are written.

        :raises RequestDropped: the coordinator forgot the request.
        """
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            self.apply(run(request_id, self.clock()))
            return await future
        finally:
            self._waiting.pop(request_id, None)

    async def classic_request(self, make: Callable[[int], Request]) -> Response:
        """The answer to the classic group API's request ``make(request_id)`` builds (:meth:`ask`)."""
        return cast(Response, await self.ask(lambda request_id, now: self.coordinator.handle(make(request_id), now)))

    def apply(self, result: CoordinatorResult) -> None:
        """Log a result's events, queue its records, and hand its answers out once they are stored."""
        self.log_events(result.events)
        self._store(result.records)
        writing = self._writing
        for effect in result.effects:
            future = self._waiting.pop(effect.request_id, None)
            if future is None or future.done():  # its connection is gone: the answer is discarded
                continue
            if writing is None or writing.done():
                _settle(future, effect)
            else:  # once what this answer depends on is stored
                writing.add_done_callback(lambda _, f=future, e=effect: _settle(f, e))  # type: ignore[misc]
        self._arm()

    async def stored(self) -> None:
        """Once every record written so far is stored (or failed to be)."""
        writing = self._writing
        if writing is not None and not writing.done():
            await asyncio.shield(writing)  # no timeout: the store's own exchanges are bounded

    # --- durable state ---------------------------------------------------------------------------------------------

    def load(self, groups: Mapping[str, GroupRecord]) -> None:
        """Take in the groups replayed from their records (before the front answers anyone)."""
        self.apply(self.coordinator.load(groups, self.clock()))

    def _store(self, records: Sequence[tuple[str, bytes | None]]) -> None:
        """Queue ``records`` for the store, each group's latest replacing one still pending."""
        if self.store is None or not records:
            return
        self._pending.update(records)
        if self._pending_done is None:
            self._pending_done = asyncio.get_running_loop().create_future()
        self._writing = self._pending_done
        if self._writer is None:
            self._writer = asyncio.ensure_future(self._write_pending())

    async def _write_pending(self) -> None:
        """Write what is pending, one write at a time, until nothing is."""
        assert self.store is not None
        try:
            while self._pending:
                changes, self._pending = list(self._pending.items()), {}
                done, self._pending_done = self._pending_done, None
                try:
                    await self.store.write(changes)
                except Exception as exc:  # the broker gone or refusing: the answers go out all the same
                    # written again whole at its next change, its deletion too
                    self.coordinator.unwritten(group_id for group_id, _ in changes if group_id not in self._pending)
                    self.log.emit(ev.FRONT_GROUPS_STORE_FAILED, operation="write",
                                  error=f"{type(exc).__name__}: {exc}", groups=[group_id for group_id, _ in changes])
                finally:
                    if done is not None and not done.done():
                        done.set_result(None)
        finally:
            self._writer = None

    # --- time -----------------------------------------------------------------------------------------------------

    def log_events(self, events: Iterable[GroupEvent]) -> None:
        for event in events:
            fields = {"group": event.group_id, "at_ms": event.at_ms, **dict(event.fields)}
            if isinstance(event.name, Event):
                self.log.emit(event.name, **fields)
            else:
                self.log.info(event.name, **fields)

    def _arm(self, not_before_ms: int = 0) -> None:
        deadline = self.coordinator.next_deadline_ms()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if deadline is not None:
            delay = max(deadline - self.clock() + 1, not_before_ms, 0) / 1000  # +1: the clock counts whole ms
            self._timer = asyncio.get_running_loop().call_later(delay, self._tick)

    def _tick(self) -> None:
        self._timer = None
        now = self.clock()
        failed = False
        try:
            for machine in MACHINES:  # members expired or fenced (maybe a downgrade), then rounds completed
                try:
                    self.apply(self.coordinator.tick(now, machine))
                except Exception as exc:  # a bug in one machine: the other and the timer go on
                    failed = True
                    self._log_error(machine, exc)
        finally:
            self._arm(RETRY_AFTER_ERROR_MS if failed else 0)

    def _log_error(self, coordinator: str, exc: Exception) -> None:
        self.log.emit(ev.FRONT_COORDINATOR_ERROR, coordinator=coordinator, error=f"{type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        """:meth:`close`, once the records under way are stored (a broker that does not answer is given
        :data:`CLOSE_WAIT_S`: the front is stopping)."""
        self.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.stored(), CLOSE_WAIT_S)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _settle(future: asyncio.Future[Any], effect: Respond | Drop) -> None:
    if future.done():  # its connection went while the write was under way
        return
    if isinstance(effect, Respond):
        future.set_result(effect.response)
    else:
        future.set_exception(RequestDropped(f"request {effect.request_id} dropped by the coordinator"))
