"""Connect's ``IncrementalCooperativeAssignor`` (KIP-415, ``connect.protocol=compatible``/``sessioned``, Kafka 2.3+).

Workers keep running what they have and report it when they join; the leader compares that with its own view of
the last assignment and the config, and tells each worker only what to start and what to stop. Work moves in two
rebalances: the first revokes it from a worker above its share, the worker stops it and rejoins, and the
follow-up assigns it, so nothing runs twice and everything else keeps running. Work of a worker that left is held
back for ``scheduled.rebalance.max.delay.ms``, so that a worker that only bounced gets its own work back instead of
the cluster reshuffling twice.

The leader's memory between rebalances (its view of the last assignment, the pending delay, the workers that
joined empty during it) is a value, :class:`LeaderState`, passed in and returned, so the assignor stays pure and a
simulation or a test can replay rounds. What this leaves out of Connect: the config-offset check (a leader behind
the config topic), protocol versions, and the generation check (the simulation keeps one leader, whose view is
always of the last completed generation; a new leader starts from an empty :class:`LeaderState`, as Connect's
does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import cycle
from typing import TypeVar

from zkconsumer.connect.model import (
    EMPTY,
    ClusterConfig,
    TaskId,
    Work,
    Worker,
    WorkerAssignment,
    check_workers,
    union,
)

#: Connect's default ``scheduled.rebalance.max.delay.ms``: five minutes
DEFAULT_MAX_DELAY_MS = 300_000

_Item = TypeVar("_Item", str, TaskId)


@dataclass(frozen=True, slots=True)
class LeaderState:
    """What the leader remembers from its last assignment.

    ``previous``: its view of what was assigned (revoked work taken out, lost work kept in, so that lost work stays
    "lost" and is not mistaken for new). ``previous_revocation``: what it revoked, to notice a revocation that did
    not happen. ``scheduled_ms``: when the delayed rebalance for lost work is due (``None``: none pending).
    ``candidates``: workers that joined empty while it was pending, in the order they were seen.
    ``revoked_in_previous``: the last round revoked for balance, so this one must not (no two in a row).
    """

    previous: Work = EMPTY
    previous_revocation: Work = EMPTY
    previous_members: frozenset[str] = frozenset()
    scheduled_ms: float | None = None
    delay_ms: float = 0
    candidates: tuple[str, ...] = ()
    revoked_in_previous: bool = False


@dataclass(frozen=True, slots=True)
class CooperativeOutcome:
    """One round's assignments (one per worker, in worker order), the leader's new state, and the sets it derived
    (for the narration of a round: what was deleted, lost, new)."""

    assignments: tuple[WorkerAssignment, ...]
    state: LeaderState
    deleted: Work
    lost: Work
    new: Work

    @property
    def revoked(self) -> Work:
        return union(a.revoked for a in self.assignments)

    @property
    def delay_ms(self) -> float:
        return self.state.delay_ms


@dataclass
class _Load:
    """A worker's load while the leader computes (mutable inside one call only)."""

    worker: str
    connectors: list[str]
    tasks: list[TaskId]

    def __len__(self) -> int:
        return len(self.connectors) + len(self.tasks)


@dataclass(frozen=True, slots=True)
class IncrementalCooperativeAssignor:
    max_delay_ms: float = DEFAULT_MAX_DELAY_MS
    name: str = "cooperative"

    def assign(self, config: ClusterConfig, members: Iterable[Worker], state: LeaderState = LeaderState(),
               now_ms: float = 0) -> CooperativeOutcome:
        listed = tuple(members)
        ids = check_workers(m.worker_id for m in listed)
        workers = {m.worker_id: m for m in listed}
        configured = config.work()
        active = union(w.running for w in workers.values())
        previous = state.previous
        if state.previous_revocation & active:
            previous = active  # a revocation did not take effect: trust what the workers report
        deleted = previous - configured
        lost = previous - active - deleted
        new = configured - previous - active

        # 1. deleted work, and work two workers report, is revoked from whoever holds it
        duplicated = _duplicated(workers.values())
        revoke: dict[str, Work] = {w: workers[w].running & (deleted | duplicated) for w in ids}
        loads = {
            w: _Load(w, sorted(workers[w].running.connectors - deleted.connectors - duplicated.connectors),
                     sorted(workers[w].running.tasks - deleted.tasks - duplicated.tasks))
            for w in ids
        }

        # what each worker holds as it joins (Connect judges balance on this, before lost work is handed back)
        joined = {w: _Load(w, list(load.connectors), list(load.tasks)) for w, load in loads.items()}

        # 2. lost work: reassigned at once, held back for the delay, or given to the workers that came back
        new, state = self._handle_lost(lost, new, loads, state, now_ms, frozenset(ids))

        # 3. load-balancing revocation down to each worker's share, only toward workers that joined empty, never
        # while lost work is pending, and never in two rounds in a row
        revoked_for_balance = False
        if state.delay_ms == 0 and not state.revoked_in_previous:
            for worker, work in _balance_revocations(configured, joined).items():
                revoke[worker] = revoke[worker] | work
                revoked_for_balance = True

        # 4. new work to the least loaded, connectors and tasks apart; revoked work waits for the follow-up
        _fill(list(loads.values()), new.sorted_connectors(), _connectors)
        _fill(list(loads.values()), new.sorted_tasks(), _tasks)

        assignments = tuple(
            WorkerAssignment(
                w,
                assigned=Work.of(loads[w].connectors, loads[w].tasks) - workers[w].running,
                revoked=revoke[w],
                delay_ms=state.delay_ms,
            )
            for w in ids
        )
        all_revoked = union(revoke.values())
        assigned_now = union(Work.of(load.connectors, load.tasks) for load in loads.values())
        pending_lost = lost if state.scheduled_ms is not None else EMPTY
        next_state = LeaderState(
            previous=(assigned_now - all_revoked) | pending_lost,
            previous_revocation=all_revoked,
            previous_members=frozenset(ids),
            scheduled_ms=state.scheduled_ms,
            delay_ms=state.delay_ms,
            candidates=state.candidates,
            revoked_in_previous=revoked_for_balance,
        )
        return CooperativeOutcome(assignments, next_state, deleted, lost, new)

    def _handle_lost(self, lost: Work, new: Work, loads: dict[str, _Load], state: LeaderState, now_ms: float,
                     members: frozenset[str]) -> tuple[Work, LeaderState]:
        no_delay = LeaderState(state.previous, state.previous_revocation, state.previous_members, None, 0, (),
                               state.revoked_in_previous)
        if not lost:
            return new, no_delay
        if state.scheduled_ms is None and members >= state.previous_members:
            # nobody left: the lost work is a worker missing an assignment, not a worker gone; reassign it now
            return new | lost, no_delay
        if state.scheduled_ms is not None and now_ms >= state.scheduled_ms:
            returned = [loads[w] for w in state.candidates if w in loads]
            if not returned:
                return new | lost, no_delay
            dealer = cycle(returned)
            for connector in lost.sorted_connectors():
                next(dealer).connectors.append(connector)
            dealer = cycle(returned)  # tasks start again from the first candidate, as in Connect
            for task in lost.sorted_tasks():
                next(dealer).tasks.append(task)
            return new, no_delay
        empty = [w for w in sorted(loads) if not loads[w] and w not in state.candidates]
        if state.scheduled_ms is not None:
            delay = min(state.scheduled_ms - now_ms, self.max_delay_ms)
        else:
            delay = self.max_delay_ms
        return new, LeaderState(state.previous, state.previous_revocation, state.previous_members,
                                now_ms + delay, delay, state.candidates + tuple(empty), state.revoked_in_previous)


def _connectors(load: _Load) -> list[str]:
    return load.connectors


def _tasks(load: _Load) -> list[TaskId]:
    return load.tasks


def _duplicated(workers: Iterable[Worker]) -> Work:
    seen = EMPTY
    twice = EMPTY
    for worker in workers:
        twice = twice | (seen & worker.running)
        seen = seen | worker.running
    return twice


def shares(total: int, workers: int) -> tuple[int, int]:
    """``(floor, ceil)`` of ``total`` over ``workers``: the fewest and the most a balanced worker holds."""
    floor = total // workers
    return floor, floor + (1 if total % workers else 0)


def _balance_revocations(configured: Work, loads: dict[str, _Load]) -> dict[str, Work]:
    """What each loaded worker gives up so that the empty ones can be filled, for connectors and for tasks apart:
    with ``floor`` and ``ceil`` computed over all workers, a worker above its share gives up the excess (the first
    in order, as Connect takes its iterator's first); its share is ``ceil`` while some of the ``total % workers``
    places at ``ceil`` are left (taken in worker order), else ``floor``. Revoking only down to ``ceil`` for everyone
    (Kafka 2.3's rule) would leave a newcomer idle beside workers exactly at ``ceil`` (2 + 2 + 0 tasks); keeping
    ``ceil`` for as many workers as the remainder allows (Kafka 3.x) never takes anyone below ``floor`` and leaves
    every count within one. Nothing when no worker is empty or none is loaded."""
    existing = [load for load in sorted(loads.values(), key=lambda load: load.worker) if len(load)]
    if not existing or len(existing) == len(loads):
        return {}
    connectors = _excess(existing, len(configured.connectors), len(loads), _connectors)
    tasks = _excess(existing, len(configured.tasks), len(loads), _tasks)
    revoked: dict[str, Work] = {}
    for load in existing:
        if connectors.get(load.worker) or tasks.get(load.worker):
            revoked[load.worker] = Work.of(connectors.get(load.worker, ()), tasks.get(load.worker, ()))
    return revoked


def _excess(existing: list[_Load], total: int, workers: int,
            pick: Callable[[_Load], list[_Item]]) -> dict[str, list[_Item]]:
    floor, ceil = shares(total, workers)
    at_ceil = total % workers  # how many workers may hold ceil
    excess: dict[str, list[_Item]] = {}
    for load in existing:
        held = pick(load)
        if len(held) <= floor:
            continue
        share = floor
        if at_ceil:
            share, at_ceil = ceil, at_ceil - 1
        if len(held) > share:
            excess[load.worker] = held[:len(held) - share]
    return excess


def _fill(loads: list[_Load], items: tuple[_Item, ...], pick: Callable[[_Load], list[_Item]]) -> None:
    """Connect's ``assignConnectors``/``assignTasks``: workers sorted by how many they hold (then by id); one item
    each to the least loaded, round robin, until they reach the next level, then that level too, and so on."""
    if not items:
        return
    order = sorted(loads, key=lambda load: (len(pick(load)), load.worker))
    remaining = list(items)
    remaining.reverse()
    while remaining:
        level = len(pick(order[0]))
        upto = next((i for i, load in enumerate(order) if len(pick(load)) > level), len(order))
        for load in order[:upto]:
            pick(load).append(remaining.pop())
            if not remaining:
                break
