"""The comparison page's timelines (:func:`zkconsumer.migration.report.render_report`): every protocol's overview
drawn without a legend, one legend for the section, with the coordinator's part when a protocol's events hold a
group coordinator's. Pure: hand-made events, measured and rendered, no run."""

from __future__ import annotations

import json
import re

from coordinator_trace import classic_story

from zkconsumer.migration.measures import measure
from zkconsumer.migration.report import ProtocolResult, render_report
from zkconsumer.migration.scenes import PROTOCOLS
from zkconsumer.trace.timeline import build_timeline, read_events


def result(name: str, lines: list[str]) -> ProtocolResult:
    events = read_events(lines).events
    return ProtocolResult(PROTOCOLS[name], "t", "g", measure(name, events, [], [], "t"), build_timeline(events),
                          f"{name}/events.jsonl")


def timelines_section(page: str) -> str:
    return page[page.index("<h2>Timelines</h2>"):]


def test_one_legend_for_every_protocols_timeline():
    members = [line for line in classic_story() if not json.loads(line)["event"].startswith("front.")]
    page = render_report([result("range", members), result("cooperative-sticky", members)], "meta")
    section = timelines_section(page)
    assert section.count('<svg class="overview"') == 2
    assert page.count('<g class="legend">') == 1  # in the section's own legend drawing, before the timelines
    assert section.index('<svg class="legend-drawing"') < section.index('<svg class="overview"')
    assert '<g class="legend-coordinator">' not in page  # no protocol's trace has a coordinator lane


def test_the_legend_has_the_coordinators_part_when_a_timeline_has_its_lane():
    members = [line for line in classic_story() if not json.loads(line)["event"].startswith("front.")]
    page = render_report([result("legacy-range", members), result("range", classic_story())], "meta")
    section = timelines_section(page)
    assert page.count('<g class="legend">') == 1 and page.count('<g class="legend-coordinator">') == 1
    drawings = re.findall(r'<svg class="overview".*?</svg>', section, re.S)
    assert ['<g class="coordinator"' in drawing for drawing in drawings] == [False, True]
