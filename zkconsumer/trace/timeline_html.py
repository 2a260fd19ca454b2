"""The rebalance timeline as one self-contained HTML page (``zkconsumer trace render``), or its overview as SVG.

What the page shows, top to bottom:

* a summary table per consumer: rebalances, attempts, conflicts, stop-the-world time, longest gap;
* the overview, on a linear time axis: a swimlane per consumer whose blocks are the rebalance steps (a colour per
  step, legend from the steps' titles), the stop-the-world gaps as red bands with their length written on them, a
  symbol with a tooltip for each retry, conflict, failure or session loss; under the lanes one row per partition
  showing which thread owned it when (a colour per consumer); the demo's markers as labelled vertical lines across
  all of it;
* one zoomed strip per rebalance round (the rebalances of all members that overlap in time), where the steps of
  the members can be compared side by side, and under it a table of every step with its duration.

Steps last 0.01 to 100 ms in a trace of tens of seconds: on the overview one pixel is ~20 ms, so a block is
drawn at least ``MIN_BLOCK_PX`` wide and a gap at least ``MIN_GAP_PX`` wide, and the zoomed strips are where the
steps can be read.

The drawings are SVG built here, because they are geometry computed from the model; the page around them (its
skeleton, styles, tables and sections) is the template ``timeline.html.j2`` of :mod:`zkconsumer.pages`, given
rows of words. Step colours, mark titles and symbols come from :mod:`zkconsumer.trace.vocabulary`, the sentences
from :mod:`zkconsumer.trace.words`. Everything is inline (CSS, SVG, one small script that only proves, for a
headless browser, that the page loaded without error); no URL of any kind, no web font. Every string from the
events is escaped: here in the SVG, by the template in the page. Pure: model in, text out.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from zkconsumer.pages import Html, render_page
from zkconsumer.pages.render import strip_control
from zkconsumer.trace.timeline import (
    Lane,
    Mark,
    Rebalance,
    Round,
    Step,
    Timeline,
    rebalance_rounds,
)
from zkconsumer.trace.vocabulary import LIFE_ENDS, MARK_KINDS, STEPS, Symbol, mark_symbol, mark_title
from zkconsumer.trace.vocabulary import step_colour as _step_colour
from zkconsumer.trace.words import (
    describe_gap,
    describe_mark,
    describe_marker,
    describe_ownership,
    describe_rebalance,
    describe_step,
    fmt_ms,
    fmt_offset,
    plural,
)

WIDTH = 1360
LEFT = 170  # the label column
RIGHT = 24
MIN_BLOCK_PX = 2.0
MIN_GAP_PX = 4.0
LANE_H = 64
OWNER_ROW_H = 20
ROUND_ROW_H = 60
CHAR_PX = 6.3  # rough width of a character of the 11 px sans-serif labels, to decide whether a label fits
MARKER_ROWS_MAX = 6
BURST_PX = 3.0  # marks of one kind closer than this on a lane are drawn as one symbol
BURST_SHOWN = 12  # lines of a merged symbol's tooltip

CONSUMER_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#e377c2",
                    "#ff7f0e", "#d62728")
GAP_FILL = "#d62728"
MARKER_COLOUR = "#333333"


def esc(value: object) -> str:
    """Escaped for HTML and XML text and attributes; control characters (not allowed in XML) dropped."""
    return html.escape(strip_control(str(value)), quote=True)


def _n(value: float) -> str:
    """A coordinate, short."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _slug(*parts: object) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_-]", "_", str(p)) for p in parts)


def consumer_colours(timeline: Timeline) -> dict[str, str]:
    return {lane.consumer_id: CONSUMER_COLOURS[i % len(CONSUMER_COLOURS)] for i, lane in enumerate(timeline.lanes)}


def step_colour(step: Step) -> str:
    return _step_colour(step.name, step.known)


class _Scale:
    """Seconds on the timeline -> x pixels, linear between ``start`` and ``end``."""

    def __init__(self, start: float, end: float, left: float = LEFT, right: float = WIDTH - RIGHT) -> None:
        self.start, self.end = start, max(end, start + 1e-6)
        self.left, self.right = left, right

    def x(self, t: float) -> float:
        return self.left + (t - self.start) / (self.end - self.start) * (self.right - self.left)

    def span(self, start: float, end: float, minimum: float) -> tuple[float, float]:
        """x and width of an interval, at least ``minimum`` wide (centred on it when widened)."""
        x0, x1 = self.x(start), self.x(end)
        if x1 - x0 >= minimum:
            return x0, x1 - x0
        middle = (x0 + x1) / 2
        return middle - minimum / 2, minimum


def _nice_step(span: float, target: int) -> float:
    """A tick interval of 1, 2 or 5 times a power of ten giving about ``target`` ticks over ``span``."""
    raw = max(span / max(target, 1), 1e-9)
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if factor * power >= raw:
            return factor * power
    return 10 * power


def _shape(kind: str, x: float, y: float, colour: str, size: float = 5.0) -> str:
    s = size
    if kind == "triangle":
        return (f'<path d="M{_n(x)} {_n(y - s)} L{_n(x + s)} {_n(y + s * 0.8)} L{_n(x - s)} {_n(y + s * 0.8)} Z" '
                f'fill="{colour}"/>')
    if kind == "circle":
        return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(s * 0.85)}" fill="{colour}"/>'
    if kind == "ring":
        return f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{_n(s * 0.8)}" fill="none" stroke="{colour}" stroke-width="2"/>'
    if kind == "square":
        return f'<rect x="{_n(x - s * 0.8)}" y="{_n(y - s * 0.8)}" width="{_n(s * 1.6)}" height="{_n(s * 1.6)}" ' \
               f'fill="{colour}"/>'
    if kind == "diamond":
        return f'<path d="M{_n(x)} {_n(y - s)} L{_n(x + s)} {_n(y)} L{_n(x)} {_n(y + s)} L{_n(x - s)} {_n(y)} Z" ' \
               f'fill="{colour}"/>'
    if kind == "cross":
        return (f'<path d="M{_n(x - s)} {_n(y - s)} L{_n(x + s)} {_n(y + s)} M{_n(x + s)} {_n(y - s)} '
                f'L{_n(x - s)} {_n(y + s)}" stroke="{colour}" stroke-width="2.4" fill="none"/>')
    return f'<rect x="{_n(x - 1.5)}" y="{_n(y - s)}" width="3" height="{_n(2 * s)}" fill="{colour}"/>'  # bar


def _mark_svg(mark: Mark, x: float, y: float, where: str, more: Sequence[Mark] = ()) -> str:
    symbol = mark_symbol(mark.kind)
    lines = [f"{where} {fmt_offset(m.time)}: {describe_mark(m)}" for m in (mark, *more)]
    if len(lines) > BURST_SHOWN:
        lines = lines[:BURST_SHOWN] + [f"... (+{len(lines) - BURST_SHOWN} more)"]
    count = f' data-count="{1 + len(more)}"' if more else ""
    return (f'<g class="mark" data-kind="{esc(mark.kind)}"{count}><title>{esc(chr(10).join(lines))}</title>'
            f"{_shape(symbol.shape, x, y, symbol.colour)}</g>")


def _bursts(marks: Sequence[Mark], scale: _Scale) -> list[list[Mark]]:
    """Marks in time order, those of one kind within ``BURST_PX`` of the previous one merged into one symbol
    (a crash prints a traceback a line at a time; a flapping connection repeats itself)."""
    groups: list[list[Mark]] = []
    for mark in sorted(marks, key=lambda m: m.time):
        last = groups[-1] if groups else None
        if last and last[-1].kind == mark.kind and scale.x(mark.time) - scale.x(last[-1].time) <= BURST_PX:
            last.append(mark)
        else:
            groups.append([mark])
    return groups


def _spread(xs: Iterable[float], gap: float) -> list[float]:
    """Symbols at these x positions, pushed right just enough not to cover each other (tooltips keep the time)."""
    placed: list[float] = []
    for x in xs:
        placed.append(max(x, placed[-1] + gap) if placed else x)
    return placed


def _label_rows(items: Sequence[tuple[float, float]], max_rows: int) -> list[int]:
    """Greedy rows for labels (x, width) in order: the first row where the label does not cover the previous."""
    ends: list[float] = []
    rows = []
    for x, width in items:
        for row, end in enumerate(ends):
            if x >= end + 4:
                ends[row] = x + width
                rows.append(row)
                break
        else:
            if len(ends) < max_rows:
                ends.append(x + width)
                rows.append(len(ends) - 1)
            else:
                row = min(range(len(ends)), key=ends.__getitem__)
                ends[row] = max(ends[row], x + width)
                rows.append(row)
    return rows


def _defs(prefix: str) -> str:
    return (
        f'<defs><pattern id="{prefix}hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff" fill-opacity="0.25"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="#000000" stroke-opacity="0.45" stroke-width="2"/></pattern>'
        f'<pattern id="{prefix}gaphatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{GAP_FILL}" fill-opacity="0.10"/>'
        f'<line x1="0" y1="0" x2="0" y2="6" stroke="{GAP_FILL}" stroke-opacity="0.35" stroke-width="2"/></pattern>'
        f"</defs>"
    )


SVG_STYLE = (
    "text{font-family:sans-serif;font-size:11px;fill:#222}"
    ".small{font-size:10px;fill:#555}.lanelabel{font-size:12px;font-weight:bold}"
    ".gaplabel{font-size:10.5px;font-weight:bold;fill:#a50f15}.ownerlabel{font-size:10px;fill:#ffffff}"
    ".markerlabel{font-size:11px;font-weight:bold;fill:#333}.steplabel{font-size:9px;fill:#ffffff}"
)


# --- the overview -----------------------------------------------------------------------------------------------


def render_svg(timeline: Timeline, standalone: bool = True, links: bool = False, axis_end: float | None = None,
               prefix: str = "ov-", short: Callable[[str], str] | None = None,
               marker_label_rows: int = MARKER_ROWS_MAX) -> str:
    """The overview: axis, lanes, partition owners, markers and the legend, as one ``<svg>``. ``standalone``
    adds the XML namespace a ``.svg`` file needs (inline in HTML it is not needed, and the page names no URL);
    ``links`` makes each rebalance a link to its round on the HTML page. ``axis_end`` (seconds) stretches the
    axis beyond the trace's end, so that several overviews drawn one above the other share one time scale;
    ``prefix`` keeps the ids of several overviews on one page apart. ``short`` shortens the consumer ids and
    topics written on the drawing (lane, marker, partition and owner labels), when their common part would crowd
    it: the full names stay in the tooltips; ``marker_label_rows`` is how many rows the markers' labels may take
    before they overlap."""
    colours = consumer_colours(timeline)
    end = max(timeline.end, axis_end or 0.0)
    scale = _Scale(0.0, end if end > 0 else 1.0)
    out: list[str] = []

    markers = [(m, *describe_marker(m)) for m in timeline.markers]
    if short is not None:
        markers = [(m, label.replace(m.consumer_id, short(m.consumer_id)) if m.consumer_id else label, note)
                   for m, label, note in markers]
    # A label starts right of its line, or ends left of it when it would run off the page.
    placements = []
    for marker, label, _ in markers:
        x, width = scale.x(marker.time), len(label) * CHAR_PX + 6
        placements.append((x + 3, width, "start") if x + 3 + width <= WIDTH - 2 else (x - 3 - width, width, "end"))
    order = sorted(range(len(placements)), key=lambda i: placements[i][0])
    sorted_rows = _label_rows([placements[i][:2] for i in order], marker_label_rows)
    marker_rows = [0] * len(placements)
    for i, row in zip(order, sorted_rows, strict=True):
        marker_rows[i] = row
    rows_used = max(marker_rows, default=-1) + 1
    y = 8 + rows_used * 15
    axis_y = y + 16
    lanes_top = axis_y + 10
    owners_top = lanes_top + len(timeline.lanes) * LANE_H + 30
    legend_top = owners_top + len(timeline.partitions) * OWNER_ROW_H + 24
    legend, legend_h = _legend(prefix, legend_top)
    height = legend_top + legend_h + 8

    # axis and grid
    tick = _nice_step(scale.end - scale.start, 10)
    decimals = max(0, -math.floor(math.log10(tick))) if tick < 1 else 0
    out.append('<g class="axis">')
    out.append(f'<line x1="{LEFT}" y1="{axis_y}" x2="{WIDTH - RIGHT}" y2="{axis_y}" stroke="#888"/>')
    grid_bottom = owners_top + len(timeline.partitions) * OWNER_ROW_H
    t = 0.0
    while t <= scale.end + 1e-9:
        x = scale.x(t)
        out.append(f'<line x1="{_n(x)}" y1="{axis_y}" x2="{_n(x)}" y2="{grid_bottom}" stroke="#e4e4e4"/>')
        out.append(f'<text x="{_n(x)}" y="{axis_y - 4}" text-anchor="middle" class="small">+{t:.{decimals}f}s</text>')
        t += tick
    out.append("</g>")

    for index, lane in enumerate(timeline.lanes):
        out.append(_lane_svg(lane, lanes_top + index * LANE_H, scale, colours[lane.consumer_id], prefix, links, short))

    out.append(_owners_svg(timeline, owners_top, scale, colours, prefix, short))

    bottom = owners_top + len(timeline.partitions) * OWNER_ROW_H
    for (marker, label, note), row, (_, _, anchor) in zip(markers, marker_rows, placements, strict=True):
        x = scale.x(marker.time)
        label_x = x + 3 if anchor == "start" else x - 3
        label_y = 8 + row * 15 + 11
        tooltip = f"{fmt_offset(marker.time)} {label}" + (f": {note}" if note else "")
        out.append(
            f'<g class="marker" data-kind="{esc(marker.kind)}"><title>{esc(tooltip)}</title>'
            f'<line x1="{_n(x)}" y1="{label_y - 10}" x2="{_n(x)}" y2="{bottom}" stroke="{MARKER_COLOUR}" '
            f'stroke-width="1.2" stroke-dasharray="5 3"/>'
            f'<text x="{_n(label_x)}" y="{label_y}" text-anchor="{anchor}" class="markerlabel">{esc(label)}</text>'
            "</g>"
        )
    out.append(legend)

    namespace = ' xmlns="http://www.w3.org/2000/svg"' if standalone else ""
    return (f'<svg{namespace} class="overview" width="{WIDTH}" height="{_n(height)}" '
            f'viewBox="0 0 {WIDTH} {_n(height)}" role="img">'
            f"<style>{SVG_STYLE}</style>{_defs(prefix)}" + "".join(out) + "</svg>")


def _lane_svg(lane: Lane, top: float, scale: _Scale, colour: str, prefix: str, links: bool,
              short: Callable[[str], str] | None = None) -> str:
    out = [f'<g class="lane" data-consumer="{esc(lane.consumer_id)}">']
    out.append(f'<rect x="12" y="{_n(top + 20)}" width="10" height="10" fill="{colour}"/>')
    if short is not None:
        full = lane.consumer_id + (f" (group {lane.group})" if lane.group else "")
        out.append(f'<text x="28" y="{_n(top + 29)}" class="lanelabel"><title>{esc(full)}</title>'
                   f"{esc(short(lane.consumer_id))}</text>")
    else:
        out.append(f'<text x="28" y="{_n(top + 29)}" class="lanelabel">{esc(lane.consumer_id)}</text>')
    if lane.group and short is None:
        out.append(f'<text x="28" y="{_n(top + 42)}" class="small">group {esc(lane.group)}</text>')
    bar_y, bar_h = top + 26, 18
    for life in lane.lives:
        x, width = scale.span(life.start, life.end, 1)
        out.append(f'<rect class="life" x="{_n(x)}" y="{_n(top + 4)}" width="{_n(width)}" height="{LANE_H - 8}" '
                   f'fill="#f3f5f8"/>')
        out.append(f'<line x1="{_n(x)}" y1="{_n(bar_y + bar_h / 2)}" x2="{_n(x + width)}" y2="{_n(bar_y + bar_h / 2)}" '
                   f'stroke="#c8ccd2"/>')
    # gaps first (behind the steps), with their length; labels in two rows when close
    gaps = [r for r in lane.rebalances if r.gap is not None]
    labels = [fmt_ms(r.gap.duration_ms) for r in gaps]  # type: ignore[union-attr]
    widths = [len(text) * CHAR_PX for text in labels]
    label_x = [min(max(scale.x((r.gap.start + r.gap.end) / 2), LEFT + w / 2), WIDTH - 2 - w / 2)  # type: ignore
               for r, w in zip(gaps, widths, strict=True)]
    rows = _label_rows([(x - w / 2, w) for x, w in zip(label_x, widths, strict=True)], 2)
    for rebalance, text, x_mid, row in zip(gaps, labels, label_x, rows, strict=True):
        gap = rebalance.gap
        assert gap is not None
        x, width = scale.span(gap.start, gap.end, MIN_GAP_PX)
        fill = f'fill="{GAP_FILL}" fill-opacity="0.22"' if gap.finished else f'fill="url(#{prefix}gaphatch)"'
        dashed = "" if gap.finished else ' stroke-dasharray="3 2"'
        tooltip = f"{lane.consumer_id} rebalance {rebalance.rebalance_id}: {describe_gap(gap)}, " \
                  f"{fmt_offset(gap.start)} to {fmt_offset(gap.end)}"
        out.append(f'<g class="gap" data-rebalance="{rebalance.rebalance_id}" data-ms="{gap.duration_ms:.3f}">'
                   f"<title>{esc(tooltip)}</title>"
                   f'<rect x="{_n(x)}" y="{_n(bar_y - 4)}" width="{_n(width)}" height="{bar_h + 8}" {fill} '
                   f'stroke="{GAP_FILL}" stroke-width="1"{dashed}/>'
                   f'<text x="{_n(x_mid)}" y="{_n(top + 11 + row * 11)}" text-anchor="middle" '
                   f'class="gaplabel">{esc(text)}</text></g>')
    for rebalance in lane.rebalances:
        out.append(_rebalance_blocks(lane, rebalance, scale, bar_y, bar_h, links))
    bursts = _bursts(lane.marks, scale)
    ends = [life for life in lane.lives if life.ended_by in LIFE_ENDS]
    for burst, x in zip(bursts, _spread((scale.x(b[0].time) for b in bursts), 11), strict=True):
        out.append(_mark_svg(burst[0], x, top + 54, lane.consumer_id, burst[1:]))
    for life in ends:
        symbol = LIFE_ENDS[life.ended_by or ""].symbol
        x = scale.x(life.end)
        out.append(f'<g class="mark" data-kind="{esc(life.ended_by)}"><title>{esc(lane.consumer_id)} '
                   f'{esc(life.ended_by)} at {fmt_offset(life.end)}</title>'
                   f"{_shape(symbol.shape, x, bar_y + bar_h / 2, symbol.colour, 6)}</g>")
    out.append("</g>")
    return "".join(out)


def _rebalance_blocks(lane: Lane, rebalance: Rebalance, scale: _Scale, y: float, h: float, links: bool) -> str:
    summary = f"{lane.consumer_id} {describe_rebalance(rebalance)}"
    blocks = [f"<title>{esc(summary)}</title>"]
    for step in rebalance.steps:
        x, width = scale.span(step.start, step.end, MIN_BLOCK_PX)
        blocks.append(f'<rect class="step" data-step="{esc(step.name)}" x="{_n(x)}" y="{_n(y)}" width="{_n(width)}" '
                      f'height="{_n(h)}" fill="{step_colour(step)}"><title>{esc(_step_tooltip(lane, rebalance, step))}'
                      f"</title></rect>")
    body = "".join(blocks)
    if links:
        body = f'<a href="#{esc(rebalance_anchor(lane.consumer_id, rebalance))}">{body}</a>'
    return (f'<g class="rebalance" data-consumer="{esc(lane.consumer_id)}" data-rebalance="{rebalance.rebalance_id}" '
            f'data-outcome="{esc(rebalance.outcome)}">{body}</g>')


def _step_tooltip(lane: Lane, rebalance: Rebalance, step: Step) -> str:
    facts = describe_step(step)
    return (f"{lane.consumer_id} rebalance {rebalance.rebalance_id} attempt {step.attempt}: step {step.number} "
            f"{step.title}, {fmt_ms(step.duration_ms)} (ends {fmt_offset(step.end)})" + (f"; {facts}" if facts else ""))


def rebalance_anchor(consumer_id: str, rebalance: Rebalance) -> str:
    return "r-" + _slug(consumer_id, rebalance.rebalance_id, f"{rebalance.start:.6f}")


def _owners_svg(timeline: Timeline, top: float, scale: _Scale, colours: dict[str, str], prefix: str,
                short: Callable[[str], str] | None = None) -> str:
    out = ['<g class="owners">',
           f'<text x="12" y="{_n(top - 10)}" class="lanelabel">partition owners</text>',
           f'<text x="140" y="{_n(top - 10)}" class="small">colour: consumer; label: thread; hatched: the owner '
           f"was killed, its owner znode lives until its session expires</text>"]
    killed = {lane.consumer_id: [life.end for life in lane.lives if life.ended_by == "killed"]
              for lane in timeline.lanes}
    by_partition: dict[tuple[str, int], list] = {}
    for owner in timeline.ownership:
        by_partition.setdefault((owner.topic, owner.partition), []).append(owner)
    for index, (topic, partition) in enumerate(timeline.partitions):
        y = top + index * OWNER_ROW_H
        out.append(f'<g class="partition" data-topic="{esc(topic)}" data-partition="{partition}">')
        if short is None:
            out.append(f'<text x="{LEFT - 8}" y="{_n(y + 14)}" text-anchor="end">{esc(topic)}-{partition}</text>')
        else:
            name = short(topic)
            out.append(f'<text x="{LEFT - 8}" y="{_n(y + 14)}" text-anchor="end"><title>{esc(topic)}-{partition}'
                       f'</title>{esc(f"{name}-{partition}" if name else f"partition {partition}")}</text>')
        out.append(f'<rect x="{LEFT}" y="{_n(y + 2)}" width="{WIDTH - RIGHT - LEFT}" height="{OWNER_ROW_H - 4}" '
                   f'fill="#fafafa" stroke="#eeeeee"/>')
        for owner in by_partition.get((topic, partition), []):
            end = owner.end if owner.end is not None else timeline.end
            x, width = scale.span(owner.start, end, 1.5)
            colour = colours.get(owner.consumer_id, "#999999")
            label = owner.thread or owner.consumer_id
            shown = short(label) if short is not None else label
            out.append(f'<g class="owner" data-consumer="{esc(owner.consumer_id)}" data-thread="{esc(label)}">'
                       f"<title>{esc(describe_ownership(owner))}</title>"
                       f'<rect x="{_n(x)}" y="{_n(y + 3)}" width="{_n(width)}" height="{OWNER_ROW_H - 6}" '
                       f'fill="{colour}"/>')
            for k in killed.get(owner.consumer_id, []):
                if owner.start < k < end:
                    kx = scale.x(k)
                    out.append(f'<rect x="{_n(kx)}" y="{_n(y + 3)}" width="{_n(max(x + width - kx, 1))}" '
                               f'height="{OWNER_ROW_H - 6}" fill="url(#{prefix}hatch)"/>')
            if width >= len(shown) * 5.6 + 6:
                out.append(f'<text x="{_n(x + 3)}" y="{_n(y + 14)}" class="ownerlabel">{esc(shown)}</text>')
            out.append("</g>")
        out.append("</g>")
    out.append("</g>")
    return "".join(out)


def _legend(prefix: str, top: float) -> tuple[str, float]:
    """The steps' colours with their numbers and titles, the mark symbols, the gap; returns (svg, height)."""
    out = [f'<g class="legend"><text x="12" y="{_n(top + 12)}" class="lanelabel">legend</text>']
    column_w, per_row = 196, 6
    for i, step in enumerate(STEPS):
        x = LEFT + (i % per_row) * column_w
        y = top + (i // per_row) * 18
        out.append(f'<g class="legend-step" data-step="{esc(step.name)}"><title>{esc(step.meaning)}</title>'
                   f'<rect x="{x}" y="{_n(y + 3)}" width="12" height="12" fill="{_step_colour(step.name)}"/>'
                   f'<text x="{x + 17}" y="{_n(y + 13)}">{step.number} {esc(step.title)}</text></g>')
    y = top + math.ceil(len(STEPS) / per_row) * 18 + 6
    items: list[tuple[str, str, Symbol | None]] = [("gap", "stop-the-world gap (ms)", None)]
    items += [(mark.kind, mark.title, mark.symbol) for mark in MARK_KINDS]
    items += [(end.kind, end.title, end.symbol) for end in LIFE_ENDS.values() if end.in_legend]
    left: float = LEFT  # an int until the first item's width is added: printed as it is
    for kind, title, symbol in items:
        width = 24 + len(title) * CHAR_PX
        if left + width > WIDTH - RIGHT:
            left, y = LEFT, y + 18
        if symbol is None:  # the gap
            drawn = (f'<rect x="{left}" y="{_n(y + 3)}" width="14" height="12" fill="{GAP_FILL}" fill-opacity="0.22" '
                     f'stroke="{GAP_FILL}"/>')
        else:
            drawn = _shape(symbol.shape, left + 7, y + 9, symbol.colour)
        out.append(f'<g class="legend-mark" data-kind="{kind}">{drawn}'
                   f'<text x="{left + 18}" y="{_n(y + 13)}">{esc(title)}</text></g>')
        left += width
    out.append("</g>")
    return "".join(out), y + 18 - top


# --- rounds: the zoomed strips ----------------------------------------------------------------------------------


def render_round_svg(timeline: Timeline, rnd: Round) -> str:
    """One round zoomed to the page's width: a row per rebalance, steps as labelled blocks, gaps, attempts."""
    colours = consumer_colours(timeline)
    pad = max((rnd.end - rnd.start) * 0.02, 0.0002)
    scale = _Scale(rnd.start - pad, rnd.end + pad)
    rows = sorted(rnd.rebalances, key=lambda r: (_lane_index(timeline, r.consumer_id), r.start))
    axis_y = 18
    height = axis_y + 8 + len(rows) * ROUND_ROW_H + 4
    out = [f'<svg class="round" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" role="img">'
           f"<style>{SVG_STYLE}</style>{_defs(f'rd{rnd.index}-')}"]
    span_ms = (scale.end - scale.start) * 1000
    tick = _nice_step(span_ms, 10)
    out.append(f'<line x1="{LEFT}" y1="{axis_y}" x2="{WIDTH - RIGHT}" y2="{axis_y}" stroke="#888"/>')
    ms = math.ceil(-pad * 1000 / tick) * tick
    while ms <= (rnd.end - rnd.start + pad) * 1000 + 1e-9:
        x = scale.x(rnd.start + ms / 1000)
        out.append(f'<line x1="{_n(x)}" y1="{axis_y}" x2="{_n(x)}" y2="{height - 4}" stroke="#eeeeee"/>'
                   f'<text x="{_n(x)}" y="{axis_y - 5}" text-anchor="middle" class="small">'
                   f"+{ms:g} ms</text>")
        ms += tick
    for index, rebalance in enumerate(rows):
        out.append(_round_row(rebalance, axis_y + 8 + index * ROUND_ROW_H, scale, colours, f"rd{rnd.index}-"))
    out.append("</svg>")
    return "".join(out)


def _lane_index(timeline: Timeline, consumer_id: str) -> int:
    for index, lane in enumerate(timeline.lanes):
        if lane.consumer_id == consumer_id:
            return index
    return len(timeline.lanes)


def _round_row(rebalance: Rebalance, top: float, scale: _Scale, colours: dict[str, str], prefix: str) -> str:
    consumer = rebalance.consumer_id
    out = [f'<g class="round-row" data-consumer="{esc(consumer)}" data-rebalance="{rebalance.rebalance_id}">']
    out.append(f'<rect x="12" y="{_n(top + 14)}" width="10" height="10" fill="{colours.get(consumer, "#999")}"/>')
    out.append(f'<text x="28" y="{_n(top + 23)}" class="lanelabel">{esc(consumer)}</text>')
    out.append(f'<text x="28" y="{_n(top + 36)}" class="small">rebalance {rebalance.rebalance_id}'
               f"{' (' + esc(rebalance.cause) + ')' if rebalance.cause else ''}</text>")
    bar_y, bar_h = top + 14, 18
    x0, x1 = scale.x(rebalance.start), scale.x(rebalance.end)
    out.append(f'<line x1="{_n(x0)}" y1="{_n(bar_y + bar_h / 2)}" x2="{_n(x1)}" y2="{_n(bar_y + bar_h / 2)}" '
               f'stroke="#999" stroke-dasharray="2 2"/>')
    gap = rebalance.gap
    if gap is not None:
        x, width = scale.span(gap.start, min(gap.end, scale.end), MIN_GAP_PX)
        fill = f'fill="{GAP_FILL}" fill-opacity="0.16"' if gap.finished else f'fill="url(#{prefix}gaphatch)"'
        out.append(f'<g class="gap" data-ms="{gap.duration_ms:.3f}"><title>{esc(describe_gap(gap))}</title>'
                   f'<rect x="{_n(x)}" y="{_n(bar_y - 4)}" width="{_n(width)}" height="{bar_h + 8}" {fill} '
                   f'stroke="{GAP_FILL}"/>'
                   f'<text x="{_n(x + width / 2)}" y="{_n(top + 8)}" text-anchor="middle" class="gaplabel">'
                   f"{esc(describe_gap(gap))}</text></g>")
    for step in rebalance.steps:
        x, width = scale.span(step.start, step.end, MIN_BLOCK_PX)
        out.append(f'<g class="step" data-step="{esc(step.name)}"><title>{esc(_step_tooltip_round(step))}</title>'
                   f'<rect x="{_n(x)}" y="{_n(bar_y)}" width="{_n(width)}" height="{bar_h}" fill="{step_colour(step)}" '
                   f'stroke="#ffffff" stroke-width="0.5"/>')
        if width >= 10:
            out.append(f'<text x="{_n(x + width / 2)}" y="{_n(bar_y + 12.5)}" text-anchor="middle" '
                       f'class="steplabel">{step.number}</text>')
        out.append("</g>")
    for attempt in rebalance.attempts:
        if attempt.start is None or attempt.end is None:
            continue
        ax0, ax1 = scale.x(attempt.start), scale.x(attempt.end)
        y = bar_y + bar_h + 7
        label = f"attempt {attempt.number}: {attempt.outcome}" + (f" ({attempt.reason})" if attempt.reason else "")
        out.append(f'<g class="attempt" data-attempt="{attempt.number}" data-outcome="{esc(attempt.outcome)}">'
                   f"<title>{esc(label)}</title>"
                   f'<path d="M{_n(ax0)} {_n(y - 3)} V{_n(y)} H{_n(max(ax1, ax0 + 2))} V{_n(y - 3)}" '
                   f'stroke="#666" fill="none"/>')
        text_x, anchor, label_w = ax0, "start", len(label) * 5.4
        if ax1 - ax0 < label_w:  # a short attempt: its label after it, or before it at the right edge
            text_x = ax1 + 14
            if text_x + label_w > WIDTH - 4:
                text_x, anchor = ax0 - 4, "end"
        out.append(f'<text x="{_n(text_x)}" y="{_n(y + 11)}" text-anchor="{anchor}" class="small">{esc(label)}'
                   "</text></g>")
        if attempt.outcome == "failed" and attempt.backoff_ms:
            bx1 = scale.x(attempt.end + attempt.backoff_ms / 1000)
            out.append(f'<g class="backoff"><title>backoff {esc(fmt_ms(attempt.backoff_ms))} before the next attempt'
                       f'</title><line x1="{_n(ax1)}" y1="{_n(bar_y + bar_h / 2)}" x2="{_n(bx1)}" '
                       f'y2="{_n(bar_y + bar_h / 2)}" stroke="#e6550d" stroke-width="1.5" stroke-dasharray="6 3"/>'
                       f"</g>")
    bursts = _bursts(rebalance.marks, scale)
    for burst, x in zip(bursts, _spread((scale.x(b[0].time) for b in bursts), 11), strict=True):
        out.append(_mark_svg(burst[0], x + 6, bar_y - 2, f"{consumer} rebalance {rebalance.rebalance_id}", burst[1:]))
    out.append("</g>")
    return "".join(out)


def _step_tooltip_round(step: Step) -> str:
    facts = describe_step(step)
    return (f"attempt {step.attempt}, step {step.number} {step.title}: {fmt_ms(step.duration_ms)}, "
            f"{fmt_offset(step.start)} to {fmt_offset(step.end)}" + (f"; {facts}" if facts else ""))


# --- the page ---------------------------------------------------------------------------------------------------
# The page itself is the template ``timeline.html.j2`` of :mod:`zkconsumer.pages`; these are the rows it is given,
# every string already in words and not yet escaped (the template escapes).


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One consumer in the summary table. ``longest_anchor`` links the longest gap to its rebalance's table."""

    consumer_id: str
    colour: str
    group: str
    rebalances: int
    attempts: int
    failed_attempts: int
    conflicts: int
    stop_the_world: str
    longest: str
    longest_anchor: str | None
    longest_rebalance: int | None
    unfinished: int
    fetcher_events: int
    end: str


@dataclass(frozen=True, slots=True)
class DetailRow:
    """A step (with its colour and duration) or a mark (``mark``) in a rebalance's table, in time order."""

    attempt: str
    name: str
    since: str
    what: str
    mark: bool = False
    colour: str = ""
    duration: str = ""


@dataclass(frozen=True, slots=True)
class RebalanceDetail:
    """One rebalance's table under its round; ``anchor`` is what the overview's blocks and the summary link to."""

    anchor: str
    consumer_id: str
    rebalance_id: int
    head: str
    rows: tuple[DetailRow, ...]


@dataclass(frozen=True, slots=True)
class RoundSection:
    """One round: its heading's figures, its zoomed drawing and its rebalances' tables, in lane order."""

    index: int
    start: str
    end: str
    duration: str
    members: str
    drawing: Html
    rebalances: tuple[RebalanceDetail, ...]


def render_html(timeline: Timeline, title: str = "Rebalance timeline") -> str:
    """The whole page, self-contained."""
    colours = consumer_colours(timeline)
    rounds = rebalance_rounds(timeline)
    if timeline.empty:
        return render_page("timeline.html.j2", title=title, meta=_meta(timeline), empty=True)
    return render_page(
        "timeline.html.j2",
        title=title,
        meta=_meta(timeline),
        empty=False,
        summary=[_summary_row(lane, colours) for lane in timeline.lanes],
        rounds_text=plural(len(rounds), "rebalance round"),
        overview=Html(render_svg(timeline, standalone=False, links=True)),
        rounds=[_round_section(timeline, rnd) for rnd in rounds],
    )


def _meta(timeline: Timeline) -> str:
    if timeline.origin is None:
        return "empty trace"
    start = timeline.origin.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    bits = [f"from {start}", f"{timeline.end:.3f} s", plural(len(timeline.lanes), "consumer"),
            plural(len(timeline.partitions), "partition"), plural(len(timeline.markers), "marker"),
            f"{plural(timeline.fetcher_events, 'fetcher event')} counted, not drawn"]
    if timeline.ignored_events:
        bits.append(f"{plural(timeline.ignored_events, 'event')} of other components ignored")
    if timeline.skipped_lines:
        numbers = ", ".join(str(n) for n in timeline.skipped_line_numbers)
        bits.append(f"{plural(timeline.skipped_lines, 'broken line')} skipped (line {numbers}"
                    f"{', ...' if timeline.skipped_lines > len(timeline.skipped_line_numbers) else ''})")
    return "; ".join(bits)


def _summary_row(lane: Lane, colours: dict[str, str]) -> SummaryRow:
    s = lane.summary()
    longest, anchor = "-", None
    if s.longest_gap_ms is not None and s.longest_gap_rebalance is not None:
        longest = fmt_ms(s.longest_gap_ms)
        rebalance = lane.longest_gap()
        anchor = rebalance_anchor(lane.consumer_id, rebalance) if rebalance is not None else None
    return SummaryRow(
        consumer_id=lane.consumer_id, colour=colours[lane.consumer_id], group=lane.group or "-",
        rebalances=s.rebalances, attempts=s.attempts, failed_attempts=s.failed_attempts, conflicts=s.conflicts,
        stop_the_world=fmt_ms(s.stop_the_world_ms), longest=longest, longest_anchor=anchor,
        longest_rebalance=s.longest_gap_rebalance, unfinished=s.unfinished, fetcher_events=lane.fetcher_events,
        end=lane.lives[-1].ended_by or "-",
    )


def _round_section(timeline: Timeline, rnd: Round) -> RoundSection:
    rebalances = sorted(rnd.rebalances, key=lambda r: (_lane_index(timeline, r.consumer_id), r.start))
    return RoundSection(
        index=rnd.index,
        start=fmt_offset(rnd.start),
        end=fmt_offset(rnd.end),
        duration=fmt_ms((rnd.end - rnd.start) * 1000),
        members=", ".join(f"{r.consumer_id} r{r.rebalance_id}" for r in rnd.rebalances),
        drawing=Html(render_round_svg(timeline, rnd)),
        rebalances=tuple(_rebalance_detail(rebalance) for rebalance in rebalances),
    )


def _rebalance_detail(rebalance: Rebalance) -> RebalanceDetail:
    rows: list[tuple[float, int, DetailRow]] = []
    for step in rebalance.steps:
        rows.append((step.end, 0, DetailRow(str(step.attempt), f"{step.number} {step.title}",
                                            _since(rebalance, step.start), describe_step(step),
                                            colour=step_colour(step), duration=fmt_ms(step.duration_ms))))
    for mark in rebalance.marks:
        rows.append((mark.time, 1, DetailRow(str(mark.attempt or ""), mark_title(mark.kind),
                                             _since(rebalance, mark.time), describe_mark(mark), mark=True)))
    rows.sort(key=lambda row: (row[0], row[1]))
    return RebalanceDetail(
        anchor=rebalance_anchor(rebalance.consumer_id, rebalance),
        consumer_id=rebalance.consumer_id,
        rebalance_id=rebalance.rebalance_id,
        head=f"{rebalance.consumer_id} {describe_rebalance(rebalance)}",
        rows=tuple(row for _, _, row in rows),
    )


def _since(rebalance: Rebalance, t: float) -> str:
    """Milliseconds since the rebalance began, the clock a reader compares steps by."""
    return f"+{(t - rebalance.start) * 1000:.2f} ms"
