"""The control channel of ``zkconsumer demo --step`` between the demo and a legacy member process: the member stops
before each numbered step of its rebalance and goes on when the demo says so.

A member started with ``--step-gate PATH`` (:mod:`zkconsumer.members.legacy_member`) makes ``PATH`` a FIFO, gives
its connector a :class:`HeldSteps` as step gate (:mod:`zkconsumer.consumer.step_gate`) and, before each step, emits
``member.step_waiting`` (``consumer_id``, ``rebalance_id``, ``attempt``, ``step``, ``name``, ``title``, ``control``:
the FIFO) and waits. The demo answers with :func:`tell`: one line :data:`GO` runs that step, :data:`PLAY_ON` runs it
and every later one without waiting. A FIFO rather than the member's stdin, because stdin closing is already how a
member learns that its starter is gone (``--stop-at-stdin-eof``); and the demo needs nothing but the event's path to
answer. Leaving the group (SIGTERM, or stdin closing) also lets a held step go, so that the member can shut down.
The event is no ``demo.*`` one: those are the timeline's markers, drawn across every lane.
"""

from __future__ import annotations

import contextlib
import os
import queue
import stat
import threading
from pathlib import Path

from zkconsumer.consumer.step_gate import StepContext
from zkconsumer.errors import UsageError
from zkconsumer.events import catalogue as ev
from zkconsumer.events.rebalance_steps import RebalanceStep
from zkconsumer.log import get_logger

STEP_WAITING = ev.MEMBER_STEP_WAITING
GO = "go"  # run the step waited before
PLAY_ON = "off"  # run it, and every later step without waiting


class HeldSteps:
    """The member's side: a step gate that waits for a line on the FIFO at ``path`` (made if missing, owner-only), or
    for ``stop``. :meth:`close` removes the FIFO if it made it."""

    def __init__(self, path: Path, stop: threading.Event) -> None:
        self.path = path
        self.stepping = True
        self._stop = stop
        self._lines: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._log = get_logger("zkconsumer.members.step_control")
        self._made = False
        try:
            os.mkfifo(path, 0o600)
            self._made = True
        except FileExistsError:
            if not stat.S_ISFIFO(os.stat(path).st_mode):
                raise UsageError(f"--step-gate {path}: exists and is not a FIFO") from None
        # Read and write: opening never waits for a writer, and the reader never meets the end of the input
        # between two of the demo's answers (each opens, writes a line and closes).
        self._fd = os.open(path, os.O_RDWR)
        threading.Thread(target=self._read, name="step-gate", daemon=True).start()
        threading.Thread(target=self._released_at_stop, name="step-gate-stop", daemon=True).start()

    def __call__(self, step: RebalanceStep, context: StepContext) -> None:
        if not self.stepping or self._stop.is_set():
            return
        self._log.info(STEP_WAITING, consumer_id=context.consumer_id, rebalance_id=context.rebalance_id,
                       attempt=context.attempt, step=step.number, name=step.name, title=step.title,
                       control=str(self.path))
        self._lines.get()  # no timeout: held until the demo's answer, a person's; leaving (close, stop) puts one too

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        if self._made:
            self.path.unlink(missing_ok=True)

    def _read(self) -> None:
        with contextlib.suppress(OSError, ValueError), os.fdopen(self._fd, "r", closefd=False) as lines:
            for line in lines:
                answer = line.strip()
                if answer == PLAY_ON:
                    self.stepping = False
                if answer in (GO, PLAY_ON):
                    self._lines.put(answer)

    def _released_at_stop(self) -> None:
        self._stop.wait()  # no timeout: this thread's whole job is to wait for the member's leaving
        self.stepping = False
        self._lines.put(PLAY_ON)


def tell(control: Path, answer: str) -> bool:
    """The demo's side: ``answer`` (:data:`GO` or :data:`PLAY_ON`) to the member holding the FIFO ``control``; False
    when nobody holds it any more (the member has ended) or it is no FIFO. Never waits."""
    try:
        fd = os.open(control, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:  # ENXIO: no reader, the member is gone; ENOENT: it removed the FIFO on leaving
        return False
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return False
        os.write(fd, f"{answer}\n".encode())
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
