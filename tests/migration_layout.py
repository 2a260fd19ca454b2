"""A migration comparison's output directory as ``zkconsumer migration compare`` lays it out (the file names are the
migration modules' own), with the recorded three-member run (tests/data/sample-events.jsonl) as one protocol's
events: what ``analyze events DIR`` is pointed at."""

from __future__ import annotations

import json
from pathlib import Path

from zkconsumer.migration.report import REPORT_HTML, REPORT_JSON
from zkconsumer.migration.run import EVENTS_FILE, PRODUCED_FILE

SAMPLE = Path(__file__).parent / "data" / "sample-events.jsonl"
#: the files of the layout that hold no events, relative to its top
NOT_EVENTS = (REPORT_HTML, REPORT_JSON, f"legacy-range/{PRODUCED_FILE}", "legacy-range/members/m1.deliveries",
              "legacy-range/members/m1.log", f"range/{PRODUCED_FILE}", "range/members/m1.deliveries")


def migration_output(top: Path) -> Path:
    """The layout under ``top``: ``legacy-range`` holds the sample's events, ``range`` an empty events file (a run
    that recorded nothing), the members' stderr logs one of them a warning and one empty."""
    (top / "legacy-range" / "members").mkdir(parents=True)
    (top / "range" / "members").mkdir(parents=True)
    (top / REPORT_JSON).write_text(json.dumps({"note": "two groups", "protocols": {"range": {"rebalances": 3}}},
                                              indent=2) + "\n")
    (top / REPORT_HTML).write_text("<!doctype html>\n<html><body><h1>Migration comparison</h1></body></html>\n")
    (top / "legacy-range" / EVENTS_FILE).write_text(SAMPLE.read_text())
    (top / "range" / EVENTS_FILE).write_text("")
    for protocol in ("legacy-range", "range"):
        (top / protocol / PRODUCED_FILE).write_text("0 v1 1\n1 v2 1\n")
        (top / protocol / "members" / "m1.deliveries").write_text("0 0 v1\n1 0 v2\n")
    (top / "legacy-range" / "members" / "m1.log").write_text("WARNING:kazoo.client:Connection dropped\n")
    (top / "range" / "members" / "m1.log").write_text("")
    (top / ".hidden.jsonl").write_text(SAMPLE.read_text())  # hidden: left out, as Spark leaves such files
    return top
