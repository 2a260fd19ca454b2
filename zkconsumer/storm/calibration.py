"""The storm model against real runs: the shapes of run a calibration plays, the four figures a run is compared by,
the parameters fitted from real members' events, and the agreement of a prediction with a real run (its tables:
:mod:`zkconsumer.storm.rendering`).

Pure: the real runs are played by ``benchmarks/storm_calibration.py`` (real ZooKeeper, broker, front and members),
which hands their records here. A run is of one of three shapes, each a scenario whose last scene is the one measured:

- ``at_once``: ``members`` members start at once (the storm after a deploy);
- ``join_running``: ``members - changing`` members form the group, then ``changing`` more start at once (a running
  group that grows; for the legacy flow, the newcomers meet the owners' znodes);
- ``leave``: ``members`` members form the group, then ``changing`` of them shut down cleanly at once.

A calibration's real runs are kept as a :class:`CalibrationRecord` (JSON, committed in ``benchmarks/data/storm/``):
each run's figures (its repeats' median and spread), the step samples the fit takes, what was measured outside the
runs. :func:`replay` fits and predicts from a record with the model as it is, so every table made from it can be made
again.

Fitting (:func:`fit`): every legacy step's cost is a line through the steps' ``duration_ms`` against what the
model says the step's cost grows with (partitions, members, partitions owned), less the ZooKeeper requests the model
books apart, from members rebalancing alone (the runs' members share one process, so steps taken together measure
their contention too, which the model plays by ``members_share_one_cpu``); what is measured outside the runs
(ZooKeeper's read service time, the loopback round trip, the coordinators' CPU per request) comes in as given. Last,
what a rebalance costs its process beyond those steps (:func:`fit_rebalance_cpu`) is fitted to the time to stable of
the runs of several members, by simulating them. Each fitted parameter keeps the runs it came from.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from zkconsumer.scenarios import model as sc
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.simulation import ProtocolFigures, play

AT_ONCE, JOIN_RUNNING, LEAVE = "at_once", "join_running", "leave"
SHAPES = (AT_ONCE, JOIN_RUNNING, LEAVE)
CALIBRATION, HELD_BACK = "calibration", "held-back"
LEGACY_PROTOCOLS = ("legacy-range", "legacy-roundrobin")
#: the four figures the issue compares, as named in :class:`Figures`
COMPARED = ("time_to_stable_s", "partition_seconds_paused", "zookeeper_requests", "conflicts")
TOLERANCE = 0.2


@dataclass(frozen=True, slots=True)
class RunSpec:
    """One real run and its simulated twin."""

    protocol: str
    shape: str
    members: int
    partitions: int
    role: str
    changing: int = 0  # join_running: members joining; leave: members leaving
    #: join_running, leave: seconds from the group formed (its last rebalance) to the measured scene, as the real run
    #: took them; played as a wait, since the modern members' heartbeats are timed from their last rebalance
    lead_s: float = 0.0
    #: how far apart the measured scene's members started, as the run measured it (``None``: not measured, the
    #: model's default)
    start_interval_ms: float | None = None

    def __post_init__(self) -> None:
        if self.shape not in SHAPES:
            raise ValueError(f"unknown run shape {self.shape!r} (known: {', '.join(SHAPES)})")
        if self.shape != AT_ONCE and not 0 < self.changing < self.members:
            raise ValueError(f"a {self.shape} run needs 0 < changing < members, got {self.changing} of {self.members}")

    @property
    def name(self) -> str:
        if self.shape == JOIN_RUNNING:
            what = f"{self.changing} into {self.members - self.changing}"
        elif self.shape == LEAVE:
            what = f"{self.changing} of {self.members} leave"
        else:
            what = f"{self.members} at once"
        return f"{self.protocol} {what}, {self.partitions:,} partitions"

    @property
    def legacy(self) -> bool:
        return self.protocol in LEGACY_PROTOCOLS

    def member_names(self) -> list[str]:
        return [f"m{i:02d}" for i in range(self.members)]


@dataclass(frozen=True, slots=True)
class Figures:
    """What a run is compared by, over its measured scene."""

    time_to_stable_s: float | None
    partition_seconds_paused: float
    zookeeper_requests: int
    conflicts: int
    rebalances: int = 0
    zookeeper_operations: int = 0


@dataclass(frozen=True, slots=True)
class StepSample:
    """One legacy rebalance step of a real member, from its ``rebalance.<step>`` event."""

    step: str  # the step's name; ``registry``: steps 6 and 7 of one attempt together
    duration_ms: float
    partitions: int  # the topic's
    members: int  # the members the assign step listed (others: the group's size)
    count: int  # the step's own count: partitions owned (stop), assigned (fetch, build, start), claimed (claim)
    batches: int = 0  # write requests (release, claim)


@dataclass(frozen=True, slots=True)
class RealRun:
    spec: RunSpec
    figures: Figures
    steps: tuple[StepSample, ...] = ()
    cpu_s: float = 0.0  # the harness process (every member) over the measured scene
    front_cpu_s: float = 0.0  # the front's process over the measured scene (modern runs)
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)  # os.getloadavg() as the run began
    wall_s: float = 0.0  # the whole run, forming included


@dataclass(frozen=True, slots=True)
class ParameterFit:
    name: str
    value: float
    source: str  # the runs and the figure it came from, in words


@dataclass(frozen=True, slots=True)
class Calibration:
    parameters: StormParameters
    fits: tuple[ParameterFit, ...]


# --- the scenario of a run ---------------------------------------------------------------------------------------

def scenario_for(spec: RunSpec) -> sc.Scenario:
    """The run as a scenario; its last scene is the measured one."""
    names = spec.member_names()
    cast = tuple(sc.Member(n) for n in names)

    def starting(number: int, title: str, who: Iterable[str]) -> sc.Scene:
        return sc.Scene(number, title, title, tuple(sc.Action(sc.START, n) for n in who))

    def waiting(seconds: float) -> sc.Scene:
        return sc.Scene(2, f"{seconds:g} s", "", (sc.Action(sc.WAIT, seconds=seconds),))

    if spec.shape == AT_ONCE:
        scenes: tuple[sc.Scene, ...] = (starting(1, f"{spec.members} start", names),)
    elif spec.shape == JOIN_RUNNING:
        first = spec.members - spec.changing
        scenes = (starting(1, f"{first} start", names[:first]), waiting(spec.lead_s),
                  starting(3, f"{spec.changing} join", names[first:]))
    else:
        scenes = (starting(1, f"{spec.members} start", names), waiting(spec.lead_s),
                  sc.Scene(3, f"{spec.changing} leave", "", tuple(sc.Action(sc.STOP, n)
                                                                  for n in names[-spec.changing:])))
    return sc.Scenario(spec.shape, spec.name, spec.name, sc.Topic("storm", spec.partitions), sc.Production(), cast,
                       scenes)


def predict(spec: RunSpec, parameters: StormParameters, settle_limit_s: float = 600.0) -> Figures:
    figures: ProtocolFigures = play(scenario_for(spec), spec.protocol, parameters, settle_limit_s)
    scene = figures.scenes[-1]
    return Figures(scene.time_to_stable_s, scene.partition_seconds_paused, scene.zookeeper_requests, scene.conflicts,
                   scene.rebalances, scene.zookeeper_operations)


#: the legacy members' settings in the calibration harness (``benchmarks/storm_calibration.py``), the model given the
#: same: quick retries that never run out, sessions too long to drop a connection; one ZooKeeper server; new groups
LEGACY_SETTINGS = {"rebalance.backoff.ms": 200, "rebalance.max.retries": 100, "zookeeper.session.timeout.ms": 30_000}
LEGACY_RUN_MODEL: Mapping[str, Any] = {"rebalance_backoff_ms": 200.0, "rebalance_max_retries": 100,
                                       "zookeeper_session_timeout_ms": 30_000.0, "zookeeper_servers": 1,
                                       "offsets_committed": False, "members_share_one_cpu": True}


def run_settings(spec: RunSpec, parameters: StormParameters) -> StormParameters:
    """The parameters as a calibration run had them: the legacy members' settings, their one ZooKeeper server and
    their one shared process; the modern runs at the defaults (librdkafka's, the front's)."""
    if spec.start_interval_ms is not None:
        parameters = replace(parameters, start_interval_ms=spec.start_interval_ms)
    if not spec.legacy:
        return parameters
    return replace(parameters, **LEGACY_RUN_MODEL)


# --- figures from a real run's timeline -------------------------------------------------------------------------

def paused_partition_seconds(changes: Sequence[tuple[float, int]], partitions: int, consuming_at_start: int,
                             start: float, end: float) -> float:
    """Partition-seconds not consuming over ``[start, end]``: ``changes`` are (time, partitions that started (+) or
    stopped (-) consuming), in any order; those before ``start`` are taken as already in ``consuming_at_start``."""
    consuming, since, paused = consuming_at_start, start, 0.0
    for at, delta in sorted(changes):
        if at < start:
            continue
        if at > end:
            break
        paused += (partitions - consuming) * (at - since)
        consuming, since = consuming + delta, at
    return paused + (partitions - consuming) * max(0.0, end - since)


def median_run(runs: Sequence[RealRun]) -> RealRun:
    """Repeats of one run as one: each figure's median (a run not stable: the median of those that were, or not
    stable if none was), the lead's and the start interval's medians, every repeat's steps for the fit, the median
    CPU and load."""
    if not runs or len({replace(r.spec, lead_s=0.0, start_interval_ms=None) for r in runs}) != 1:
        raise ValueError("median_run needs repeats of one run")

    def median(values: Iterable[float]) -> float:
        return statistics.median(list(values))

    times = [r.figures.time_to_stable_s for r in runs if r.figures.time_to_stable_s is not None]
    f = [r.figures for r in runs]
    figures = Figures(median(times) if times else None, median(x.partition_seconds_paused for x in f),
                      round(median(x.zookeeper_requests for x in f)), round(median(x.conflicts for x in f)),
                      round(median(x.rebalances for x in f)), round(median(x.zookeeper_operations for x in f)))
    loads = [r.load for r in runs]
    intervals = [r.spec.start_interval_ms for r in runs if r.spec.start_interval_ms is not None]
    spec = replace(runs[0].spec, lead_s=median(r.spec.lead_s for r in runs),
                   start_interval_ms=median(intervals) if intervals else None)
    return RealRun(spec, figures,
                   tuple(s for r in runs for s in r.steps), median(r.cpu_s for r in runs),
                   median(r.front_cpu_s for r in runs), (median(x[0] for x in loads), median(x[1] for x in loads),
                                                         median(x[2] for x in loads)), median(r.wall_s for r in runs))


def spread(runs: Sequence[RealRun]) -> dict[str, tuple[float, float]]:
    """Each compared figure's lowest and highest among repeats of one run (times of runs that were stable)."""
    out = {}
    for name in COMPARED:
        values = [getattr(r.figures, name) for r in runs if getattr(r.figures, name) is not None]
        if values:
            out[name] = (min(values), max(values))
    return out


# --- fitting -----------------------------------------------------------------------------------------------------

def fit_line(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Least squares ``y = a + b x``, both clipped at zero (a cost is never negative): (a, b). With one distinct x,
    the line through the origin and the mean."""
    if len(xs) != len(ys) or not xs:
        raise ValueError("fit_line needs as many ys as xs, at least one")
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    spread = sum((x - mean_x) ** 2 for x in xs)
    if spread == 0:
        return 0.0, max(0.0, mean_y / mean_x) if mean_x else 0.0
    slope = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
    if slope < 0:
        return max(0.0, mean_y), 0.0
    intercept = mean_y - slope * mean_x
    if intercept < 0:  # refit through the origin
        return 0.0, sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs)
    return intercept, slope


def _samples(runs: Sequence[RealRun], step: str) -> list[tuple[RealRun, StepSample]]:
    return [(r, s) for r in runs for s in r.steps if s.step == step]


def _runs_named(pairs: Iterable[tuple[RealRun, StepSample | None]]) -> str:
    names = sorted({r.spec.name for r, _ in pairs})
    return "; ".join(names) if len(names) <= 3 else f"{'; '.join(names[:3])} and {len(names) - 3} more"


def _alone(runs: Sequence[RealRun], step: str) -> list[tuple[RealRun, StepSample]]:
    """A step's samples from members rebalancing alone (their assign listed one member): the runs' members share one
    process, so a step of several members at once measures their contention as well as its own cost."""
    return [(r, s) for r, s in _samples(runs, step) if s.members == 1]


#: what a run's own settings make of the parameters (the benchmark's: the legacy members' settings, their one process)
ModelFor = Callable[[RunSpec, StormParameters], StormParameters]


def fit_rebalance_cpu(parameters: StormParameters, runs: Sequence[RealRun], model_for: ModelFor,
                      high_ms: float = 200.0, tolerance_ms: float = 0.5) -> ParameterFit | None:
    """``rebalance_cpu_ms``: the CPU a rebalance costs its member's process beyond the steps the other
    parameters price, as the value whose predicted time to stable best matches the legacy ``runs`` where several
    members rebalance (least squares of the log of predicted over real, a golden-section search over
    ``[0, high_ms]``). A lone member's steps do not show it (it runs while the member waits on ZooKeeper), members
    sharing one process pay it in turn; the other parameters stay as given. None without such a run."""
    crowded = [r for r in runs if r.spec.legacy and r.spec.members > 1 and r.figures.time_to_stable_s]

    def misfit(cost_ms: float) -> float:
        total = 0.0
        for r in crowded:
            predicted = predict(r.spec, model_for(r.spec, replace(parameters, rebalance_cpu_ms=cost_ms)))
            real = r.figures.time_to_stable_s
            assert real is not None
            # a prediction never stable counts as ten times the real time
            total += math.log((predicted.time_to_stable_s or 10 * real) / real) ** 2
        return total

    if not crowded:
        return None
    ratio = (math.sqrt(5) - 1) / 2
    low, high = 0.0, high_ms
    a, b = high - ratio * (high - low), low + ratio * (high - low)
    fa, fb = misfit(a), misfit(b)
    while high - low > tolerance_ms:
        if fa <= fb:
            high, b, fb = b, a, fa
            a = high - ratio * (high - low)
            fa = misfit(a)
        else:
            low, a, fa = a, b, fb
            b = low + ratio * (high - low)
            fb = misfit(b)
    named = _runs_named((r, None) for r in crowded)
    return ParameterFit("rebalance_cpu_ms", round((low + high) / 2, 1),
                        f"time to stable of {len(crowded)} legacy runs of several members, the other parameters as "
                        f"fitted (least squares of the log ratio): {named}")


def fit(base: StormParameters, runs: Sequence[RealRun],
        measured: dict[str, tuple[float, str]] | None = None, model_for: ModelFor | None = None) -> Calibration:
    """The parameters ``runs`` (the calibration set) give, over ``base``; ``measured``: parameters measured outside
    the runs, name -> (value, source); ``model_for``: the runs' own settings, to fit ``rebalance_cpu_ms`` last
    (:func:`fit_rebalance_cpu`; not fitted without it)."""
    fits: list[ParameterFit] = []
    values: dict[str, float] = {}

    def put(name: str, value: float, source: str) -> None:
        values[name] = value
        fits.append(ParameterFit(name, value, source))

    for name, (value, source) in (measured or {}).items():
        put(name, value, source)
    p = replace(base, **values)  # type: ignore[arg-type]
    read_ms = p.zk_read_ms + p.network_rtt_ms

    # step 5: the group's reads (members + 2, pipelined) booked apart; the rest grows with partitions
    assign = _alone(runs, "assign")
    if assign:
        ys = [s.duration_ms - read_ms - p.zk_read_ms * (s.members + 2) - p.assign_per_member_ms * s.members
              for _, s in assign]
        intercept, slope = fit_line([s.partitions for _, s in assign], ys)
        put("assign_per_partition_ms", slope, f"step 5 (assign) of {len(assign)} lone members against partitions "
            f"(intercept {intercept:.2f} ms): {_runs_named(assign)}")
    # steps 6-7: one read, then per partition assigned
    registry = _alone(runs, "registry")
    if registry:
        _, slope = fit_line([s.count for _, s in registry], [s.duration_ms - read_ms for _, s in registry])
        put("registry_per_partition_ms", slope, f"steps 6-7 (fetch offsets, build registry) of {len(registry)} "
            f"lone members against partitions assigned: {_runs_named(registry)}")
    # step 9: per partition started
    start = [(r, s) for r, s in _alone(runs, "start_fetchers") if s.count]
    if start:
        _, slope = fit_line([s.count for _, s in start], [s.duration_ms for _, s in start])
        put("fetchers_per_partition_ms", slope, f"step 9 (start fetchers) of {len(start)} lone members against "
            f"partitions started: {_runs_named(start)}")
    per_partition = values.get("fetchers_per_partition_ms", p.fetchers_per_partition_ms)
    # step 2 of a member that owned partitions: the fixed stop, beyond the per-partition part
    stop = [(r, s) for r, s in _samples(runs, "stop_fetchers") if s.count]
    if stop:
        put("stop_fetchers_ms", statistics.median(max(0.0, s.duration_ms - per_partition * s.count)
                                                  for _, s in stop),
            f"step 2 (stop fetchers) of {len(stop)} members owning partitions, median less "
            f"{per_partition:.4f} ms a partition: {_runs_named(stop)}")
    # step 8, a lone member's claims: a write's fixed cost per batch (as measured before), the rest per owner znode
    claims = [(r, s) for r, s in _alone(runs, "claim") if s.count and s.batches]
    if claims:
        # through the origin: the claims' sizes are few and far apart (1,000 and 10,000), and a fixed cost fitted
        # from two sizes would be charged to every small write as well
        xs = [float(s.count) for _, s in claims]
        ys = [max(0.0, s.duration_ms - p.network_rtt_ms - s.batches * p.zk_write_ms) for _, s in claims]
        put("zk_multi_op_ms", sum(x * y for x, y in zip(xs, ys, strict=True)) / sum(x * x for x in xs),
            f"step 8 (claim) of {len(claims)} lone members against owner znodes, less {p.zk_write_ms:g} ms a batch, "
            f"through the origin: {_runs_named(claims)}")
    if model_for is not None:
        crowd = fit_rebalance_cpu(replace(base, **values), runs, model_for)  # type: ignore[arg-type]
        if crowd is not None:
            put(crowd.name, crowd.value, crowd.source)
    return Calibration(replace(base, **values), tuple(fits))  # type: ignore[arg-type]


# --- agreement ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Agreement:
    figure: str
    real: float | None
    predicted: float | None
    within: bool
    ratio: float | None  # predicted / real; None where either is missing or real is 0


@dataclass(frozen=True, slots=True)
class RunAgreement:
    run: RealRun
    predicted: Figures
    figures: tuple[Agreement, ...] = field(default=())
    #: with repeats: whether every figure lies within the real runs' lowest and highest, widened by the tolerance
    in_spread: bool | None = None

    @property
    def within(self) -> bool:
        return all(a.within for a in self.figures)


def agree(real: float | None, predicted: float | None, tolerance: float = TOLERANCE, slack: float = 0.0) -> bool:
    """Whether ``predicted`` is within ``tolerance`` of ``real`` (relative), or within ``slack`` of it (absolute: a
    count of 0 against 1 is no 100% error worth the name). Both missing (not stable) agree."""
    if real is None or predicted is None:
        return real is None and predicted is None
    return abs(predicted - real) <= max(tolerance * abs(real), slack)


#: absolute slack per figure: one conflict, a tenth of a second, a partition-second per partition is not a miss
SLACK = {"time_to_stable_s": 0.1, "conflicts": 1.0}


def compare(run: RealRun, predicted: Figures, tolerance: float = TOLERANCE,
            spread_: dict[str, tuple[float, float]] | None = None) -> RunAgreement:
    """``run``'s figures (with repeats, their medians) against ``predicted``; ``spread_``: the repeats' lowest and
    highest of each figure, for :attr:`RunAgreement.in_spread`."""
    rows = []
    inside = True
    for name in COMPARED:
        real, pred = getattr(run.figures, name), getattr(predicted, name)
        slack = SLACK.get(name, run.spec.partitions * 0.1 if name == "partition_seconds_paused" else 0.0)
        ratio = pred / real if real and pred is not None else None
        rows.append(Agreement(name, real, pred, agree(real, pred, tolerance, slack), ratio))
        if spread_ is not None and name in spread_:
            low, high = spread_[name]
            inside = inside and pred is not None and (
                low * (1 - tolerance) - slack <= pred <= high * (1 + tolerance) + slack)
    return RunAgreement(run, predicted, tuple(rows), inside if spread_ is not None else None)


# --- a calibration's record ----------------------------------------------------------------------------------------

#: the steps :func:`fit` takes samples of (the others' are not kept in a record)
FITTED_STEPS = ("assign", "registry", "start_fetchers", "stop_fetchers", "claim")


@dataclass(frozen=True, slots=True)
class CalibrationRecord:
    """A calibration's real runs as committed: what the documentation's agreement and parameter tables are made from,
    by the model as it is (:func:`replay`)."""

    started: str  # when the runs began, UTC
    command: str
    machine: str
    provenance: str  # where the figures come from, and what the record lacks
    #: parameters measured outside the runs (their value and how), given to the fit
    measured: tuple[ParameterFit, ...]
    #: parameters fitted when the runs were played, from records not kept: given to the fit as they were
    recorded: tuple[ParameterFit, ...]
    #: each run once (the median of its repeats), with the step samples the fit takes
    runs: tuple[RealRun, ...]
    #: run name -> figure -> its repeats' lowest and highest, where recorded
    spreads: Mapping[str, Mapping[str, tuple[float, float]]] = field(default_factory=dict)
    #: run name -> why it is not compared
    left_out: Mapping[str, str] = field(default_factory=dict)


def record_of(runs: Sequence[RealRun], measured: Sequence[ParameterFit], started: str, command: str, machine: str,
              provenance: str) -> CalibrationRecord:
    """The record of played runs: repeats of a run as one (each figure's median, their spread), only the step samples
    the fit takes."""
    groups: dict[RunSpec, list[RealRun]] = {}
    for r in runs:
        groups.setdefault(replace(r.spec, lead_s=0.0, start_interval_ms=None), []).append(r)
    kept = []
    for group in groups.values():
        one = median_run(group)
        kept.append(replace(one, steps=tuple(s for s in one.steps if s.step in FITTED_STEPS
                                             and (s.members == 1 or (s.step == "stop_fetchers" and s.count)))))
    spreads = {g[0].spec.name: spread(g) for g in groups.values() if len(g) > 1}
    return CalibrationRecord(started, command, machine, provenance, tuple(measured), (), tuple(kept), spreads)


def record_json(record: CalibrationRecord) -> str:
    return json.dumps(asdict(record), indent=1, ensure_ascii=False) + "\n"


def load_record(text: str) -> CalibrationRecord:
    """A record from its JSON (:func:`record_json`); a missing or malformed field raises ValueError naming it."""
    try:
        doc = json.loads(text)

        def run(d: dict[str, Any]) -> RealRun:
            return RealRun(RunSpec(**d["spec"]), Figures(**d["figures"]), tuple(StepSample(**s) for s in d["steps"]),
                           d.get("cpu_s", 0.0), d.get("front_cpu_s", 0.0), tuple(d.get("load", (0.0, 0.0, 0.0))),
                           d.get("wall_s", 0.0))

        return CalibrationRecord(
            doc["started"], doc["command"], doc["machine"], doc["provenance"],
            tuple(ParameterFit(**f) for f in doc["measured"]), tuple(ParameterFit(**f) for f in doc["recorded"]),
            tuple(run(d) for d in doc["runs"]),
            {name: {k: (v[0], v[1]) for k, v in figures.items()} for name, figures in doc.get("spreads", {}).items()},
            dict(doc.get("left_out", {})))
    except (KeyError, TypeError, json.JSONDecodeError) as error:
        raise ValueError(f"not a calibration record: {type(error).__name__} {error}") from None


@dataclass(frozen=True, slots=True)
class Replay:
    calibration: Calibration
    rows: tuple[RunAgreement, ...]


def calibrate(record: CalibrationRecord, base: StormParameters | None = None) -> Calibration:
    """The record's calibration by the model as it is: what was measured, and what was fitted from records not kept,
    as given; the step costs from the record's samples; ``rebalance_cpu_ms`` last, by simulating its crowded legacy
    calibration runs."""
    given = {f.name: (f.value, f.source) for f in (*record.measured, *record.recorded)}
    calibration_runs = [r for r in record.runs if r.spec.role == CALIBRATION]
    return fit(base or StormParameters(), calibration_runs, given, run_settings)


def predicted(runs: Iterable[RealRun], parameters: StormParameters,
              spreads: Mapping[str, Mapping[str, tuple[float, float]]] | None = None) -> tuple[RunAgreement, ...]:
    """Each run predicted with ``parameters`` as the run had them (:func:`run_settings`) and compared."""
    spreads = spreads or {}
    return tuple(compare(r, predict(r.spec, run_settings(r.spec, parameters)),
                         spread_=dict(spreads[r.spec.name]) if r.spec.name in spreads else None) for r in runs)


def replay(record: CalibrationRecord, base: StormParameters | None = None) -> Replay:
    """The record calibrated (:func:`calibrate`), then every run not left out predicted and compared."""
    fitted = calibrate(record, base)
    return Replay(fitted, predicted((r for r in record.runs if r.spec.name not in record.left_out),
                                    fitted.parameters, record.spreads))


@dataclass(frozen=True, slots=True)
class Validation:
    """Fresh runs, taken after the model was frozen, predicted by it with the calibration it was frozen with: nothing
    of theirs but what each run was (its members, partitions, shape, how far apart its members started) reaches the
    model."""

    calibration: Calibration
    fresh: tuple[CalibrationRecord, ...]
    rows: tuple[tuple[RunAgreement, ...], ...]  # per fresh record, its every run compared


#: what a run measures of its machine before its runs (ZooKeeper's service, the client's work, the round trip)
MACHINE = ("zk_read_ms", "zk_client_ms", "network_rtt_ms", "zk_write_ms")


def validate(calibration: CalibrationRecord, fresh: Sequence[CalibrationRecord],
             base: StormParameters | None = None, own_machine: bool = False) -> Validation:
    """``fresh`` records' runs predicted with ``calibration``'s fit (their measurements and fits unused);
    ``own_machine``: each given its own record's measurements of the machine (:data:`MACHINE`), the rest as fitted,
    to tell the calibration's machine from the model."""
    fitted = calibrate(calibration, base)

    def parameters(record: CalibrationRecord) -> StormParameters:
        if not own_machine:
            return fitted.parameters
        return replace(fitted.parameters, **{f.name: f.value for f in record.measured if f.name in MACHINE})  # type: ignore[arg-type]

    return Validation(fitted, tuple(fresh), tuple(predicted(r.runs, parameters(r)) for r in fresh))
