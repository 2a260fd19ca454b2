"""An emitter that names an event's level (``log.warning(ev.X, ...)`` rather than ``log.emit(ev.X, ...)``) names one
its declaration gives: a step that raised, an offset reset that lost the offset, the data path's busiest event."""

from __future__ import annotations

import ast

from support import REPO

from zkconsumer.events import catalogue as ev

LEVEL_METHODS = {"debug", "info", "warning", "error", "critical", "exception"}


def restated_levels() -> list[tuple[str, str, str]]:
    """``(where, method, event)`` for every call ``<logger>.<level>(ev.NAME, ...)`` in the package."""
    found = []
    for path in sorted((REPO / "zkconsumer").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in LEVEL_METHODS and node.args and isinstance(node.args[0], ast.Attribute)
                    and isinstance(node.args[0].value, ast.Name) and node.args[0].value.id == "ev"):
                where = f"{path.relative_to(REPO)}:{node.lineno}"
                found.append((where, node.func.attr, node.args[0].attr))
    return found


def test_a_restated_level_is_a_declared_one():
    calls = restated_levels()
    assert calls, "the scan sees the emitters"
    wrong = []
    for where, method, constant in calls:
        event = getattr(ev, constant)
        level = "error" if method == "exception" else method
        declared = {emission.level for emission in event.emissions}
        if level not in declared and not any(emission.level_note for emission in event.emissions):
            wrong.append(f"{where}: {event} at {method}, declared {sorted(declared)}")
    assert not wrong, "\n".join(wrong)
