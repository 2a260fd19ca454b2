"""What both group machines share: a clock that only moves when an input brings the time, and Kafka's
``CoordinatorTimer`` over it (:class:`~.deadline_timers.DeadlineTimers`), each timer fired at its own deadline.

A machine's every input first :meth:`advance` s the clock: the timers due by then fire in deadline order, the clock
standing at each one's deadline while it fires (what a timer does happens when it would have on time, however late
the machine is ticked), and then the clock is at the input's time. The groups whose timers fired are remembered until
:meth:`fired_groups` is asked, so that whoever drives the machine knows what the input changed besides the groups it
named (:mod:`.coordinator`). A timer's key is ``(kind, group id, member id)``.
"""

from __future__ import annotations

from typing import Generic, TypeVar

from zkconsumer.front.groups.deadline_timers import DeadlineTimers, Due

KindT = TypeVar("KindT")
V = TypeVar("V")
TimerKey = tuple[KindT, str, str]


class CoordinatorClock(Generic[KindT, V]):
    """The clock and timers of one machine; the machine says what a timer does (:meth:`_fire`)."""

    def __init__(self) -> None:
        self._now = 0
        self._timers = DeadlineTimers[tuple[KindT, str, str], V]()
        self._fired: set[str] = set()

    def next_deadline_ms(self) -> int | None:
        """The earliest timer's deadline, or ``None`` when nothing waits on time."""
        return self._timers.next_deadline_ms()

    def fired_groups(self) -> set[str]:
        """The groups whose timers fired since this was last asked."""
        fired, self._fired = self._fired, set()
        return fired

    def advance(self, now_ms: int) -> int:
        """Fire the timers due by ``now_ms`` (each at its deadline), then stand at ``now_ms``; the clock never goes
        back. Returns the time it stands at."""
        now_ms = max(self._now, now_ms)
        self._fire_due(now_ms)
        self._now = now_ms
        return now_ms

    def _fire_due(self, now_ms: int) -> None:
        """Each due timer at its own deadline, in order."""
        while (due := self._timers.pop_due(now_ms)) is not None:
            self._now = max(self._now, due.deadline_ms)
            self._fired.add(due.key[1])
            self._fire(due)

    def _fire(self, due: Due[tuple[KindT, str, str], V]) -> None:
        raise NotImplementedError


__all__ = ["CoordinatorClock"]
