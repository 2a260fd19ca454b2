"""The wait indicator: redrawn in place on a terminal, an occasional plain line in a pipe, erased when done."""

from __future__ import annotations

import io

from zkconsumer import progress
from zkconsumer.progress import Waiting


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_line_is_redrawn_and_erased(monkeypatch):
    monkeypatch.setattr(progress, "_TTY_INTERVAL_S", 0.0)
    out = Terminal()
    waiting = Waiting(out, "the group to settle")
    waiting.tick()
    waiting.tick("c2's session")
    waiting.finish()
    text = out.getvalue()
    assert text.count("\r\033[K") == 3  # two redraws, one erase
    assert "waiting for the group to settle" in text and "(c2's session)" in text and "\n" not in text


def test_in_a_pipe_only_an_occasional_line(monkeypatch):
    out = io.StringIO()
    waiting = Waiting(out, "the group to settle")
    waiting.tick()
    assert out.getvalue() == ""  # nothing within the first interval
    monkeypatch.setattr(progress, "_PIPE_INTERVAL_S", 0.0)
    waiting.tick()
    waiting.finish()
    assert out.getvalue().startswith("still waiting for the group to settle after ") and "\r" not in out.getvalue()
