"""Whether an event line keeps the catalogue's contract: a known name at its declared level, each declared field of
its declared kind, no field that no emission of the event declares (besides those every event may carry and those
of its table's bound context). The tests hold every line a demo, a chaos run and a migration comparison write to it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from zkconsumer.events.catalogue import BY_NAME, COMMON_FIELDS
from zkconsumer.events.spec import SECTIONS


def problems(line: Mapping[str, Any]) -> list[str]:
    """What is wrong with one decoded event line, one sentence each; ``[]`` when it keeps the contract."""
    name = line.get("event")
    event = BY_NAME.get(name) if isinstance(name, str) else None
    if event is None:
        return [f"unknown event {name!r}"]
    accepted = event.accepted()
    context = {key for emission in event.emissions for key in SECTIONS[emission.section].context}
    found = []
    levels = {emission.level for emission in event.emissions}
    level = line.get("level")
    if level is not None and level not in levels and not any(emission.level_note for emission in event.emissions):
        found.append(f"{name}: level {level!r}, declared {' or '.join(sorted(levels))}")
    for key, value in line.items():
        kind = accepted.get(key)
        if kind is None:
            if key not in COMMON_FIELDS and key not in context:
                found.append(f"{name}: field {key!r} is not declared")
        elif not kind.accepts(value):
            found.append(f"{name}: field {key!r} is {type(value).__name__} {value!r:.60}, declared {kind.name}")
    return found


def zkconsumer_lines(lines: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The lines of zkconsumer's own events among others (a library's log lines rendered alike, with their
    ``logger``)."""
    return [line for line in lines if str(line.get("logger", "zkconsumer")).startswith("zkconsumer")]
