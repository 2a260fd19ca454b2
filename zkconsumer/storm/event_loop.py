"""The simulation's clock: a heap of callbacks due at simulated times, run in time order.

A heap of ``(time, sequence, callback)`` is all a discrete-event simulation of these groups needs: every actor here
(a member, ZooKeeper's request queue, a coordinator's timers) reacts to something that happened at one moment by
scheduling what follows at a later one, and none of them waits in the middle of a computation. SimPy would model each
member as a generator process yielding timeouts and resources; that buys nothing for actors that are callbacks
already (the front's coordinators are driven by ``handle``/``tick`` with an explicit ``now_ms``, never by a process
that waits), and it would add a dependency, a second way of expressing time, and a generator resumption per step
(the 1,000-member storms run millions of steps). Equal times run in the order they were scheduled (the sequence),
so a run is deterministic.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable


class EventLoop:
    """Callbacks at simulated times in milliseconds; ``now_ms`` is the time of the callback running."""

    def __init__(self) -> None:
        self.now_ms = 0.0
        self.events_run = 0
        self._heap: list[tuple[float, int, Callable[[], None]]] = []
        self._sequence = itertools.count()

    def at(self, time_ms: float, callback: Callable[[], None]) -> None:
        """Run ``callback`` at ``time_ms`` (at once, after what is already due now, if that has passed)."""
        heapq.heappush(self._heap, (max(time_ms, self.now_ms), next(self._sequence), callback))

    def after(self, delay_ms: float, callback: Callable[[], None]) -> None:
        self.at(self.now_ms + delay_ms, callback)

    def next_time(self) -> float | None:
        return self._heap[0][0] if self._heap else None

    def run_until(self, done: Callable[[], bool], deadline_ms: float) -> bool:
        """Run callbacks in time order until ``done()`` holds after one of them (True), or nothing is due before
        ``deadline_ms`` (False; the clock is then at the deadline)."""
        heap = self._heap
        while not done():
            if not heap or heap[0][0] > deadline_ms:
                self.now_ms = max(self.now_ms, deadline_ms)
                return False
            self.now_ms, _, callback = heapq.heappop(heap)
            self.events_run += 1
            callback()
        return True

    def run_for(self, duration_ms: float) -> None:
        """Run everything due within ``duration_ms`` from now; the clock ends there."""
        self.run_until(lambda: False, self.now_ms + duration_ms)
