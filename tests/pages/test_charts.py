"""Charts for the pages (:mod:`zkconsumer.pages.charts`): inline SVG markup that an HTML page can hold as it is
(no prolog, no URL, ids of its own), with the data drawn as asked; the plotting library loads only when a chart
is made; and a page of charts opens in a real headless browser without an error, every chart laid out."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest
from browser import assert_offline, body_attributes, dump_dom
from time_scale import bounded

from zkconsumer.pages import render_page
from zkconsumer.pages.charts import Chart, bar_chart, line_chart

FIRST, SECOND = "#1f77b4", "#ff7f0e"  # the first two colours of the series


def bar_heights(chart: Chart, colour: str) -> list[float]:
    """The heights of the filled rectangles of one colour: the bars (and the legend's swatch of that series),
    from their paths ``M x0 y0 L x1 y0 L x1 y1 L x0 y1 z``."""
    paths = re.findall(rf'<path d="M [-\d.]+ ([-\d.]+) \nL [-\d.]+ [-\d.]+ \nL [-\d.]+ ([-\d.]+) [^"]*"[^>]*'
                       rf'style="fill: {colour}[;"]', chart.svg)
    return [round(float(bottom) - float(top), 3) for bottom, top in paths]


def bars(chart: Chart, colour: str) -> int:
    return len(bar_heights(chart, colour))


def test_a_bar_chart_is_inline_markup_with_a_bar_per_value():
    chart = bar_chart(["range", "roundrobin", "sticky"], {"moved": [3, 5, 1], "idle & <b>": [0, 1, 0]},
                      title="Moves & <idle> $x$", ylabel="partitions")
    svg = chart.svg
    assert svg.startswith('<svg width="') and svg.endswith("</svg>")
    assert "<?xml" not in svg and "DOCTYPE" not in svg and "xmlns" not in svg and "xlink" not in svg
    root = ET.fromstring(svg)  # well-formed, and needs no namespace declaration
    assert root.get("class") == "chart" and root.get("aria-label") == "Moves & <idle> $x$"
    texts = ["".join(t.itertext()) for t in root.iter("text")]
    assert {"range", "roundrobin", "sticky", "partitions", "Moves & <idle> $x$", "idle & <b>"} <= set(texts)
    assert (bars(chart, FIRST), bars(chart, SECOND)) == (3 + 1, 3 + 1)  # three bars and a legend swatch each
    moved = bar_heights(chart, FIRST)[:3]
    assert [round(h / moved[2], 2) for h in moved] == [3, 5, 1]
    assert str(chart) == svg == chart.__html__()
    assert_offline(svg)


def test_a_line_chart_joins_its_points_and_every_series_must_fit_the_positions():
    line = line_chart([1, 2, 3, 4, 5], {"c1": [1, 4, 2, 3, 5], "c2": [0, 1, 1, 2, 2]}, title="lag")
    curves = re.findall(r'<path d="([^"]*)"[^>]*style="fill: none; stroke: #1f77b4', line.svg)
    assert curves[0].count("L ") == 4  # five points joined by four segments (then the legend's sample line)
    assert "c1" in line.svg and "c2" in line.svg  # two series: a legend
    with pytest.raises(ValueError, match="3 values for 2 positions"):
        bar_chart(["a", "b"], {"s": [1, 2, 3]}, title="wrong")


def test_charts_are_deterministic_and_keep_their_ids_to_themselves():
    one = bar_chart(["a", "b"], {"s": [1, 2]}, title="t")
    assert one.svg == bar_chart(["a", "b"], {"s": [1, 2]}, title="t").svg
    other = bar_chart(["a", "b"], {"s": [2, 1]}, title="t")
    named = bar_chart(["a", "b"], {"s": [2, 1]}, title="t", chart_id="moves")
    for chart in (one, other, named):
        ids = re.findall(r'\bid="([^"]+)"', chart.svg)
        assert len(ids) == len(set(ids))
        references = re.findall(r'(?:url\(#|href="#)([^")]+)', chart.svg)
        assert references and set(references) <= set(ids)  # every clip path and marker found in the chart itself
    assert not set(re.findall(r'\bid="([^"]+)"', one.svg)) & set(re.findall(r'\bid="([^"]+)"', other.svg))
    assert 'id="moves-' in named.svg


def test_the_plotting_library_and_jinja2_load_only_when_used():
    code = ("import sys, zkconsumer, zkconsumer.pages, zkconsumer.pages.charts, zkconsumer.trace.timeline_html, "
            "zkconsumer.cli; print(sorted(m for m in ('matplotlib', 'jinja2', 'numpy') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=bounded(60))
    assert (result.returncode, result.stdout.strip()) == (0, "[]"), result.stderr


@pytest.mark.browser
def test_a_page_of_charts_opens_in_the_browser(tmp_path):
    figures = [bar_chart(["range", "sticky"], {"moved": [4, 1]}, title="moved"),
               line_chart([0, 1, 2], {"c1": [5, 3, 0]}, title="lag"),
               bar_chart(["a", "b", "c"], {"n": [1, 2, 1]}, title="gaps", integer=True)]
    page = render_page("connect.html.j2", title="Charts", meta="", rows=[], figures=figures)  # a page of charts
    assert_offline(page)
    path = tmp_path / "charts.html"
    path.write_text(page, encoding="utf-8")
    dom = dump_dom(path)
    body = body_attributes(dom)
    assert body.get("data-rendered") == "ok" and "data-errors" not in body, body
    assert body["data-charts"] == "3"
    widths = [int(w) for w in body["data-chart-widths"].split()]
    assert len(widths) == 3 and all(600 < w < 760 for w in widths), widths  # 504 pt laid out as ~672 px
    assert dom.count("<h2>") == 2 and ">moved</text>" in dom  # the page's two sections, the charts in the first


def test_category_labels_too_wide_for_their_bars_are_slanted_and_short_ones_are_not():
    def tick_label(labels: list[str]) -> str:
        svg = bar_chart(labels, {"n": [1, 2, 3]}, title="t").svg
        end = svg.index(f">{labels[0]}<")
        return svg[svg.rfind("<text", 0, end):end]

    ids = [f"migration-legacy-roundrobin-f792e2_m{n}" for n in range(3)]  # consumer ids would run into each other
    assert 'transform="rotate(-30 ' in tick_label(ids) and "text-anchor: end" in tick_label(ids)
    assert 'transform="rotate(-0 ' in tick_label(["range", "sticky", "roundrobin"])


def test_a_chart_of_counts_has_whole_number_ticks():
    """Its y axis counts things: a tick at 0.5 would read as half a rebalance."""
    svg = bar_chart(["a", "b", "c"], {"n": [1, 2, 1]}, title="gaps", integer=True).svg
    ticks = re.findall(r'<g id="[^"]*ytick_\d+">.*?<text[^>]*>([^<]*)</text>', svg, re.S)
    assert ticks and all(re.fullmatch(r"-?\d+", t) for t in ticks), ticks
