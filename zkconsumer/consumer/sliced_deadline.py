"""Waiting for a broker's answer up to a deadline, without making a stop request wait as long.

A leader lookup or an offset lookup may wait ``socket.timeout.ms`` (30 s by default) for a broker that does not
answer, while a rebalance that stops the fetchers must not wait that long: Kafka interrupted its fetcher and
leader-finder threads for that; confluent-kafka calls cannot be interrupted. So the network call is made in
slices of :data:`NETWORK_SLICE_S`, and the stop request is looked at between slices.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: The longest one network call blocks, so the longest a stop request waits for a thread in such a call.
NETWORK_SLICE_S = 1.0
#: librdkafka treats a timeout of 0 as "do not wait at all"; a last slice near the deadline gets at least this.
_MIN_SLICE_S = 0.01


def call_in_slices(
    attempt: Callable[[float], T | None],
    timeout_s: float,
    stop: threading.Event,
    *,
    retry_on: tuple[type[Exception], ...] = (),
    expired: Callable[[], Exception] = lambda: TimeoutError("no answer"),
) -> T | None:
    """``attempt(slice_s)`` again and again until it answers, for at most ``timeout_s`` in all; ``None`` once
    ``stop`` is set.

    ``attempt`` returns ``None``, or raises one of ``retry_on``, when no answer came within its slice. When the
    deadline has passed, the last such exception is raised again, or ``expired()`` when the last slice returned
    ``None``. Any other exception is the caller's at once.
    """
    deadline = time.monotonic() + timeout_s
    while not stop.is_set():
        remaining = deadline - time.monotonic()
        try:
            answer = attempt(max(_MIN_SLICE_S, min(remaining, NETWORK_SLICE_S)))
        except retry_on:
            if time.monotonic() >= deadline:
                raise
            continue
        if answer is not None:
            return answer
        if time.monotonic() >= deadline:
            raise expired()
    return None
