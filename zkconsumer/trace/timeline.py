"""The rebalance timeline: the connector's JSON-line events (``docs/events.md``) turned into data a picture can be
drawn from: one lane per consumer with its rebalances, their attempts and steps, the stop-the-world gaps, the
failures worth a mark; which thread owned which partition when; the demo's markers; and, where a group
coordinator's events are in the trace, a lane per group of what the coordinator did
(:mod:`zkconsumer.trace.coordinator`).

Pure: lines in, frozen dataclasses out. No files, no clock, no formatting: reading the file is the CLI's job
(:mod:`zkconsumer.cli.trace`), the names of things are :mod:`zkconsumer.trace.vocabulary`, the sentences
:mod:`zkconsumer.trace.words`, the pictures belong to :mod:`zkconsumer.trace.timeline_html` and
:mod:`zkconsumer.trace.timeline_text`. Times are floats, seconds since the start of the trace
(``Timeline.origin``), so that every renderer does arithmetic on plain numbers.

Events come from several processes whose logs were merged, so nothing here trusts their order beyond the
timestamps, and nothing breaks on a field of the wrong type or an event it does not know: such data is left out,
because a trace is evidence of something having gone wrong often enough.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Any

from zkconsumer.events import catalogue as ev
from zkconsumer.trace.coordinator import CoordinatorLane, CoordinatorLanes
from zkconsumer.trace.roles import (
    ASSIGN,
    CLAIM,
    ERROR,
    MARKER_PREFIX,
    PAUSE_BEGINS,
    PAUSE_ENDS,
    REBALANCE_PREFIX,
    RELEASE,
    ROLES,
    Role,
    later_step,
)
from zkconsumer.trace.values import finite_number as _number
from zkconsumer.trace.values import integer as _int
from zkconsumer.trace.values import json_list as _list
from zkconsumer.trace.vocabulary import BY_EVENT, CONFLICT, MARK_EVENTS, coordinator_protocol

BROKEN_LINES_KEPT = 5  # how many numbers of broken lines an EventLog keeps, to name them in a message
FETCHER_PREFIXES = ("fetcher.", "fetcher_manager.", "leader_finder.")  # counted, never drawn
ROUND_JOIN_S = 0.5  # rebalances this close in time belong to one round (the group reacting to one change)
# More partitions than a topic can have: a partition count in an event above it is corrupt, and is cut to it
# rather than listing millions of partitions.
PARTITION_COUNT_MAX = 100_000


# --- reading ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    """One parsed line. ``fields`` is the whole JSON object, read-only; ``line`` is 1-based, for messages."""

    line: int
    name: str
    timestamp: datetime
    fields: Mapping[str, Any]

    @property
    def consumer_id(self) -> str | None:
        value = self.fields.get("consumer_id")
        return value if isinstance(value, str) and value else None

    @property
    def is_marker(self) -> bool:
        return self.name.startswith(MARKER_PREFIX)

    @property
    def is_fetcher(self) -> bool:
        return self.name.startswith(FETCHER_PREFIXES)

    @property
    def coordinator_group(self) -> str | None:
        """The group of a group coordinator's event the trace reads (see :mod:`zkconsumer.trace.coordinator`)."""
        if coordinator_protocol(self.name) is None:
            return None
        group = self.fields.get("group")
        return group if isinstance(group, str) and group else None


@dataclass(frozen=True, slots=True)
class EventLog:
    """What :func:`read_events` made of a file: the events, and how many lines could not be used (with the
    numbers of the first few), so that the user is told rather than shown a timeline with silent holes."""

    events: tuple[Event, ...]
    broken: int = 0
    broken_lines: tuple[int, ...] = ()


def parse_timestamp(value: object) -> datetime | None:
    """ISO 8601 as structlog writes it (``2026-11-21T21:12:00.928083Z``), or any other spelling Python's
    ``datetime.fromisoformat`` reads (other zones, fractions of any length cut to the microsecond, a space for the
    ``T``; RFC 3339's lowercase ``z`` too), as an aware UTC datetime; ``None`` if it is not one, or if it lies outside
    the calendar once in UTC. A time without a zone is taken as UTC, which is what the connector logs."""
    if not isinstance(value, str):
        return None
    text = value.strip()
    if text.endswith("z"):
        text = text[:-1] + "Z"
    try:
        parsed = datetime.fromisoformat(text)
        return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)
    except (ValueError, OverflowError):  # month 13; the first hour of the year 1 east of UTC
        return None


def read_events(lines: Iterable[str]) -> EventLog:
    """Parse JSON lines. A line that is not a JSON object, or has no ``event`` name or no parseable ``timestamp``,
    is broken: counted and skipped. Blank lines are not counted."""
    events: list[Event] = []
    broken = 0
    broken_lines: list[int] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        event = _parse_line(number, line)
        if event is None:
            broken += 1
            if len(broken_lines) < BROKEN_LINES_KEPT:
                broken_lines.append(number)
        else:
            events.append(event)
    return EventLog(tuple(events), broken, tuple(broken_lines))


def _parse_line(number: int, line: str) -> Event | None:
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    name = data.get("event")
    timestamp = parse_timestamp(data.get("timestamp"))
    if not isinstance(name, str) or not name or timestamp is None:
        return None
    return Event(number, name, timestamp, MappingProxyType(data))


# --- the timeline's data ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, order=True)
class PartitionRef:
    """A partition as the events list them; ``thread`` (the consumer thread id) where the event says."""

    topic: str
    partition: int
    thread: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.topic, self.partition)


@dataclass(frozen=True, slots=True)
class Step:
    """One step of one attempt. The connector logs a step when it ends, with its duration, so ``start`` is
    computed: ``end - duration_ms``. ``name`` is the event name without ``rebalance.``; ``number`` and ``title``
    come from :mod:`zkconsumer.events.rebalance_steps`; a step this version does not know keeps the number its
    event says (0 without one) and its name as title, and ``known`` is false."""

    name: str
    number: int
    title: str
    known: bool
    attempt: int
    start: float
    end: float
    duration_ms: float
    event: Event = field(repr=False, compare=False)

    @property
    def fields(self) -> Mapping[str, Any]:
        return self.event.fields

    @property
    def failed(self) -> bool:
        """The step raised: its event carries ``error`` (``docs/events.md``), and what it was to do did not happen."""
        return ERROR in self.event.fields


@dataclass(frozen=True, slots=True)
class Mark:
    """Something on a lane that went wrong or was retried: ``kind`` is one of the vocabulary's
    ``MARK_KINDS``; ``event`` is the one it comes from, whose fields feed the words and the tooltip."""

    kind: str
    time: float
    consumer_id: str
    rebalance_id: int | None
    attempt: int | None
    event: Event = field(repr=False, compare=False)

    @property
    def fields(self) -> Mapping[str, Any]:
        return self.event.fields


@dataclass(frozen=True, slots=True)
class Attempt:
    """``outcome``: ``completed``, ``failed`` (``rebalance.attempt_failed``, with ``reason`` and ``backoff_ms``)
    or ``unfinished`` (the trace ends, or the member shut down, in the middle of it)."""

    number: int
    start: float | None
    end: float | None
    outcome: str
    reason: str | None = None
    backoff_ms: float | None = None


@dataclass(frozen=True, slots=True)
class Gap:
    """Stop-the-world: from the start of the rebalance's first ``stop_fetchers`` to the end of the
    ``start_fetchers`` of the attempt that completed. Failed attempts in between stay inside the gap: their
    fetchers never ran. ``finished`` is false when this rebalance did not restart the fetchers; ``end`` is then
    whatever ended the silence (``ended_by``: a later rebalance's restart, the shutdown, the kill, the end of the
    trace), and the gap is drawn but left out of the totals."""

    start: float
    end: float
    finished: bool
    ended_by: str

    @property
    def duration_ms(self) -> float:
        return (self.end - self.start) * 1000.0


@dataclass(frozen=True, slots=True)
class Rebalance:
    """One ``syncedRebalance`` of one consumer. ``outcome``: ``completed``, ``failed`` (``rebalance.failed``) or
    ``unfinished``. ``duration_ms`` is the connector's own figure (on ``completed`` / ``failed``); ``owned`` is
    ``rebalance.completed``'s full ownership after it."""

    consumer_id: str
    rebalance_id: int
    cause: str | None
    start: float
    end: float
    outcome: str
    duration_ms: float | None
    attempts: tuple[Attempt, ...]
    steps: tuple[Step, ...]
    gap: Gap | None
    marks: tuple[Mark, ...]
    owned: tuple[PartitionRef, ...] | None

    @property
    def failed_attempts(self) -> int:
        return sum(1 for attempt in self.attempts if attempt.outcome == "failed")

    @property
    def conflicts(self) -> int:
        """Partitions found held by someone else, summed over the attempts' claims."""
        return sum(len(_list(mark.fields.get("conflicts"))) for mark in self.marks if mark.kind == CONFLICT)


@dataclass(frozen=True, slots=True)
class Life:
    """A stretch of a member's existence: from its first event (or ``demo.member_started``) to its
    ``consumer.shutdown`` (``shutdown``), ``demo.member_killed`` (``killed``), ``demo.member_stopped``
    (``stopped``), or the end of the trace (``None``). A consumer id run again later gets a second life."""

    start: float
    end: float
    ended_by: str | None


@dataclass(frozen=True, slots=True)
class LaneSummary:
    """The figures of the summary table. Stop-the-world counts the finished gaps only (see :class:`Gap`)."""

    consumer_id: str
    rebalances: int
    completed: int
    attempts: int
    failed_attempts: int
    conflicts: int
    stop_the_world_ms: float
    longest_gap_ms: float | None
    longest_gap_rebalance: int | None
    unfinished: int


@dataclass(frozen=True, slots=True)
class Lane:
    """One consumer (a consumerIdString), in the order consumers first appear in the trace."""

    consumer_id: str
    group: str | None
    lives: tuple[Life, ...]
    rebalances: tuple[Rebalance, ...]
    marks: tuple[Mark, ...]
    fetcher_events: int

    @property
    def start(self) -> float:
        return self.lives[0].start

    def finished_gaps(self) -> list[tuple[Rebalance, Gap]]:
        """The stop-the-world gaps that count (see :class:`Gap`), with their rebalances."""
        return [(r, r.gap) for r in self.rebalances if r.gap is not None and r.gap.finished]

    def longest_gap(self) -> Rebalance | None:
        """The rebalance with the longest finished gap."""
        longest = max(self.finished_gaps(), key=lambda pair: pair[1].duration_ms, default=None)
        return longest[0] if longest is not None else None

    def summary(self) -> LaneSummary:
        finished = self.finished_gaps()
        longest = self.longest_gap()
        return LaneSummary(
            consumer_id=self.consumer_id,
            rebalances=len(self.rebalances),
            completed=sum(1 for r in self.rebalances if r.outcome == "completed"),
            attempts=sum(len(r.attempts) for r in self.rebalances),
            failed_attempts=sum(r.failed_attempts for r in self.rebalances),
            conflicts=sum(r.conflicts for r in self.rebalances),
            stop_the_world_ms=sum(gap.duration_ms for _, gap in finished),
            longest_gap_ms=longest.gap.duration_ms if longest is not None and longest.gap is not None else None,
            longest_gap_rebalance=longest.rebalance_id if longest is not None else None,
            unfinished=sum(1 for r in self.rebalances if r.outcome != "completed"),
        )


@dataclass(frozen=True, slots=True)
class Ownership:
    """One thread owning one partition from ``start`` to ``end`` (``None``: still at the end of the trace).
    ``ended_by``: ``released``, ``session_expired``, ``shutdown``, ``taken_over`` (``successor`` claimed it: how
    a SIGKILLed member's ownership ends, when its session expires and someone else claims), ``moved`` (the same
    consumer gave it to another of its threads), ``not_owned`` (missing from ``rebalance.completed``'s
    ``owned``), or ``None``."""

    topic: str
    partition: int
    consumer_id: str
    thread: str | None
    start: float
    end: float | None
    ended_by: str | None = None
    successor: str | None = None


@dataclass(frozen=True, slots=True)
class Marker:
    """A ``demo.*`` event: drawn across every lane (a scene, a member started or killed, partitions added, a
    scene settled). ``demo.member_output`` with a ``consumer_id`` is a mark on that member's lane instead."""

    time: float
    name: str
    fields: Mapping[str, Any]

    @property
    def kind(self) -> str:
        return self.name[len(MARKER_PREFIX):]

    @property
    def consumer_id(self) -> str | None:
        value = self.fields.get("consumer_id")
        return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class Entry:
    """An event the text timeline may show, with its time on the timeline; ``marker`` when it is a demo marker
    (a heading), else it belongs to the consumer in its ``consumer_id``, or to the coordinator of the group in its
    ``group`` (``event.coordinator_group``)."""

    time: float
    event: Event
    marker: bool = False


@dataclass(frozen=True, slots=True)
class Round:
    """Rebalances of any consumers that overlap or follow each other within ``ROUND_JOIN_S``: the group reacting
    to one change. The HTML page zooms into each round, where the steps of all members can be compared."""

    index: int
    start: float
    end: float
    rebalances: tuple[Rebalance, ...]


@dataclass(frozen=True, slots=True)
class Timeline:
    """Everything a renderer draws. ``origin`` is the absolute time of 0.0 (``None`` for an empty trace);
    ``end`` is the last moment with something on it. ``partitions`` lists every partition seen owned, assigned or
    counted (``rebalance.assign``'s ``partitions``, ``demo.partitions_added``), owned or not. ``coordinators``: a
    lane per group whose coordinator's events are in the trace (:mod:`zkconsumer.trace.coordinator`)."""

    origin: datetime | None
    end: float
    lanes: tuple[Lane, ...]
    ownership: tuple[Ownership, ...]
    partitions: tuple[tuple[str, int], ...]
    markers: tuple[Marker, ...]
    entries: tuple[Entry, ...]
    fetcher_events: int = 0
    ignored_events: int = 0
    skipped_lines: int = 0
    skipped_line_numbers: tuple[int, ...] = ()
    coordinators: tuple[CoordinatorLane, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.lanes and not self.markers and not self.coordinators

    def lane(self, consumer_id: str) -> Lane:
        for lane in self.lanes:
            if lane.consumer_id == consumer_id:
                return lane
        raise KeyError(consumer_id)

    def rebalance(self, consumer_id: str, rebalance_id: int) -> Rebalance:
        """The last rebalance with this id (a consumer id run twice counts from 1 again)."""
        for rebalance in reversed(self.lane(consumer_id).rebalances):
            if rebalance.rebalance_id == rebalance_id:
                return rebalance
        raise KeyError((consumer_id, rebalance_id))

    def owners(self, topic: str, partition: int) -> tuple[Ownership, ...]:
        return tuple(o for o in self.ownership if (o.topic, o.partition) == (topic, partition))

    def at(self, seconds: float) -> datetime | None:
        """The date of a time on the timeline; None without events, or outside the calendar (a corrupt duration of
        millions of years reaches there)."""
        if self.origin is None:
            return None
        try:
            return self.origin + timedelta(seconds=seconds)
        except OverflowError:
            return None


# --- building ---------------------------------------------------------------------------------------------------


def partition_refs(value: object) -> tuple[PartitionRef, ...]:
    """The ``[{"topic", "partition", "thread"?}]`` lists of the events; entries of another shape are left out."""
    refs = []
    for item in _list(value):
        if not isinstance(item, dict):
            continue
        topic, partition, thread = item.get("topic"), _int(item.get("partition")), item.get("thread")
        if isinstance(topic, str) and partition is not None:
            refs.append(PartitionRef(topic, partition, thread if isinstance(thread, str) else None))
    return tuple(refs)


@dataclass(frozen=True, slots=True)
class _Failure:
    """An attempt's ``rebalance.attempt_failed``."""

    time: float
    reason: str | None
    backoff_ms: float | None


class _RebalanceBuilder:
    def __init__(self, consumer_id: str, rebalance_id: int, time: float, cause: str | None, started: bool) -> None:
        self.consumer_id = consumer_id
        self.rebalance_id = rebalance_id
        self.cause = cause
        self.started_at = time if started else None
        self.last = time
        self.steps: list[Step] = []
        self.marks: list[Mark] = []
        self.failed: dict[int, _Failure] = {}  # by attempt number
        self.outcome = "unfinished"
        self.ended_at: float | None = None
        self.duration_ms: float | None = None
        self.completed_attempt: int | None = None
        self.owned: tuple[PartitionRef, ...] | None = None

    @property
    def open(self) -> bool:
        return self.outcome == "unfinished"

    def attempts(self) -> tuple[Attempt, ...]:
        numbers = {step.attempt for step in self.steps} | set(self.failed)
        numbers |= {m.attempt for m in self.marks if m.attempt is not None}
        if self.completed_attempt is not None:
            numbers.add(self.completed_attempt)
        attempts = []
        for number in sorted(numbers):
            steps = [s for s in self.steps if s.attempt == number]
            start = min((s.start for s in steps), default=None)
            end = max((s.end for s in steps), default=None)
            failure = self.failed.get(number)
            if failure is not None:
                attempts.append(Attempt(number, start if start is not None else failure.time, failure.time, "failed",
                                        failure.reason, failure.backoff_ms))
            elif number == self.completed_attempt:
                attempts.append(Attempt(number, start, self.ended_at, "completed"))
            else:
                attempts.append(Attempt(number, start, end, "unfinished"))
        return tuple(attempts)


class _LaneBuilder:
    def __init__(self, consumer_id: str) -> None:
        self.consumer_id = consumer_id
        self.group: str | None = None
        self.lives: list[Life] = []
        self.alive_since: float | None = None
        self.rebalances: list[_RebalanceBuilder] = []
        self.current: _RebalanceBuilder | None = None
        self.marks: list[Mark] = []
        self.fetcher_events = 0

    def touch(self, time: float) -> None:
        if self.alive_since is None:
            self.alive_since = time

    def end_life(self, time: float, ended_by: str | None) -> None:
        if self.alive_since is None:
            return
        self.lives.append(Life(self.alive_since, time, ended_by))
        self.alive_since = None
        self.current = None

    def rebalance_for(self, event: Event, time: float) -> _RebalanceBuilder:
        """The rebalance an event belongs to: by ``rebalance_id``, the current one first (ids restart at 1 when a
        consumer id is run again); one is made up when the trace starts in the middle of it."""
        rid = _int(event.fields.get("rebalance_id"))
        if ROLES.get(event.name) is Role.STARTED:
            cause = event.fields.get("cause")
            rebalance = _RebalanceBuilder(self.consumer_id, rid if rid is not None else len(self.rebalances) + 1,
                                          time, cause if isinstance(cause, str) else None, started=True)
        else:
            if self.current is not None and (rid is None or rid == self.current.rebalance_id):
                return self.current
            for candidate in reversed(self.rebalances):
                if candidate.rebalance_id == rid:
                    return candidate
            rebalance = _RebalanceBuilder(self.consumer_id, rid if rid is not None else len(self.rebalances) + 1,
                                          time, None, started=False)
        self.rebalances.append(rebalance)
        self.current = rebalance
        return rebalance


@dataclass(frozen=True, slots=True)
class _Held:
    """A partition's current owner, since ``start``."""

    consumer: str
    thread: str | None
    start: float


class _Ownerships:
    """Who owns each partition, as the events tell it; at most one open stretch per partition."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, int], _Held] = {}
        self.done: list[Ownership] = []

    def _close(self, key: tuple[str, int], time: float, ended_by: str | None, successor: str | None = None) -> None:
        held = self.open.pop(key)
        self.done.append(Ownership(key[0], key[1], held.consumer, held.thread, held.start, time, ended_by, successor))

    def claim(self, consumer: str, ref: PartitionRef, time: float) -> None:
        held = self.open.get(ref.key)
        if held is not None:
            if held.consumer == consumer and (held.thread == ref.thread or ref.thread is None):
                return
            self._close(ref.key, time, "moved" if held.consumer == consumer else "taken_over", consumer)
        self.open[ref.key] = _Held(consumer, ref.thread, time)

    def end(self, consumer: str, keys: Iterable[tuple[str, int]], time: float, ended_by: str) -> None:
        for key in keys:
            held = self.open.get(key)
            if held is not None and held.consumer == consumer:
                self._close(key, time, ended_by)

    def held_by(self, consumer: str) -> list[tuple[str, int]]:
        return [key for key, held in self.open.items() if held.consumer == consumer]

    def finish(self) -> tuple[Ownership, ...]:
        for (topic, partition), held in self.open.items():
            self.done.append(Ownership(topic, partition, held.consumer, held.thread, held.start, None, None))
        self.open.clear()
        return tuple(sorted(self.done, key=lambda o: (o.topic, o.partition, o.start, o.consumer_id)))


def build_timeline(events: EventLog | Iterable[Event]) -> Timeline:
    """Lanes, rebalances, gaps, ownership and markers from parsed events, in timestamp order (the order of the
    lines breaks ties). Events of a connector need ``consumer_id``; ``demo.*`` events are markers; a group
    coordinator's events (with their ``group``) make its lane; other events without ``consumer_id`` are counted
    in ``ignored_events``; fetcher events only in ``fetcher_events``."""
    skipped, skipped_numbers = 0, tuple[int, ...]()
    if isinstance(events, EventLog):
        skipped, skipped_numbers = events.broken, events.broken_lines
        events = events.events
    ordered = sorted(events, key=lambda e: (e.timestamp, e.line))
    relevant = [e for e in ordered
                if e.consumer_id is not None or e.is_marker or e.coordinator_group is not None]
    ignored = len(ordered) - len(relevant)
    if not relevant:
        return Timeline(None, 0.0, (), (), (), (), (), 0, ignored, skipped, skipped_numbers)

    origin = min(_block_start(e) for e in relevant)

    def seconds(event: Event) -> float:
        return (event.timestamp - origin).total_seconds()

    end = max(seconds(e) for e in relevant)
    lanes: dict[str, _LaneBuilder] = {}
    ownership = _Ownerships()
    partitions: set[tuple[str, int]] = set()
    markers: list[Marker] = []
    entries: list[Entry] = []
    fetcher_events = 0
    coordinators = CoordinatorLanes()

    for event in relevant:
        time = seconds(event)
        if event.consumer_id is None and not event.is_marker:  # a coordinator's
            coordinators.feed(event.name, time, event.fields)
            entries.append(Entry(time, event))
            continue
        if event.is_marker and not (event.name in MARK_EVENTS and event.consumer_id is not None):
            marker = Marker(time, event.name, event.fields)
            markers.append(marker)
            entries.append(Entry(time, event, marker=True))
            _apply_marker(marker, lanes, ownership, partitions)
            continue
        consumer = event.consumer_id
        assert consumer is not None
        lane = lanes.get(consumer)
        if lane is None:
            lane = lanes[consumer] = _LaneBuilder(consumer)
        lane.touch(time)
        group = event.fields.get("group")
        if lane.group is None and isinstance(group, str):
            lane.group = group
        if event.is_fetcher:
            lane.fetcher_events += 1
            fetcher_events += 1
            continue
        entries.append(Entry(time, event))
        _HANDLERS.get(event.name, _unknown_event)(_Apply(event, time, lane, ownership, partitions))

    for lane in lanes.values():
        lane.end_life(end, None)
    owned = ownership.finish()
    partitions.update(o_key for o_key in ((o.topic, o.partition) for o in owned))
    built = tuple(_finish_lane(lane, end) for lane in lanes.values())
    return Timeline(origin, end, built, owned, tuple(sorted(partitions)), tuple(markers), tuple(entries),
                    fetcher_events, ignored, skipped, skipped_numbers, coordinators.finish(end))


def _block_start(event: Event) -> datetime:
    """When an event's block starts; a duration reaching back before the year 1 (a corrupt figure) stops there."""
    try:
        return event.timestamp - timedelta(milliseconds=_step_duration(event))
    except OverflowError:
        return datetime.min.replace(tzinfo=event.timestamp.tzinfo)


def _step_duration(event: Event) -> float:
    """How far before its timestamp an event's block starts: a step's duration, else nothing."""
    if ROLES.get(event.name) is Role.STEP or later_step(event.name, event.fields):
        return max(_number(event.fields.get("duration_ms")) or 0.0, 0.0)
    return 0.0


def _apply_marker(marker: Marker, lanes: dict[str, _LaneBuilder], ownership: _Ownerships,
                  partitions: set[tuple[str, int]]) -> None:
    consumer = marker.consumer_id
    if marker.name == ev.DEMO_PARTITIONS_ADDED:
        topic, after = marker.fields.get("topic"), _int(marker.fields.get("after"))
        if isinstance(topic, str) and after is not None:
            _add_partitions(partitions, topic, after)
    if consumer is None:
        return
    lane = lanes.get(consumer)
    if marker.name == ev.DEMO_MEMBER_STARTED:
        if lane is None:
            lane = lanes[consumer] = _LaneBuilder(consumer)
        if lane.alive_since is None:
            lane.touch(marker.time)
    elif lane is not None and marker.name == ev.DEMO_MEMBER_KILLED:
        # Its owner znodes live on until its session expires; someone else's claim ends them.
        lane.end_life(marker.time, "killed")
    elif lane is not None and marker.name == ev.DEMO_MEMBER_STOPPED and lane.alive_since is not None:
        ownership.end(consumer, ownership.held_by(consumer), marker.time, "shutdown")
        lane.end_life(marker.time, "stopped")


def _add_partitions(partitions: set[tuple[str, int]], topic: str, count: int) -> None:
    """Partitions 0 to ``count - 1`` of a topic, as an event counts them (at most ``PARTITION_COUNT_MAX``)."""
    partitions.update((topic, p) for p in range(min(count, PARTITION_COUNT_MAX)))


@dataclass(frozen=True, slots=True)
class _Apply:
    """One event of a consumer, with what it may change: the consumer's lane, and what the timeline gathers across
    lanes (who owns which partition, every partition seen)."""

    event: Event
    time: float
    lane: _LaneBuilder
    ownership: _Ownerships
    partitions: set[tuple[str, int]]

    @property
    def fields(self) -> Mapping[str, Any]:
        return self.event.fields

    @property
    def consumer(self) -> str:
        return self.lane.consumer_id

    @property
    def attempt(self) -> int | None:
        return _int(self.fields.get("attempt"))

    def rebalance(self) -> _RebalanceBuilder:
        """The rebalance the event belongs to (see :meth:`_LaneBuilder.rebalance_for`), lasting at least until it."""
        rebalance = self.lane.rebalance_for(self.event, self.time)
        rebalance.last = max(rebalance.last, self.time)
        return rebalance

    def claim(self, refs: Iterable[PartitionRef]) -> None:
        for ref in refs:
            self.ownership.claim(self.consumer, ref, self.time)
            self.partitions.add(ref.key)

    def end_ownership(self, keys: Iterable[tuple[str, int]], ended_by: str) -> None:
        self.ownership.end(self.consumer, keys, self.time, ended_by)

    def mark(self, rebalance: _RebalanceBuilder, kind: str) -> None:
        """A mark of one rebalance and attempt: listed with the rebalance and drawn on the lane."""
        mark = Mark(kind, self.time, self.consumer, rebalance.rebalance_id, self.attempt, self.event)
        rebalance.marks.append(mark)
        self.lane.marks.append(mark)


def _no_change(event: _Apply) -> None:
    """An event that only the text timeline shows."""


def _on_shutdown(event: _Apply) -> None:
    event.end_ownership(event.ownership.held_by(event.consumer), "shutdown")  # the session's close deletes them
    event.lane.end_life(event.time, "shutdown")


def _lane_mark(event: _Apply) -> None:
    """A mark of the member rather than of a rebalance; it names the rebalance in progress, if one is."""
    current = event.lane.current
    event.lane.marks.append(Mark(MARK_EVENTS[event.event.name], event.time, event.consumer,
                                 current.rebalance_id if current is not None else None, None, event.event))


def _on_session_expired(event: _Apply) -> None:
    """ZooKeeper deleted the member's owner znodes with its session."""
    event.end_ownership([r.key for r in partition_refs(event.fields.get("dropped"))], "session_expired")
    event.end_ownership(event.ownership.held_by(event.consumer), "session_expired")
    _lane_mark(event)


def _on_started(event: _Apply) -> None:
    event.rebalance()


def _on_completed(event: _Apply) -> None:
    rebalance = event.rebalance()
    rebalance.outcome, rebalance.ended_at = "completed", event.time
    rebalance.duration_ms = _number(event.fields.get("duration_ms"))
    rebalance.completed_attempt = _int(event.fields.get("attempts")) or max(
        (s.attempt for s in rebalance.steps), default=1)
    rebalance.owned = partition_refs(event.fields.get("owned"))
    now_owned = {ref.key for ref in rebalance.owned}
    event.end_ownership([k for k in event.ownership.held_by(event.consumer) if k not in now_owned], "not_owned")
    event.claim(rebalance.owned)


def _rebalance_mark(event: _Apply) -> _RebalanceBuilder:
    rebalance = event.rebalance()
    event.mark(rebalance, MARK_EVENTS[event.event.name])
    return rebalance


def _on_attempt_failed(event: _Apply) -> None:
    rebalance = _rebalance_mark(event)
    reason = event.fields.get("reason")
    rebalance.failed[event.attempt or len(rebalance.failed) + 1] = _Failure(
        event.time, reason if isinstance(reason, str) else None, _number(event.fields.get("backoff_ms")))


def _on_failed(event: _Apply) -> None:
    rebalance = _rebalance_mark(event)
    rebalance.outcome, rebalance.ended_at = "failed", event.time
    rebalance.duration_ms = _number(event.fields.get("duration_ms"))


def _on_step(event: _Apply) -> _RebalanceBuilder:
    """A step, logged when it ended: a block reaching back by its duration. A step this version does not know
    keeps the number its event says and its name as title."""
    rebalance = event.rebalance()
    duration = max(_number(event.fields.get("duration_ms")) or 0.0, 0.0)
    known = BY_EVENT.get(event.event.name)
    if known is not None:
        number, title, short = known.number, known.title, known.name
    else:
        short = event.event.name[len(REBALANCE_PREFIX):]
        number, title = _int(event.fields.get("step")) or 0, short.replace("_", " ")
    rebalance.steps.append(Step(short, number, title, known is not None, event.attempt or 1,
                                event.time - duration / 1000.0, event.time, duration, event.event))
    return rebalance


def _on_claim(event: _Apply) -> None:
    rebalance = _on_step(event)
    event.claim(partition_refs(event.fields.get("claimed")) + partition_refs(event.fields.get("already_ours")))
    if _list(event.fields.get("conflicts")):
        event.mark(rebalance, CONFLICT)


def _on_release(event: _Apply) -> None:
    _on_step(event)
    event.end_ownership([r.key for r in partition_refs(event.fields.get("released"))], "released")


def _on_assign(event: _Apply) -> None:
    _on_step(event)
    counts = event.fields.get("partitions")
    if isinstance(counts, dict):
        for topic, count in counts.items():
            number = _int(count)
            if isinstance(topic, str) and number is not None:
                _add_partitions(event.partitions, topic, number)


def _unknown_event(event: _Apply) -> None:
    """An event no handler is for: a later version's step is drawn as one; anything else changes nothing."""
    if later_step(event.event.name, event.fields):
        _on_step(event)


# What each role's events change (a consumer's demo markers are :func:`_apply_marker`'s).
_BY_ROLE: dict[Role, Callable[[_Apply], object]] = {
    Role.STARTED: _on_started,
    Role.STEP: _on_step,
    Role.ATTEMPT_FAILED: _on_attempt_failed,
    Role.COMPLETED: _on_completed,
    Role.FAILED: _on_failed,
    Role.REBALANCE_MARK: _rebalance_mark,
    Role.REQUESTED: _no_change,  # the rebalance it asks for begins with its own started
    Role.LANE_MARK: _lane_mark,
    Role.SESSION_EXPIRED: _on_session_expired,
    Role.SHUTDOWN: _on_shutdown,
}
# What each event of a consumer changes: its role's, and what three steps also say of ownership and partitions.
_HANDLERS: dict[str, Callable[[_Apply], object]] = {
    **{name: _BY_ROLE[role] for name, role in ROLES.items()},
    CLAIM.event: _on_claim,
    RELEASE.event: _on_release,
    ASSIGN.event: _on_assign,
}


def _finish_lane(lane: _LaneBuilder, end: float) -> Lane:
    lives = tuple(lane.lives)
    restarts = sorted(s.end for r in lane.rebalances for s in r.steps if s.name == PAUSE_ENDS.name and not s.failed)
    rebalances = tuple(_finish_rebalance(r, lives, restarts) for r in lane.rebalances)
    return Lane(lane.consumer_id, lane.group, lives, rebalances, tuple(lane.marks), lane.fetcher_events)


def _finish_rebalance(rebalance: _RebalanceBuilder, lives: tuple[Life, ...], restarts: list[float]) -> Rebalance:
    steps = tuple(rebalance.steps)
    start_candidates = [s.start for s in steps]
    if rebalance.started_at is not None:
        start_candidates.append(rebalance.started_at)
    start = min(start_candidates, default=rebalance.last)
    end = rebalance.ended_at if rebalance.ended_at is not None else max(
        [rebalance.last] + [s.end for s in steps] + [m.time for m in rebalance.marks])
    return Rebalance(
        consumer_id=rebalance.consumer_id,
        rebalance_id=rebalance.rebalance_id,
        cause=rebalance.cause,
        start=start,
        end=end,
        outcome=rebalance.outcome,
        duration_ms=rebalance.duration_ms,
        attempts=rebalance.attempts(),
        steps=steps,
        gap=_gap(rebalance, steps, lives, restarts),
        marks=tuple(rebalance.marks),
        owned=rebalance.owned,
    )


def _gap(rebalance: _RebalanceBuilder, steps: tuple[Step, ...], lives: tuple[Life, ...],
         restarts: list[float]) -> Gap | None:
    stops = [s for s in steps if s.name == PAUSE_BEGINS.name]
    if not stops:
        return None
    start = min(s.start for s in stops)
    if rebalance.outcome == "completed":
        restart = [s for s in steps
                   if s.name == PAUSE_ENDS.name and s.attempt == rebalance.completed_attempt and not s.failed]
        if restart:
            return Gap(start, max(s.end for s in restart), True, "restart")
        assert rebalance.ended_at is not None
        return Gap(start, rebalance.ended_at, True, "completed")  # completed owning nothing to fetch
    later = [t for t in restarts if t > start]
    life = next((life for life in lives if life.start <= start <= life.end), lives[-1] if lives else None)
    life_end = life.end if life is not None else rebalance.last
    if later and later[0] <= life_end:
        return Gap(start, later[0], False, "later_restart")
    return Gap(start, max(life_end, start), False, (life.ended_by if life is not None else None) or "trace_end")


def rebalance_rounds(timeline: Timeline, join_s: float = ROUND_JOIN_S) -> tuple[Round, ...]:
    """Group every consumer's rebalances into rounds: overlapping, or less than ``join_s`` apart."""
    everything = sorted((r for lane in timeline.lanes for r in lane.rebalances), key=lambda r: (r.start, r.end))
    rounds: list[list[Rebalance]] = []
    round_end = -math.inf
    for rebalance in everything:
        if rounds and rebalance.start <= round_end + join_s:
            rounds[-1].append(rebalance)
            round_end = max(round_end, _extent_end(rebalance))
        else:
            rounds.append([rebalance])
            round_end = _extent_end(rebalance)
    return tuple(
        Round(i, min(r.start for r in members), max(_extent_end(r) for r in members), tuple(members))
        for i, members in enumerate(rounds, start=1)
    )


def _extent_end(rebalance: Rebalance) -> float:
    """A rebalance reaches to its end, or to the end of its gap when that outlives it."""
    if rebalance.gap is not None and rebalance.gap.finished:
        return max(rebalance.end, rebalance.gap.end)
    return rebalance.end
