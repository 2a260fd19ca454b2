"""Until when a ZooKeeper session certainly exists, from what its server last answered: a clock read away.

ZooKeeper expires a session a session timeout after it last heard from the client, and not before; until then the
session's ephemeral znodes (a member's registration, its owner znodes) exist, and no other member can hold what they
hold. An answer to a request proves the server heard the client no earlier than when that request was sent. So the
session certainly exists until the send time of the latest answered request plus the negotiated session timeout,
whatever happened to this process since (a pause, a stalled VM, a cut network) and whether or not kazoo noticed
yet. :attr:`SessionLiveness.confirmed` is that send time, on the monotonic clock.

The send time, not the time the answer was read: an answer the server wrote before this process was paused is read
after it wakes, and proves nothing about the moments in between.

kazoo does not say when its server last answered, so :meth:`SessionLiveness.attach` watches the client's connection
handler, on its own thread, by wrapping three of its methods on the instance: ``_submit`` (a request leaves: its xid
and the time), ``_read_header`` (an answer comes: the time its request left is confirmed) and ``_connect`` (a
session established or resumed: confirmed from the start of the handshake, and the negotiated timeout read from
it). Where the handler lacks them (a kazoo unlike 2.x), nothing is attached and ``attach`` returns ``None``: the
caller then has no fence, and says so. These internals are checked for the kazoo versions pinned in pyproject.toml
(``tests/zk/test_kazoo_internals.py``).

Until the first answer after :meth:`SessionLiveness.attach` nothing is confirmed (``confirmed`` is minus infinity);
:meth:`SessionLiveness.ask` sends a cheap request whose answer confirms. The session timeout is the negotiated one
when the liveness was attached before the client started (``open_client(before_start=SessionLiveness.attach)``, as
the connector does); attached to a connected client, it is the one asked for until the next handshake tells (a
server lowers it only above its ``maxSessionTimeout``, twenty ticks by default).
"""

from __future__ import annotations

import contextlib
import threading
from time import monotonic
from typing import Any

from kazoo.client import KazooClient

_WATCH_XID = -1  # a watch notification: not the answer to a request
_WRAPPED = ("_submit", "_read_header", "_connect")


class SessionLiveness:
    """The latest confirmation of one kazoo client's session (see the module's docstring)."""

    def __init__(self, client: KazooClient, session_timeout_s: float) -> None:
        self._client = client
        #: monotonic time the latest answered request was sent; minus infinity before the first answer
        self.confirmed = float("-inf")
        #: the session timeout the server negotiated (the one asked for until a handshake tells)
        self.session_timeout_s = session_timeout_s
        self._sent: dict[int, float] = {}  # xid -> when it was sent; only kazoo's connection thread touches it
        self._changed = threading.Condition()
        self._waiting = 0

    @classmethod
    def attach(cls, client: KazooClient) -> SessionLiveness | None:
        """Watch ``client``'s connection from now on; ``None`` when this kazoo's handler cannot be watched."""
        handler = getattr(client, "_connection", None)
        if handler is None or not all(callable(getattr(handler, name, None)) for name in _WRAPPED):
            return None
        liveness = cls(client, getattr(client, "_session_timeout", 10_000) / 1000)
        submit, read_header, connect = (getattr(handler, name) for name in _WRAPPED)
        sent = liveness._sent

        def watched_submit(request: Any, timeout: Any, xid: Any = None) -> Any:
            if xid is not None:
                sent.setdefault(xid, monotonic())  # an earlier one still unanswered keeps the older, safer time
            return submit(request, timeout, xid)

        def watched_read_header(timeout: Any) -> Any:
            answer = read_header(timeout)
            if answer[0].xid != _WATCH_XID:
                at = sent.pop(answer[0].xid, None)
                if at is not None:
                    liveness._confirm(at)
            return answer

        def watched_connect(host: Any, hostip: Any, port: Any) -> Any:
            sent.clear()  # a new connection numbers its requests from 1 again
            started = monotonic()
            timeouts = connect(host, hostip, port)
            read_timeout_ms = timeouts[0]  # kazoo's read timeout: two thirds of the negotiated session timeout
            liveness.session_timeout_s = read_timeout_ms * 1.5 / 1000
            liveness._confirm(started)
            return timeouts

        handler._submit = watched_submit
        handler._read_header = watched_read_header
        handler._connect = watched_connect
        return liveness

    def age(self) -> float:
        """Seconds since the latest confirmation (infinite before the first)."""
        return monotonic() - self.confirmed

    def ask(self) -> None:
        """Send a cheap request (an ``exists`` of the root), whose answer confirms the session if it still exists."""
        with contextlib.suppress(Exception):  # not connected: the answer, or the loss, comes through kazoo
            self._client.exists_async("/")

    def wait(self, timeout_s: float) -> None:
        """Return at the next confirmation, or after ``timeout_s``."""
        with self._changed:
            self._waiting += 1
            try:
                self._changed.wait(timeout_s)
            finally:
                self._waiting -= 1

    def _confirm(self, at: float) -> None:
        if at > self.confirmed:
            self.confirmed = at
        if self._waiting:  # read without the lock: a waiter that misses it wakes at its timeout
            with self._changed:
                self._changed.notify_all()
