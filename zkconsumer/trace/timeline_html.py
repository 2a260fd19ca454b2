"""The rebalance timeline as one self-contained HTML page (``zkconsumer trace render``), or its overview as SVG.

What the page shows, top to bottom:

* a summary table per consumer: rebalances, attempts, conflicts, stop-the-world time, longest gap;
* the overview, on a linear time axis: a swimlane per consumer whose blocks are the rebalance steps (a colour per
  step, legend from the steps' titles), the stop-the-world gaps as red bands with their length written on them, a
  symbol with a tooltip for each retry, conflict, failure or session loss; under the lanes one row per partition
  showing which thread owned it when (a colour per consumer); the demo's markers as labelled vertical lines across
  all of it; above the consumers, a lane per group coordinator whose events are in the trace: the group's state as a
  band, its rounds as blocks labelled with the generation (or group epoch) and the members, marks for members
  joining, leaving, expiring or fenced and for assignments (the legend gains a row for them);
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
from typing import TypeVar

from zkconsumer.pages import Html, render_page
from zkconsumer.pages.render import strip_control
from zkconsumer.trace.coordinator import CoordinatorLane, CoordinatorMark
from zkconsumer.trace.timeline import (
    Gap,
    Lane,
    Mark,
    Marker,
    Ownership,
    Rebalance,
    Round,
    Step,
    Timeline,
    rebalance_rounds,
)
from zkconsumer.trace.vocabulary import (
    COORDINATOR_MARK_KINDS,
    COORDINATOR_MARKS,
    GROUP_STATES,
    LIFE_ENDS,
    MARK_KINDS,
    ROUND_FILL,
    ROUND_STROKE,
    STEPS,
    UNKNOWN_MARK_SYMBOL,
    Symbol,
    mark_symbol,
    mark_title,
    state_colour,
)
from zkconsumer.trace.vocabulary import step_colour as _step_colour
from zkconsumer.trace.words import (
    describe_coordinator_event,
    describe_gap,
    describe_mark,
    describe_marker,
    describe_ownership,
    describe_rebalance,
    describe_round,
    describe_state,
    describe_step,
    fmt_fields,
    fmt_ms,
    fmt_offset,
    plural,
    round_label,
)

# --- layout, in pixels ------------------------------------------------------------------------------------------

WIDTH = 1360  # every drawing's width
LEFT = 170  # the time axis starts right of the label column
RIGHT = 24  # and ends this far from the right edge
EDGE = 2  # how close to the right edge a label may come
MIN_BLOCK_PX = 2.0
MIN_GAP_PX = 4.0
MIN_OWNER_PX = 1.5
MIN_LIFE_PX = 1
AXIS_TICKS = 10  # about this many ticks on an axis
MARK_PX = 5.0  # a mark's symbol, from its centre to a tip
LIFE_END_PX = 6.0  # the symbol where a member's life ends, bigger than a mark's
BURST_PX = 3.0  # marks of one kind closer than this on a lane are drawn as one symbol
BURST_SHOWN = 12  # lines of a merged symbol's tooltip
MARK_SPACING_PX = 11  # symbols on one row pushed apart to at least this, so that none hides another
LABEL_PAD = 3  # between a label and the line or the edge of the bar it is written beside
LABEL_SPACING_PX = 4  # between two labels on one row

# Rough widths of one character of the sans-serif labels, to decide whether a label fits and where the next one may
# start (a pure function has no font metrics); a little wide rather than narrow, so that what is judged to fit does.
CHAR_PX = 6.3  # the 11 px labels (marker labels, legend entries) and the 10.5 px bold gap lengths
SMALL_CHAR_PX = 5.6  # the 10 px ones: thread names on the partition owners' bars, attempts under a round's bars

# The label column of a lane or a round's row: the consumer's colour square, its name beside it, one more line.
SWATCH_X = 12
SWATCH_PX = 10
NAME_X = 28
NAME_BASELINE = 9  # below the square's top: the 12 px name level with the square
LINE_PX = 13  # from the name's baseline to the next line's (the group, the rebalance)
BAR_H = 18  # the bar of step blocks
GAP_OVERHANG = 4  # a stop-the-world band reaches this far above and below the bar


@dataclass(frozen=True, slots=True)
class _RowLayout:
    """Where the parts of a row sit, in pixels below its top."""

    swatch: float  # the top of the colour square
    bar: float  # the top of the bar of step blocks
    gap_label: float  # the baseline of a gap's length (in the lane, the first of its two rows)
    marks: float  # the middle of the mark symbols

    @property
    def name(self) -> float:
        return self.swatch + NAME_BASELINE

    @property
    def second_line(self) -> float:
        return self.name + LINE_PX

    @property
    def bar_middle(self) -> float:
        return self.bar + BAR_H / 2


# The overview, top to bottom: rows of marker labels, the time axis (its tick labels above it), a lane per group
# coordinator, a lane per consumer, the partition owners under their heading, the legend.
TOP_PAD = 8  # above the first row of marker labels, and under the legend
MARKER_ROW_H = 15  # a row of marker labels
MARKER_ROWS_MAX = 16  # enough for the demo's five scenes (a start, an action and a settling each) without overlap
MARKER_BASELINE = 11  # a marker label's baseline below the top of its row
MARKER_LINE_TOP = 1  # a marker's line starts this far below the top of its label's row
AXIS_BELOW_MARKERS = 16  # room for the tick labels, between the marker labels and the axis
TICK_LABEL_ABOVE = 4  # a tick label's baseline above the axis
LANES_BELOW_AXIS = 10
LANE_H = 64
LANE_ROW = _RowLayout(swatch=20, bar=26, gap_label=11, marks=54)  # marks: a row of their own under the bar
LIFE_INSET = 4  # the band of a member's life, this far inside its lane at the top and the bottom
GAP_LABEL_ROWS = 2  # close gaps' lengths alternate between rows, this many
GAP_LABEL_ROW_H = 11
OWNERS_BELOW_LANES = 30  # room for the owners' heading
OWNERS_HEADING_ABOVE = 10  # the heading's baseline above the first partition
OWNERS_NOTE_X = 140  # where the sentence explaining the owners' colours starts
OWNER_ROW_H = 20
OWNER_ROW_INSET = 2  # the partition's grey track, inside its row
OWNER_BAR_INSET = 3  # an owner's bar, inside its row, over the track
OWNER_BASELINE = 14  # a partition's name and an owner's label, below the top of the row
PARTITION_NAME_END = LEFT - 8  # a partition's name ends here, left of the axis
LEGEND_BELOW_OWNERS = 24

# The legend: the steps in columns, then the gap and the marks in a row that wraps.
LEGEND_ROW_H = 18
LEGEND_COLUMN_W = 196
LEGEND_COLUMNS = 6
LEGEND_HEADING_BASELINE = 12
LEGEND_SWATCH_TOP = 3  # a step's colour square (12 px) or the gap's (14 by 12), below the top of its row
LEGEND_SWATCH_PX = 12
LEGEND_BASELINE = 13  # an entry's text, below the top of its row
LEGEND_MARKS_BELOW_STEPS = 6
LEGEND_GAP_W = 14  # the gap's swatch, wider than a step's
LEGEND_STEP_TEXT_X = 17  # a step's title, right of its swatch's left edge
LEGEND_MARK_TEXT_X = 18  # a mark's title, right of its symbol's (or the gap swatch's) left edge
LEGEND_MARK_W = 24  # a mark entry's symbol and space, before its title

# A coordinator's lane: as tall as a consumer's, the group's state as a band along its top, the rounds where a
# consumer's steps are, the marks under them.
STATE_TOP = 5  # the state band, below the lane's top
STATE_H = 13
STATE_BASELINE = 10  # a state's name, below the band's top
ROUND_LABEL_BASELINE = 12.5  # a round's label, below the top of its block
MIN_STATE_PX = 1.0

# A round: its axis in milliseconds, then a row per rebalance, marks on the top edge of its bar, the attempts under.
ROUND_AXIS_Y = 18
ROUND_TICK_LABEL_ABOVE = 5
ROUND_ROWS_BELOW_AXIS = 8
ROUND_ROW_H = 60
ROUND_ROW = _RowLayout(swatch=14, bar=14, gap_label=8, marks=12)
ROUND_BOTTOM_PAD = 4
ROUND_PAD = 0.02  # the round's axis reaches this fraction of its length beyond it on each side,
ROUND_MIN_PAD_S = 0.0002  # and at least this many seconds
STEP_NUMBER_MIN_W = 10  # a block narrower than this is not numbered
STEP_NUMBER_BASELINE = 12.5  # below the bar's top: the 9 px number in the middle of the bar
ATTEMPT_BELOW_BAR = 7  # an attempt's bracket: its line, under the bar,
ATTEMPT_TICK = 3  # and its ends, turned up
ATTEMPT_BASELINE = 11  # the attempt's label, under its bracket
ATTEMPT_LABEL_AFTER = 14  # a short attempt's label starts this far right of it
ATTEMPT_LABEL_MARGIN = 4  # or, kept this far from the right edge, ends this far left of it
MARK_OFFSET = 6  # a round's marks, right of their time: the moment stays visible on the bar

CONSUMER_COLOURS = ("#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#bcbd22", "#7f7f7f", "#e377c2",
                    "#ff7f0e", "#d62728")
GAP_FILL = "#d62728"
MARKER_COLOUR = "#333333"


# --- SVG --------------------------------------------------------------------------------------------------------


def esc(value: object) -> str:
    """Escaped for HTML and XML text and attributes; control characters (not allowed in XML) dropped."""
    return html.escape(strip_control(str(value)), quote=True)


class Svg(str):
    """Markup made by :func:`el`, every string in it escaped: another element takes it in as it is."""

    __slots__ = ()


def el(tag: str, *content: str, **attributes: object) -> Svg:
    """One element: ``<tag name="value" ...>content</tag>``, or ``<tag .../>`` without content.

    Attributes are given in Python's spelling of their names: ``_`` for ``-`` (``stroke_width``), and a trailing
    ``_`` dropped (``class_``); one that is ``None`` is left out. A ``float`` is written short (:func:`_n`), anything
    else as ``str``. Every value is escaped here, and every piece of ``content`` that is not already :class:`Svg`
    (text: a label, a tooltip), so nothing is escaped twice or forgotten."""
    attrs = "".join(f' {name.rstrip("_").replace("_", "-")}="{esc(_n(value) if isinstance(value, float) else value)}"'
                    for name, value in attributes.items() if value is not None)
    if not content:
        return Svg(f"<{tag}{attrs}/>")
    body = "".join(part if isinstance(part, Svg) else esc(part) for part in content)
    return Svg(f"<{tag}{attrs}>{body}</{tag}>")


def _join(parts: Iterable[Svg]) -> Svg:
    return Svg("".join(parts))


def _n(value: float) -> str:
    """A coordinate, short."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def _xy(x: float, y: float) -> str:
    """A point of a path's ``d``."""
    return f"{_n(x)} {_n(y)}"


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


def _shape(kind: str, x: float, y: float, colour: str, size: float = MARK_PX) -> Svg:
    """A mark's symbol centred on (x, y), ``size`` from the centre to a tip; the round ones are drawn a little
    smaller and the square's side is 1.6 ``size``, so that every shape looks about as big as the others."""
    s = size
    if kind == "triangle":
        return el("path", d=f"M{_xy(x, y - s)} L{_xy(x + s, y + s * 0.8)} L{_xy(x - s, y + s * 0.8)} Z", fill=colour)
    if kind == "circle":
        return el("circle", cx=x, cy=y, r=s * 0.85, fill=colour)
    if kind == "ring":
        return el("circle", cx=x, cy=y, r=s * 0.8, fill="none", stroke=colour, stroke_width=2)
    if kind == "square":
        return el("rect", x=x - s * 0.8, y=y - s * 0.8, width=s * 1.6, height=s * 1.6, fill=colour)
    if kind == "diamond":
        return el("path", d=f"M{_xy(x, y - s)} L{_xy(x + s, y)} L{_xy(x, y + s)} L{_xy(x - s, y)} Z", fill=colour)
    if kind == "cross":
        return el("path", d=f"M{_xy(x - s, y - s)} L{_xy(x + s, y + s)} M{_xy(x + s, y - s)} L{_xy(x - s, y + s)}",
                  stroke=colour, stroke_width="2.4", fill="none")
    return el("rect", x=x - 1.5, y=y - s, width=3, height=2 * s, fill=colour)  # bar


def _mark_svg(mark: Mark, x: float, y: float, where: str, more: Sequence[Mark] = ()) -> Svg:
    symbol = mark_symbol(mark.kind)
    lines = [f"{where} {fmt_offset(m.time)}: {describe_mark(m)}" for m in (mark, *more)]
    if len(lines) > BURST_SHOWN:
        lines = lines[:BURST_SHOWN] + [f"... (+{len(lines) - BURST_SHOWN} more)"]
    return el("g", el("title", "\n".join(lines)), _shape(symbol.shape, x, y, symbol.colour),
              class_="mark", data_kind=mark.kind, data_count=1 + len(more) if more else None)


_AnyMark = TypeVar("_AnyMark", Mark, CoordinatorMark)


def _bursts(marks: Sequence[_AnyMark], scale: _Scale) -> list[list[_AnyMark]]:
    """Marks in time order, those of one kind within ``BURST_PX`` of the previous one merged into one symbol
    (a crash prints a traceback a line at a time; a flapping connection repeats itself)."""
    groups: list[list[_AnyMark]] = []
    for mark in sorted(marks, key=lambda m: m.time):
        last = groups[-1] if groups else None
        if last and last[-1].kind == mark.kind and scale.x(mark.time) - scale.x(last[-1].time) <= BURST_PX:
            last.append(mark)
        else:
            groups.append([mark])
    return groups


def _marks_row(marks: Sequence[Mark], scale: _Scale, y: float, where: str, shift: float = 0.0) -> list[Svg]:
    """The marks of a lane or a rebalance on one row: bursts merged, symbols spread apart."""
    bursts = _bursts(marks, scale)
    xs = _spread((scale.x(burst[0].time) for burst in bursts), MARK_SPACING_PX)
    return [_mark_svg(burst[0], x + shift, y, where, burst[1:]) for burst, x in zip(bursts, xs, strict=True)]


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
            if x >= end + LABEL_SPACING_PX:
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


def _shortened(marker: Marker, label: str, short: Callable[[str], str]) -> str:
    """A marker's label with its consumer id, or the topic it grew, as ``short`` writes them: a topic that ``short``
    leaves out (the one topic of a comparison's protocol) leaves ``partitions 4 -> 6``."""
    if marker.consumer_id:
        return label.replace(marker.consumer_id, short(marker.consumer_id))
    topic = marker.fields.get("topic")
    if isinstance(topic, str) and topic and label.startswith(f"{topic}: "):
        shown = short(topic)
        return label[len(topic) + 2:] if not shown else f"{shown}: {label[len(topic) + 2:]}"
    return label


MARKER_LABEL_SPACING_PX = 10  # between two markers' labels in one row, so that two never read as one
LINE_CLEARANCE_PX = 1.5  # how near another marker's line may come to a label's text


def _through_text(x: float, left: float, right: float) -> bool:
    """Whether a vertical line at ``x`` runs through the text of a label whose box (padding included) spans
    ``left`` to ``right``; a line in the padding, as a marker's own line beside its label, does not."""
    return left + LABEL_PAD - LINE_CLEARANCE_PX < x < right - LABEL_PAD + LINE_CLEARANCE_PX


def _marker_rows(items: Sequence[tuple[float, str]], max_rows: int) -> list[tuple[int, str, str]]:
    """Row, anchor and shown text of the markers' labels, ``(line x, label)`` in order of line x: the first row
    where the label, right of its line (``start``) or else left of it (``end``), stays on the page, meets no other
    label and no other marker's line, and its own line crosses no label placed before.

    A marker's line runs down from its label's row, so it crosses the labels of its row and the rows below: two
    labels close together in one row would read as one run-on label, and a line through a label as its border.
    Where a whole label fits nowhere (a cluster of markers at the page's right edge), the longest beginning of it
    that fits is shown, ending in an ellipsis (the tooltip has it whole); where not even a few words fit, the label
    goes right of its line in the row it crowds least (the one whose labels end first)."""
    placed: list[_PlacedLabel] = []
    result = []
    for line_x, label in items:
        choice, shown = _place_label(placed, line_x, label, max_rows), label
        words = label.split(" ")
        for keep in range(len(words) - 1, 0, -1):
            if choice is not None:
                break
            shown = " ".join(words[:keep]).rstrip(",:;") + "\u2026"
            choice = _place_label(placed, line_x, shown, max_rows)
        if choice is None:
            shown = label
            width = len(label) * CHAR_PX + 2 * LABEL_PAD
            ends = [max((p.right for p in placed if p.row == candidate), default=0.0) for candidate in range(max_rows)]
            row = min(range(max_rows), key=ends.__getitem__)
            left = line_x if line_x + width <= WIDTH - EDGE else line_x - width
            choice = _PlacedLabel(row, line_x, left, left + width)
        placed.append(choice)
        result.append((choice.row, "start" if choice.left == line_x else "end", shown))
    return result


@dataclass(frozen=True, slots=True)
class _PlacedLabel:
    row: int
    line_x: float
    left: float  # the label's box, its padding included
    right: float


def _place_label(placed: Sequence[_PlacedLabel], line_x: float, shown: str, max_rows: int) -> _PlacedLabel | None:
    """The first row, and right of the line before left of it, where ``shown`` fits (see :func:`_marker_rows`)."""
    width = len(shown) * CHAR_PX + 2 * LABEL_PAD
    for row in range(max_rows):
        for left in (line_x, line_x - width):
            candidate = _PlacedLabel(row, line_x, left, left + width)
            if _label_fits(placed, candidate):
                return candidate
    return None


def _label_fits(placed: Sequence[_PlacedLabel], new: _PlacedLabel) -> bool:
    if new.left < LEFT - LABEL_PAD or new.right > WIDTH - EDGE:
        return False
    for other in placed:
        if other.row == new.row and new.left < other.right + MARKER_LABEL_SPACING_PX \
                and other.left < new.right + MARKER_LABEL_SPACING_PX:
            return False  # the labels would touch
        if other.row <= new.row and _through_text(other.line_x, new.left, new.right):
            return False  # the other marker's line would cross this label
        if other.row >= new.row and _through_text(new.line_x, other.left, other.right):
            return False  # this marker's line would cross the other's label
    return True


HATCH_PX = 6


def _hatch(id_: str, fill: str, fill_opacity: str, stroke: str, stroke_opacity: str) -> Svg:
    """A fill of diagonal stripes: a tinted square crossed by one line, repeated and turned 45 degrees."""
    return el("pattern",
              el("rect", width=HATCH_PX, height=HATCH_PX, fill=fill, fill_opacity=fill_opacity),
              el("line", x1=0, y1=0, x2=0, y2=HATCH_PX, stroke=stroke, stroke_opacity=stroke_opacity, stroke_width=2),
              id=id_, width=HATCH_PX, height=HATCH_PX, patternUnits="userSpaceOnUse", patternTransform="rotate(45)")


def _defs(prefix: str) -> Svg:
    """The hatches: ``hatch`` over an owner that was killed, ``gaphatch`` for a gap this rebalance did not close."""
    return el("defs", _hatch(f"{prefix}hatch", "#ffffff", "0.25", "#000000", "0.45"),
              _hatch(f"{prefix}gaphatch", GAP_FILL, "0.10", GAP_FILL, "0.35"))


# Markup, not text: inline in HTML, a <style> is not unescaped, so it goes in as it is.
SVG_STYLE = Svg(
    "text{font-family:sans-serif;font-size:11px;fill:#222}"
    ".small{font-size:10px;fill:#555}.lanelabel{font-size:12px;font-weight:bold}"
    ".gaplabel{font-size:10.5px;font-weight:bold;fill:#a50f15}.ownerlabel{font-size:10px;fill:#ffffff}"
    ".markerlabel{font-size:11px;font-weight:bold;fill:#333}.steplabel{font-size:9px;fill:#ffffff}"
)


def _drawing(class_: str, height: float, prefix: str, parts: Iterable[Svg], standalone: bool = False) -> str:
    """The ``<svg>`` around a drawing, with its styles and hatches. ``standalone`` adds the XML namespace a ``.svg``
    file needs (inline in HTML it is not needed, and the page names no URL)."""
    return el("svg", el("style", SVG_STYLE), _defs(prefix), *parts,
              xmlns="http://www.w3.org/2000/svg" if standalone else None, class_=class_, width=WIDTH, height=height,
              viewBox=f"0 0 {WIDTH} {_n(height)}", role="img")


def _swatch_and_name(row: _RowLayout, top: float, colour: str, *name: str) -> list[Svg]:
    """The label column's first line: the consumer's colour and its name (the name, or a tooltip and a name)."""
    return [el("rect", x=SWATCH_X, y=top + row.swatch, width=SWATCH_PX, height=SWATCH_PX, fill=colour),
            el("text", *name, x=NAME_X, y=top + row.name, class_="lanelabel")]


def _gap_band(gap: Gap, x: float, width: float, top: float, opacity: str, prefix: str, **stroke: object) -> Svg:
    """A stop-the-world band over a row's bar: red when this rebalance closed it, hatched when it did not."""
    fill_attrs: dict[str, object] = ({"fill": GAP_FILL, "fill_opacity": opacity} if gap.finished
                                     else {"fill": f"url(#{prefix}gaphatch)"})
    return el("rect", x=x, y=top - GAP_OVERHANG, width=width, height=BAR_H + 2 * GAP_OVERHANG, **fill_attrs,
              stroke=GAP_FILL, **stroke)


# --- the overview -----------------------------------------------------------------------------------------------


def render_svg(timeline: Timeline, standalone: bool = True, links: bool = False, axis_end: float | None = None,
               prefix: str = "ov-", short: Callable[[str], str] | None = None,
               marker_label_rows: int = MARKER_ROWS_MAX, legend: bool = True) -> str:
    """The overview: axis, lanes, partition owners, markers and the legend, as one ``<svg>``. ``standalone``
    adds the XML namespace a ``.svg`` file needs (inline in HTML it is not needed, and the page names no URL);
    ``links`` makes each rebalance a link to its round on the HTML page. ``axis_end`` (seconds) stretches the
    axis beyond the trace's end, so that several overviews drawn one above the other share one time scale;
    ``prefix`` keeps the ids of several overviews on one page apart. ``short`` shortens the consumer ids and
    topics written on the drawing (lane, marker, partition and owner labels), when their common part would crowd
    it: the full names stay in the tooltips; ``marker_label_rows`` is how many rows the markers' labels may take
    before they overlap. ``legend=False`` leaves the legend out, for a page that draws several overviews and one
    legend (:func:`render_legend_svg`)."""
    colours = consumer_colours(timeline)
    end = max(timeline.end, axis_end or 0.0)
    scale = _Scale(0.0, end if end > 0 else 1.0)
    out: list[Svg] = []

    markers = [(m, *describe_marker(m)) for m in timeline.markers]
    if short is not None:
        markers = [(m, _shortened(m, label, short), note) for m, label, note in markers]
    # A label starts right of its line, or ends left of it, whichever finds a row nearer the top (_marker_rows).
    lines_x = [scale.x(marker.time) for marker, _, _ in markers]
    order = sorted(range(len(markers)), key=lines_x.__getitem__)
    sorted_places = _marker_rows([(lines_x[i], markers[i][1]) for i in order], marker_label_rows)
    marker_rows = [0] * len(markers)
    placements: list[tuple[str, str]] = [("start", "")] * len(markers)
    for i, (row, anchor, shown) in zip(order, sorted_places, strict=True):
        marker_rows[i] = row
        placements[i] = (anchor, shown)
    rows_used = max(marker_rows, default=-1) + 1
    axis_y = TOP_PAD + rows_used * MARKER_ROW_H + AXIS_BELOW_MARKERS
    coordinators_top = axis_y + LANES_BELOW_AXIS
    lanes_top = coordinators_top + len(timeline.coordinators) * LANE_H
    owners_top = lanes_top + len(timeline.lanes) * LANE_H + OWNERS_BELOW_LANES
    bottom = owners_top + len(timeline.partitions) * OWNER_ROW_H
    legend_top = bottom + LEGEND_BELOW_OWNERS
    if legend:
        drawn_legend, legend_h = _legend(legend_top, coordinator=bool(timeline.coordinators))
        height = legend_top + legend_h + TOP_PAD
    else:
        height = bottom + TOP_PAD

    # axis and grid
    tick = _nice_step(scale.end - scale.start, AXIS_TICKS)
    decimals = max(0, -math.floor(math.log10(tick))) if tick < 1 else 0
    axis = [el("line", x1=LEFT, y1=axis_y, x2=WIDTH - RIGHT, y2=axis_y, stroke="#888")]
    t = 0.0
    while t <= scale.end + 1e-9:
        x = scale.x(t)
        axis.append(el("line", x1=x, y1=axis_y, x2=x, y2=bottom, stroke="#e4e4e4"))
        axis.append(el("text", f"+{t:.{decimals}f}s", x=x, y=axis_y - TICK_LABEL_ABOVE, text_anchor="middle",
                       class_="small"))
        t += tick
    out.append(el("g", *axis, class_="axis"))

    for index, coordinator in enumerate(timeline.coordinators):
        out.append(_coordinator_lane_svg(coordinator, coordinators_top + index * LANE_H, scale, short))
    for index, lane in enumerate(timeline.lanes):
        out.append(_lane_svg(lane, lanes_top + index * LANE_H, scale, colours[lane.consumer_id], prefix, links, short))

    out.append(_owners_svg(timeline, owners_top, scale, colours, prefix, short))

    for (marker, label, note), row, (anchor, shown) in zip(markers, marker_rows, placements, strict=True):
        x = scale.x(marker.time)
        row_top = TOP_PAD + row * MARKER_ROW_H
        tooltip = f"{fmt_offset(marker.time)} {label}" + (f": {note}" if note else "")
        out.append(el("g", el("title", tooltip),
                      el("line", x1=x, y1=row_top + MARKER_LINE_TOP, x2=x, y2=bottom, stroke=MARKER_COLOUR,
                         stroke_width="1.2", stroke_dasharray="5 3"),
                      el("text", shown, x=x + LABEL_PAD if anchor == "start" else x - LABEL_PAD,
                         y=row_top + MARKER_BASELINE, text_anchor=anchor, class_="markerlabel"),
                      class_="marker", data_kind=marker.kind))
    if legend:
        out.append(drawn_legend)
    return _drawing("overview", height, prefix, out, standalone)


def render_legend_svg(coordinator: bool = False, standalone: bool = False, prefix: str = "lg-") -> str:
    """The overview's legend alone, as its own ``<svg>``: for a page that draws several overviews without theirs.
    ``coordinator`` adds the coordinator lane's states, round and marks."""
    legend, height = _legend(TOP_PAD, coordinator=coordinator)
    return _drawing("legend-drawing", TOP_PAD + height + TOP_PAD, prefix, [legend], standalone)


def _coordinator_lane_svg(lane: CoordinatorLane, top: float, scale: _Scale,
                          short: Callable[[str], str] | None = None) -> Svg:
    """A group's coordinator: its state as a band along the top, its rounds as blocks, the marks under them."""
    row = LANE_ROW
    full = f"group coordinator of {lane.group} ({lane.protocol} protocol, {plural(lane.events, 'event')})"
    out = _swatch_and_name(row, top, ROUND_STROKE, el("title", full), "coordinator")
    second = f"group {lane.group}" if short is None else f"{lane.protocol} protocol"
    out.append(el("text", second, x=NAME_X, y=top + row.second_line, class_="small"))
    for stretch in lane.states:
        x, width = scale.span(stretch.start, stretch.end, MIN_STATE_PX)
        parts = [el("title", f"group {lane.group}: {describe_state(stretch, lane.protocol)}"),
                 el("rect", x=x, y=top + STATE_TOP, width=width, height=STATE_H, fill=state_colour(stretch.state))]
        if width >= len(stretch.state) * SMALL_CHAR_PX + 2 * LABEL_PAD:
            parts.append(el("text", stretch.state, x=x + LABEL_PAD, y=top + STATE_TOP + STATE_BASELINE,
                            class_="small"))
        out.append(el("g", *parts, class_="state", data_state=stretch.state, data_epoch=stretch.epoch))
    bar_y = top + row.bar
    for rnd in lane.rounds:
        x, width = scale.span(rnd.start, rnd.end, MIN_BLOCK_PX)
        parts = [el("title", f"group {lane.group}: {describe_round(rnd)}"),
                 el("rect", x=x, y=bar_y, width=width, height=BAR_H, fill=ROUND_FILL, stroke=ROUND_STROKE,
                    stroke_dasharray=None if rnd.completed else "3 2")]
        label = round_label(rnd)
        members = ", ".join(short(m) if short is not None else m for m in rnd.members)
        for candidate in (f"{label}: {members}" if members else label, label):
            if width >= len(candidate) * SMALL_CHAR_PX + 2 * LABEL_PAD:
                parts.append(el("text", candidate, x=x + LABEL_PAD, y=bar_y + ROUND_LABEL_BASELINE, class_="small"))
                break
        out.append(el("g", *parts, class_="coordinator-round", data_epoch=rnd.epoch, data_outcome=rnd.ended_by))
    bursts = _bursts(lane.marks, scale)
    xs = _spread((scale.x(burst[0].time) for burst in bursts), MARK_SPACING_PX)
    for burst, x in zip(bursts, xs, strict=True):
        out.append(_coordinator_mark_svg(lane, burst, x, top + row.marks))
    return el("g", *out, class_="coordinator", data_group=lane.group, data_protocol=lane.protocol)


def _coordinator_mark_svg(lane: CoordinatorLane, burst: Sequence[CoordinatorMark], x: float, y: float) -> Svg:
    lines = []
    for mark in burst:
        said = describe_coordinator_event(mark.name, mark.fields, lane.member_name)
        fields = fmt_fields(mark.fields)
        lines.append(f"group {lane.group} {fmt_offset(mark.time)}: {said}" + (f" [{fields}]" if fields else ""))
    if len(lines) > BURST_SHOWN:
        lines = lines[:BURST_SHOWN] + [f"... (+{len(lines) - BURST_SHOWN} more)"]
    kind = COORDINATOR_MARKS.get(burst[0].kind)
    symbol = kind.symbol if kind is not None else UNKNOWN_MARK_SYMBOL
    return el("g", el("title", "\n".join(lines)), _shape(symbol.shape, x, y, symbol.colour),
              class_="coordinator-mark", data_kind=burst[0].kind, data_count=len(burst) if len(burst) > 1 else None)


def _lane_svg(lane: Lane, top: float, scale: _Scale, colour: str, prefix: str, links: bool,
              short: Callable[[str], str] | None = None) -> Svg:
    row = LANE_ROW
    if short is not None:
        full = lane.consumer_id + (f" (group {lane.group})" if lane.group else "")
        out = _swatch_and_name(row, top, colour, el("title", full), short(lane.consumer_id))
    else:
        out = _swatch_and_name(row, top, colour, lane.consumer_id)
    if lane.group and short is None:
        out.append(el("text", f"group {lane.group}", x=NAME_X, y=top + row.second_line, class_="small"))
    bar_y = top + row.bar
    for life in lane.lives:
        x, width = scale.span(life.start, life.end, MIN_LIFE_PX)
        out.append(el("rect", class_="life", x=x, y=top + LIFE_INSET, width=width, height=LANE_H - 2 * LIFE_INSET,
                      fill="#f3f5f8"))
        out.append(el("line", x1=x, y1=top + row.bar_middle, x2=x + width, y2=top + row.bar_middle, stroke="#c8ccd2"))
    # gaps first (behind the steps), with their length; labels in two rows when close
    gaps = [(r, r.gap) for r in lane.rebalances if r.gap is not None]
    labels = [fmt_ms(gap.duration_ms) for _, gap in gaps]
    widths = [len(text) * CHAR_PX for text in labels]
    label_x = [min(max(scale.x((gap.start + gap.end) / 2), LEFT + w / 2), WIDTH - EDGE - w / 2)
               for (_, gap), w in zip(gaps, widths, strict=True)]
    rows = _label_rows([(x - w / 2, w) for x, w in zip(label_x, widths, strict=True)], GAP_LABEL_ROWS)
    for (rebalance, gap), text, x_mid, label_row in zip(gaps, labels, label_x, rows, strict=True):
        x, width = scale.span(gap.start, gap.end, MIN_GAP_PX)
        tooltip = f"{lane.consumer_id} rebalance {rebalance.rebalance_id}: {describe_gap(gap)}, " \
                  f"{fmt_offset(gap.start)} to {fmt_offset(gap.end)}"
        out.append(el("g", el("title", tooltip),
                      _gap_band(gap, x, width, bar_y, "0.22", prefix, stroke_width=1,
                                stroke_dasharray=None if gap.finished else "3 2"),
                      el("text", text, x=x_mid, y=top + row.gap_label + label_row * GAP_LABEL_ROW_H,
                         text_anchor="middle", class_="gaplabel"),
                      class_="gap", data_rebalance=rebalance.rebalance_id, data_ms=f"{gap.duration_ms:.3f}"))
    for rebalance in lane.rebalances:
        out.append(_rebalance_blocks(lane, rebalance, scale, bar_y, links))
    out += _marks_row(lane.marks, scale, top + row.marks, lane.consumer_id)
    for life in lane.lives:
        ending = LIFE_ENDS.get(life.ended_by or "")
        if ending is not None:
            symbol = ending.symbol
            out.append(el("g", el("title", f"{lane.consumer_id} {life.ended_by} at {fmt_offset(life.end)}"),
                          _shape(symbol.shape, scale.x(life.end), top + row.bar_middle, symbol.colour, LIFE_END_PX),
                          class_="mark", data_kind=life.ended_by))
    return el("g", *out, class_="lane", data_consumer=lane.consumer_id)


def _rebalance_blocks(lane: Lane, rebalance: Rebalance, scale: _Scale, y: float, links: bool) -> Svg:
    blocks = [el("title", f"{lane.consumer_id} {describe_rebalance(rebalance)}")]
    for step in rebalance.steps:
        x, width = scale.span(step.start, step.end, MIN_BLOCK_PX)
        blocks.append(el("rect", el("title", _step_tooltip(lane, rebalance, step)), class_="step",
                         data_step=step.name, x=x, y=y, width=width, height=BAR_H, fill=step_colour(step)))
    body = el("a", *blocks, href="#" + rebalance_anchor(lane.consumer_id, rebalance)) if links else _join(blocks)
    return el("g", body, class_="rebalance", data_consumer=lane.consumer_id, data_rebalance=rebalance.rebalance_id,
              data_outcome=rebalance.outcome)


def _step_tooltip(lane: Lane, rebalance: Rebalance, step: Step) -> str:
    facts = describe_step(step)
    return (f"{lane.consumer_id} rebalance {rebalance.rebalance_id} attempt {step.attempt}: step {step.number} "
            f"{step.title}, {fmt_ms(step.duration_ms)} (ends {fmt_offset(step.end)})" + (f"; {facts}" if facts else ""))


def rebalance_anchor(consumer_id: str, rebalance: Rebalance) -> str:
    return "r-" + _slug(consumer_id, rebalance.rebalance_id, f"{rebalance.start:.6f}")


def _owners_svg(timeline: Timeline, top: float, scale: _Scale, colours: dict[str, str], prefix: str,
                short: Callable[[str], str] | None = None) -> Svg:
    heading_y = top - OWNERS_HEADING_ABOVE
    out = [el("text", "partition owners", x=SWATCH_X, y=heading_y, class_="lanelabel"),
           el("text", "colour: consumer; label: thread; hatched: the owner was killed, its owner znode lives until "
                      "its session expires", x=OWNERS_NOTE_X, y=heading_y, class_="small")]
    killed = {lane.consumer_id: [life.end for life in lane.lives if life.ended_by == "killed"]
              for lane in timeline.lanes}
    by_partition: dict[tuple[str, int], list[Ownership]] = {}
    for owner in timeline.ownership:
        by_partition.setdefault((owner.topic, owner.partition), []).append(owner)
    for index, (topic, partition) in enumerate(timeline.partitions):
        y = top + index * OWNER_ROW_H
        name: list[str] = [f"{topic}-{partition}"]
        if short is not None:
            shown_topic = short(topic)
            name = [el("title", name[0]), f"{shown_topic}-{partition}" if shown_topic else f"partition {partition}"]
        row = [el("text", *name, x=PARTITION_NAME_END, y=y + OWNER_BASELINE, text_anchor="end"),
               el("rect", x=LEFT, y=y + OWNER_ROW_INSET, width=WIDTH - RIGHT - LEFT,
                  height=OWNER_ROW_H - 2 * OWNER_ROW_INSET, fill="#fafafa", stroke="#eeeeee")]
        for owner in by_partition.get((topic, partition), []):
            end = owner.end if owner.end is not None else timeline.end
            x, width = scale.span(owner.start, end, MIN_OWNER_PX)
            label = owner.thread or owner.consumer_id
            shown = short(label) if short is not None else label
            bar_h = OWNER_ROW_H - 2 * OWNER_BAR_INSET
            parts = [el("title", describe_ownership(owner)),
                     el("rect", x=x, y=y + OWNER_BAR_INSET, width=width, height=bar_h,
                        fill=colours.get(owner.consumer_id, "#999999"))]
            for k in killed.get(owner.consumer_id, []):
                if owner.start < k < end:
                    kx = scale.x(k)
                    parts.append(el("rect", x=kx, y=y + OWNER_BAR_INSET, width=max(x + width - kx, 1), height=bar_h,
                                    fill=f"url(#{prefix}hatch)"))
            if width >= len(shown) * SMALL_CHAR_PX + 2 * LABEL_PAD:
                parts.append(el("text", shown, x=x + LABEL_PAD, y=y + OWNER_BASELINE, class_="ownerlabel"))
            row.append(el("g", *parts, class_="owner", data_consumer=owner.consumer_id, data_thread=label))
        out.append(el("g", *row, class_="partition", data_topic=topic, data_partition=partition))
    return el("g", *out, class_="owners")


def _legend(top: float, coordinator: bool = False) -> tuple[Svg, float]:
    """The steps' colours with their numbers and titles, the mark symbols, the gap, and with ``coordinator`` a row
    for the coordinator lanes (group states, a round, their marks); returns (svg, height)."""
    out = [el("text", "legend", x=SWATCH_X, y=top + LEGEND_HEADING_BASELINE, class_="lanelabel")]
    for i, step in enumerate(STEPS):
        x = LEFT + (i % LEGEND_COLUMNS) * LEGEND_COLUMN_W
        y = top + (i // LEGEND_COLUMNS) * LEGEND_ROW_H
        out.append(el("g", el("title", step.meaning),
                      el("rect", x=x, y=y + LEGEND_SWATCH_TOP, width=LEGEND_SWATCH_PX, height=LEGEND_SWATCH_PX,
                         fill=_step_colour(step.name)),
                      el("text", f"{step.number} {step.title}", x=x + LEGEND_STEP_TEXT_X, y=y + LEGEND_BASELINE),
                      class_="legend-step", data_step=step.name))
    y = top + math.ceil(len(STEPS) / LEGEND_COLUMNS) * LEGEND_ROW_H + LEGEND_MARKS_BELOW_STEPS
    items: list[tuple[str, str, Symbol | None]] = [("gap", "stop-the-world gap (ms)", None)]
    items += [(mark.kind, mark.title, mark.symbol) for mark in MARK_KINDS]
    items += [(end.kind, end.title, end.symbol) for end in LIFE_ENDS.values() if end.in_legend]
    left: float = LEFT
    for kind, title, symbol in items:
        width = LEGEND_MARK_W + len(title) * CHAR_PX
        if left + width > WIDTH - RIGHT:
            left, y = LEFT, y + LEGEND_ROW_H
        if symbol is None:  # the gap
            drawn = el("rect", x=left, y=y + LEGEND_SWATCH_TOP, width=LEGEND_GAP_W, height=LEGEND_SWATCH_PX,
                       fill=GAP_FILL, fill_opacity="0.22", stroke=GAP_FILL)
        else:
            drawn = _shape(symbol.shape, left + LEGEND_GAP_W / 2, y + LEGEND_SWATCH_TOP + LEGEND_SWATCH_PX / 2,
                           symbol.colour)
        out.append(el("g", drawn, el("text", title, x=left + LEGEND_MARK_TEXT_X, y=y + LEGEND_BASELINE),
                      class_="legend-mark", data_kind=kind))
        left += width
    if coordinator:
        coordinator_legend, rows = _legend_coordinator(y + LEGEND_ROW_H + LEGEND_MARKS_BELOW_STEPS)
        out.append(coordinator_legend)
        y += LEGEND_MARKS_BELOW_STEPS + rows * LEGEND_ROW_H
    return el("g", *out, class_="legend"), y + LEGEND_ROW_H - top


ROUND_LEGEND = "round, labelled with its generation (classic) or group epoch (KIP-848)"


def _legend_coordinator(top: float) -> tuple[Svg, int]:
    """The coordinator lane's part of the legend, headed ``coordinator``: its states' colours (their meanings in
    tooltips), a round, its marks, in rows that wrap; returns (svg, rows)."""
    out = [el("text", "coordinator", x=SWATCH_X, y=top + LEGEND_BASELINE, class_="lanelabel")]
    left, y = float(LEFT), top

    def place(title: str) -> tuple[float, float]:
        nonlocal left, y
        width = LEGEND_MARK_W + len(title) * CHAR_PX
        if left + width > WIDTH - RIGHT and left > LEFT:
            left, y = LEFT, y + LEGEND_ROW_H
        at = left, y
        left += width
        return at

    for state in GROUP_STATES:
        x, row = place(state.state)
        out.append(el("g", el("title", state.meaning),
                      el("rect", x=x, y=row + LEGEND_SWATCH_TOP, width=LEGEND_GAP_W, height=LEGEND_SWATCH_PX,
                         fill=state.colour),
                      el("text", state.state, x=x + LEGEND_MARK_TEXT_X, y=row + LEGEND_BASELINE),
                      class_="legend-state", data_state=state.state))
    x, row = place(ROUND_LEGEND)
    out.append(el("g", el("rect", x=x, y=row + LEGEND_SWATCH_TOP, width=LEGEND_GAP_W, height=LEGEND_SWATCH_PX,
                          fill=ROUND_FILL, stroke=ROUND_STROKE),
                  el("text", ROUND_LEGEND, x=x + LEGEND_MARK_TEXT_X, y=row + LEGEND_BASELINE),
                  class_="legend-round"))
    for mark in COORDINATOR_MARK_KINDS:
        x, row = place(mark.title)
        drawn = _shape(mark.symbol.shape, x + LEGEND_GAP_W / 2, row + LEGEND_SWATCH_TOP + LEGEND_SWATCH_PX / 2,
                       mark.symbol.colour)
        out.append(el("g", drawn, el("text", mark.title, x=x + LEGEND_MARK_TEXT_X, y=row + LEGEND_BASELINE),
                      class_="legend-coordinator-mark", data_kind=mark.kind))
    return el("g", *out, class_="legend-coordinator"), round((y - top) / LEGEND_ROW_H) + 1


# --- rounds: the zoomed strips ----------------------------------------------------------------------------------


def render_round_svg(timeline: Timeline, rnd: Round) -> str:
    """One round zoomed to the page's width: a row per rebalance, steps as labelled blocks, gaps, attempts."""
    colours = consumer_colours(timeline)
    pad = max((rnd.end - rnd.start) * ROUND_PAD, ROUND_MIN_PAD_S)
    scale = _Scale(rnd.start - pad, rnd.end + pad)
    rows = sorted(rnd.rebalances, key=lambda r: (_lane_index(timeline, r.consumer_id), r.start))
    rows_top = ROUND_AXIS_Y + ROUND_ROWS_BELOW_AXIS
    height = rows_top + len(rows) * ROUND_ROW_H + ROUND_BOTTOM_PAD
    prefix = f"rd{rnd.index}-"
    out = [el("line", x1=LEFT, y1=ROUND_AXIS_Y, x2=WIDTH - RIGHT, y2=ROUND_AXIS_Y, stroke="#888")]
    tick = _nice_step((scale.end - scale.start) * 1000, AXIS_TICKS)
    ms = math.ceil(-pad * 1000 / tick) * tick
    while ms <= (rnd.end - rnd.start + pad) * 1000 + 1e-9:
        x = scale.x(rnd.start + ms / 1000)
        out.append(el("line", x1=x, y1=ROUND_AXIS_Y, x2=x, y2=height - ROUND_BOTTOM_PAD, stroke="#eeeeee"))
        out.append(el("text", f"+{ms:g} ms", x=x, y=ROUND_AXIS_Y - ROUND_TICK_LABEL_ABOVE, text_anchor="middle",
                      class_="small"))
        ms += tick
    for index, rebalance in enumerate(rows):
        out.append(_round_row(rebalance, rows_top + index * ROUND_ROW_H, scale, colours, prefix))
    return _drawing("round", height, prefix, out)


def _lane_index(timeline: Timeline, consumer_id: str) -> int:
    for index, lane in enumerate(timeline.lanes):
        if lane.consumer_id == consumer_id:
            return index
    return len(timeline.lanes)


def _round_row(rebalance: Rebalance, top: float, scale: _Scale, colours: dict[str, str], prefix: str) -> Svg:
    row = ROUND_ROW
    consumer = rebalance.consumer_id
    out = _swatch_and_name(row, top, colours.get(consumer, "#999"), consumer)
    out.append(el("text", f"rebalance {rebalance.rebalance_id}" + (f" ({rebalance.cause})" if rebalance.cause else ""),
                  x=NAME_X, y=top + row.second_line, class_="small"))
    bar_y, bar_middle = top + row.bar, top + row.bar_middle
    x0, x1 = scale.x(rebalance.start), scale.x(rebalance.end)
    out.append(el("line", x1=x0, y1=bar_middle, x2=x1, y2=bar_middle, stroke="#999", stroke_dasharray="2 2"))
    gap = rebalance.gap
    if gap is not None:
        x, width = scale.span(gap.start, min(gap.end, scale.end), MIN_GAP_PX)
        out.append(el("g", el("title", describe_gap(gap)), _gap_band(gap, x, width, bar_y, "0.16", prefix),
                      el("text", describe_gap(gap), x=x + width / 2, y=top + row.gap_label, text_anchor="middle",
                         class_="gaplabel"),
                      class_="gap", data_ms=f"{gap.duration_ms:.3f}"))
    for step in rebalance.steps:
        x, width = scale.span(step.start, step.end, MIN_BLOCK_PX)
        block = [el("title", _step_tooltip_round(step)),
                 el("rect", x=x, y=bar_y, width=width, height=BAR_H, fill=step_colour(step), stroke="#ffffff",
                    stroke_width="0.5")]
        if width >= STEP_NUMBER_MIN_W:
            block.append(el("text", str(step.number), x=x + width / 2, y=bar_y + STEP_NUMBER_BASELINE,
                            text_anchor="middle", class_="steplabel"))
        out.append(el("g", *block, class_="step", data_step=step.name))
    for attempt in rebalance.attempts:
        if attempt.start is None or attempt.end is None:
            continue
        ax0, ax1 = scale.x(attempt.start), scale.x(attempt.end)
        y = bar_y + BAR_H + ATTEMPT_BELOW_BAR
        label = f"attempt {attempt.number}: {attempt.outcome}" + (f" ({attempt.reason})" if attempt.reason else "")
        text_x, anchor, label_w = ax0, "start", len(label) * SMALL_CHAR_PX
        if ax1 - ax0 < label_w:  # a short attempt: its label after it, or before it at the right edge
            text_x = ax1 + ATTEMPT_LABEL_AFTER
            if text_x + label_w > WIDTH - ATTEMPT_LABEL_MARGIN:
                text_x, anchor = ax0 - ATTEMPT_LABEL_MARGIN, "end"
        bracket = f"M{_xy(ax0, y - ATTEMPT_TICK)} V{_n(y)} H{_n(max(ax1, ax0 + 2))} V{_n(y - ATTEMPT_TICK)}"
        out.append(el("g", el("title", label), el("path", d=bracket, stroke="#666", fill="none"),
                      el("text", label, x=text_x, y=y + ATTEMPT_BASELINE, text_anchor=anchor, class_="small"),
                      class_="attempt", data_attempt=attempt.number, data_outcome=attempt.outcome))
        if attempt.outcome == "failed" and attempt.backoff_ms:
            bx1 = scale.x(attempt.end + attempt.backoff_ms / 1000)
            out.append(el("g", el("title", f"backoff {fmt_ms(attempt.backoff_ms)} before the next attempt"),
                          el("line", x1=ax1, y1=bar_middle, x2=bx1, y2=bar_middle, stroke="#e6550d",
                             stroke_width="1.5", stroke_dasharray="6 3"),
                          class_="backoff"))
    out += _marks_row(rebalance.marks, scale, top + row.marks, f"{consumer} rebalance {rebalance.rebalance_id}",
                      shift=MARK_OFFSET)
    return el("g", *out, class_="round-row", data_consumer=consumer, data_rebalance=rebalance.rebalance_id)


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
        coordinators_text=_coordinators_text(timeline),
        overview=Html(render_svg(timeline, standalone=False, links=True)),
        rounds=[_round_section(timeline, rnd) for rnd in rounds],
    )


def _coordinators_text(timeline: Timeline) -> str:
    """What the overview's coordinator lanes show, for the page's help; empty when there is none."""
    if not timeline.coordinators:
        return ""
    return (f"Above the consumers, {plural(len(timeline.coordinators), 'coordinator lane')}, one per group: the "
            f"group's state as a band, each round as a block labelled with the generation (classic) or group epoch "
            f"(KIP-848) it made and its members, and marks where a member joined, left, expired or was fenced and "
            f"where an assignment was sent or computed.")


def _meta(timeline: Timeline) -> str:
    if timeline.origin is None:
        return "empty trace"
    start = timeline.origin.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    bits = [f"from {start}", f"{timeline.end:.3f} s", plural(len(timeline.lanes), "consumer")]
    if timeline.coordinators:
        bits.append(plural(len(timeline.coordinators), "group coordinator"))
    bits += [plural(len(timeline.partitions), "partition"), plural(len(timeline.markers), "marker"),
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
