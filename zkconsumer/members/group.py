"""Member processes of one group as their starter sees them: started, followed through their events, killed,
stopped, and found dead.

Each member is a process of its own (:mod:`zkconsumer.members.legacy_member`, :mod:`zkconsumer.members.modern_member`),
its stderr in ``<log_dir>/<name>.log``. A followed member's stdout carries its events (:class:`EventInbox`);
:meth:`MemberGroup.receive` takes them and keeps each member's :class:`MemberState`, which :meth:`MemberGroup.settled`
reads. The starter records and narrates the events it receives; nothing here writes them.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.members.inbox import EventInbox, LineReader
from zkconsumer.members.settle import MemberState, settled
from zkconsumer.members.stop_signals import STACKS_SIGNAL

STACKS_WAIT_S = 1.0  # for a hung member to write its stacks before it is killed


@dataclass
class MemberProcess:
    name: str  # c1, m2, ...: the name the starter gives it, and its log's
    consumer_id: str  # as its events carry it
    process: subprocess.Popen[str]
    state: MemberState = field(default_factory=MemberState)
    alive: bool = True  # false once killed, stopped, or found exited
    ended_by_us: bool = False  # its end was asked for: an exit then is no death
    hung: bool = False  # told to leave, it did not within the time given, and was killed

    @property
    def pid(self) -> int:
        return self.process.pid


class MemberGroup:
    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.members: dict[str, MemberProcess] = {}
        self.inbox = EventInbox()
        self.last_rebalance_event = 0.0  # time.monotonic() of the last rebalance.* event of a member

    def start(self, name: str, consumer_id: str, argv: list[str], *, follow: bool = True,
              env: dict[str, str] | None = None, reader: LineReader | None = None) -> MemberProcess:
        """Start a member process (again, under a name used before: its log goes on), with ``env`` (default: this
        process's). Followed, its stdout is read for events (by ``reader``, for a member that does not write ours);
        otherwise stdout goes to its log too. Its stdin is a pipe that closes with this process, which a member
        started with ``--stop-at-stdin-eof`` (and a command member, by contract) takes as the order to leave.
        A command that cannot be started is one line (:class:`~zkconsumer.errors.UsageError`)."""
        log_path = self.log_dir / f"{name}.log"
        with open(log_path, "ab" if name in self.members else "wb") as log:
            try:
                process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE if follow else log,
                                           stderr=log, text=True, bufsize=1, env=env)
            except OSError as exc:
                raise UsageError(f"member {name}: cannot start {argv[0]!r}: {exc.strerror or exc}") from None
        member = MemberProcess(name, consumer_id, process)
        self.members[name] = member
        if follow:
            assert process.stdout is not None
            self.inbox.follow(process.stdout, consumer_id, reader)
        return member

    def live(self) -> list[MemberProcess]:
        return [m for m in self.members.values() if m.alive]

    def receive(self, wait: float) -> list[dict[str, Any]]:
        """The events the members wrote since the last call (waiting up to ``wait`` seconds for the first), each
        already applied to the state of the member it names."""
        events = self.inbox.take(wait)
        for event in events:
            name = str(event.get("event", ""))
            if not name.startswith("rebalance."):
                continue
            member = next((m for m in self.members.values() if m.consumer_id == event.get("consumer_id")), None)
            if member is not None:
                self.last_rebalance_event = time.monotonic()
                member.state.observe(event)
        return events

    def settled(self, partitions: int, *, quiet_s: float, began: float = 0.0,
                completed_after: float | None = None) -> bool:
        """:func:`zkconsumer.members.settle.settled` over the live members, quiet counted from the last rebalance
        event or ``began`` (a :func:`time.monotonic` reading), whichever came later."""
        quiet_for = time.monotonic() - max(self.last_rebalance_event, began)
        return settled((m.state for m in self.live()), partitions, quiet_for=quiet_for, quiet_s=quiet_s,
                       completed_after=completed_after)

    def kill(self, member: MemberProcess) -> None:
        """SIGKILL: the member can release nothing; its ephemeral znodes stay until its session expires."""
        member.ended_by_us = True
        member.process.send_signal(signal.SIGKILL)
        member.process.wait()  # no timeout: SIGKILL cannot be caught or ignored, the process ends
        member.alive = False

    def stop(self, member: MemberProcess, timeout: float = 20.0, while_waiting: Callable[[], None] | None = None,
             ) -> None:
        """SIGTERM, a clean leave. Still running after ``timeout`` seconds, it is ``hung``: its stacks go to its log
        (SIGUSR1) and it is killed. ``while_waiting`` is called between looks (it should block briefly, taking
        events: the member's last ones say how it left)."""
        member.ended_by_us = True
        with contextlib.suppress(OSError):
            member.process.send_signal(signal.SIGTERM)
        self._await_exit([member], time.monotonic() + timeout, while_waiting)
        member.alive = False

    def stop_all(self, timeout: float, while_waiting: Callable[[], None] | None = None) -> list[MemberProcess]:
        """Every member still running leaves at once (SIGTERM; those still there after ``timeout`` are ``hung``,
        as in :meth:`stop`); returns those that were alive until now."""
        running = [m for m in self.members.values() if m.process.poll() is None]
        for member in running:
            member.ended_by_us = True
            with contextlib.suppress(OSError):
                member.process.send_signal(signal.SIGTERM)
        self._await_exit(running, time.monotonic() + timeout, while_waiting)
        ended = [m for m in running if m.alive]
        for member in ended:
            member.alive = False
        return ended

    def _await_exit(self, members: list[MemberProcess], deadline: float,
                    while_waiting: Callable[[], None] | None) -> None:
        for member in members:
            while member.process.poll() is None and time.monotonic() < deadline:
                if while_waiting is None:
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        member.process.wait(max(0.0, deadline - time.monotonic()))
                else:
                    while_waiting()
            if member.process.poll() is None:
                member.hung = True
                member.process.send_signal(STACKS_SIGNAL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    member.process.wait(STACKS_WAIT_S)  # it writes its stacks; exiting meanwhile is fine too
                member.process.kill()
            member.process.wait()  # no timeout: it has exited, or was sent SIGKILL, which cannot be caught or ignored

    def died(self) -> list[MemberProcess]:
        """Members that exited without being asked to, since the last call; they are alive no more."""
        dead = [m for m in self.members.values()
                if m.alive and not m.ended_by_us and m.process.poll() is not None]
        for member in dead:
            member.alive = False
        return dead

    def close(self, timeout: float = 5.0) -> list[dict[str, Any]]:
        """After every member ended: the events they wrote last (their readers reach the end of their output
        within ``timeout`` each), and their stdin pipes closed."""
        self.inbox.join(timeout)
        events = self.receive(0.0)
        for member in self.members.values():
            if member.process.stdin is not None:
                with contextlib.suppress(OSError):
                    member.process.stdin.close()
        return events
