"""A sweep of storm simulations: a grid of members x partitions x protocol x scenario x settings, each point one
simulation (:func:`run_point`), its figures one row (:class:`SweepRow`); the page of curves the rows make is
:func:`zkconsumer.storm.rendering.sweep_page`. Pure, and nothing here knows Spark: ``zkconsumer.fleet.sweep_job``
runs the points as tasks, and a test can run a point or draw the page from hand-made rows.

A point is plain data that travels to an executor as JSON: the scenario is ``storm`` (its members start at once, so
the members dimension applies) or a scenario's TOML text, parsed where it runs (its own cast plays it, so one
point per partitions x protocol x settings); the settings are :class:`StormParameters` fields and values.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from itertools import product
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.scenarios.parse import parse
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.simulation import DEFAULT_SETTLE_LIMIT_S, check, play, storm_scenario, with_partitions

STORM = "storm"
DEFAULT_MEMBERS = (10, 30, 100, 300, 1_000)
DEFAULT_PARTITIONS = (1_000, 10_000, 100_000)
#: a setting's value as the rows name it when the point changes none
DEFAULTS = "defaults"


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One simulation of the grid. ``scenario_text``: the scenario file's TOML (``None`` for the storm)."""

    scenario: str
    protocol: str
    members: int
    partitions: int
    settings: tuple[tuple[str, float], ...] = ()
    scenario_text: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> SweepPoint:
        data = json.loads(text)
        return cls(data["scenario"], data["protocol"], data["members"], data["partitions"],
                   tuple((name, value) for name, value in data["settings"]), data["scenario_text"])

    @property
    def settings_label(self) -> str:
        return ", ".join(f"{name}={value:g}" for name, value in self.settings) or DEFAULTS

    def cost(self) -> float:
        """A rough order of the point's runtime, so the longest start first: KIP-848 computes a target over every
        partition at every join."""
        return self.members * self.partitions * (10.0 if self.protocol.startswith("kip848") else 1.0)


@dataclass(frozen=True, slots=True)
class SweepRow:
    """One point's figures: the scenario's scenes summed (time to stable: ``None`` when a scene was not stable
    within the limit, and what kept it from settling), the events simulated and the simulation's own CPU
    seconds."""

    scenario: str
    protocol: str
    members: int
    partitions: int
    settings: str
    time_to_stable_s: float | None
    partition_seconds_paused: float
    zookeeper_requests: int
    zookeeper_operations: int
    conflicts: int
    rebalances: int
    retries_exhausted: int
    session_expiries: int
    request_timeouts: int
    connection_drops: int
    events_simulated: int
    cpu_s: float
    #: what kept a scene from settling within the limit (the first such scene's), else ``None``
    unsettled: str | None = None


def grid(members: Sequence[int], partitions: Sequence[int], protocols: Sequence[str],
         scenarios: Sequence[tuple[str, str | None]] = ((STORM, None),),
         settings: Mapping[str, Sequence[float]] | None = None) -> list[SweepPoint]:
    """Every point of the grid, the costliest first. ``scenarios``: (name, TOML text or ``None`` for the storm);
    ``settings``: values of :class:`StormParameters` fields to cross. Checked before anything runs."""
    if any(m < 1 for m in members) or any(p < 1 for p in partitions) or not members or not partitions:
        raise UsageError("a sweep needs members and partitions of at least 1 each")
    check(storm_scenario(1, 1), tuple(protocols))
    combos = _setting_combinations(settings or {})
    points = []
    for (name, text), protocol, count, settings_ in product(scenarios, protocols, partitions, combos):
        if text is None:
            points += [SweepPoint(name, protocol, m, count, settings_) for m in members]
        else:
            scenario = parse(text, name, name)
            check(scenario, (protocol,))
            points.append(SweepPoint(name, protocol, len(scenario.members), count, settings_, text))
    return sorted(points, key=lambda p: -p.cost())


def _setting_combinations(settings: Mapping[str, Sequence[float]]) -> list[tuple[tuple[str, float], ...]]:
    known = {f.name: f for f in fields(StormParameters)}
    for name, values in settings.items():
        if name not in known:
            raise UsageError(f"unknown setting {name!r} (known: {', '.join(known)})")
        if not values:
            raise UsageError(f"setting {name} has no value")
    combos = [tuple(zip(settings, values, strict=True)) for values in product(*settings.values())]
    for combo in combos:
        parameters(combo)  # a bad value is refused here, not on an executor
    return combos


def parameters(settings: Sequence[tuple[str, float]]) -> StormParameters:
    kinds = {f.name: f.type for f in fields(StormParameters)}
    values: dict[str, Any] = {name: int(value) if kinds[name] == "int" else bool(value) if kinds[name] == "bool"
                              else float(value) for name, value in settings}
    try:
        return replace(StormParameters(), **values)
    except ValueError as error:
        raise UsageError(f"settings {dict(settings)}: {error}") from None


def run_point(point: SweepPoint, settle_limit_s: float = DEFAULT_SETTLE_LIMIT_S) -> SweepRow:
    """The simulation of one point, timed by this process's CPU clock."""
    if point.scenario_text is None:
        scenario = storm_scenario(point.members, point.partitions)
    else:
        scenario = with_partitions(parse(point.scenario_text, point.scenario, point.scenario), point.partitions)
    started = time.process_time()
    figures = play(scenario, point.protocol, parameters(point.settings), settle_limit_s)
    cpu = time.process_time() - started
    counts = {name: int(figures.total(name)) for name in ("zookeeper_requests", "zookeeper_operations", "conflicts",
                                                          "rebalances", "retries_exhausted", "session_expiries",
                                                          "request_timeouts", "connection_drops")}
    unsettled = next((f"{s.scene}: {s.unsettled}" for s in figures.scenes if s.unsettled), None)
    return SweepRow(point.scenario, point.protocol, point.members, point.partitions, point.settings_label,
                    figures.time_to_stable_s, figures.total("partition_seconds_paused"), **counts,
                    events_simulated=figures.events_run, cpu_s=round(cpu, 3), unsettled=unsettled)


def row_order(row: SweepRow) -> tuple[Any, ...]:
    return (row.scenario, row.settings, row.partitions, row.protocol, row.members)
