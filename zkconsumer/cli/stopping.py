"""How a long-running command that holds a ZooKeeper session (``bridge``, ``consume``) stops on SIGTERM or SIGINT:
promptly, even when its ZooKeeper is gone.

A signal handler that only sets a flag does not end a wait of the main thread: Python runs the handler and waits
again (PEP 475), and kazoo waits on a request queued while it reconnects until a connection is made, which against a
paused server is never. So the signals are taken by a thread of their own (:func:`stop_on_signals`, as the member
processes take them), the work runs in a daemon thread (:class:`Work`) and the main thread waits for the one or the
other. Each step of the stop that talks to ZooKeeper (finishing a pass or a join, committing offsets, closing the
session) is then waited for until a deadline (:class:`Deadline`); a step not done by then is given up, left to end
with the process, and the command says so in one line (:func:`gave_up`) and exits with the status of a clean stop.

The bound is the command's ZooKeeper session timeout, after which ZooKeeper itself counts a silent party as gone
(and kazoo drops a connection that has not answered for two thirds of it): an answer that has not come by then is
not worth waiting for. Once stopping, kazoo's warnings about the connection it is giving up are silenced
(:func:`quiet_kazoo`): the outage was reported when it began, and "Failed connecting to Zookeeper" at the end would
report the stop itself as a failure.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from zkconsumer.members.stop_signals import stop_event

T = TypeVar("T")


def stop_on_signals() -> threading.Event:
    """An event set on SIGTERM or SIGINT. Call it while the main thread is the only one, before the command starts
    any (kazoo's, librdkafka's): the signals are blocked in the calling thread, every thread started after inherits
    that, and a thread that did not block them would take a SIGTERM with its default action, ending the process."""
    assert threading.active_count() == 1, f"threads already running: {threading.enumerate()}"
    return stop_event(stop_at_stdin_eof=False)


class Work(Generic[T]):
    """``work()`` in a daemon thread named ``name``, started at once."""

    def __init__(self, work: Callable[[], T], name: str) -> None:
        self._work = work
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        threading.Thread(target=self._run, name=name, daemon=True).start()

    def _run(self) -> None:
        try:
            self._value = self._work()
        except BaseException as exc:  # handed to whoever asks for the result, or dropped with an abandoned work
            self._error = exc
        finally:
            self._done.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Whether the work has ended, after waiting at most ``timeout`` seconds."""
        return self._done.wait(timeout)

    def wait_unless(self, stop: threading.Event, poll_s: float = 0.1) -> bool:
        """Wait until the work ends (True) or ``stop`` is set (False)."""
        while not self._done.wait(poll_s):
            if stop.is_set():
                return False
        return True

    def result(self) -> T:
        """What the ended work returned; what it raised is raised here."""
        assert self._done.is_set(), "the work has not ended"
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds

    def left(self) -> float:
        return max(self._end - time.monotonic(), 0.0)


def quiet_kazoo() -> None:
    logging.getLogger("kazoo.client").setLevel(logging.ERROR)


def gave_up(command: str, connect: str, deadline: Deadline, what: str) -> None:
    """The one line of a stop that gave up waiting for ZooKeeper at ``connect``: ``what`` was left undone."""
    print(f"zkconsumer {command}: ZooKeeper at {connect} did not answer within {deadline.seconds:g} s; stopped "
          f"without {what}", file=sys.stderr, flush=True)


def sigterm_as_ctrl_c() -> None:
    """Take SIGTERM as Ctrl-C, for a command that stops what it started on KeyboardInterrupt (``local up``, the demo,
    ``migration compare``): the exception ends whatever wait the command is in (a handler that only set a flag would
    let a wait on a ZooKeeper that does not answer resume), and its own cleanup runs as after Ctrl-C."""
    signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)


def _raise_keyboard_interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt
