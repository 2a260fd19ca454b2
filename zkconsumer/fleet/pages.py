"""The summary pages of ``analyze fleet`` and ``analyze events``: from the small aggregates the Spark jobs collect
(totals, a few dozen rows) to one self-contained HTML page each, charts inline (:mod:`zkconsumer.pages`).

Pure: the summaries are frozen dataclasses the jobs fill, and the page is a template rendered from them; nothing
here knows Spark, so a page can be made and tested from hand-made figures.
"""

from __future__ import annotations

import bisect
import contextlib
from dataclasses import dataclass
from typing import Any

from zkconsumer.fleet.analysis import GroupRow
from zkconsumer.fleet.events import RebalanceRow
from zkconsumer.pages import charts, render_page

#: bucket labels of the members-per-group histogram, with their upper bounds
SIZE_BUCKETS: tuple[tuple[str, int], ...] = (("1", 1), ("2", 2), ("3-4", 4), ("5-8", 8), ("9-16", 16),
                                             ("17-32", 32), ("33+", 2**31))
#: bucket labels of the step-duration histogram (milliseconds), with their upper bounds
DURATION_BUCKETS: tuple[tuple[str, float], ...] = (("<1 ms", 1.0), ("1-10 ms", 10.0), ("10-100 ms", 100.0),
                                                   ("0.1-1 s", 1000.0), ("1-10 s", 10_000.0), (">10 s", float("inf")))
_DURATION_BOUNDS = [bound for _, bound in DURATION_BUCKETS]


@dataclass(frozen=True, slots=True)
class FleetTotals:
    groups: int
    members: int
    threads: int
    partitions: int
    unowned: int
    dead_owners: int
    owned_twice: int
    misassigned: int
    malformed: int
    inconsistent: int
    needing_attention: int
    broken_lines: int


@dataclass(frozen=True, slots=True)
class StrategyTotals:
    strategy: str
    groups: int  # groups it could assign
    errors: int  # groups it could not (legacy round-robin with differing subscriptions)
    mean_spread: float
    uneven_groups: int  # spread above 1
    groups_with_idle: int
    idle_members: int
    moved_partitions: int
    revoked_first: int | None


@dataclass(frozen=True, slots=True)
class FleetSummary:
    inputs: tuple[str, ...]
    totals: FleetTotals
    storage: tuple[tuple[str, int], ...]  # offsets_storage -> groups
    sizes: tuple[tuple[str, int], ...]  # SIZE_BUCKETS label -> groups
    strategies: tuple[StrategyTotals, ...]
    attention: tuple[GroupRow, ...]  # the groups to look at first, most urgent first


@dataclass(frozen=True, slots=True)
class StepTotals:
    step: str
    step_number: int
    count: int
    p50_ms: float
    p95_ms: float
    max_ms: float


@dataclass(frozen=True, slots=True)
class EventsTotals:
    members: int
    rebalances: int
    completed: int
    attempts: int
    failed_attempts: int
    conflicts: int
    stop_the_world_ms: float
    events: int
    broken_lines: int
    ignored_events: int  # events of no member


@dataclass(frozen=True, slots=True)
class EventsSummary:
    inputs: tuple[str, ...]
    totals: EventsTotals
    steps: tuple[StepTotals, ...]  # in step order
    durations: tuple[tuple[str, int], ...]  # DURATION_BUCKETS label -> steps
    stop_the_world: tuple[tuple[float, float, float], ...]  # (seconds since the first rebalance, max, mean) per bucket
    conflicts: tuple[tuple[str, int], ...]  # consumer id -> conflicts, most first
    longest: tuple[RebalanceRow, ...]  # the rebalances with the longest stop-the-world
    skipped_files: tuple[str, ...] = ()  # files found under a directory given that hold no events


def fleet_page(summary: FleetSummary, title: str = "Fleet analysis") -> str:
    figures: list[Any] = []
    names = [s.strategy for s in summary.strategies]
    if names:
        figures.append(charts.bar_chart(names, {"partitions moved": [s.moved_partitions for s in summary.strategies]},
                                        title="Partitions that would change hands", ylabel="partitions",
                                        chart_id="moved", integer=True))
        figures.append(charts.bar_chart(names, {
            "groups with idle members": [s.groups_with_idle for s in summary.strategies],
            "groups with spread > 1": [s.uneven_groups for s in summary.strategies],
        }, title="Groups left uneven", ylabel="groups", chart_id="uneven", integer=True))
    figures.append(charts.bar_chart([label for label, _ in summary.sizes],
                                    {"groups": [count for _, count in summary.sizes]},
                                    title="Members per group", xlabel="members", ylabel="groups", chart_id="sizes",
                                    integer=True))
    figures.append(charts.bar_chart([name for name, _ in summary.storage] or ["none"],
                                    {"groups": [count for _, count in summary.storage] or [0]},
                                    title="Where the offsets live", ylabel="groups", chart_id="storage", integer=True))
    return render_page("fleet.html.j2", title=title, summary=summary, figures=figures,
                       meta=f"{summary.totals.groups} groups from {', '.join(summary.inputs)}")


def events_page(summary: EventsSummary, title: str = "Rebalance analysis") -> str:
    figures: list[Any] = []
    if summary.steps:
        figures.append(charts.bar_chart([s.step for s in summary.steps], {
            "median": [s.p50_ms for s in summary.steps], "95th percentile": [s.p95_ms for s in summary.steps],
        }, title="Step durations", ylabel="ms", size=(max(7.0, 1.2 * len(summary.steps)), 3.4), chart_id="steps"))
        figures.append(charts.bar_chart([label for label, _ in summary.durations],
                                        {"steps": [count for _, count in summary.durations]},
                                        title="How long steps take", ylabel="steps", chart_id="durations",
                                        integer=True))
    if summary.stop_the_world:
        xs = [x for x, _, _ in summary.stop_the_world]
        figures.append(charts.line_chart(xs, {"longest": [m for _, m, _ in summary.stop_the_world],
                                              "mean": [a for _, _, a in summary.stop_the_world]},
                                         title="Stop-the-world per rebalance over time",
                                         xlabel="seconds since the first rebalance", ylabel="ms",
                                         markers=len(xs) <= 60, chart_id="stw"))
    if summary.conflicts:
        figures.append(charts.bar_chart([c for c, _ in summary.conflicts], {"conflicts": [n for _, n in
                                                                                          summary.conflicts]},
                                        title="Ownership conflicts per member", ylabel="conflicts",
                                        size=(max(7.0, 0.35 * len(summary.conflicts)), 3.6), chart_id="conflicts",
                                        integer=True))
    return render_page("events.html.j2", title=title, summary=summary, figures=figures,
                       meta=f"{summary.totals.events} events from {', '.join(summary.inputs)}")


def warm_up_charts() -> None:
    """Draw a throwaway chart: matplotlib's import and first drawing (its fonts) done ahead, in a thread of a job's
    driver that would otherwise wait for its executors, rather than after them before the page. Quiet: whatever
    fails here (matplotlib not installed) fails again, and is reported, when the page is drawn."""
    with contextlib.suppress(Exception):  # reported by the page's own drawing
        charts.bar_chart(["a"], {"b": [1]}, title="warm-up", ylabel="b")


def size_bucket(members: int) -> str:
    return next(label for label, bound in SIZE_BUCKETS if members <= bound)


def duration_bucket(ms: float) -> str:
    return DURATION_BUCKETS[duration_bucket_index(ms)][0]


def duration_bucket_index(ms: float) -> int:
    """The first bucket whose bound is above ``ms``; the last for what is above none (NaN)."""
    return min(bisect.bisect_right(_DURATION_BOUNDS, ms), len(_DURATION_BOUNDS) - 1)
