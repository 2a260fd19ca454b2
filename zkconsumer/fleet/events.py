"""The figures of one member's rebalances from its JSON-line events: what ``zkconsumer analyze events`` computes on
Spark's executors, one member at a time.

Pure: the member's lines in, frozen rows out. The parsing and the meaning of every figure are the rebalance
timeline's (:mod:`zkconsumer.trace.timeline`: ``read_events`` and ``build_timeline``), run on the lines of one
consumer id, so the tables and ``zkconsumer trace`` agree: a rebalance's attempts, its conflicts (partitions found
held by someone else, summed over the attempts' claims), its stop-the-world gap (from the first ``stop_fetchers``
to the ``start_fetchers`` of the attempt that completed; ``null`` when the rebalance never restarted the fetchers,
as the timeline leaves such gaps out of its totals).

Added here, per rebalance: ``retries`` (attempts after the first), ``members`` (the group's members as the last
``rebalance.assign`` listed them), ``partitions_owned`` (``rebalance.completed``'s ``owned``),
``partitions_moved`` (owned now and not after this member's previous completed rebalance: what came to it;
summed over the members of one round, the partitions that changed hands) and ``partitions_released`` (owned after
the previous one and not now). Times are absolute (UTC), so rows of different members and files line up.

Lines that are not events (not a JSON object, no ``event``, no parseable ``timestamp``) are ``broken``: counted,
skipped. Lines of events without a ``consumer_id`` belong to no member: :func:`member_figures` with
``consumer_id=None`` only counts them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from zkconsumer.trace.roles import ASSIGN
from zkconsumer.trace.timeline import EventLog, Lane, Rebalance, Timeline, build_timeline, read_events


@dataclass(frozen=True, slots=True)
class RebalanceRow:
    consumer_id: str
    group: str | None
    rebalance_id: int
    cause: str | None
    outcome: str  # completed, failed, unfinished
    started_at: datetime | None
    ended_at: datetime | None
    duration_ms: float | None  # the connector's own figure
    members: int | None
    attempts: int
    failed_attempts: int
    retries: int
    conflicts: int
    stop_the_world_ms: float | None
    partitions_owned: int | None
    partitions_moved: int | None
    partitions_released: int | None


@dataclass(frozen=True, slots=True)
class StepRow:
    consumer_id: str
    group: str | None
    rebalance_id: int
    attempt: int
    step: str  # the event name without ``rebalance.``
    step_number: int
    duration_ms: float
    failed: bool
    ended_at: datetime | None


@dataclass(frozen=True, slots=True)
class MemberRow:
    consumer_id: str
    group: str | None
    rebalances: int
    completed: int
    attempts: int
    failed_attempts: int
    conflicts: int
    stop_the_world_ms: float  # finished gaps only
    longest_stop_ms: float | None
    partitions_moved: int
    events: int


@dataclass(frozen=True, slots=True)
class MemberFigures:
    consumer_id: str | None
    events: int  # lines that are events
    broken: int  # lines that are not
    member: MemberRow | None
    rebalances: tuple[RebalanceRow, ...] = ()
    steps: tuple[StepRow, ...] = ()
    foreign: int = 0  # events among the lines that are another consumer's: the lines were grouped wrongly


def foreign_events(consumer_id: str | None, log: EventLog) -> int:
    return sum(1 for event in log.events if event.consumer_id != consumer_id)


def member_figures(consumer_id: str | None, lines: Iterable[str]) -> MemberFigures:
    """The figures of ``consumer_id`` from its lines, in file order (ties of timestamps keep it)."""
    log = read_events(lines)
    foreign = foreign_events(consumer_id, log)
    if consumer_id is None:
        return MemberFigures(None, len(log.events), log.broken, None, foreign=foreign)
    timeline = build_timeline(log)
    lane = next((lane for lane in timeline.lanes if lane.consumer_id == consumer_id), None)
    if lane is None:
        return MemberFigures(consumer_id, len(log.events), log.broken, None, foreign=foreign)
    rebalances = _rebalance_rows(timeline, lane)
    steps = tuple(
        StepRow(consumer_id, lane.group, r.rebalance_id, s.attempt, s.name, s.number, s.duration_ms, s.failed,
                timeline.at(s.end))
        for r in lane.rebalances for s in r.steps
    )
    summary = lane.summary()
    member = MemberRow(
        consumer_id=consumer_id,
        group=lane.group,
        rebalances=summary.rebalances,
        completed=summary.completed,
        attempts=summary.attempts,
        failed_attempts=summary.failed_attempts,
        conflicts=summary.conflicts,
        stop_the_world_ms=summary.stop_the_world_ms,
        longest_stop_ms=summary.longest_gap_ms,
        partitions_moved=sum(r.partitions_moved or 0 for r in rebalances),
        events=len(log.events),
    )
    return MemberFigures(consumer_id, len(log.events), log.broken, member, rebalances, steps, foreign)


def _rebalance_rows(timeline: Timeline, lane: Lane) -> tuple[RebalanceRow, ...]:
    rows = []
    previous: set[tuple[str, int]] = set()
    for r in lane.rebalances:
        owned = None if r.owned is None else {ref.key for ref in r.owned}
        moved = released = None
        if owned is not None:
            moved, released = len(owned - previous), len(previous - owned)
            previous = owned
        rows.append(RebalanceRow(
            consumer_id=lane.consumer_id,
            group=lane.group,
            rebalance_id=r.rebalance_id,
            cause=r.cause,
            outcome=r.outcome,
            started_at=timeline.at(r.start),
            ended_at=timeline.at(r.end),
            duration_ms=r.duration_ms,
            members=_members(r),
            attempts=len(r.attempts),
            failed_attempts=r.failed_attempts,
            retries=max(len(r.attempts) - 1, 0),
            conflicts=r.conflicts,
            stop_the_world_ms=r.gap.duration_ms if r.gap is not None and r.gap.finished else None,
            partitions_owned=None if owned is None else len(owned),
            partitions_moved=moved,
            partitions_released=released,
        ))
    return tuple(rows)


def _members(rebalance: Rebalance) -> int | None:
    assigns = [s for s in rebalance.steps if s.name == ASSIGN.name]
    if not assigns:
        return None
    members = assigns[-1].fields.get("members")
    return len(members) if isinstance(members, list) else None
