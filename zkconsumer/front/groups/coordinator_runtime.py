"""The front's coordinators on its event loop: the pure state machines (:mod:`.classic_group`, :mod:`.consumer_group`)
driven by one clock and one timer, their answers handed to the requests that wait for them, their events logged.

The state machines never see time pass by themselves: every input carries the monotonic clock in milliseconds, and
one timer of the loop, armed at the earliest of their ``next_deadline_ms()`` after every input, ticks them when it is
due (ticking late fires each of their timers at its own deadline, so a busy loop changes nothing but latency). All of
it runs on the loop's one thread, so the machines need no lock.

A classic request waits on a future keyed by the request id the runtime gave it. The state machine answers it with a
``Respond`` (the future's result), at once or in the step of a later input (a JoinGroup waits for its round), or
forgets it with a ``Drop``: Kafka leaves such a request unanswered (a newer request of the same member took its place,
or the member was removed while it waited), and the future then raises :class:`RequestDropped` so that the connection
it came on is closed rather than left waiting for an answer that will never come (:mod:`.server`).

Events: each :class:`~zkconsumer.front.groups.classic_group_messages.GroupEvent` is logged under its own name
(``front.group.*`` and ``front.consumer_group.*``) by the logger ``zkconsumer.front.coordinator``, with ``group``
(the group id), ``at_ms`` (the coordinator's clock) and its fields: what ``zkconsumer trace`` draws as the
coordinator lane.

A state machine that raises while its timers fire (a bug) must not stop time for every group: the runtime logs
``front.coordinator_error`` (error; ``coordinator``, ``classic`` or ``consumer``, and ``error``, the exception's
type and message, one line without a traceback), ticks the other machine all the same, and re-arms the timer, no
sooner than :data:`RETRY_AFTER_ERROR_MS` so that a machine failing at a deadline already past does not spin the loop.
Requests go on being answered.

Durable state (:mod:`.group_records`): given a :class:`RecordWriter`, the runtime writes a group's record whenever a
step changed what it holds (the group's record compared with the one last written; a classic group only once it is
Empty or Stable, where Kafka stores it), and a tombstone when the group is gone; the answers of that step, and of every
step after it, are handed out only once the write is done, as Kafka's runtime answers a request once the records it
appended (and those before them) are committed. One write is under way at a time; the changes made meanwhile wait as
one pending write holding each group's latest record only (a group that changes a thousand times while the broker is
slow is written once more, not a thousand times), and the answers wait for the write that holds their changes. A
write that fails is logged (``front.groups_store_failed``) and the answers go out all the same; the group's next
change writes its whole record again. :meth:`load` takes in the groups replayed at start, whose members are given a
whole session timeout from then (Kafka's ``onLoaded``).

The online downgrade (Kafka's ``validateOnlineDowngradeWithFencedMembers``, ``convertToClassicGroup``) is the
runtime's, as it drives both machines: whenever a member leaves a consumer group by any means (a heartbeat's -1, a
classic member's LeaveGroup, its session's expiry, its rebalance timeout's fencing), a group left with classic members
only becomes a classic group when the policy allows it (:meth:`ConsumerGroupCoordinator.downgrade`,
:meth:`ClassicGroupCoordinator.adopt`), and the converted group's classic record is written in the consumer group's
place in one write, never a tombstone first: a replay finds the one or the other.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Protocol

from zkconsumer.events import catalogue as ev
from zkconsumer.front.groups.classic_group import ClassicGroupCoordinator
from zkconsumer.front.groups.classic_group_messages import Drop, GroupEvent, Request, Respond, Response, Step
from zkconsumer.front.groups.consumer_group import ConsumerGroupCoordinator
from zkconsumer.front.groups.group_records import ClassicGroupRecord, GroupRecord, encode_value
from zkconsumer.log import EventLogger, get_logger

#: how long a stopping front waits for the records under way
CLOSE_WAIT_S = 3.0
#: a group of which nothing was written
_NEVER = object()
#: what was last stored of a group is unknown (its write failed): whatever it becomes next, a tombstone too, is written
_UNKNOWN = object()
#: how long the timer waits, at least, after a tick that raised before it ticks again
RETRY_AFTER_ERROR_MS = 100
#: a member left its consumer group by these (by any means): the group may become classic again
_MEMBER_GONE = frozenset({ev.FRONT_CONSUMER_GROUP_MEMBER_LEFT, ev.FRONT_CONSUMER_GROUP_MEMBER_EXPIRED,
                          ev.FRONT_CONSUMER_GROUP_MEMBER_FENCED})


class RequestDropped(Exception):
    """The coordinator will never answer this request (Kafka leaves it unanswered)."""


class RecordWriter(Protocol):
    """Where the groups' records go (:class:`~zkconsumer.front.proxy.group_store.GroupStore`)."""

    async def write(self, records: Sequence[tuple[str, bytes | None]]) -> None:
        """Append ``(group id, encoded record or None for a tombstone)`` in order; return once they are stored."""


def monotonic_ms() -> int:
    return int(time.monotonic() * 1000)


class CoordinatorRuntime:
    """The classic and KIP-848 coordinators of one front, on the running event loop (build it inside the loop)."""

    def __init__(self, classic: ClassicGroupCoordinator, consumer: ConsumerGroupCoordinator,
                 clock: Callable[[], int] = monotonic_ms, store: RecordWriter | None = None) -> None:
        self.classic = classic
        self.consumer = consumer
        self.clock = clock
        self.store = store
        #: each group's record as last written (``None``: its tombstone)
        self._written: dict[str, object] = {}  # bytes, None (a tombstone) or _UNKNOWN
        #: the latest write, under way or pending: answers wait for it
        self._writing: asyncio.Future[None] | None = None
        #: the changes not yet handed to the store, each group's latest only, and the future of their write
        self._pending: dict[str, bytes | None] = {}
        self._pending_done: asyncio.Future[None] | None = None
        self._writer: asyncio.Task[None] | None = None
        self.log: EventLogger = get_logger("zkconsumer.front.coordinator")
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Response]] = {}
        self._timer: asyncio.TimerHandle | None = None

    # --- classic --------------------------------------------------------------------------------------------------

    async def classic_request(self, make: Callable[[int], Request]) -> Response:
        """The classic coordinator's answer to the request ``make(request_id)`` builds, once it gives it.

        :raises RequestDropped: the coordinator forgot the request.
        """
        request_id = next(self._ids)
        future: asyncio.Future[Response] = asyncio.get_running_loop().create_future()
        self._waiting[request_id] = future
        try:
            self._apply(self.classic.handle(make(request_id), self.clock()))
            return await future
        finally:
            self._waiting.pop(request_id, None)

    def _apply(self, step: Step, given: Mapping[str, GroupRecord] | None = None) -> None:
        """Log a classic step's events, store the groups they name (``given``: a record to store for a group instead
        of what the coordinators hold of it) and hand its answers out once stored."""
        self.log_events(step.events)
        self._store({event.group_id for event in step.events} | set(given or ()), given)
        writing = self._writing
        for effect in step.effects:
            future = self._waiting.pop(effect.request_id, None)
            if future is None or future.done():  # its connection is gone: the answer is discarded
                continue
            if writing is None or writing.done():
                _settle(future, effect)
            else:  # once what this answer depends on is stored
                writing.add_done_callback(lambda _, f=future, e=effect: _settle(f, e))  # type: ignore[misc]
        self._arm()

    # --- KIP-848 and anything else answered at once ---------------------------------------------------------------

    def now(self) -> int:
        return self.clock()

    def consumer_events(self, events: Iterable[GroupEvent], touched: Collection[str] = ()) -> None:
        """Log what a direct call to the consumer coordinator returned, store the groups it changed (those named by
        its events and ``touched``), and re-arm the timer. An answer built from it goes out after :meth:`stored`."""
        self._consumer_step(events, touched)
        self._arm()

    def _consumer_step(self, events: Iterable[GroupEvent], touched: Collection[str] = ()) -> None:
        """Log the consumer coordinator's events, convert back the groups a member left (:meth:`_downgrade`), and
        store the groups named."""
        logged = list(events)
        self.log_events(logged)
        adopted: dict[str, GroupRecord] = {}
        checked = 0
        while checked < len(logged):  # a downgrade's own events (its timers fired first) are looked at in turn
            batch, checked = logged[checked:], len(logged)
            for group_id in sorted({event.group_id for event in batch if event.name in _MEMBER_GONE}):
                record, more = self._downgrade(group_id)
                logged.extend(more)
                if record is not None:
                    adopted[group_id] = record
        self._store({event.group_id for event in logged} | set(touched), adopted)

    def _downgrade(self, group_id: str) -> tuple[ClassicGroupRecord | None, tuple[GroupEvent, ...]]:
        """The consumer group ``group_id`` a member left, a classic group again if it may be: its record as the
        classic coordinator adopted it, and the consumer coordinator's events (logged)."""
        now = self.clock()
        record, events = self.consumer.downgrade(group_id, now, self.classic.config.max_size)
        self.log_events(events)
        if record is not None:  # the classic record in the consumer group's place, in the write of this step
            self._apply(self.classic.adopt(group_id, record, now), {group_id: record})
        return record, events

    async def stored(self) -> None:
        """Once every record written so far is stored (or failed to be)."""
        writing = self._writing
        if writing is not None and not writing.done():
            await asyncio.shield(writing)  # no timeout: the store's own exchanges are bounded

    def classic_events(self, step: Step) -> None:
        """Apply a step of a direct call to the classic coordinator (e.g. a group deleted for KIP-848)."""
        self._apply(step)

    # --- durable state ---------------------------------------------------------------------------------------------

    def load(self, groups: Mapping[str, GroupRecord]) -> None:
        """Take in the groups replayed from their records (before the front answers anyone)."""
        now = self.clock()
        for group_id, record in groups.items():
            if isinstance(record, ClassicGroupRecord):
                step = self.classic.load(group_id, record, now)
                self.log_events(step.events)
            else:
                self.log_events(self.consumer.load(group_id, record, now))
            self._written[group_id] = encode_value(record)
        self._arm()

    def record_of(self, group_id: str) -> GroupRecord | None:
        """The group's record as it stands (``None``: no group of that id, or nothing of it to keep)."""
        if self.consumer.has_group(group_id):
            return self.consumer.record_of(group_id)
        return self.classic.record_of(group_id)

    def _store(self, group_ids: Iterable[str], given: Mapping[str, GroupRecord] | None = None) -> None:
        """Queue the records of ``group_ids`` that changed since last written (``given``: the record to write for a
        group, whatever the coordinators hold of it)."""
        if self.store is None:
            return
        changed = False
        for group_id in sorted(group_ids):
            if given and group_id in given:
                record: GroupRecord | None = given[group_id]
            elif not self.consumer.has_group(group_id) and not self.classic.settled(group_id):
                continue  # mid-round: stored once it has an outcome
            else:
                record = self.record_of(group_id)
            value = None if record is None else encode_value(record)
            last = self._written.get(group_id, _NEVER)
            if value == last or (value is None and last is _NEVER):
                continue  # unchanged, or gone without anything of it ever stored
            self._written[group_id] = value
            self._pending[group_id] = value  # a pending older record of the group is never written
            changed = True
        if not changed:
            return
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
                    for group_id, _ in changes:
                        if group_id not in self._pending:  # written again whole at its next change, its deletion too
                            self._written[group_id] = _UNKNOWN
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
            self.log.info(event.name, group=event.group_id, at_ms=event.at_ms, **dict(event.fields))

    def _arm(self, not_before_ms: int = 0) -> None:
        deadlines = [d for d in (self.classic.next_deadline_ms(), self.consumer.next_deadline_ms()) if d is not None]
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if deadlines:
            delay = max(min(deadlines) - self.clock() + 1, not_before_ms, 0) / 1000  # +1: the clock counts whole ms
            self._timer = asyncio.get_running_loop().call_later(delay, self._tick)

    def _tick(self) -> None:
        self._timer = None
        now = self.clock()
        failed = False
        try:
            try:
                self._consumer_step(self.consumer.tick(now))  # members expired or fenced: maybe a downgrade
            except Exception as exc:  # a bug in the KIP-848 machine: the classic one and the timer go on
                failed = True
                self._log_error("consumer", exc)
            try:
                self._apply(self.classic.tick(now))
            except Exception as exc:  # a bug in the classic machine: the timer goes on
                failed = True
                self._log_error("classic", exc)
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


def _settle(future: asyncio.Future[Response], effect: Respond | Drop) -> None:
    if future.done():  # its connection went while the write was under way
        return
    if isinstance(effect, Respond):
        future.set_result(effect.response)
    else:
        future.set_exception(RequestDropped(f"request {effect.request_id} dropped by the coordinator"))
