"""The rendered page in a real headless browser (Debian's chromium, see :mod:`browser`): it loads, its script runs
to the end without an error, every consumer of the events has its lane, event strings stay text (an injected
script does not run), and a screenshot comes out. Fails, naming the install command, when there is no browser."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest
from browser import body_attributes, dump_dom, screenshot
from coordinator_trace import classic, classic_story, consumer_story
from support import SAMPLE_EVENTS

from zkconsumer.trace.timeline import build_timeline, read_events
from zkconsumer.trace.timeline_html import render_html

pytestmark = pytest.mark.browser

SAMPLE = SAMPLE_EVENTS


def consumers_in(lines: list[str]) -> set[str]:
    return {json.loads(line)["consumer_id"] for line in lines if line.strip() and "consumer_id" in json.loads(line)}


def render(lines: list[str], path: Path) -> Path:
    path.write_text(render_html(build_timeline(read_events(lines)), title=path.stem), encoding="utf-8")
    return path


def test_the_sample_page_loads_without_error_with_a_lane_per_consumer(tmp_path):
    lines = SAMPLE.read_text().splitlines()
    dom = dump_dom(render(lines, tmp_path / "sample.html"))
    body = body_attributes(dom)
    assert body.get("data-rendered") == "ok", body
    assert "data-errors" not in body
    consumers = consumers_in(lines)
    assert consumers == {"gs2_c1", "gs2_c2", "gs2_c3"}
    lanes = set(re.findall(r'<g class="lane" data-consumer="([^"]+)">', dom))
    assert lanes == consumers
    assert body["data-lanes"] == str(len(consumers))


def test_markers_and_hostile_strings_in_the_browser(tmp_path):
    def line(name: str, second: float, **fields) -> str:
        return json.dumps({**fields, "event": name, "level": "info",
                           "timestamp": f"2026-01-02T03:04:{second:09.6f}Z"})

    evil = "c9<script>document.body.dataset.pwned='yes'</script>"
    lines = [
        line("demo.scene", 1, scene=1, title="<script>document.body.dataset.pwned='scene'</script>", note="n"),
        line("demo.member_started", 1.5, consumer_id="g_c1", pid=1, streams=1),
        line("rebalance.started", 2, consumer_id="g_c1", rebalance_id=1, cause="initial"),
        line("rebalance.stop_fetchers", 2.1, consumer_id="g_c1", rebalance_id=1, attempt=1, step=2, duration_ms=3),
        line("rebalance.claim", 2.2, consumer_id="g_c1", rebalance_id=1, attempt=1, step=8, duration_ms=2,
             claimed=[{"topic": "t", "partition": 0, "thread": "g_c1-0"}], already_ours=[], conflicts=[]),
        line("rebalance.start_fetchers", 2.3, consumer_id="g_c1", rebalance_id=1, attempt=1, step=9, duration_ms=1),
        line("demo.member_killed", 5, consumer_id="g_c1", pid=1, signal="SIGKILL"),
        line("consumer.connected", 6, consumer_id=evil),
        line("demo.partitions_added", 7, topic="t", before=1, after=3),
    ]
    dom = dump_dom(render(lines, tmp_path / "markers.html"))
    body = body_attributes(dom)
    assert body.get("data-rendered") == "ok" and "data-errors" not in body and "data-pwned" not in body
    assert body["data-lanes"] == "2"
    assert len(re.findall(r'<g class="marker" data-kind="', dom)) == 4
    assert "c9&lt;script&gt;" in dom


def test_a_page_with_coordinator_lanes_loads_with_them_above_the_members(tmp_path):
    evil = "<script>document.body.dataset.pwned='group'</script>"
    lines = [*classic_story(), *consumer_story(), classic("created", 2, group=evil),
             classic("member_joined", 2.5, group=evil, member_id="<img src=x onerror=alert(1)>", client_id=evil)]
    dom = dump_dom(render(lines, tmp_path / "coordinator.html"))
    body = body_attributes(dom)
    assert body.get("data-rendered") == "ok" and "data-errors" not in body and "data-pwned" not in body
    assert body["data-lanes"] == "3"  # the members' lanes, as before
    coordinators = re.findall(r'<g class="coordinator" data-group="([^"]+)" data-protocol="([a-z]+)">', dom)
    assert coordinators == [("g", "classic"), ("k", "consumer"), (
        "&lt;script&gt;document.body.dataset.pwned='group'&lt;/script&gt;", "classic")]
    assert dom.index('<g class="coordinator"') < dom.index('<g class="lane"')
    assert len(re.findall(r'<g class="coordinator-round"', dom)) == 6
    assert '<g class="legend-coordinator">' in dom


def test_screenshot_is_a_png_of_the_requested_size(tmp_path):
    page = render(SAMPLE.read_text().splitlines(), tmp_path / "sample.html")
    png = screenshot(page, tmp_path / "sample.png", 1400, 1000)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1400, 1000)
    assert len(data) > 20_000  # a page with content, not a blank image
