"""MkDocs hook: the tables of events, made from ``zkconsumer.events.catalogue`` at build time.

A page holding the line ``<!-- events: <section> -->`` gets that section's table in its place (the sections are
declared in the catalogue's area modules, ``zkconsumer.events.spec.SECTIONS``), so the documented events, levels
and fields are the ones the code declares and emits, and cannot drift from them. ``render`` is what the tests read.
"""

from __future__ import annotations

import re
from typing import Any

MARKER = re.compile(r"^<!-- events: ([a-z_.]+) -->$", re.MULTILINE)
HEADERS = {"step": "step", "event": "event", "logger": "logger", "level": "level", "fields": "fields",
           "when": "when", "drawn": "drawn as (the trace)"}


def _fields(fields: Any) -> str:
    return ", ".join(f"`{f.name}`" + (f" ({f.meaning})" if f.meaning else "") for f in fields)


def _cell(column: str, event: Any, emission: Any, step_numbers: dict[str, int], common: set[str]) -> str:
    if column == "step":
        return str(step_numbers[str(event)])
    if column == "event":
        return f"`{event}`"
    if column == "logger":
        return f"`{emission.logger}`"
    if column == "level":
        return emission.level + (f"; {emission.level_note}" if emission.level_note else "")
    if column == "fields":
        return _fields(f for f in emission.fields if f.name not in common)
    return str(getattr(emission, column)).replace("|", "\\|")


def table(key: str) -> str:
    from zkconsumer.events import catalogue, connector, rebalance_steps
    from zkconsumer.events.spec import EMISSIONS, SECTIONS

    section = SECTIONS[key]
    steps = {step.event: step.number for step in rebalance_steps.STEPS}
    rows = [[HEADERS[c] for c in section.columns]]
    common: set[str] = set()
    if key == "connector.rebalance_steps":  # the fields every step carries, once, then each step's own
        common = {f.name for f in connector.STEP_COMMON_FIELDS}
        first = catalogue.STEP_EVENTS[0].emissions[0]
        generic = {"step": "", "event": "`rebalance.<step>`", "level": _cell("level", "", first, {}, set()),
                   "fields": _fields(connector.STEP_COMMON_FIELDS) + ", and the step's fields below",
                   "when": connector.STEP_WHEN}
        rows.append([generic[c] for c in section.columns])
    for event, emission in EMISSIONS:
        if emission.section == key:
            rows.append([_cell(c, event, emission, steps, common) for c in section.columns])
    lines = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + "---|" * len(section.columns), *lines[1:]])


def render(markdown: str) -> str:
    """``markdown`` with every events marker replaced by its table."""
    return MARKER.sub(lambda m: table(m.group(1)), markdown)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return render(markdown) if "<!-- events: " in markdown else markdown
