"""A member's ZooKeeper connection as kazoo keeps it (``kazoo/protocol/connection.py``, ``_connect_attempt``): what
decides whether a connection that waits on a busy server is dropped.

kazoo's connection loop waits on its socket for at most half its read timeout (two thirds of the negotiated session
timeout) less a jitter of 10-400 ms, measured from the last thing it sent. A wait that ends with nothing read and
nothing to send sends a ping; a wait that ends with nothing read while a ping is still unanswered drops the
connection ("outstanding heartbeat ping not received"). Every request sent counts as a ping (the deadline moves);
anything read (an answer, a watch notification, the ping's own answer) ends the wait, and a read past the deadline
sends a ping at once. The server answers a session's requests in order, so a ping waits behind the member's own
requests: a member whose answers are late by about two thirds of the session timeout, with nothing else reaching it
meanwhile, loses its connection.

The jitter is taken at its mean (205 ms), so the simulation stays deterministic. This class holds the loop's state
and says what is due; :mod:`.legacy_group` sends the pings, drops and reconnects.
"""

from __future__ import annotations

from dataclasses import dataclass

#: kazoo's ``random.randint(1, 40) / 100`` seconds subtracted from each wait, at its mean
PING_JITTER_MS = 205.0
#: what is due when the loop's wait ends with nothing read: nothing yet (wait on), a ping, or the drop
WAIT, PING, DROP = "wait", "ping", "drop"


@dataclass
class KazooConnection:
    """The loop's state for one connection: ``session_timeout_ms`` is the negotiated session timeout."""

    session_timeout_ms: float
    server: int = 0
    up: bool = True
    #: bumped at every drop: answers to requests sent on an earlier connection are never read
    generation: int = 0
    last_send_ms: float = 0.0
    #: a ping sent and not answered yet; its answer reaches the member at ``ping_answer_ms`` (known when it is sent,
    #: the server serving a session's requests in order)
    ping_out: bool = False
    ping_answer_ms: float = 0.0
    #: when the loop's present wait ends if nothing is read or sent meanwhile
    wait_ends_ms: float = 0.0
    #: the answers of the latest pipelined requests arrive one after another over this span
    answers_from_ms: float = 0.0
    answers_until_ms: float = 0.0

    @property
    def half_read_timeout_ms(self) -> float:
        """kazoo's read timeout is two thirds of the session timeout; the loop waits half of it, less the jitter."""
        return self.session_timeout_ms * 2 / 3 / 2 - PING_JITTER_MS

    @property
    def deadline_ms(self) -> float:
        """The moment a ping is due if nothing is sent before."""
        return self.last_send_ms + self.half_read_timeout_ms

    def opened(self, now_ms: float, server: int) -> None:
        """Connected (again) to ``server``: the loop starts, nothing outstanding."""
        self.up, self.server, self.ping_out = True, server, False
        self.sent(now_ms)

    def sent(self, now_ms: float) -> None:
        """A request (or a ping) written: it counts as a ping, the deadline moves and the wait starts again."""
        self.last_send_ms = now_ms
        self.wait_ends_ms = self.deadline_ms

    def received(self, now_ms: float) -> bool:
        """Something read. True when the loop then sends a ping at once (read past the deadline); else the next wait
        ends at the deadline, or a jitter later when the deadline is that close."""
        self._ping_answered(now_ms)
        if now_ms >= self.deadline_ms:
            return True
        self.wait_ends_ms = max(self.deadline_ms, now_ms + PING_JITTER_MS)
        return False

    def pinged(self, now_ms: float, answer_ms: float) -> None:
        self.ping_out, self.ping_answer_ms = True, answer_ms
        self.sent(now_ms)

    def answering(self, first_ms: float, last_ms: float) -> None:
        """Requests just sent will be answered one after another from ``first_ms`` to ``last_ms`` (a pipelined batch):
        the loop reads something all along."""
        if last_ms > self.answers_until_ms:
            self.answers_from_ms, self.answers_until_ms = first_ms, last_ms

    def wait_ended(self, now_ms: float) -> str:
        """The loop's wait ran to ``wait_ends_ms`` (the caller checks that it did), unless something was read
        meanwhile: the ping's answer, or answers of a batch still arriving (each ended a wait; the next wait runs
        from the latest). Then :data:`DROP` if a ping is still unanswered, :data:`PING` when one is due,
        :data:`WAIT` when the wait goes on."""
        read_at = None
        if self.ping_out and self.ping_answer_ms <= now_ms:
            read_at = self.ping_answer_ms
        if self.answers_from_ms <= now_ms < self.answers_until_ms:
            read_at = now_ms
        if read_at is not None:
            if self.received(read_at):
                return PING
            if self.wait_ends_ms > now_ms:
                return WAIT
        if self.ping_out:
            return DROP
        if now_ms >= self.deadline_ms:
            return PING
        self.wait_ends_ms = max(self.deadline_ms, now_ms + PING_JITTER_MS)
        return WAIT

    def dropped(self) -> None:
        self.up, self.ping_out = False, False
        self.generation += 1

    def _ping_answered(self, now_ms: float) -> None:
        if self.ping_out and self.ping_answer_ms <= now_ms:
            self.ping_out = False
