"""A ZooKeeper ensemble of one or more servers, each serving its clients' requests one at a time
(:class:`~zkconsumer.storm.request_queue.RequestQueue`): reads and pings on the server a client is connected to,
writes through the leader.

A write sent to a follower is forwarded to the leader, which serves it, forces it to its log together with a quorum
of followers (their forces run side by side with its own, so the commit takes a force and a round trip between the
servers), and commits it; every server then applies it (a follower's share of the write's time on its own queue),
fires the watches its own clients set, and the client's server answers. With one server (``servers=1``) a write is
served, forced and answered by that server alone, as in the calibration runs. The servers' state is the model's one
copy, changed as the leader commits (a follower applying the change a moment later is not modelled).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.request_queue import RequestQueue

T = TypeVar("T")


class Ensemble:
    def __init__(self, loop: EventLoop, servers: int, network_rtt_ms: float,
                 on_send: Callable[[int], None] | None = None) -> None:
        if servers < 1:
            raise ValueError(f"an ensemble has at least one server, got {servers}")
        self.loop = loop
        self.network_rtt_ms = network_rtt_ms
        self.servers = [RequestQueue(loop, network_rtt_ms, on_send) for _ in range(servers)]
        self.leader = self.servers[0]

    def __len__(self) -> int:
        return len(self.servers)

    @property
    def requests(self) -> int:
        return sum(s.requests for s in self.servers)

    @property
    def operations(self) -> int:
        return sum(s.operations for s in self.servers)

    def queue_ms(self) -> float:
        """How long a request sent now would wait for the busiest server."""
        now = self.loop.now_ms
        return max(0.0, max(s.free_at_ms for s in self.servers) - now)

    def read(self, server: int, service_ms: float, apply: Callable[[], T] | None,
             reply: Callable[[Any, float], None], requests: int = 1) -> tuple[float, float]:
        """Reads sent now to ``server``; when the first and the last answer reach the client."""
        return self.servers[server].request(service_ms, apply, reply, requests=requests)

    def ping(self, server: int, service_ms: float) -> float:
        """A ping sent now to ``server``: booked on its queue (not counted as a client's request: kazoo's connection
        sends it, not the application); the time its answer reaches the client."""
        return self.servers[server].book(service_ms)

    def write(self, server: int, service_ms: float, force_ms: float, apply: Callable[[], T],
              reply: Callable[[T, float], None], operations: int = 1) -> tuple[float, float]:
        """A write sent now through ``server``: served and forced by the leader (with a quorum when there are
        followers), applied by every follower on its own queue, answered by ``server``; when the answer reaches the
        client (twice, as :meth:`read` gives the first and the last)."""
        if len(self.servers) == 1:
            answer = self.leader.write(service_ms, force_ms, apply, reply, operations=operations)
            return answer, answer
        followers = [s for s in self.servers if s is not self.leader]

        def committed() -> T:
            for follower in followers:
                follower.occupy(service_ms)
            return apply()

        # forwarded by a follower, a hop between servers each way; the quorum's force and its acknowledgement
        hops = self.network_rtt_ms if self.servers[server] is not self.leader else 0.0
        answer = self.leader.write(service_ms, force_ms + self.network_rtt_ms, committed,
                                   lambda result, latency: self.loop.after(
                                       hops / 2, lambda: reply(result, latency + hops / 2)),
                                   operations=operations, delay_ms=hops / 2) + hops / 2
        return answer, answer

    def occupy(self, server: int, service_ms: float) -> None:
        self.servers[server].occupy(service_ms)
