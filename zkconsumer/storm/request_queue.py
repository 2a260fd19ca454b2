"""A server that serves requests one at a time, in arrival order: ZooKeeper's request pipeline, the front's event
loop. Its bounded throughput is what turns a herd of members into a queue.

A request is applied to the server's state when its service ends (so concurrent requests see each other in the
order the server served them) and answered half a round trip later. A write (:meth:`RequestQueue.write`) is applied
once its transaction log is forced to disk: ZooKeeper's group commit, where every write that reaches the log while
a force is under way goes into the next force together, and reads go on being served meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from zkconsumer.storm.event_loop import EventLoop

T = TypeVar("T")


class RequestQueue:
    def __init__(self, loop: EventLoop, network_rtt_ms: float, on_send: Callable[[int], None] | None = None) -> None:
        """``on_send(requests)``: told of every request sent (the client's own cost of sending, where modelled)."""
        self.loop = loop
        self.on_send = on_send
        self.half_rtt_ms = network_rtt_ms / 2
        self.free_at_ms = 0.0
        self.flush_start_ms = 0.0  # the latest log force: under way, or queued behind the one under way
        self.flush_end_ms = 0.0
        self.requests = 0  # requests served (a multi-op is one)
        self.operations = 0  # operations inside them (a multi-op's every create or delete)

    def request(self, service_ms: float, apply: Callable[[], T] | None, reply: Callable[[Any, float], None],
                operations: int = 1, requests: int = 1) -> tuple[float, float]:
        """Send a request now: ``apply()`` runs on the server once served, ``reply(result, latency_ms)`` at the
        client half a round trip later (latency: from sending to the answer). ``requests`` > 1: as many requests
        pipelined together (reads sent at once), served back to back and answered with the last. A request with no
        ``apply`` is one event on the clock rather than two. Returns when the first and the last answer reach the
        client."""
        sent = self.loop.now_ms
        start = max(sent + self.half_rtt_ms, self.free_at_ms)
        self.free_at_ms = start + service_ms
        self.requests += requests
        if self.on_send is not None:
            self.on_send(requests)
        self.operations += max(operations, requests)
        answers = (start + service_ms / max(requests, 1) + self.half_rtt_ms, self.free_at_ms + self.half_rtt_ms)
        if apply is None:
            self.loop.at(answers[1], lambda: reply(None, self.loop.now_ms - sent))
            return answers

        def served() -> None:
            result = apply()
            self.loop.after(self.half_rtt_ms, lambda: reply(result, self.loop.now_ms - sent))

        self.loop.at(self.free_at_ms, served)
        return answers

    def book(self, service_ms: float) -> float:
        """A request sent now whose answer nobody waits on (a connection's ping): its time booked on the server, no
        event scheduled, not counted; the time its answer reaches the client."""
        start = max(self.loop.now_ms + self.half_rtt_ms, self.free_at_ms)
        self.free_at_ms = start + service_ms
        return self.free_at_ms + self.half_rtt_ms

    def write(self, service_ms: float, force_ms: float, apply: Callable[[], T], reply: Callable[[T, float], None],
              operations: int = 1, delay_ms: float = 0.0) -> float:
        """Send a write now: ``service_ms`` of the server's time, then the log forced (``force_ms``) together with
        every write that reached the log since the force under way began; ``apply()`` once its force ends.
        ``delay_ms``: on its way that much longer (forwarded by another server). Returns when the answer reaches the
        client."""
        sent = self.loop.now_ms
        start = max(sent + self.half_rtt_ms + delay_ms, self.free_at_ms)
        self.free_at_ms = logged = start + service_ms
        self.requests += 1
        if self.on_send is not None:
            self.on_send(1)
        self.operations += operations
        if logged >= self.flush_end_ms:  # the log is idle: a force of its own
            self.flush_start_ms, self.flush_end_ms = logged, logged + force_ms
        elif logged >= self.flush_start_ms:  # a force is under way: the next one, queued behind it
            self.flush_start_ms, self.flush_end_ms = self.flush_end_ms, self.flush_end_ms + force_ms
        # else: the next force is already queued, and this write goes with it

        def committed() -> None:
            result = apply()
            self.loop.after(self.half_rtt_ms, lambda: reply(result, self.loop.now_ms - sent))

        self.loop.at(self.flush_end_ms, committed)
        return self.flush_end_ms + self.half_rtt_ms

    def occupy(self, service_ms: float) -> None:
        """Work of the server's own, done now (watch notifications sent as a write is applied): the requests queued
        behind it wait that much longer."""
        self.free_at_ms = max(self.loop.now_ms, self.free_at_ms) + service_ms
