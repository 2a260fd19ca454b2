"""Events are named once: no string literal in the package equals an event's name outside the catalogue
(``zkconsumer/events/``), so that emitting and reading code name the declared constants, and a renamed event or field
cannot leave a reader behind. Docstrings may mention events (their prose is never equal to a name)."""

from __future__ import annotations

import ast

from support import REPO

from zkconsumer.events import catalogue as ev

PACKAGE = REPO / "zkconsumer"
CATALOGUE = PACKAGE / "events"


def _docstrings(tree: ast.AST) -> set[int]:
    nodes = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, nodes) and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)}


def event_literals() -> list[str]:
    """``path:line: "name"`` for every literal (or f-string piece) equal to an event's name, or building one."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if CATALOGUE in path.parents:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs \
                    and node.value in ev.BY_NAME:
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.value!r}")
            elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
                    and any(name.startswith(str(node.values[0].value)) for name in ev.BY_NAME) \
                    and str(node.values[0].value).endswith("."):
                found.append(f"{path.relative_to(REPO)}:{node.lineno}: f{str(node.values[0].value)!r}...")
    return found


def test_no_event_is_named_by_a_string_literal_outside_the_catalogue():
    found = event_literals()
    assert not found, "name these events by the catalogue's constants (ev.NAME):\n" + "\n".join(found)


def test_the_scan_finds_a_literal():
    # the check above can fail: the catalogue's own modules hold every name as a literal
    tree = ast.parse((CATALOGUE / "connector.py").read_text(encoding="utf-8"))
    assert any(isinstance(n, ast.Constant) and n.value == "rebalance.completed" for n in ast.walk(tree))
