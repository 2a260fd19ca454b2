"""The demo's classroom options, ``--step`` (:mod:`zkconsumer.demo.step_mode`) and ``--serve [PORT]``
(:mod:`zkconsumer.demo.live_page`), as the demo's observers: the command line reads them into a
:class:`ClassroomOptions` and the demo plays inside :func:`classroom`, handing on :attr:`Classroom.observers`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.demo.live_page import LivePage
from zkconsumer.demo.step_mode import StepMode
from zkconsumer.errors import UsageError


@dataclass(frozen=True)
class ClassroomOptions:
    """What the class asked for: a stop before each step (``--step``), and the live page (``--serve``)."""

    step: bool = False
    #: the live page's port (0: a free one); None: no live page
    serve: int | None = None


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


def check_options(options: ClassroomOptions, stdin: TextIO | None = None) -> None:
    """``--step`` needs a terminal to press Enter on: refused in one line, before any server or member starts."""
    stdin = stdin if stdin is not None else sys.stdin
    if options.step and (stdin is None or not stdin.isatty()):
        raise UsageError("--step waits for Enter on a terminal; stdin is not one")
    if options.serve is not None and not 0 <= options.serve <= 65535:
        raise UsageError(f"--serve {options.serve}: a port is 0 to 65535 (0: a free one)")


@contextlib.contextmanager
def classroom(options: ClassroomOptions, title: str, out: TextIO = sys.stdout, stdin: TextIO | None = None,
              legacy: Callable[[str], bool] = lambda _consumer_id: True) -> Iterator[Classroom]:
    """The observers ``--step`` and ``--serve`` ask for (none without them); the live page listens until the block
    ends. ``--step`` needs a terminal to press Enter on: refused, in one line, when stdin is none."""
    check_options(options, stdin)
    stdin = stdin if stdin is not None else sys.stdin
    step = StepMode(read_line=stdin.readline, out=out, legacy=legacy) if options.step else None
    live = LivePage(options.serve, title=title) if options.serve is not None else None
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
