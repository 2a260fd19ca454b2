"""How the storm's results are shown, apart from the model that computes them: the calibration's Markdown tables
(the fitted parameters, and each run's agreement with its prediction: ``benchmarks/storm_calibration.py`` writes them
in its report) and the sweep's page of curves (:func:`sweep_page`, written by ``zkconsumer.fleet.sweep_job``).

The figures come in as the model's values (:mod:`.calibration`'s, :mod:`.sweep`'s rows); nothing here computes one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from zkconsumer.storm.calibration import Calibration, RunAgreement
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.sweep import SweepRow, row_order

# --- the calibration's tables --------------------------------------------------------------------------------------

#: each compared figure's short name, in a verdict that says which missed
NAMES = {"time_to_stable_s": "time", "partition_seconds_paused": "paused", "zookeeper_requests": "requests",
         "conflicts": "conflicts"}


def _number(value: float | None, name: str) -> str:
    if value is None:
        return "-"
    if name in ("zookeeper_requests", "conflicts"):
        return f"{value:,.0f}"
    return f"{value:,.2f}" if value < 100 else f"{value:,.0f}"


def agreement_markdown(rows: Sequence[RunAgreement]) -> str:
    """The agreement table: per run, real / predicted for each figure, and whether all four are within."""
    heads = ("time to stable s", "partition-s paused", "ZK requests", "conflicts")
    spread_ = any(row.in_spread is not None for row in rows)
    lines = ["| run | set | " + " | ".join(f"{h}: real / predicted" for h in heads) + " | within 20%? |"
             + (" within the repeats' spread ±20%? |" if spread_ else ""),
             "|---|---|" + "---|" * len(heads) + "---|" + ("---|" if spread_ else "")]
    for row in rows:
        cells = []
        for a in row.figures:
            mark = "" if a.within else " ✗"
            cells.append(f"{_number(a.real, a.figure)} / {_number(a.predicted, a.figure)}{mark}")
        missed = [a.figure for a in row.figures if not a.within]
        verdict = "yes" if not missed else "no: " + ", ".join(NAMES[f] for f in missed)
        inside = "" if not spread_ else " - |" if row.in_spread is None else " yes |" if row.in_spread else " no |"
        lines.append(f"| {row.run.spec.name} | {row.run.spec.role} | " + " | ".join(cells) + f" | {verdict} |"
                     + inside)
    return "\n".join(lines)


def calibration_markdown(calibration: Calibration, base: StormParameters) -> str:
    lines = ["| parameter | fitted | default | source |", "|---|---|---|---|"]
    for f in calibration.fits:
        lines.append(f"| `{f.name}` | {f.value:.4g} | {getattr(base, f.name):.4g} | {f.source} |")
    return "\n".join(lines)


# --- the sweep's page -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Panel:
    """The curves of one scenario and settings at one partition count."""

    scenario: str
    settings: str
    partitions: int
    rows: tuple[SweepRow, ...]


def panels(rows: Sequence[SweepRow]) -> list[Panel]:
    keys = sorted({(r.scenario, r.settings, r.partitions) for r in rows})
    return [Panel(s, st, p, tuple(sorted((r for r in rows if (r.scenario, r.settings, r.partitions) == (s, st, p)),
                                         key=row_order))) for s, st, p in keys]


def sweep_page(rows: Sequence[SweepRow], meta: str, title: str = "The rebalance storm, swept") -> str:
    """The page: per scenario and settings, a panel per partition count of time to stable and one of
    partition-seconds paused against the members, a curve per protocol (log scales; a point not stable within the
    limit is left out of the first, and listed), and every row in a table."""
    from zkconsumer.pages import charts, render_page

    groups = []
    for panel in panels(rows):
        members = sorted({r.members for r in panel.rows})
        protocols = list(dict.fromkeys(r.protocol for r in sorted(panel.rows, key=lambda r: r.protocol)))

        def curve(name: str, protocol: str, rows_: tuple[SweepRow, ...] = panel.rows,
                  members_: list[int] = members) -> list[float]:
            by_members = {r.members: getattr(r, name) for r in rows_ if r.protocol == protocol}
            return [math.nan if by_members.get(m) is None else float(by_members[m]) for m in members_]

        where = f"{panel.partitions:,} partitions"
        size = (4.4, 3.7)
        stable = charts.line_chart(members, {p: curve("time_to_stable_s", p) for p in protocols},
                                   title=f"Time to stable, {where}", xlabel="members", ylabel="seconds",
                                   size=size, log=True, distinct=True, chart_id=_chart_id("stable", panel))
        paused = charts.line_chart(members, {p: curve("partition_seconds_paused", p) for p in protocols},
                                   title=f"Paused, {where}", xlabel="members",
                                   ylabel="partition-seconds", size=size, log=True, distinct=True,
                                   chart_id=_chart_id("paused", panel))
        groups.append((panel, stable, paused))
    unstable = [r for r in sorted(rows, key=row_order) if r.time_to_stable_s is None]
    return render_page("storm_sweep.html.j2", title=title, meta=meta, groups=_by_scenario(groups),
                       rows=sorted(rows, key=row_order), unstable=unstable)


def _chart_id(kind: str, panel: Panel) -> str:
    label = "".join(c if c.isalnum() else "-" for c in f"{panel.scenario}-{panel.settings}")
    return f"{kind}-{label}-{panel.partitions}"


def _by_scenario(groups: list[tuple[Panel, Any, Any]]) -> list[tuple[str, str, list[tuple[Panel, Any, Any]]]]:
    """The panels of each scenario and settings together, in partition order."""
    keys = list(dict.fromkeys((p.scenario, p.settings) for p, _, _ in groups))
    return [(s, st, [g for g in groups if (g[0].scenario, g[0].settings) == (s, st)]) for s, st in keys]
