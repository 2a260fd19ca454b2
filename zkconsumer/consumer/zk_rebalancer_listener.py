"""ZKRebalancerListener: the one thread that runs rebalances, however many watches fire.

ZooKeeper watches fire on kazoo's event thread, which must never block on a rebalance (pykafka#701 deadlocked
exactly there). Each watch only records its cause and wakes this thread; causes that arrive while a rebalance
runs are coalesced into a single follow-up rebalance, as Kafka's ``isWatcherTriggered`` flag did.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class ZKRebalancerListener:
    def __init__(self, name: str, handle: Callable[[tuple[str, ...]], None]) -> None:
        """``handle(causes)`` runs on this listener's thread with every cause recorded since the last run."""
        self._handle = handle
        self._cond = threading.Condition()
        self._causes: dict[str, None] = {}
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def trigger(self, cause: str) -> None:
        with self._cond:
            self._causes[cause] = None
            self._cond.notify()

    def shutdown(self, timeout: float = 10.0) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._causes and not self._stopped:
                    self._cond.wait(1.0)
                if self._stopped:
                    return
                causes = tuple(self._causes)
                self._causes.clear()
            self._handle(causes)
