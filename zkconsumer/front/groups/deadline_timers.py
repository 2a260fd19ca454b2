"""Kafka's ``CoordinatorTimer`` as a pure structure for a coordinator driven by ``now_ms``: at most one timer per key,
arming a key again replaces its timer, and due timers come out one at a time in deadline order (ties in the order they
were armed), so a coordinator that fires each at its own deadline behaves the same however late it is ticked.

Nothing here knows what a timer means: the caller keeps that in the value it arms.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass(frozen=True)
class Due(Generic[K, V]):
    deadline_ms: int
    key: K
    value: V


class DeadlineTimers(Generic[K, V]):
    def __init__(self) -> None:
        self._armed: dict[K, tuple[int, int, V]] = {}
        self._seq = 0

    def arm(self, key: K, deadline_ms: int, value: V) -> None:
        self._seq += 1
        self._armed[key] = (deadline_ms, self._seq, value)

    def cancel(self, key: K) -> None:
        self._armed.pop(key, None)

    def armed(self, key: K) -> bool:
        return key in self._armed

    def cancel_where(self, matches: Callable[[K], bool]) -> None:
        """Disarm every timer whose key ``matches``: all of one group's, say, when the group goes away."""
        for key in [k for k in self._armed if matches(k)]:
            del self._armed[key]

    def next_deadline_ms(self) -> int | None:
        return min((deadline for deadline, _, _ in self._armed.values()), default=None)

    def pop_due(self, now_ms: int) -> Due[K, V] | None:
        """The earliest timer if it is due by ``now_ms``, disarmed; ``None`` when none is."""
        if not self._armed:
            return None
        key = min(self._armed, key=lambda k: self._armed[k][:2])
        deadline, _, value = self._armed[key]
        if deadline > now_ms:
            return None
        del self._armed[key]
        return Due(deadline, key, value)
