"""The page of ``zkconsumer simulate connect --html``: what each rebalance cost against the tasks already running,
both protocols on one chart, so that eager's line climbing with the load and cooperative's staying flat is the
first thing one sees; then the phases side by side, where the delay for lost work shows its price.

Pure: a :class:`~zkconsumer.connect.simulation.SimulationResult` in, one self-contained HTML page out
(:mod:`zkconsumer.pages`: a template and inline SVG charts, nothing fetched).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zkconsumer.connect.simulation import PHASES, SimulationResult
from zkconsumer.pages import charts, render_page

PHASE_TITLES = {
    "start": "connectors started one at a time",
    "stop": "connectors stopped one at a time",
    "bounce": "a worker leaves and returns within the delay",
    "lose": "a worker is lost for good",
}


@dataclass(frozen=True, slots=True)
class PhaseRow:
    phase: str
    title: str
    protocol: str
    changes: int
    rounds: int
    tasks_stopped: int
    tasks_started: int
    task_seconds_stopped: float
    time_to_stable: str


def simulation_page(result: SimulationResult, title: str = "Kafka Connect: eager vs incremental cooperative") -> str:
    figures: list[Any] = []
    for phase, verb, done in (("start", "starting", "started"), ("stop", "stopping", "stopped")):
        first = result.protocols[0].records(phase)
        x = [r.tasks_running for r in first]
        figures.append(charts.line_chart(
            x, {p.protocol: [r.time_to_stable_s for r in p.records(phase)] for p in result.protocols},
            title=f"Time until stable after {verb} one connector", xlabel="tasks running before the rebalance",
            ylabel="seconds", markers=len(x) <= 40, chart_id=f"cost-{phase}"))
        figures.append(charts.line_chart(
            x, {p.protocol: [r.task_seconds_stopped for r in p.records(phase)] for p in result.protocols},
            title=f"Task-seconds not running, per connector {done}",
            xlabel="tasks running before the rebalance", ylabel="task-seconds", markers=len(x) <= 40,
            chart_id=f"downtime-{phase}"))
    figures.append(charts.bar_chart(
        list(PHASES), {p.protocol: [p.phase(ph).time_to_stable_s / 60 for ph in PHASES] for p in result.protocols},
        title="Time until stable, per phase", ylabel="minutes", chart_id="phases-time"))
    figures.append(charts.bar_chart(
        list(PHASES),
        {p.protocol: [p.phase(ph).task_seconds_stopped / 3600 for ph in PHASES] for p in result.protocols},
        title="Task-hours not running, per phase", ylabel="task-hours", chart_id="phases-downtime"))
    rows = [
        PhaseRow(phase, PHASE_TITLES[phase], p.protocol, r.changes, r.rounds, r.tasks_stopped, r.tasks_started,
                 r.task_seconds_stopped, format_duration(r.time_to_stable_s))
        for phase in PHASES for p in result.protocols for r in (p.phase(phase),)
    ]
    return render_page("connect.html.j2", title=title, meta=describe(result), rows=rows, figures=figures)


def describe(result: SimulationResult) -> str:
    p = result.parameters
    return (f"{p.workers} workers, {p.connectors} connectors x {p.tasks_per_connector} tasks; a task starts in "
            f"{p.task_start_ms:g} ms and stops in {p.task_stop_ms:g} ms ({p.worker_threads} at a time per worker), "
            f"a rebalance round takes {p.rebalance_ms:g} ms, scheduled.rebalance.max.delay.ms={p.delay_ms:g}, "
            f"the bouncing worker is away {p.bounce_ms / 1000:g} s")


def format_duration(seconds: float) -> str:
    """``49.5 s`` under two minutes, ``13 min 45 s`` above: the published figures are in minutes."""
    if seconds < 120:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"
