"""SessionFence: whether a member still certainly holds its partitions, checked before a stream hands out a chunk.

A member owns its partitions through its ZooKeeper session: once the server expires the session, its owner znodes go
and another member may take the partitions. A member that was paused (a long GC, a stalled VM, SIGSTOP) or cut off
beyond its session timeout learns of the expiry only when kazoo reaches the server again, and meanwhile its streams
would hand out what was fetched before the pause, or just after it, for partitions it no longer owns. So a stream
asks the fence before each chunk, and again in the middle of one once the chunk's lease (:meth:`lease_until`) has
ended (:mod:`zkconsumer.consumer.consumer_iterator`). The fence holds while the session was confirmed by the server
within half the session timeout (:mod:`zkconsumer.zk.session_liveness`: the server cannot have expired it before a
whole timeout) and the connector has not lost the session: a clock read and two attribute reads, no ZooKeeper
request. In steady state kazoo's own pings, a third of the session timeout apart, keep it holding.

When it does not hold, the stream waits (:meth:`SessionFence.await_hold`) for a fresh confirmation (one ``exists``
request is sent to get it), the session's loss, or the stream being cleared or shut down. Held again, the chunk is
handed out; otherwise it is dropped, never handed out, and its messages are fetched again by whoever owns the
partition from the committed offset. Why half: a third of the timeout between kazoo's pings plus a round trip stays
well under it, and the other half is the margin before the server may expire the session.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from time import monotonic

from zkconsumer.zk.session_liveness import SessionLiveness

#: The part of the session timeout within which a confirmation lets a chunk go.
HOLD_FRACTION = 0.5
#: How often a waiting stream looks at the loss, a clear and the shutdown, besides each confirmation.
_POLL_S = 0.05

HELD, LOST, CANCELLED, TIMED_OUT = "held", "session_lost", "cancelled", "timed_out"


class SessionFence:
    """One connector's hold on its partitions, shared by its streams."""

    __slots__ = ("_liveness", "_lost", "_shutdown")

    def __init__(self, liveness: SessionLiveness, lost: threading.Event, shutdown: threading.Event) -> None:
        self._liveness = liveness
        self._lost = lost  # set by the connector from the loss until it has dropped everything fetched before
        self._shutdown = shutdown

    def holds(self) -> bool:
        """The session certainly exists and is the one the partitions were fetched under. The confirmation is read
        before the loss flag: a new session's first confirmation comes only after the old one's loss was set."""
        liveness = self._liveness
        fresh = monotonic() - liveness.confirmed <= liveness.session_timeout_s * HOLD_FRACTION
        return fresh and not self._lost.is_set()

    def lease_until(self) -> float:
        """Until when (monotonic) the latest confirmation lets chunks go without another look; the loss is not in
        it (a lost session's chunks are dropped by the connector's clear of the streams)."""
        liveness = self._liveness
        return liveness.confirmed + liveness.session_timeout_s * HOLD_FRACTION

    def confirmed_age_s(self) -> float:
        return self._liveness.age()

    def await_hold(self, timeout_s: float | None, cancelled: Callable[[], bool]) -> str:
        """Wait until the fence holds again (:data:`HELD`), the session is lost (:data:`LOST`), ``cancelled()`` or
        the connector shuts down (:data:`CANCELLED`), or ``timeout_s`` passes (:data:`TIMED_OUT`; ``None`` waits
        for one of the others)."""
        deadline = None if timeout_s is None else monotonic() + timeout_s
        self._liveness.ask()
        while True:
            if self._lost.is_set():
                return LOST
            if cancelled() or self._shutdown.is_set():
                return CANCELLED
            if self.holds():
                return HELD
            wait = _POLL_S
            if deadline is not None:
                left = deadline - monotonic()
                if left <= 0:
                    return TIMED_OUT
                wait = min(wait, left)
            self._liveness.wait(wait)
