"""What a chaos run records for its analysis. Every time is wall-clock seconds: the one clock that the member
processes, which stamp their deliveries and events, and the run, which stamps its faults, share."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Delivery:
    """One message handed to the application by a member."""

    at: float
    topic: str
    partition: int
    offset: int
    value: str
    member: str


@dataclass(frozen=True)
class Pause:
    """A member's process stopped (SIGSTOP) and resumed (SIGCONT)."""

    member: str
    stopped: float
    resumed: float


@dataclass(frozen=True)
class FaultSpan:
    """A fault from its start to the end of its recovery."""

    kind: str
    start: float
    end: float


def parse_deliveries(member: str, lines: Iterable[str]) -> list[Delivery]:
    """A member's delivery lines (``time topic partition offset value``, values without spaces), in their order; a
    line that is not a whole record (cut by SIGKILL) is skipped."""
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) != 5:
            continue
        try:
            out.append(Delivery(float(parts[0]), parts[1], int(parts[2]), int(parts[3]), parts[4], member))
        except ValueError:
            continue
    return out
