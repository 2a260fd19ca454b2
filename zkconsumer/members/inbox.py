"""The events of member processes, gathered into one queue: a reader thread per member, on its stdout.

Our members write their events as JSON lines (:mod:`zkconsumer.members.legacy_member`); a line that is not one (a
crash's traceback) becomes a ``demo.member_output`` event on that member's lane, so that it is seen where it happened.
A member that reports in other words (a team's own consumer, :mod:`zkconsumer.members.command_member`) is followed
with a :class:`LineReader` of its own, which turns its lines into the same events.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterable
from typing import Any, Protocol

from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import now_iso

MAX_LINE = 500  # characters of a non-event line kept


def as_event(line: str, consumer_id: str) -> dict[str, Any] | None:
    """One line of a member's stdout as an event; None for a blank line."""
    text = line.strip()
    if not text:
        return None
    try:
        event = json.loads(text)
    except ValueError:
        event = None
    if isinstance(event, dict):
        return event
    return {"event": ev.DEMO_MEMBER_OUTPUT, "level": "warning", "timestamp": now_iso(), "consumer_id": consumer_id,
            "line": text[:MAX_LINE]}


class LineReader(Protocol):
    """How a member's stdout becomes events: each line read, then the end of the output."""

    def read(self, line: str) -> list[dict[str, Any]]: ...

    def end(self) -> list[dict[str, Any]]: ...


class EventLines:
    """Our members' stdout: a JSON event a line (:func:`as_event`)."""

    def __init__(self, consumer_id: str) -> None:
        self.consumer_id = consumer_id

    def read(self, line: str) -> list[dict[str, Any]]:
        event = as_event(line, self.consumer_id)
        return [] if event is None else [event]

    def end(self) -> list[dict[str, Any]]:
        return []


class EventInbox:
    def __init__(self) -> None:
        self._queue: queue.Queue[dict[str, Any]] = queue.Queue()
        self._readers: list[threading.Thread] = []

    def follow(self, lines: Iterable[str], consumer_id: str, reader: LineReader | None = None) -> None:
        """Read ``lines`` (a member's stdout) in a daemon thread until they end, queueing each event ``reader``
        (default :class:`EventLines`) makes of them."""
        thread = threading.Thread(target=self._read, args=(lines, reader or EventLines(consumer_id)),
                                  name=f"read-{consumer_id}", daemon=True)
        thread.start()
        self._readers.append(thread)

    def _read(self, lines: Iterable[str], reader: LineReader) -> None:
        try:
            for line in lines:
                for event in reader.read(line):
                    self._queue.put(event)
        finally:
            for event in reader.end():
                self._queue.put(event)

    def take(self, wait: float) -> list[dict[str, Any]]:
        """Every event queued, in order, waiting up to ``wait`` seconds for the first."""
        try:
            events = [self._queue.get(timeout=wait) if wait > 0 else self._queue.get_nowait()]
        except queue.Empty:
            return []
        while True:
            try:
                events.append(self._queue.get_nowait())
            except queue.Empty:
                return events

    def join(self, timeout: float) -> None:
        """Wait (up to ``timeout`` each) for the readers to reach the end of their members' output."""
        for reader in self._readers:
            reader.join(timeout)
