"""The event lines a run wrote, checked against the catalogue (:mod:`zkconsumer.events.validation`): for the tests
that already run a demo, a chaos run or a migration comparison, so that every line those runs write is held to the
contract without a run of its own."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from zkconsumer.events.validation import problems, zkconsumer_lines


def invalid_event_lines(paths: Iterable[Path]) -> tuple[int, list[str]]:
    """How many of zkconsumer's event lines the files hold, and ``path:line: problem`` for each that breaks the
    contract (lines that are not JSON objects with an ``event``, such as a crash's output, are not events)."""
    checked, found = 0, []
    for path in paths:
        for number, text in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            try:
                line = json.loads(text)
            except ValueError:
                continue
            if not isinstance(line, dict) or "event" not in line or not zkconsumer_lines([line]):
                continue
            checked += 1
            found += [f"{path.name}:{number}: {problem}" for problem in problems(line)]
    return checked, found
