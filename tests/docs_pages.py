"""The docs' pages as the site shows them: with the tables the build's hooks make from the code (the events' tables,
``docs/hooks/events_page.py``), for tests that read what a page says."""

from __future__ import annotations

import importlib.util
from types import ModuleType

from support import REPO


def _hook(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "docs" / "hooks" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rendered(page: str) -> str:
    """``docs/<page>`` with its events' tables in place of their markers."""
    return str(_hook("events_page").render((REPO / "docs" / page).read_text(encoding="utf-8")))
