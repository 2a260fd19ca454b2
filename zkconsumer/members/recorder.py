"""One JSON-lines file of events, written as they come: the members' own and the starter's markers, in the order the
starter saw them, which the trace tools read back (:func:`zkconsumer.trace.timeline.read_events`)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.events.fields import now_iso


class EventRecorder:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._file: TextIO | None = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def write(self, event: dict[str, Any]) -> None:
        """One event, flushed at once; ``level`` (info) and ``timestamp`` (now) added when missing. Nothing once
        closed."""
        event.setdefault("level", "info")
        event.setdefault("timestamp", now_iso())
        with self._lock:
            if self._file is not None:
                self._file.write(json.dumps(event, default=str) + "\n")
                self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
