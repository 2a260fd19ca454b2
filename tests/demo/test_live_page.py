"""The live page (:mod:`zkconsumer.demo.live_page`) in headless chromium, served on loopback: a member's lane shows
once its events arrived, while more are still to come, the page reloads itself when events arrive, and once the demo
ends the page served is the demo's file byte for byte. The events are a real demo run's (``tests/data``)."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest
from browser import assert_offline, body_attributes, dump_url
from support import SAMPLE_EVENTS

from zkconsumer.demo.live_page import LivePage
from zkconsumer.errors import UsageError

pytestmark = pytest.mark.browser


def lanes(dom: str) -> set[str]:
    return set(re.findall(r'<g class="lane" data-consumer="([^"]+)">', dom))


def test_lanes_appear_as_events_arrive_and_the_last_page_is_the_file(tmp_path):
    events = [json.loads(line) for line in SAMPLE_EVENTS.read_text().splitlines()]
    second = next(i for i, e in enumerate(events) if e.get("consumer_id") == "gs2_c2")
    with LivePage(title="live") as live:
        assert live.url.startswith("http://127.0.0.1:")
        for event in events[:second]:  # the first member's story so far
            live.event(event)
        dom = dump_url(live.url)
        body = body_attributes(dom)
        assert body.get("data-rendered") == "ok", body
        assert lanes(dom) == {"gs2_c1"}
        assert body["data-live-version"] == str(second)
        with urllib.request.urlopen(live.url) as answer:
            assert answer.headers["Cache-Control"] == "no-store"
            assert_offline(answer.read().decode())  # nothing but its own server
        for event in events[second:]:
            live.event(event)
        assert lanes(dump_url(live.url)) == {"gs2_c1", "gs2_c2", "gs2_c3"}
        with urllib.request.urlopen(live.url + "version") as answer:
            assert answer.read() == str(len(events)).encode()

        timeline = tmp_path / "timeline.html"
        timeline.write_text("<!DOCTYPE html><html><body data-rendered=\"ok\">the file</body></html>")
        live.finish(timeline)
        with urllib.request.urlopen(live.url) as answer:
            assert answer.read() == timeline.read_bytes()
        live.linger(timeout=30.0)  # the final page was fetched: no wait


def test_a_port_in_use_is_one_line():
    with LivePage() as first:
        port = int(first.url.rsplit(":", 1)[1].strip("/"))
        with pytest.raises(UsageError, match=rf"^--serve: cannot listen on 127.0.0.1:{port} \("):
            LivePage(port=port)
