"""Kafka Connect's two rebalance protocols replayed on a simulated clock: what each rebalance stops, starts, and
costs in task-seconds of work not running, and how long until the cluster is stable again.

The scenario is the one Kafka's authors published for KIP-415 (90 connectors of 10 tasks): the connectors are
started one at a time, each once the cluster is stable, then stopped one at a time (phase ``start``, ``stop``);
then, with every connector running again (the cluster as ``start`` left it), one worker bounces: it leaves and
comes back within ``scheduled.rebalance.max.delay.ms`` (``bounce``); then the same worker is lost for good
(``lose``). The two assignors are the pure ones of this package; this module only moves the clock.

The cost model, and why its defaults:

* A worker starts and stops connectors and tasks on a pool of ``worker_threads`` threads (Connect's
  ``DistributedHerder`` uses 8), so n items take ``ceil(n / 8)`` times the per-item cost. Connectors cost what a
  task costs (a simplification: a connector is usually lighter).
* ``task_start_ms`` = 400: creating a task's Kafka client and calling ``start()`` (metadata, a connection,
  for a sink the first join of its consumer group) takes a few hundred milliseconds on a healthy cluster.
  ``task_stop_ms`` = 300: ``stop()``, a last offset commit and closing the client; a little less than a start.
* ``rebalance_ms`` = 150: one JoinGroup/SyncGroup round once the workers know they must rejoin. A config
  change reaches every worker from the config topic at about the same time, so they rejoin together; a
  rebalance after a departure waits for the session timeout first, which both protocols pay alike and is left
  out.
* 5 workers (``DEFAULT_WORKERS``): the published comparison does not say how many workers ran the 900 tasks; 5
  is a usual small production cluster (180 tasks a worker at the peak), and with it the model lands near the
  published figures: eager 13.8 minutes to start the 90 connectors and 13.7 to stop them (published: about 14
  and 12; the model is symmetric, every eager rebalance stopping and starting everything), cooperative 50 and
  54 seconds (published: under a minute). With 10 workers eager halves (7 minutes): the stop-the-world cost is
  the tasks per worker.
* One rebalance per connector created or deleted, the connector and its tasks at once. Connect takes a second
  rebalance once a new connector has written its task configs; folding the two keeps start and stop alike and
  under-states eager's cost (it would restart everything twice per connector), not cooperative's.

Eager (``connect.protocol=default``): every worker stops everything, rejoins once stopped, and starts all it is
dealt. Incremental cooperative: the round is computed ``rebalance_ms`` after the change; workers stop what is
revoked and start what they are given; a round with revocations is followed, once the revoking workers have
stopped, by a second round; a round that holds back lost work is followed by one when the delay expires.
Changes are handled in order: a change that lands on a busy worker waits for it.
"""

from __future__ import annotations

import bisect
import copy
import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass

from zkconsumer.connect.eager_assignor import EagerAssignor
from zkconsumer.connect.incremental_cooperative_assignor import (
    DEFAULT_MAX_DELAY_MS,
    IncrementalCooperativeAssignor,
    LeaderState,
)
from zkconsumer.connect.model import EMPTY, ClusterConfig, TaskId, Work, Worker, union
from zkconsumer.errors import UsageError

PROTOCOLS = ("eager", "cooperative")
PHASES = ("start", "stop", "bounce", "lose")

DEFAULT_WORKERS = 5
DEFAULT_CONNECTORS = 90
DEFAULT_TASKS_PER_CONNECTOR = 10
DEFAULT_TASK_START_MS = 400.0
DEFAULT_TASK_STOP_MS = 300.0
DEFAULT_REBALANCE_MS = 150.0
DEFAULT_BOUNCE_MS = 60_000.0
#: Connect's ``DistributedHerder.START_STOP_THREAD_POOL_SIZE``
DEFAULT_WORKER_THREADS = 8

# a cluster that does not settle within this many rounds of one phase is a bug of the model, not a result
_MAX_ROUNDS = 100_000


class SimulationError(UsageError):
    """The parameters describe no cluster the scenario can run on."""


@dataclass(frozen=True, slots=True)
class SimulationParameters:
    workers: int = DEFAULT_WORKERS
    connectors: int = DEFAULT_CONNECTORS
    tasks_per_connector: int = DEFAULT_TASKS_PER_CONNECTOR
    task_start_ms: float = DEFAULT_TASK_START_MS
    task_stop_ms: float = DEFAULT_TASK_STOP_MS
    rebalance_ms: float = DEFAULT_REBALANCE_MS
    delay_ms: float = DEFAULT_MAX_DELAY_MS
    bounce_ms: float = DEFAULT_BOUNCE_MS
    worker_threads: int = DEFAULT_WORKER_THREADS
    protocols: tuple[str, ...] = PROTOCOLS

    def __post_init__(self) -> None:
        if self.workers < 2:
            raise SimulationError(f"--workers must be at least 2 (the scenario loses one for good), got {self.workers}")
        if self.connectors < 1:
            raise SimulationError(f"--connectors must be at least 1, got {self.connectors}")
        if self.tasks_per_connector < 0:
            raise SimulationError(f"--tasks-per-connector must not be negative, got {self.tasks_per_connector}")
        if self.worker_threads < 1:
            raise SimulationError(f"worker threads must be at least 1, got {self.worker_threads}")
        for option, value in (("--task-start-ms", self.task_start_ms), ("--task-stop-ms", self.task_stop_ms),
                              ("--rebalance-ms", self.rebalance_ms), ("--delay-ms", self.delay_ms),
                              ("bounce time", self.bounce_ms)):
            if not math.isfinite(value) or value < 0:
                raise SimulationError(f"{option} must be a non-negative number of milliseconds, got {value}")
        if not self.protocols:
            raise SimulationError("no protocol to simulate")
        unknown = [p for p in self.protocols if p not in PROTOCOLS]
        if unknown:
            raise SimulationError(f"unknown protocol {unknown[0]!r} (known: {', '.join(PROTOCOLS)})")


@dataclass(frozen=True, slots=True)
class RebalanceRecord:
    """One change to the cluster and the rebalance rounds it caused, until the next change.

    ``tasks_running``: tasks running when the change came. ``task_seconds_stopped``: the time configured tasks
    spent not running, from this change to the next. ``time_to_stable_s``: from this change until every
    configured connector and task runs again with no rebalance pending."""

    phase: str
    change: str
    at_s: float
    tasks_running: int
    rounds: int
    tasks_stopped: int
    tasks_started: int
    task_seconds_stopped: float
    time_to_stable_s: float


@dataclass(frozen=True, slots=True)
class PhaseResult:
    phase: str
    changes: int
    rounds: int
    tasks_stopped: int
    tasks_started: int
    task_seconds_stopped: float
    time_to_stable_s: float  # from the phase's first change until the cluster is stable after its last


@dataclass(frozen=True, slots=True)
class ProtocolResult:
    protocol: str
    rebalances: tuple[RebalanceRecord, ...]
    phases: tuple[PhaseResult, ...]

    def phase(self, name: str) -> PhaseResult:
        return next(p for p in self.phases if p.phase == name)

    def records(self, phase: str) -> tuple[RebalanceRecord, ...]:
        return tuple(r for r in self.rebalances if r.phase == phase)


@dataclass(frozen=True, slots=True)
class SimulationResult:
    parameters: SimulationParameters
    protocols: tuple[ProtocolResult, ...]

    def protocol(self, name: str) -> ProtocolResult:
        return next(p for p in self.protocols if p.protocol == name)


def worker_names(count: int) -> tuple[str, ...]:
    width = max(2, len(str(count)))
    return tuple(f"worker-{n:0{width}d}" for n in range(1, count + 1))


def connector_names(count: int) -> tuple[str, ...]:
    width = max(2, len(str(count)))
    return tuple(f"connector-{n:0{width}d}" for n in range(1, count + 1))


def simulate(parameters: SimulationParameters) -> SimulationResult:
    return SimulationResult(parameters, tuple(_simulate_protocol(parameters, p) for p in parameters.protocols))


@dataclass(frozen=True, slots=True)
class _Change:
    label: str
    offset_ms: float | None  # after the phase's start; None: as soon as the cluster is stable
    apply: Callable[[_Cluster, float], None]


def _simulate_protocol(parameters: SimulationParameters, protocol: str) -> ProtocolResult:
    workers = worker_names(parameters.workers)
    connectors = connector_names(parameters.connectors)
    tasks = parameters.tasks_per_connector
    # the leader is the first worker; the one that bounces and is lost is the last, so the leader's view holds
    departing = workers[-1]
    cluster = _Cluster(parameters, protocol, workers)
    records: list[RebalanceRecord] = []
    phases: list[PhaseResult] = []

    def run(phase: str, changes: list[_Change], on: _Cluster) -> None:
        phase_records, result = _run_phase(on, phase, changes)
        records.extend(phase_records)
        phases.append(result)

    run("start", [_Change(f"create {c}", None, _create(c, tasks)) for c in connectors], cluster)
    running = copy.deepcopy(cluster)
    run("stop", [_Change(f"delete {c}", None, _delete(c)) for c in connectors], cluster)
    run("bounce", [_Change(f"{departing} leaves", 0, _leave(departing)),
                   _Change(f"{departing} returns", parameters.bounce_ms, _join(departing))], running)
    run("lose", [_Change(f"{departing} is lost", 0, _leave(departing))], running)
    return ProtocolResult(protocol, tuple(records), tuple(phases))


def _create(connector: str, tasks: int) -> Callable[[_Cluster, float], None]:
    return lambda cluster, at: cluster.create(connector, tasks, at)


def _delete(connector: str) -> Callable[[_Cluster, float], None]:
    return lambda cluster, at: cluster.delete(connector, at)


def _leave(worker: str) -> Callable[[_Cluster, float], None]:
    return lambda cluster, at: cluster.leave(worker, at)


def _join(worker: str) -> Callable[[_Cluster, float], None]:
    return lambda cluster, at: cluster.join(worker, at)


def _run_phase(cluster: _Cluster, phase: str, changes: list[_Change]) -> tuple[list[RebalanceRecord], PhaseResult]:
    cluster.settle()
    phase_start = cluster.stable_at()
    cluster.intervals.clear()
    times: list[float] = []
    running: list[int] = []
    counters: list[tuple[int, int, int]] = []
    stable: list[float | None] = []
    for change in changes:
        if change.offset_ms is None:
            cluster.settle()
            at = max(cluster.stable_at(), times[-1] if times else phase_start)
        else:
            at = phase_start + change.offset_ms
            cluster.run_until(at)
        if cluster.is_stable_by(at):
            stable = [cluster.stable_at() if s is None else s for s in stable]
        times.append(at)
        running.append(cluster.tasks_running())
        counters.append((cluster.round_count, cluster.tasks_stopped, cluster.tasks_started))
        stable.append(None)
        change.apply(cluster, at)
    cluster.settle()
    end = cluster.stable_at()
    stable = [end if s is None else s for s in stable]
    counters.append((cluster.round_count, cluster.tasks_stopped, cluster.tasks_started))
    seconds = _per_window(cluster.intervals, times)
    records = [
        RebalanceRecord(
            phase=phase, change=change.label, at_s=(times[i] - phase_start) / 1000, tasks_running=running[i],
            rounds=counters[i + 1][0] - counters[i][0], tasks_stopped=counters[i + 1][1] - counters[i][1],
            tasks_started=counters[i + 1][2] - counters[i][2], task_seconds_stopped=seconds[i],
            time_to_stable_s=(stable[i] - times[i]) / 1000,  # type: ignore[operator]
        )
        for i, change in enumerate(changes)
    ]
    result = PhaseResult(
        phase=phase, changes=len(records), rounds=sum(r.rounds for r in records),
        tasks_stopped=sum(r.tasks_stopped for r in records), tasks_started=sum(r.tasks_started for r in records),
        task_seconds_stopped=sum(seconds), time_to_stable_s=(end - times[0]) / 1000,
    )
    return records, result


def _per_window(intervals: list[tuple[float, float]], starts: list[float]) -> list[float]:
    """Seconds of the intervals falling in each window ``[starts[i], starts[i+1])``, the last one open."""
    totals = [0.0] * len(starts)
    for begin, end in intervals:
        i = max(0, bisect.bisect_right(starts, begin) - 1)
        while begin < end:
            window_end = starts[i + 1] if i + 1 < len(starts) else math.inf
            cut = min(end, window_end)
            totals[i] += (cut - begin) / 1000
            begin = cut
            i += 1
    return totals


class _Cluster:
    """The simulated cluster of one protocol: who runs what, each worker's busy time, and the pending rounds.

    Mutable, and private to this module: :func:`simulate` takes parameters and returns frozen results."""

    def __init__(self, parameters: SimulationParameters, protocol: str, workers: tuple[str, ...]) -> None:
        self.p = parameters
        self.protocol = protocol
        self.live: set[str] = set(workers)
        self.owned: dict[str, Work] = dict.fromkeys(workers, EMPTY)
        self.free_at: dict[str, float] = dict.fromkeys(workers, 0.0)
        self.config: dict[str, int] = {}
        self.leader = LeaderState()
        self.cooperative = IncrementalCooperativeAssignor(max_delay_ms=parameters.delay_ms)
        self.pending: list[float] = []  # a heap of round times
        self.last_round = 0.0
        self.down_since: dict[TaskId, float] = {}  # configured tasks not running, since when
        self.intervals: list[tuple[float, float]] = []  # closed spans of a task not running
        self.round_count = 0
        self.tasks_stopped = 0
        self.tasks_started = 0

    # --- changes ---------------------------------------------------------------------------------------------

    def create(self, connector: str, tasks: int, at: float) -> None:
        self.config[connector] = tasks
        for task in ClusterConfig({connector: tasks}).tasks_of(connector):
            self.down_since[task] = at
        self._rebalance(at)

    def delete(self, connector: str, at: float) -> None:
        for task in ClusterConfig({connector: self.config[connector]}).tasks_of(connector):
            self._up(task, at)  # no longer configured: its stop is no loss
        del self.config[connector]
        self._rebalance(at)

    def leave(self, worker: str, at: float) -> None:
        for task in self.owned[worker].tasks:
            self.tasks_stopped += 1
            self._down(task, at)
        self.live.discard(worker)
        self.owned[worker] = EMPTY
        self._rebalance(at)

    def join(self, worker: str, at: float) -> None:
        self.live.add(worker)
        self.owned[worker] = EMPTY
        self.free_at[worker] = at
        self._rebalance(at)

    # --- the clock -------------------------------------------------------------------------------------------

    def run_until(self, limit: float) -> None:
        while self.pending and self.pending[0] <= limit:
            self._round(heapq.heappop(self.pending))

    def settle(self) -> None:
        while self.pending:
            self._round(heapq.heappop(self.pending))
        configured = ClusterConfig(self.config).work()
        held = union(self.owned[w] for w in self.live)
        if held != configured:  # pragma: no cover - a bug of the model, not a result
            raise AssertionError(f"settled with work unassigned: {len(configured - held)} items")

    def stable_at(self) -> float:
        return max([self.last_round, *(self.free_at[w] for w in self.live)])

    def is_stable_by(self, at: float) -> bool:
        return not self.pending and not self.down_since and self.stable_at() <= at

    def tasks_running(self) -> int:
        return sum(self.config.values()) - len(self.down_since)

    # --- rounds ----------------------------------------------------------------------------------------------

    def _rebalance(self, at: float) -> None:
        if self.protocol == "eager":
            self._eager_round(at)
            return
        due = at + self.p.rebalance_ms
        if not any(at <= t <= due for t in self.pending):  # a round already coming sees this change too
            heapq.heappush(self.pending, due)

    def _eager_round(self, at: float) -> None:
        members = sorted(self.live)
        stopped = [self._work(w, at, stop=self.owned[w], start=EMPTY)[0] for w in members]
        joined = max(stopped) + self.p.rebalance_ms
        self._count_round(joined)
        for assignment in EagerAssignor().assign(ClusterConfig(self.config), members):
            self.owned[assignment.worker_id] = assignment.assigned
            self._work(assignment.worker_id, joined, stop=EMPTY, start=assignment.assigned)

    def _round(self, at: float) -> None:
        self._count_round(at)
        members = tuple(Worker(w, self.owned[w]) for w in sorted(self.live))
        outcome = self.cooperative.assign(ClusterConfig(self.config), members, self.leader, at)
        self.leader = outcome.state
        follow_up = None
        for a in outcome.assignments:
            self.owned[a.worker_id] = (self.owned[a.worker_id] - a.revoked) | a.assigned
            stopped, _ = self._work(a.worker_id, at, stop=a.revoked, start=a.assigned)
            if a.revoked:  # the worker rejoins once it has stopped what it gave up
                follow_up = stopped if follow_up is None else max(follow_up, stopped)
        if follow_up is not None:
            heapq.heappush(self.pending, follow_up + self.p.rebalance_ms)
        scheduled = outcome.state.scheduled_ms
        if scheduled is not None:
            due = scheduled + self.p.rebalance_ms  # the workers rejoin when the delay they were told expires
            if due not in self.pending:
                heapq.heappush(self.pending, due)

    def _count_round(self, at: float) -> None:
        self.round_count += 1
        if self.round_count > _MAX_ROUNDS:  # pragma: no cover - a bug of the model
            raise AssertionError("the simulated cluster does not settle")
        self.last_round = max(self.last_round, at)

    def _work(self, worker: str, at: float, stop: Work, start: Work) -> tuple[float, float]:
        """Stop then start on the worker's thread pool, after what it is still doing; returns when its stops and
        when its starts are done."""
        threads, stop_ms, start_ms = self.p.worker_threads, self.p.task_stop_ms, self.p.task_start_ms
        begin = max(at, self.free_at[worker])
        stopping = [*stop.sorted_connectors(), *stop.sorted_tasks()]
        for i, item in enumerate(stopping):
            if isinstance(item, TaskId):
                self.tasks_stopped += 1
                if item.connector in self.config:
                    self._down(item, begin + (i // threads) * stop_ms)
        stopped = begin + math.ceil(len(stopping) / threads) * stop_ms
        starting = [*start.sorted_connectors(), *start.sorted_tasks()]
        for i, item in enumerate(starting):
            if isinstance(item, TaskId):
                self.tasks_started += 1
                self._up(item, stopped + (i // threads + 1) * start_ms)
        self.free_at[worker] = stopped + math.ceil(len(starting) / threads) * start_ms
        return stopped, self.free_at[worker]

    def _down(self, task: TaskId, at: float) -> None:
        self.down_since.setdefault(task, at)

    def _up(self, task: TaskId, at: float) -> None:
        since = self.down_since.pop(task, None)
        if since is not None and at > since:
            self.intervals.append((since, at))
