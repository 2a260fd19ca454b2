"""The demo's timeline page served while the demo runs (``zkconsumer demo --serve [PORT]``), so that a projector
shows the lanes growing as the members rebalance.

A :class:`LivePage` is one of the demo's observers (:class:`zkconsumer.demo.rebalance_demo.DemoObserver`'s methods):
every event the demo records is kept, and each request for the page renders the timeline of the events so far with
the same renderer as the file (:func:`zkconsumer.trace.timeline_html.render_html`), plus a few lines of script that
ask ``/version`` once a second and reload the page when events arrived (keeping the scroll position). When the demo
ends, :meth:`LivePage.finish` serves the file the demo wrote, byte for byte and without that script: the last page a
browser shows is the file. Only loopback is listened on, and the page names nothing outside itself (the timeline page
is self-contained; the script asks only its own server).

The server is the standard library's (``http.server``), on a daemon thread; it logs nothing (a library is quiet).
"""

from __future__ import annotations

import json
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.events import catalogue as ev
from zkconsumer.trace.timeline import build_timeline, read_events
from zkconsumer.trace.timeline_html import render_html

LOOPBACK = "127.0.0.1"
POLL_MS = 1000  # how often an open page asks whether events arrived
FINAL_WAIT_S = 2.5  # how long linger() waits for an open page to fetch the final one (two polls and a margin)

# Ask /version every POLL_MS; reload when it changed, where the reader was on the page.
_LIVE_SCRIPT = """<script>
(function () {
  var shown = %(version)s, key = "zkconsumer-live-scroll";
  var saved = sessionStorage.getItem(key);
  if (saved !== null) { window.scrollTo(0, +saved); sessionStorage.removeItem(key); }
  function poll() {
    fetch("/version", {cache: "no-store"}).then(function (r) { return r.text(); }).then(function (text) {
      if (+text !== shown) { sessionStorage.setItem(key, String(window.scrollY)); location.reload(); }
      else { setTimeout(poll, %(poll)s); }
    }).catch(function () { setTimeout(poll, %(poll)s * 3); });
  }
  document.body.setAttribute("data-live-version", String(shown));
  setTimeout(poll, %(poll)s);
})();
</script>"""


class LivePage:
    """Serve on ``port`` of loopback (0: a free one, see :attr:`url`) from construction until :meth:`close`."""

    def __init__(self, port: int = 0, title: str = "zkconsumer demo") -> None:
        self.title = title
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._scenes: set[object] = set()
        self._version = 0
        self._final: bytes | None = None
        self._final_fetched = threading.Event()
        self._polled = False
        try:
            self._server = ThreadingHTTPServer((LOOPBACK, port), _handler(self))
        except OSError as exc:
            raise UsageError(f"--serve: cannot listen on {LOOPBACK}:{port} ({exc.strerror or exc})") from None
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="demo-live-page", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self._server.server_address[1]}/"

    # --- the demo's observer ------------------------------------------------------------------------------------

    def scene_started(self, scene: Any) -> None:
        pass

    def action_played(self, scene: Any, action: Any) -> None:
        pass

    def settled(self, result: Any) -> None:
        pass

    def event(self, event: dict[str, Any]) -> None:
        if event.get("event") == ev.DEMO_SCENE:  # several protocols' players begin each scene together: one marker
            if event.get("scene") in self._scenes:
                return
            self._scenes.add(event.get("scene"))
        line = json.dumps(event, default=str)
        with self._lock:
            self._lines.append(line)
            self._version += 1

    # --- the end ------------------------------------------------------------------------------------------------

    def finish(self, timeline: Path | None) -> None:
        """Serve the demo's own file from now on (the page as it is, when the demo wrote none)."""
        final = timeline.read_bytes() if timeline is not None and timeline.exists() else self.page().encode()
        with self._lock:
            self._final = final
            self._version += 1

    def linger(self, timeout: float = FINAL_WAIT_S) -> None:
        """After :meth:`finish`, before :meth:`close`: give a page that is open (it asked for ``/version``) up to
        ``timeout`` seconds to fetch the final one."""
        with self._lock:
            polled = self._polled
        if polled:
            self._final_fetched.wait(timeout)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5.0)

    def __enter__(self) -> LivePage:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- what is served -----------------------------------------------------------------------------------------

    def version(self) -> int:
        with self._lock:
            self._polled = True
            return self._version

    def page(self) -> str:
        """The timeline of the events so far, with the script that reloads it when more arrive."""
        with self._lock:
            lines, version = list(self._lines), self._version
        log = read_events(lines)
        if log.events:
            page = render_html(build_timeline(log), title=self.title)
        else:
            page = (f"<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>{self.title}</title></head><body>"
                    f"<p>Waiting for the demo's first event ({time.strftime('%H:%M:%S')}).</p></body></html>")
        script = _LIVE_SCRIPT % {"version": version, "poll": POLL_MS}
        return page.replace("</body>", script + "</body>") if "</body>" in page else page + script

    def final(self) -> bytes | None:
        with self._lock:
            return self._final

    def final_fetched(self) -> None:
        self._final_fetched.set()


def _handler(live: LivePage) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path.split("?", 1)[0]
            if path == "/version":
                self._send(str(live.version()).encode(), "text/plain; charset=utf-8")
            elif path in ("/", "/index.html", "/timeline.html"):
                final = live.final()
                self._send(final if final is not None else live.page().encode(), "text/html; charset=utf-8")
                if final is not None:
                    live.final_fetched()
            else:
                self.send_error(HTTPStatus.NOT_FOUND)

        def _send(self, body: bytes, content_type: str) -> None:
            self.send_response(HTTPStatus.OK)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's name)
            pass  # a library is quiet; the page's requests are no event worth a line

    return Handler
