"""The page layer (:mod:`zkconsumer.pages`): a template renders a whole page that opens with no network, escapes
every value it is given, refuses a name it was not given, and ships with the package."""

from __future__ import annotations

import fnmatch
from importlib import resources

import jinja2
import pytest
from browser import assert_offline
from support import REPO, SAMPLE_EVENTS

from zkconsumer.connect.page import PhaseRow
from zkconsumer.pages import Html, render_page
from zkconsumer.trace.timeline import build_timeline, read_events
from zkconsumer.trace.timeline_html import render_html


def test_the_skeleton_is_a_complete_page_that_names_no_url():
    page = render_page("base.html.j2", title="Scene <1> & 'two'\x01")
    assert page.startswith("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
    assert page.endswith("</script></body></html>\n")
    assert "<title>Scene &lt;1&gt; &amp; &#39;two&#39;</title>" in page
    assert "<h1>Scene &lt;1&gt; &amp; &#39;two&#39;</h1>" in page
    assert "\x01" not in page  # control characters are dropped from every value
    assert "body{font-family:sans-serif" in page  # the stylesheet is inline
    assert page.count("<script>") == 1 and 'document.body.dataset.rendered = "ok"' in page
    assert_offline(page)


def test_the_timeline_page_names_no_url():
    timeline = build_timeline(read_events(SAMPLE_EVENTS.read_text().splitlines()))
    assert_offline(render_html(timeline, title="sample"))


def test_values_are_escaped_and_only_our_own_markup_is_not():
    hostile = "<script>document.body.dataset.pwned = 1</script>"
    row = PhaseRow(hostile, hostile, hostile, 1, 1, 0, 0, 0.0, hostile)
    page = render_page("connect.html.j2", title=hostile, meta=hostile, rows=[row],
                       figures=[Html('<svg class="ours"><rect width="1" height="1"/></svg>')])
    # title (twice: <title> and <h1>), meta, and the row's phase, title, protocol and time until stable
    assert "<script>document" not in page and page.count("&lt;script&gt;document") == 7
    assert '<div class="figure"><svg class="ours"><rect width="1" height="1"/></svg></div>' in page
    assert_offline(page)


def test_a_name_the_template_was_not_given_fails_the_render():
    with pytest.raises(jinja2.UndefinedError):
        render_page("base.html.j2")
    with pytest.raises(jinja2.UndefinedError):
        render_page("connect.html.j2", title="t", meta="m", rows=[object()], figures=[])


def test_the_templates_are_package_data():
    """The templates are read through the package (as they are from an installed wheel), and pyproject.toml
    declares each of them as package data, so that `pip install` ships them."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+; the declaration is checked once, not per version
    templates = resources.files("zkconsumer.pages").joinpath("templates")
    names = sorted(entry.name for entry in templates.iterdir() if entry.is_file())
    assert {"base.html.j2", "page.css", "macros.html.j2", "timeline.html.j2", "migration.html.j2", "connect.html.j2",
            "fleet.html.j2", "events.html.j2"} <= set(names)
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"].get("package-data", {})
    patterns = declared.get("zkconsumer.pages", [])
    missing = [name for name in names if not any(fnmatch.fnmatch(f"templates/{name}", p) for p in patterns)]
    assert not missing, f"not declared as package data of zkconsumer.pages in pyproject.toml: {missing}"
