"""How the storm's results are shown, apart from the model that computes them: the calibration's Markdown tables
(every parameter with its source and its value in the calibration runs, each run's agreement with its prediction:
``benchmarks/storm_calibration.py`` writes them in its report), the predictions' tables, the regions of a Markdown
page such tables are written between (``docs/storm.md``'s, by ``benchmarks/storm_tables.py``), and the sweep's page of
curves (:func:`sweep_page`, written by ``zkconsumer.fleet.sweep_job``).

The figures come in as the model's values (:mod:`.calibration`'s, :mod:`.sweep`'s rows); nothing here computes one.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Collection, Sequence
from dataclasses import dataclass, fields
from typing import Any

from zkconsumer.storm.calibration import COMPARED, HELD_BACK, Calibration, RunAgreement, Validation
from zkconsumer.storm.calibration import MACHINE as MACHINE_GIVEN
from zkconsumer.storm.parameters import StormParameters, source
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


def agreement_summary(rows: Sequence[RunAgreement]) -> str:
    held = [r for r in rows if r.run.spec.role == HELD_BACK]
    return (f"{sum(r.within for r in held)} of the {len(held)} held-back runs compared agree within 20% on all four "
            f"figures; the calibration runs, which the fit saw, {sum(r.within for r in rows if r not in held)} of "
            f"{len(rows) - len(held)}.")


#: what a fresh run measured of the machine, shown beside the calibration's
MACHINE = ("zk_read_ms", "zk_write_ms")
HEADS = {"time_to_stable_s": "time to stable s", "partition_seconds_paused": "partition-s paused",
         "zookeeper_requests": "ZK requests", "conflicts": "conflicts"}


def validation_markdown(validation: Validation) -> str:
    """The fresh runs: per run, each figure's prediction beside every fresh run's real figure (one prediction, or each
    run's where their start intervals or leads made them differ; ✗: more than 20% off), and in how many fresh runs all
    four agree; then the ratio predicted / real per figure over every run, and the fresh runs' conditions: the load,
    and what they measured of ZooKeeper beside the calibration's (the model was not given theirs)."""
    names = list(dict.fromkeys(row.run.spec.name for rows in validation.rows for row in rows))
    by = [{row.run.spec.name: row for row in rows} for rows in validation.rows]
    lines = ["| run | " + " | ".join(f"{HEADS[f]}: predicted / real, each run" for f in COMPARED)
             + " | runs within 20% on all four |", "|---|" + "---|" * len(COMPARED) + "---|"]
    for name in names:
        rows = [b[name] for b in by if name in b]
        cells = []
        for i, figure in enumerate(COMPARED):
            pairs = [(_number(r.figures[i].predicted, figure),
                      _number(r.figures[i].real, figure) + ("" if r.figures[i].within else " ✗")) for r in rows]
            if len({p for p, _ in pairs}) == 1:
                cells.append(f"{pairs[0][0]} / {', '.join(real for _, real in pairs)}")
            else:  # each run's own (its members started further apart, or its lead differed)
                cells.append("; ".join(f"{p} / {real}" for p, real in pairs))
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {sum(r.within for r in rows)} of {len(rows)} |")
    every = [row for rows in validation.rows for row in rows]
    lines += ["", "| figure | within 20% | predicted / real, where real is not 0: median | lowest | highest |",
              "|---|---|---|---|---|"]
    for i, figure in enumerate(COMPARED):
        ratios = [ratio for r in every if (ratio := r.figures[i].ratio) is not None]
        within = sum(r.figures[i].within for r in every)
        spread_ = (f"{statistics.median(ratios):.2f} | {min(ratios):.2f} | {max(ratios):.2f}" if ratios
                   else "- | - | -")
        lines.append(f"| {HEADS[figure]} | {within} of {len(every)} | {spread_} |")
    fitted = {f.name: f.value for f in validation.calibration.fits}
    machine = [name for name in MACHINE if name in fitted]
    lines += ["", "| fresh run | started | load average (1 min) as its runs began | "
              + "".join(f"`{name}` measured (calibration: {parameter_value(name, fitted[name])}) | "
                        for name in machine)
              + "runs within 20% on all four |", "|---|---|---|" + "---|" * len(machine) + "---|"]
    for record, compared in zip(validation.fresh, validation.rows, strict=True):
        loads = [r.load[0] for r in record.runs]
        measured = {f.name: f.value for f in record.measured}
        lines.append(f"| `{record.command}` | {record.started} | {min(loads):.1f} - {max(loads):.1f} | "
                     + "".join(f"{parameter_value(name, measured[name]) if name in measured else '-'} | "
                               for name in machine)
                     + f"{sum(r.within for r in compared)} of {len(compared)} |")
    return "\n".join(lines)


def validation_summary(frozen: Validation, own_machine: Validation) -> str:
    """How many runs agree on all four figures, and on time to stable, as frozen and given each fresh run's own
    measurements of its machine."""
    def counts(validation: Validation) -> str:
        every = [row for rows in validation.rows for row in rows]
        return (f"{sum(r.within for r in every)} of {len(every)} runs within 20% on all four figures, "
                f"{sum(r.figures[0].within for r in every)} on time to stable")

    return (f"As frozen: {counts(frozen)}. Given each fresh run's own measurements of ZooKeeper, the loopback and the "
            f"client (`{'`, `'.join(MACHINE_GIVEN)}`), every other parameter as frozen: {counts(own_machine)}.")


def calibration_markdown(calibration: Calibration, base: StormParameters) -> str:
    lines = ["| parameter | fitted | default | source |", "|---|---|---|---|"]
    for f in calibration.fits:
        lines.append(f"| `{f.name}` | {f.value:.4g} | {getattr(base, f.name):.4g} | {f.source} |")
    return "\n".join(lines)


def parameter_value(name: str, value: object) -> str:
    """A parameter as the tables show it: booleans as written in Python, milliseconds with their unit."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and not value.is_integer():
        text = f"{value:.4g}"
    else:
        text = f"{value:,.0f}" if isinstance(value, (int, float)) else str(value)
    return f"{text} ms" if name.endswith("_ms") else text


def parameter_markdown(defaults: StormParameters, in_runs: StormParameters, calibration: Calibration,
                       measured: Collection[str]) -> str:
    """Every parameter: its default and where it comes from, and its value in the calibration runs' legacy model
    (``in_runs``) where the calibration gave it or it differs, marked as ``measured`` (outside the runs), fitted or
    the runs' own setting; then how each of the calibration's values was had."""
    how = {f.name: f for f in calibration.fits}
    lines = ["| parameter | default | in the calibration runs | where the default comes from |", "|---|---|---|---|"]
    for f in fields(StormParameters):
        default, run = getattr(defaults, f.name), getattr(in_runs, f.name)
        cell = "" if run == default and f.name not in how else parameter_value(f.name, run)
        if cell:
            cell += " (measured)" if f.name in measured else " (fitted)" if f.name in how else " (the runs')"
        lines.append(f"| `{f.name}` | {parameter_value(f.name, default)} | {cell} | {source(f)} |")
    lines += ["", "How the calibration runs' values were had:", ""]
    lines += [f"- `{f.name}` {parameter_value(f.name, f.value)}: {f.source}" for f in calibration.fits]
    return "\n".join(lines)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.2f}"


def sweep_markdown(rows: Sequence[SweepRow], protocols: Sequence[str]) -> str:
    """Time to stable, simulated seconds, per partitions and protocol (rows) and members (columns); '-' where not
    stable within the limit."""
    members = sorted({r.members for r in rows})
    lines = ["| partitions | protocol | " + " | ".join(f"{m:,} members" for m in members) + " |",
             "|---|---|" + "---|" * len(members)]
    for partitions in sorted({r.partitions for r in rows}):
        for protocol in protocols:
            by = {r.members: r.time_to_stable_s for r in rows if (r.partitions, r.protocol) == (partitions, protocol)}
            lines.append(f"| {partitions:,} | {protocol} | " + " | ".join(_seconds(by.get(m)) for m in members) + " |")
    return "\n".join(lines)


def fleet_markdown(rows: Sequence[SweepRow], sizes: Sequence[tuple[int, int]], protocols: Sequence[str],
                   limit_s: float) -> str:
    """Per size (members, partitions): each protocol's time to stable, and the legacy group's cost to ZooKeeper;
    then, for a size not stable within the limit, what kept it from settling."""
    found = {(r.members, r.partitions, r.protocol): r for r in rows}
    lines = ["| members x partitions | " + " | ".join(protocols) + " | legacy: ZooKeeper requests | legacy: "
             "connections dropped, failed rebalances |", "|---|" + "---|" * (len(protocols) + 2)]
    notes = []
    for members, partitions in sizes:
        cells = []
        for protocol in protocols:
            row = found[(members, partitions, protocol)]
            cells.append(f"{row.time_to_stable_s:,.2f} s" if row.time_to_stable_s is not None
                         else f"not stable within {limit_s:,.0f} s")
            if row.unsettled and protocol.startswith("legacy"):
                notes.append(f"- {members:,} x {partitions:,}, {protocol}, at {limit_s:,.0f} s: {row.unsettled}")
        legacy = found[(members, partitions, protocols[0])]
        lines.append(f"| {members:,} x {partitions:,} | " + " | ".join(cells) + f" | {legacy.zookeeper_requests:,} | "
                     f"{legacy.connection_drops:,}, {legacy.retries_exhausted:,} |")
    return "\n".join(lines + ([""] + notes if notes else []))


# --- generated regions of a page -------------------------------------------------------------------------------------

def _markers(name: str) -> tuple[str, str]:
    return f"<!-- generated: {name} -->", f"<!-- /generated: {name} -->"


def marked_regions(text: str) -> list[str]:
    """The names of the generated regions of ``text``, in order."""
    return re.findall(r"<!-- generated: ([\w-]+) -->", text)


def replace_region(text: str, name: str, body: str) -> str:
    """``text`` with region ``name`` (between its two markers) holding ``body``; ValueError if the region is not there
    once, whole."""
    begin, end = _markers(name)
    if text.count(begin) != 1 or text.count(end) != 1 or text.index(begin) > text.index(end):
        raise ValueError(f"region {name!r}: expected one {begin} followed by one {end}")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    return f"{head}{begin}\n{body.strip()}\n{end}{tail}"


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
