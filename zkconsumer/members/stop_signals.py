"""How a member process learns it must leave: SIGTERM, SIGINT, or (if asked) its stdin closing; and how its starter
gets the stacks of one that does not leave (SIGUSR1).

Used by both member processes (:mod:`zkconsumer.members.legacy_member`, :mod:`zkconsumer.members.modern_member`),
and light to import: a member that is not a legacy one need not load kazoo for it.
"""

from __future__ import annotations

import faulthandler
import signal
import sys
import threading

STOP_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT})
STACKS_SIGNAL = signal.SIGUSR1


def stacks_on_request() -> None:
    """Every thread's stack to stderr (the member's log) on SIGUSR1: sent by a starter about to kill a member that
    did not leave in time (:meth:`zkconsumer.members.group.MemberGroup.stop`), so that the hang can be read."""
    faulthandler.register(STACKS_SIGNAL, all_threads=True)


def stop_event(*, stop_at_stdin_eof: bool) -> threading.Event:
    """An event set on SIGTERM or SIGINT (and, if asked, when stdin closes): what a member process waits on.

    Call it before any other thread starts, so that every thread inherits the blocked signals. They are taken by
    ``sigwait`` in a thread of their own, not by a handler: a handler calling ``stop.set()`` runs in the main thread
    between two bytecodes and deadlocks on the event's lock when the signal lands while that thread holds it."""
    stop = threading.Event()
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)

    def take_signal() -> None:
        signal.sigwait(STOP_SIGNALS)
        stop.set()

    threading.Thread(target=take_signal, name="stop-signals", daemon=True).start()
    if stop_at_stdin_eof:
        def stop_at_eof() -> None:
            sys.stdin.read()
            stop.set()

        threading.Thread(target=stop_at_eof, name="stdin-eof", daemon=True).start()
    return stop
