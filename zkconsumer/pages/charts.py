"""Ordinary charts for the pages (bars and lines), drawn by matplotlib as SVG and inlined in the page.

Why matplotlib's SVG: the chart is static markup inside the HTML, so the page opens from a file with no network
and no script, a chart costs 10 to 30 KB where plotly or bokeh inline 1 to 4 MB of JavaScript per page, and
its text stays text (``svg.fonttype`` ``none``: searchable, escaped, in the page's own sans-serif). Altair needs
the Vega runtime in the browser or a headless renderer to make SVG. matplotlib installs from wheels on every
platform and has been maintained for twenty years.

It is imported by the first chart, not before: the rest of zkconsumer does not pay its second of import time.
Charts are made with ``Figure`` objects, never ``pyplot``, so nothing global is touched and threads are safe.
Output is deterministic (fixed hash salt, no date), so a page can be compared with yesterday's.
"""

from __future__ import annotations

import hashlib
import html
import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from zkconsumer.pages.render import strip_control

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

SIZE = (7.0, 3.2)  # inches; 504 x 230 pt, about 670 px wide in a browser
LABEL_CHAR_INCHES = 0.085  # about the width of a character of a 10 pt tick label
STYLE: dict[str, Any] = {
    "svg.fonttype": "none",  # text as <text>, not glyph paths
    "svg.hashsalt": "zkconsumer",  # clip-path ids the same from one run to the next
    "text.parse_math": False,  # a "$" in a consumer id is a dollar sign, not TeX
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans"],  # matplotlib ships it and measures with it; a browser without it falls back
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "axes.grid.axis": "y",
    "grid.color": "#e4e4e4",
    "legend.frameon": False,
}
# what the browser's HTML parser does not need and an offline page must not carry: the XML prolog, the DOCTYPE
# (a URL), the namespace declarations (URLs), the metadata block
_PROLOG = re.compile(r"\A.*?(?=<svg\b)", re.DOTALL)
_NAMESPACES = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')
_REFERENCE = re.compile(r'(\bid="|url\(#|href="#)([^")]+)(?=[")])')


@dataclass(frozen=True, slots=True)
class Chart:
    """A chart as inline SVG markup. A template prints it as it is (``{{ chart }}``, or the ``figure`` macro):
    its strings were escaped when the SVG was written."""

    title: str
    svg: str

    def __html__(self) -> str:
        return self.svg

    def __str__(self) -> str:
        return self.svg


def bar_chart(categories: Sequence[str], series: Mapping[str, Sequence[float]], *, title: str, xlabel: str = "",
              ylabel: str = "", stacked: bool = False, size: tuple[float, float] = SIZE,
              chart_id: str | None = None, integer: bool = False) -> Chart:
    """One bar per category and series: side by side, or ``stacked``. A legend when there is more than one
    series. ``integer``: the values are counts, so the y-axis ticks are whole numbers (no 0.5 of a conflict)."""
    _check_lengths(len(categories), series)

    def draw(ax: Axes) -> None:
        if integer:
            from matplotlib.ticker import MaxNLocator

            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        positions = list(range(len(categories)))
        count = max(len(series), 1)
        width = 0.8 if stacked else 0.8 / count
        bottoms = [0.0] * len(categories)
        for index, (name, values) in enumerate(series.items()):
            if stacked:
                ax.bar(positions, values, width, bottom=bottoms, label=_clean(name))
                bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
            else:
                offset = (index - (count - 1) / 2) * width
                ax.bar([p + offset for p in positions], values, width, label=_clean(name))
        labels = [_clean(c) for c in categories]
        ax.set_xticks(positions, labels)
        # Labels wider than their bar's share of the axis would run into each other (long consumer ids): slanted.
        if labels and max(map(len, labels)) * LABEL_CHAR_INCHES > size[0] * 0.85 / len(labels):
            ax.tick_params(axis="x", labelrotation=30)
            for label in ax.get_xticklabels():
                label.set_horizontalalignment("right")
                label.set_rotation_mode("anchor")

    return _chart(draw, title, xlabel, ylabel, len(series) > 1, size, chart_id)


def line_chart(x: Sequence[float], series: Mapping[str, Sequence[float]], *, title: str, xlabel: str = "",
               ylabel: str = "", markers: bool = True, size: tuple[float, float] = SIZE,
               chart_id: str | None = None, log: bool = False, distinct: bool = False) -> Chart:
    """One line per series over the same ``x``; points marked unless ``markers`` is false (for long series).
    ``log``: both axes logarithmic (figures spanning decades), ticked at the ``x`` values and at each decade (1, 2
    and 5 of each over two decades or less), labelled in plain numbers (TeX's 10 to the power is off:
    ``text.parse_math``). ``distinct``: each series its own marker and dashes, so that curves which coincide both
    stay visible, and the legend under the axes, where it hides none of them. A NaN value leaves a gap."""
    _check_lengths(len(x), series)

    def draw(ax: Axes) -> None:
        for index, (name, values) in enumerate(series.items()):
            style = _DISTINCT[index % len(_DISTINCT)] if distinct else ("o", "-")
            ax.plot(x, values, marker=style[0] if markers else None, linestyle=style[1], markersize=3.5,
                    linewidth=1.6, label=_clean(name))
        ax.grid(True, axis="both")
        if log:
            from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xticks(list(x), [f"{v:,g}" for v in x])
            ax.xaxis.set_minor_formatter(NullFormatter())
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if _decades(series) <= 2 else (1.0,)))
            ax.yaxis.set_major_formatter(FuncFormatter(_plain_number))
            ax.yaxis.set_minor_formatter(NullFormatter())

    return _chart(draw, title, xlabel, ylabel, len(series) > 1, size, chart_id, legend_below=distinct)


#: (marker, line style) of each series of a ``distinct`` chart
_DISTINCT = (("o", "-"), ("s", "--"), ("^", ":"), ("D", "-."), ("v", (0, (5, 1, 1, 1))), ("P", (0, (1, 1))))


def _decades(series: Mapping[str, Sequence[float]]) -> float:
    """How many decades the positive values span (0 for none)."""
    values = [v for values in series.values() for v in values if v > 0 and math.isfinite(v)]
    return math.log10(max(values) / min(values)) if values else 0.0


def _plain_number(value: float, _: object = None) -> str:
    """A tick's label: 2,000,000 and 0.5 as written; 5.5 not rounded to 6 where a short axis is ticked between
    decades."""
    return f"{value:,.0f}" if value >= 1_000 else f"{value:g}"


def _check_lengths(expected: int, series: Mapping[str, Sequence[float]]) -> None:
    for name, values in series.items():
        if len(values) != expected:
            raise ValueError(f"series {name!r} has {len(values)} values for {expected} positions")


def _clean(text: object) -> str:
    return strip_control(str(text))


def _chart(draw: Any, title: str, xlabel: str, ylabel: str, legend: bool, size: tuple[float, float],
           chart_id: str | None, legend_below: bool = False) -> Chart:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(cast("dict[Any, Any]", STYLE)):  # its stubs list every key as a Literal
        figure = Figure(figsize=size, layout="constrained")
        ax = figure.subplots()
        draw(ax)
        ax.set_axisbelow(True)
        ax.set_title(_clean(title))
        ax.set_xlabel(_clean(xlabel))
        ax.set_ylabel(_clean(ylabel))
        if legend and legend_below:  # under the axes, in two columns: over no curve
            figure.legend(loc="outside lower center", ncol=2)
        elif legend:
            ax.legend()
        svg = _svg(figure)
    return Chart(title, _inline(svg, title, chart_id))


def _svg(figure: Figure) -> str:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Creator": None, "Date": None, "Format": None, "Type": None})
    return buffer.getvalue()


def _inline(svg: str, title: str, chart_id: str | None) -> str:
    """matplotlib's SVG file as markup for inside an HTML page: no prolog, DOCTYPE, namespaces or metadata (an
    HTML parser knows SVG without them), ``href`` for ``xlink:href``, and every id prefixed with the chart's own,
    so that two charts on a page do not share ids (matplotlib numbers them ``patch_1``, ... in every file)."""
    svg = _METADATA.sub("", _PROLOG.sub("", svg, count=1))
    head_end = svg.index(">")
    head = _NAMESPACES.sub("", svg[:head_end])
    label = html.escape(_clean(title), quote=True)
    svg = f'{head} class="chart" role="img" aria-label="{label}"' + svg[head_end:]
    svg = svg.replace("xlink:href=", "href=")
    prefix = chart_id or "chart-" + hashlib.sha1(svg.encode()).hexdigest()[:10]
    ids = set(_ID.findall(svg))

    def prefixed(match: re.Match[str]) -> str:
        return f"{match[1]}{prefix}-{match[2]}" if match[2] in ids else match[0]

    return _REFERENCE.sub(prefixed, svg).strip()
