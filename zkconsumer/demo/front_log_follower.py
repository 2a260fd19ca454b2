"""The front's log followed as it grows, so that a demo can narrate the group coordinator's rounds while they happen.

The front writes its events as JSON lines to ``front.log`` (:mod:`zkconsumer.embedded.front_process`); its group
coordinators' events (``front.group.*``, ``front.consumer_group.*``) name their group. A :class:`FrontLogFollower`
reads the lines appended since its last look, on a daemon thread, every ``interval`` seconds, and hands each
coordinator event to ``deliver``; :meth:`FrontLogFollower.stop` reads what is left first, so that the last round is
told too. A partial last line (the front in the middle of writing it) waits for the next look.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from zkconsumer.trace.vocabulary import CLASSIC_PREFIX, CONSUMER_PREFIX


class FrontLogFollower:
    def __init__(self, path: Path, deliver: Callable[[dict[str, Any]], None], interval: float = 0.1,
                 from_start: bool = False, caught_up: Callable[[float], None] | None = None) -> None:
        self.path = Path(path)
        self.deliver = deliver
        #: told, after each read, the time (seconds since the epoch) up to which the log has been read: what the
        #: front logged before then has been delivered; after stop(), infinity
        self.caught_up = caught_up
        self.interval = interval
        # what was written before us is another story's (an earlier run at the same front), unless asked for
        self._offset = 0 if from_start or not self.path.exists() else self.path.stat().st_size
        self._stop = threading.Event()
        self._lock = threading.Lock()  # one reader at a time: the thread, or stop()
        self._thread = threading.Thread(target=self._run, name="front-log-follower", daemon=True)

    def start(self) -> FrontLogFollower:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)
        self.read_new()
        if self.caught_up is not None:
            self.caught_up(float("inf"))

    def __enter__(self) -> FrontLogFollower:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.read_new()

    def read_new(self) -> int:
        """Deliver the coordinator events of the whole lines written since the last call; returns how many."""
        with self._lock:
            began = time.time()
            delivered = self._read()
            if self.caught_up is not None:
                self.caught_up(began)
            return delivered

    def _read(self) -> int:
        try:
            with open(self.path, "rb") as log:
                log.seek(self._offset)
                data = log.read()
        except OSError:
            return 0
        end = data.rfind(b"\n")
        if end < 0:
            return 0
        self._offset += end + 1
        delivered = 0
        for raw in data[:end].splitlines():
            event = coordinator_event(raw)
            if event is not None:
                self.deliver(event)
                delivered += 1
        return delivered


def coordinator_event(raw: bytes) -> dict[str, Any] | None:
    """A line of the front's log as a coordinator event with its group, or None (another event, or no JSON)."""
    try:
        event = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(event, dict) or not isinstance(event.get("group"), str):
        return None
    name = event.get("event")
    if isinstance(name, str) and (name.startswith(CLASSIC_PREFIX) or name.startswith(CONSUMER_PREFIX)):
        return event
    return None
