"""The simulation page in a real headless browser: it loads with no network, its script runs to the end, all six
charts are laid out (both protocols on the cost charts) and the table has a row per phase and protocol."""

from __future__ import annotations

import re

import pytest
from browser import assert_offline, body_attributes, dump_dom

from zkconsumer.connect.page import simulation_page
from zkconsumer.connect.simulation import SimulationParameters, simulate

pytestmark = pytest.mark.browser


def test_the_page_opens_in_the_browser(tmp_path):
    result = simulate(SimulationParameters(workers=3, connectors=6, tasks_per_connector=4, delay_ms=20_000))
    page = simulation_page(result, title="Connect <simulation>")
    assert_offline(page)
    assert "Connect &lt;simulation&gt;" in page
    assert page.count("<title>") == 1 and "eager" in page and "cooperative" in page
    path = tmp_path / "connect.html"
    path.write_text(page, encoding="utf-8")
    dom = dump_dom(path)
    body = body_attributes(dom)
    assert body.get("data-rendered") == "ok" and "data-errors" not in body, body
    assert body["data-charts"] == "6"
    assert body["data-phase-rows"] == "8"
    cost = re.search(r'<svg[^>]*aria-label="Time until stable after starting one connector".*?</svg>', dom, re.S)
    assert cost and "eager" in cost.group(0) and "cooperative" in cost.group(0)
