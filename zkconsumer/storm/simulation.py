"""A scenario played by every protocol on the simulated clock, and the figures each gives: per scene, time until
the group is stable, partition-seconds paused, ZooKeeper requests and operations, ownership conflicts, member
rebalances, retries exhausted, session expiries, requests timed out and connections dropped; and, for a scene not
stable within the limit, what kept it from settling.

The scenario is :mod:`zkconsumer.scenarios`' (a shipped one, or a file), or the storm itself: N members starting at
once on P partitions, as after a deploy. A scene's actions happen at its start (``settle`` waits until the group is
stable, ``wait`` lets time pass); a scene that changes the membership then runs until the group is stable, at most
``settle_limit_s``. ``pause`` has no model yet, nor ``upgrade`` (a group changing protocol member by member): both are
refused before anything runs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from zkconsumer.errors import UsageError
from zkconsumer.scenarios import model as sc
from zkconsumer.storm.classic_group import ClassicGroup
from zkconsumer.storm.consumer_group import ConsumerGroup
from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.group_measures import GroupMeasures
from zkconsumer.storm.legacy_group import LegacyGroup
from zkconsumer.storm.parameters import StormParameters


class SimulatedGroup(Protocol):
    measures: GroupMeasures

    def start(self, name: str) -> None: ...
    def stop(self, name: str) -> None: ...
    def kill(self, name: str) -> None: ...
    def expire(self, name: str) -> None: ...
    def grow(self, partitions: int) -> None: ...
    def settled(self) -> bool: ...
    def unsettled(self) -> str: ...


GroupFactory = Callable[[EventLoop, StormParameters, int], SimulatedGroup]

#: every protocol by name: how its group is built
PROTOCOLS: dict[str, GroupFactory] = {
    "legacy-range": lambda loop, p, n: LegacyGroup(loop, p, n, "legacy-range"),
    "legacy-roundrobin": lambda loop, p, n: LegacyGroup(loop, p, n, "legacy-roundrobin"),
    "eager-range": lambda loop, p, n: ClassicGroup(loop, p, n, "range"),
    "cooperative-sticky": lambda loop, p, n: ClassicGroup(loop, p, n, "cooperative-sticky"),
    "kip848-uniform": lambda loop, p, n: ConsumerGroup(loop, p, n, "uniform"),
    "kip848-range": lambda loop, p, n: ConsumerGroup(loop, p, n, "range"),
}
DEFAULT_PROTOCOLS = ("legacy-range", "eager-range", "cooperative-sticky", "kip848-uniform")
DEFAULT_SETTLE_LIMIT_S = 3_600.0


@dataclass(frozen=True, slots=True)
class SceneFigures:
    scene: str
    time_to_stable_s: float | None  # None: not stable within the limit
    partition_seconds_paused: float
    zookeeper_requests: int
    zookeeper_operations: int
    conflicts: int
    rebalances: int
    retries_exhausted: int
    session_expiries: int
    request_timeouts: int
    connection_drops: int
    #: not stable within the limit: what kept the group from settling, as it stood at the limit
    unsettled: str | None = None


@dataclass(frozen=True, slots=True)
class ProtocolFigures:
    protocol: str
    scenes: tuple[SceneFigures, ...]
    events_run: int

    def total(self, name: str) -> float:
        return sum(getattr(s, name) or 0 for s in self.scenes)

    @property
    def time_to_stable_s(self) -> float | None:
        times = [s.time_to_stable_s for s in self.scenes]
        return None if None in times else sum(t for t in times if t is not None)


@dataclass(frozen=True, slots=True)
class StormResult:
    scenario: sc.Scenario
    parameters: StormParameters
    protocols: tuple[ProtocolFigures, ...]


def storm_scenario(members: int, partitions: int) -> sc.Scenario:
    """The storm: ``members`` members start at once on a topic of ``partitions`` partitions."""
    if members < 1 or partitions < 1:
        raise UsageError(f"a storm needs at least one member and one partition, got {members} and {partitions}")
    width = len(str(members))
    cast = tuple(sc.Member(f"m{i:0{width}}") for i in range(1, members + 1))
    scene = sc.Scene(1, f"{members} members start", f"{members} members start at once on {partitions} partitions",
                     tuple(sc.Action(sc.START, m.name) for m in cast))
    return sc.Scenario("storm", f"{members} members start at once", "the storm after a deploy",
                       sc.Topic("storm", partitions), sc.Production(), cast, (scene,))


def with_partitions(scenario: sc.Scenario, partitions: int) -> sc.Scenario:
    if partitions < 1:
        raise UsageError(f"--partitions must be at least 1, got {partitions}")
    return replace(scenario, topic=replace(scenario.topic, partitions=partitions))


#: the actions the model cannot play, each with what it would have to simulate
_NOT_SIMULATED: tuple[tuple[tuple[str, ...], str], ...] = (
    ((sc.PAUSE,), "pauses a member, which the storm model does not simulate yet"),
    ((sc.UPGRADE,), "upgrades a member to KIP-848 in place, which the storm model does not simulate (each "
                    "protocol's group is modelled on its own protocol throughout)"),
    ((sc.RESTART,), "restarts a server, which the storm model does not simulate"),
    ((sc.BOUNCE,), "bounces a member, which the storm model does not simulate yet (stop it, then start it)"),
    ((sc.DUAL_COMMIT, sc.CUTOVER), "plays the move from ZooKeeper, which the storm model does not simulate (each "
                                   "protocol's group is modelled on its own protocol throughout)"),
)


def check(scenario: sc.Scenario, protocols: tuple[str, ...]) -> None:
    """Refuse, before anything runs, an unknown protocol or an action the model cannot play."""
    unknown = [p for p in protocols if p not in PROTOCOLS]
    if unknown or not protocols:
        raise UsageError(f"unknown protocol {', '.join(unknown) or '(none given)'} (known: {', '.join(PROTOCOLS)})")
    name = scenario.source or scenario.name
    for actions, what in _NOT_SIMULATED:
        where = next((w for w in map(scenario.uses, actions) if w), None)
        if where:
            raise UsageError(f"{name}: {where} {what}")
    static = next((m.name for m in scenario.members if m.static), None)
    if static:
        raise UsageError(f"{name}: members.{static}.static: static members are not modelled by the storm simulation "
                         "yet")


def simulate(scenario: sc.Scenario, protocols: tuple[str, ...] = DEFAULT_PROTOCOLS,
             parameters: StormParameters | None = None,
             settle_limit_s: float = DEFAULT_SETTLE_LIMIT_S) -> StormResult:
    check(scenario, protocols)
    parameters = parameters or StormParameters()
    return StormResult(scenario, parameters, tuple(
        play(scenario, name, parameters, settle_limit_s) for name in protocols))


def play(scenario: sc.Scenario, protocol: str, parameters: StormParameters,
         settle_limit_s: float = DEFAULT_SETTLE_LIMIT_S) -> ProtocolFigures:
    """Every scene of ``scenario`` by one protocol's group, on a fresh clock."""
    loop = EventLoop()
    group = PROTOCOLS[protocol](loop, parameters, scenario.topic.partitions)
    zookeeper: Counted | None = getattr(group, "zk", None)
    m = group.measures
    limit_ms = settle_limit_s * 1000
    starting = [0]  # members of the scene not started yet

    def counters() -> tuple[int, ...]:
        return (zookeeper.requests if zookeeper else 0, zookeeper.operations if zookeeper else 0, m.conflicts,
                m.rebalances, m.retries_exhausted, m.session_expiries, m.request_timeouts, m.connection_drops)

    def done() -> bool:
        return not starting[0] and group.settled()

    scenes = []
    for scene in scenario.scenes:
        # 1. the counters as the scene starts
        start_ms = loop.now_ms
        m.reset_paused()
        before = counters()
        # 2. its actions, members starting together one after another
        starts = 0
        for action in scene.actions:
            if action.kind == sc.START and starts:
                starting[0] += 1
                loop.after(starts * parameters.start_interval_ms, functools.partial(_start_later, group, action.member,
                                                                                     starting))
            else:
                _act(group, loop, action, start_ms + limit_ms, done)
            starts += action.kind == sc.START
        # 3. until every member started and the group is stable, when the scene changed it
        stable = loop.run_until(done, start_ms + limit_ms) if scene.changes_membership else True
        requests, operations, conflicts, rebalances, exhausted, expiries, timeouts, drops = (
            a - b for a, b in zip(counters(), before, strict=True))
        scenes.append(SceneFigures(scene.label, (loop.now_ms - start_ms) / 1000 if stable else None,
                                   m.paused_partition_seconds(), requests, operations, conflicts, rebalances, exhausted,
                                   expiries, timeouts, drops, None if stable else group.unsettled()))
    return ProtocolFigures(protocol, tuple(scenes), loop.events_run)


class Counted(Protocol):
    requests: int
    operations: int


def _start_later(group: SimulatedGroup, member: str, starting: list[int]) -> None:
    starting[0] -= 1
    group.start(member)


def _act(group: SimulatedGroup, loop: EventLoop, action: sc.Action, deadline_ms: float,
         done: Callable[[], bool]) -> None:
    if action.kind == sc.START:
        group.start(action.member)
    elif action.kind == sc.STOP:
        group.stop(action.member)
    elif action.kind == sc.KILL:
        group.kill(action.member)
    elif action.kind == sc.EXPIRE:
        group.expire(action.member)
    elif action.kind == sc.GROW:
        group.grow(action.partitions)
    elif action.kind == sc.SETTLE:
        loop.run_until(done, deadline_ms)
    elif action.kind == sc.WAIT:
        loop.run_for(action.seconds * 1000)
