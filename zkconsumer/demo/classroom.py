"""The demo's classroom options, ``--step`` (:mod:`zkconsumer.demo.step_mode`) and ``--serve [PORT]``
(:mod:`zkconsumer.demo.live_page`), as the demo's observers: the command line registers them with
:func:`add_options` and plays the demo inside :func:`classroom`, handing the demo :attr:`Classroom.observers`.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.demo.live_page import LivePage
from zkconsumer.demo.step_mode import StepMode
from zkconsumer.errors import UsageError


def add_options(parser: argparse.ArgumentParser) -> None:
    room = parser.add_argument_group("in class")
    room.add_argument("--step", action="store_true",
                      help="stop before each scene's action and each step of a legacy rebalance (with --protocol: each "
                      "coordinator round and each legacy attempt told), and wait for Enter (c: play on); servers and "
                      "members stay as they are, their sessions alive")
    room.add_argument("--serve", type=int, nargs="?", const=0, default=None, metavar="PORT",
                      help="serve the timeline page on 127.0.0.1:PORT (default: a free port, printed) while the demo "
                      "runs; it grows as events arrive, and ends as timeline.html")


@dataclass
class Classroom:
    observers: tuple[Any, ...] = ()
    live: LivePage | None = None
    step: StepMode | None = None

    def finish(self, timeline: Path | None) -> None:
        """The demo ended and wrote ``timeline``: an open live page shows it."""
        if self.live is not None:
            self.live.finish(timeline)
            self.live.linger()


def check_options(args: argparse.Namespace, stdin: TextIO | None = None) -> None:
    """``--step`` needs a terminal to press Enter on: refused in one line, before any server or member starts."""
    stdin = stdin if stdin is not None else sys.stdin
    if args.step and (stdin is None or not stdin.isatty()):
        raise UsageError("--step waits for Enter on a terminal; stdin is not one")
    if args.serve is not None and not 0 <= args.serve <= 65535:
        raise UsageError(f"--serve {args.serve}: a port is 0 to 65535 (0: a free one)")


@contextlib.contextmanager
def classroom(args: argparse.Namespace, title: str, out: TextIO = sys.stdout, stdin: TextIO | None = None,
              legacy: Callable[[str], bool] = lambda _consumer_id: True) -> Iterator[Classroom]:
    """The observers ``--step`` and ``--serve`` ask for (none without them); the live page listens until the block
    ends. ``--step`` needs a terminal to press Enter on: refused, in one line, when stdin is none."""
    check_options(args, stdin)
    stdin = stdin if stdin is not None else sys.stdin
    step = StepMode(read_line=stdin.readline, out=out, legacy=legacy) if args.step else None
    live = LivePage(args.serve, title=title) if args.serve is not None else None
    try:
        if live is not None:
            out.write(f"live timeline: {live.url} (open it on the projector; it grows as the demo plays)\n")
            out.flush()
        # the page first: a step stop then shows the events that led to it
        observers = tuple(o for o in (live, step) if o is not None)
        yield Classroom(observers, live, step)
    finally:
        if live is not None:
            live.close()
