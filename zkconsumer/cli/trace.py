"""``zkconsumer trace render|show``: the teaching timeline of a run, from its JSON-line events.

Collect the events of every process with ``--log-json`` (or ``ZKCONSUMER_LOG_JSON=1``), merge them (``sort`` on
the timestamp is not even needed: the timeline orders them), then:

* ``render EVENTS.jsonl --html OUT.html [--svg OUT.svg]``: one self-contained page
  (:mod:`zkconsumer.trace.timeline_html`) and/or the overview alone as SVG; each file is written whole or not at all.
* ``show EVENTS.jsonl``: the same timeline as text on stdout (:mod:`zkconsumer.trace.timeline_text`).

``-`` reads stdin. Lines that are not events (not a JSON object, no ``event`` or no parseable ``timestamp``) are
skipped and counted on stderr with the first line numbers: a log that also caught a stray print still renders.
A file that cannot be read, or holds no consumer or demo event, is a one-line error.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys

from zkconsumer.cli import COMMANDS
from zkconsumer.cli.output_file import written_whole
from zkconsumer.errors import UsageError
from zkconsumer.trace.timeline import EventLog, Timeline, build_timeline, read_events
from zkconsumer.trace.timeline_html import render_html, render_svg
from zkconsumer.trace.timeline_text import render_text
from zkconsumer.trace.words import plural


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "trace", help=COMMANDS["trace"],
        description="The rebalances of a run, drawn from the events its processes logged with --log-json.",
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    render = actions.add_parser(
        "render", help="write the timeline as one self-contained HTML page and/or an SVG",
        description="Swimlanes per consumer with every rebalance step, the stop-the-world gaps, conflicts and "
        "failures; partition ownership over time; the demo's markers; a summary; each rebalance round zoomed.",
    )
    render.add_argument("events", metavar="EVENTS.jsonl", help="the JSON-line events ('-' for stdin)")
    render.add_argument("--html", metavar="OUT.html", help="the page to write")
    render.add_argument("--svg", metavar="OUT.svg", help="the overview alone, as an SVG file")
    render.add_argument("--title", help="the page's title (default: from the file name)")
    show = actions.add_parser(
        "show", help="print the timeline as text, one line per event",
        description="One line per rebalance step, outcome, conflict, failure and membership event, with the time "
        "since the start of the trace; demo markers as headings; fetcher events left out.",
    )
    show.add_argument("events", metavar="EVENTS.jsonl", help="the JSON-line events ('-' for stdin)")
    render.set_defaults(handler=run_render)
    show.set_defaults(handler=run_show)


def load_timeline(path: str) -> Timeline:
    """Read and build, saying on stderr what was skipped; a UsageError when there is nothing to draw."""
    log = _read(path)
    name = "stdin" if path == "-" else path
    if log.broken:
        numbers = ", ".join(str(n) for n in log.broken_lines)
        more = ", ..." if log.broken > len(log.broken_lines) else ""
        print(f"warning: skipped {plural(log.broken, 'broken line')} of {name} "
              f"(not a JSON event with 'event' and 'timestamp': line {numbers}{more})", file=sys.stderr)
    if not log.events:
        raise UsageError(f"{name} holds no event" + (f" ({plural(log.broken, 'broken line')})" if log.broken else ""))
    timeline = build_timeline(log)
    if timeline.empty:
        raise UsageError(f"{name} holds no consumer or demo event "
                         f"({plural(timeline.ignored_events, 'event')} of other components)")
    return timeline


def _read(path: str) -> EventLog:
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)
        stream = io.TextIOWrapper(buffer, encoding="utf-8", errors="replace") if buffer is not None else sys.stdin
        return read_events(stream)
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return read_events(f)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None


def run_render(args: argparse.Namespace) -> int:
    if not args.html and not args.svg:
        raise UsageError("say where to write: --html OUT.html and/or --svg OUT.svg")
    timeline = load_timeline(args.events)
    title = args.title or "Rebalance timeline: " + ("stdin" if args.events == "-" else os.path.basename(args.events))
    rebalances = sum(len(lane.rebalances) for lane in timeline.lanes)
    what = (f"{plural(len(timeline.lanes), 'consumer')}, {plural(rebalances, 'rebalance')}, "
            f"{plural(len(timeline.partitions), 'partition')}, {plural(len(timeline.markers), 'marker')}")
    if args.html:
        _write(args.html, render_html(timeline, title=title))
        print(f"wrote {args.html} ({what})")
    if args.svg:
        _write(args.svg, render_svg(timeline))
        print(f"wrote {args.svg} ({what})")
    return 0


def run_show(args: argparse.Namespace) -> int:
    lines = render_text(load_timeline(args.events))
    try:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def _write(path: str, text: str) -> None:
    """Written whole or not at all: into a temporary file beside it, renamed over it."""
    with written_whole(path, prefix=".zktrace-") as f:
        f.write(text)
