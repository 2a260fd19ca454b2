"""Reading a value out of an event's fields without trusting its type: a number, an integer, a list, or ``None``
(an empty list) when the field holds something else. Shared by the members' timeline
(:mod:`zkconsumer.trace.timeline`) and the coordinator's (:mod:`zkconsumer.trace.coordinator`), because a trace is
evidence of something having gone wrong often enough that any field may hold anything."""

from __future__ import annotations

import math
from typing import Any


def finite_number(value: object) -> float | None:
    """A finite number, not a bool (JSON ``true`` is not a duration)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        number = float(value)
    except OverflowError:  # an integer beyond every float
        return None
    return number if math.isfinite(number) else None


_INT64 = range(-(2**63), 2**63)


def integer(value: object) -> int | None:
    """An integer of 64 bits at most, as every id, epoch and offset Kafka and the connector write (a larger one is
    a corrupt figure, which no Parquet or Arrow column holds either), not a bool."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value in _INT64 else None


def json_list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def text(value: object) -> str | None:
    """A non-empty string."""
    return value if isinstance(value, str) and value else None
