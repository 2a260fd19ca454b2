"""Kafka's durations on the wire, whole milliseconds, as kio's ``timedelta`` fields carry them: converted here, once,
for every module that reads or writes them."""

from __future__ import annotations

import datetime

from kio.static.primitive import i32Timedelta


def milliseconds(value: datetime.timedelta) -> int:
    """A duration kio parsed, in Kafka's whole milliseconds (rounded: a float's last bit is no millisecond)."""
    return round(value.total_seconds() * 1000)


def i32_duration(ms: int) -> i32Timedelta:
    """``ms`` milliseconds as kio's 32-bit duration field (a negative duration is none: 0)."""
    return i32Timedelta.parse(datetime.timedelta(milliseconds=max(ms, 0)))


__all__ = ["i32_duration", "milliseconds"]
