"""A headless browser for tests: Debian's ``chromium``, run once per call with a throwaway profile and a timeout.

A page test needs to know that a real browser parsed the page and ran its script without error, which only a
browser can say (:func:`assert_offline` checks, without one, that a page names nothing outside itself). When no
browser is installed the test fails (it does not skip): CI installs one through ``scripts/bootstrap.sh .venv
test``, and a silently skipped check proves nothing.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest
from time_scale import bounded, describe

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_HINT = ("no headless browser found (looked for $CHROMIUM, then " + ", ".join(CANDIDATES) + " on PATH): "
                "install Debian's package with `apt-get install -y chromium` (as root), or run "
                "`scripts/bootstrap.sh .venv test`, which does it")
TIMEOUT = 45.0  # a page's load and scripts, on the reference machine (the suite's time scale applies: time_scale.py)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-extensions",
         "--disable-dev-shm-usage", "--no-first-run", "--no-default-browser-check", "--hide-scrollbars")


def find_browser() -> str:
    """The browser's path; fails the calling test with the install command when there is none."""
    configured = os.environ.get("CHROMIUM")
    if configured:
        path = shutil.which(configured)
        if path is None:
            pytest.fail(f"CHROMIUM={configured} is not an executable; " + INSTALL_HINT, pytrace=False)
        return path
    for name in CANDIDATES:
        path = shutil.which(name)
        if path is not None:
            return path
    pytest.fail(INSTALL_HINT, pytrace=False)


def _run(args: list[str], timeout: float) -> subprocess.CompletedProcess:
    """Run the browser in its own process group, so that a timeout kills its helper processes too. ``timeout`` is
    the figure for the reference machine: scaled, and ending before the test's own limit (``time_scale.bounded``)."""
    limit = bounded(timeout)
    with tempfile.TemporaryDirectory(prefix="zkc-browser-") as profile:
        command = [find_browser(), *FLAGS, f"--user-data-dir={profile}", *args]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True, env={**os.environ, "HOME": profile})
        try:
            out, err = process.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise AssertionError(f"{command[0]} did not finish within {limit:.1f} s ({timeout:g} s at {describe()}): "
                                 f"{' '.join(args)}") from None
        finally:
            # The main process is done; end any helper it left behind in its group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
    result = subprocess.CompletedProcess(command, process.returncode, out, err)
    if result.returncode != 0:
        raise AssertionError(f"{command[0]} exited with {result.returncode}: {err[-2000:]}")
    return result


def dump_dom(html_path: str | os.PathLike, timeout: float = TIMEOUT) -> str:
    """The DOM after the page loaded and its scripts ran, serialized."""
    return _run(["--dump-dom", Path(html_path).resolve().as_uri()], timeout).stdout


def dump_url(url: str, timeout: float = TIMEOUT) -> str:
    """The DOM of a page a local server serves (``http://127.0.0.1:PORT/...``), after it loaded and its scripts ran."""
    assert url.startswith("http://127.0.0.1:"), url  # a test's browser goes nowhere but loopback
    return _run(["--dump-dom", url], timeout).stdout


def body_attributes(dom: str) -> dict[str, str]:
    """The attributes of the dumped page's ``<body>``: where a page's script reports what it rendered and any
    errors (``data-rendered``, ``data-errors``, counts of what it drew)."""
    match = re.search(r"<body([^>]*)>", dom)
    assert match is not None, "no <body> in the dumped DOM"
    return dict(re.findall(r'([\w-]+)="([^"]*)"', match.group(1)))


def screenshot(html_path: str | os.PathLike, png_path: str | os.PathLike, width: int, height: int,
               timeout: float = TIMEOUT) -> Path:
    """A PNG of the page's first ``width`` x ``height`` pixels."""
    png = Path(png_path).resolve()
    png.unlink(missing_ok=True)
    _run([f"--screenshot={png}", f"--window-size={width},{height}", Path(html_path).resolve().as_uri()], timeout)
    if not png.is_file():
        raise AssertionError(f"the browser wrote no screenshot to {png}")
    return png


# --- a page opens with no network ------------------------------------------------------------------------

URL_ATTRIBUTES = {"src", "href", "xlink:href", "action", "formaction", "data", "poster", "srcset", "background"}


class _References(HTMLParser):
    """Every attribute of the page that can make a browser fetch something, and every tag."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.references: list[tuple[str, str, str]] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name in URL_ATTRIBUTES:
                self.references.append((tag, name, value or ""))


def assert_offline(page: str) -> None:
    """Nothing in the page leaves it: no http(s) URL anywhere, no src or href but to an anchor of the page, no
    stylesheet or font fetched by CSS."""
    assert not re.search(r"https?://", page, re.IGNORECASE), re.search(r".{40}https?://.{40}", page, re.I)
    parser = _References()
    parser.feed(page)
    outside = [ref for ref in parser.references if not ref[2].startswith("#")]
    assert not outside, outside
    assert not parser.tags & {"link", "iframe", "img", "object", "embed", "base"}, parser.tags
    assert "@import" not in page and "@font-face" not in page
    assert set(re.findall(r"url\(\s*['\"]?(.)", page)) <= {"#"}
    assert not re.search(r"<script[^>]*\ssrc=", page)
