"""The markers' labels at the top of the timeline page laid out without overlap, measured in a real browser: the
demo's five scenes (each a heading, a member started or killed, a settling, recorded from a real run in
``tests/data/demo-markers.jsonl``) come in clusters of long labels a fraction of a second apart, and the last ones
crowd the page's right edge. No two labels' boxes meet, and no marker's dashed line runs through another's label."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from browser import body_attributes, dump_dom

from zkconsumer.trace.timeline import build_timeline, read_events
from zkconsumer.trace.timeline_html import render_html
from zkconsumer.trace.words import describe_marker

pytestmark = pytest.mark.browser

MARKERS = Path(__file__).parent.parent / "data" / "demo-markers.jsonl"

# Written into a copy of the page: each marker's label box as the browser laid it out, and its line.
MEASURE = """<script>
const found = [...document.querySelectorAll('#overview g.marker, svg g.marker')].map(m => {
  const box = m.querySelector('text').getBBox(), line = m.querySelector('line');
  return {text: m.querySelector('text').textContent, title: m.querySelector('title').textContent,
          box: [box.x, box.y, box.width, box.height],
          line: [+line.getAttribute('x1'), +line.getAttribute('y1'), +line.getAttribute('y2')]};
});
document.body.setAttribute('data-markers', JSON.stringify(found));
</script>"""


def measured(page: str, path: Path) -> list[dict]:
    path.write_text(page.replace("</body>", MEASURE + "</body>"), encoding="utf-8")
    body = body_attributes(dump_dom(path))
    assert body.get("data-rendered") == "ok", body
    found = json.loads(html.unescape(body["data-markers"]))
    unique = {json.dumps(m, sort_keys=True): m for m in found}  # one overview: a marker is found once
    return list(unique.values())


def test_the_demo_s_marker_labels_neither_overlap_nor_are_crossed_by_another_marker_s_line(tmp_path):
    log = read_events(MARKERS.read_text(encoding="utf-8").splitlines())
    timeline = build_timeline(log)
    markers = measured(render_html(timeline, title="demo"), tmp_path / "page.html")
    assert len(markers) == len(timeline.markers) == 17
    for i, a in enumerate(markers):
        ax, ay, aw, ah = a["box"]
        assert aw > 0 and ah > 0, a
        for b in markers[i + 1:]:
            bx, by, bw, bh = b["box"]
            assert not (ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah), (a["text"], b["text"])
        for b in markers:
            x, top, bottom = b["line"]
            if b is not a:
                assert not (ax < x < ax + aw and top < ay + ah and bottom > ay), (b["text"], "through", a["text"])
    # a label shortened to fit keeps its beginning, and its tooltip says it whole
    labels = {describe_marker(m)[0] for m in timeline.markers}
    for marker in markers:
        shown = marker["text"]
        if shown not in labels:
            assert shown.endswith("\u2026"), shown
            whole = next(label for label in labels if label.startswith(shown[:-1]) and label in marker["title"])
            assert re.match(r"\+\d", marker["title"]) and whole
    assert sum(m["text"] in labels for m in markers) >= 14  # most are whole
