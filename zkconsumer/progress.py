"""Progress on stderr for anything that can take more than a second: a count, or a wait.

On a terminal the line is rewritten in place (a few times a second, never more); otherwise, as in a CI log or a
pipe, a plain line now and then, so that logs stay readable and nobody thinks the command hung.
"""

from __future__ import annotations

import time
from typing import TextIO

PROGRESS_EVERY = 10_000  # items between two progress lines when the stream is not a terminal
_TTY_INTERVAL_S = 0.2
_PIPE_INTERVAL_S = 5.0
_SPINNER = "|/-\\"


class Progress:
    """A running count (``exported 1234 offsets``) across several batches (``group_done``)."""

    def __init__(self, stream: TextIO, every: int = PROGRESS_EVERY, noun: str = "offsets",
                 verb: str = "exported") -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.every = every
        self.noun, self.verb = noun, verb
        self.base = 0
        self._next_line = every
        self._last_draw = 0.0
        self._drawn = False

    def update(self, count_in_batch: int) -> None:
        total = self.base + count_in_batch
        if self.tty:
            now = time.monotonic()
            if now - self._last_draw >= _TTY_INTERVAL_S:
                self.stream.write(f"\r{self.verb} {total} {self.noun}")
                self.stream.flush()
                self._last_draw, self._drawn = now, True
        elif total >= self._next_line:
            self.stream.write(f"{self.verb} {total} {self.noun} so far\n")
            self.stream.flush()
            self._next_line = (total // self.every + 1) * self.every

    def group_done(self, count: int) -> None:
        self.base += count

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()


class Waiting:
    """``waiting for <what> 3.2 s``: call :meth:`tick` in the wait loop, :meth:`finish` when it is over."""

    def __init__(self, stream: TextIO, what: str) -> None:
        self.stream = stream
        self.what = what
        self.tty = stream.isatty()
        self.started = time.monotonic()
        self._last_draw = self.started
        self._frame = 0
        self._drawn = False

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def tick(self, detail: str = "") -> None:
        now = time.monotonic()
        suffix = f" ({detail})" if detail else ""
        if self.tty and now - self._last_draw >= _TTY_INTERVAL_S:
            self._frame += 1
            self.stream.write(f"\r\033[K{_SPINNER[self._frame % 4]} waiting for {self.what} "
                              f"{now - self.started:.1f} s{suffix}")
            self.stream.flush()
            self._last_draw, self._drawn = now, True
        elif not self.tty and now - self._last_draw >= _PIPE_INTERVAL_S:
            self.stream.write(f"still waiting for {self.what} after {now - self.started:.0f} s{suffix}\n")
            self.stream.flush()
            self._last_draw = now

    def finish(self) -> None:
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False
