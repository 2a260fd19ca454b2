"""The sliced-deadline wait the leader finder and the fetcher threads make their network calls with: pure timing,
no server needed (the callers are tested against the real broker in test_fetcher.py)."""

from __future__ import annotations

import threading
import time

import pytest
from time_scale import scaled

from zkconsumer.consumer.sliced_deadline import NETWORK_SLICE_S, call_in_slices


class NoAnswer(Exception):
    pass


def test_an_answer_ends_the_wait_and_slices_never_exceed_the_network_slice():
    slices: list[float] = []

    def attempt(timeout_s: float) -> str | None:
        slices.append(timeout_s)
        return "answer" if len(slices) == 3 else None

    assert call_in_slices(attempt, 30.0, threading.Event()) == "answer"
    assert len(slices) == 3 and all(0 < s <= NETWORK_SLICE_S for s in slices)


def test_a_retryable_error_is_tried_again_and_raised_once_the_deadline_passed():
    calls: list[float] = []

    def attempt(timeout_s: float) -> str:
        calls.append(timeout_s)
        time.sleep(min(timeout_s, 0.02))  # a refused connection answers before the slice is over
        raise NoAnswer(f"call {len(calls)}")

    started = time.monotonic()
    with pytest.raises(NoAnswer) as raised:
        # a deadline of many attempts' length, so that a loaded machine's slow sleep still leaves room for a second
        call_in_slices(attempt, 0.5, threading.Event(), retry_on=(NoAnswer,))
    assert len(calls) >= 2 and str(raised.value) == f"call {len(calls)}"
    assert time.monotonic() - started < scaled(2.0)
    # No slice is longer than what is left of the deadline.
    assert calls[0] <= 0.5 and calls[-1] < calls[0]


def test_no_answer_by_the_deadline_raises_what_the_caller_chose():
    def attempt(timeout_s: float) -> None:
        time.sleep(timeout_s)

    with pytest.raises(TimeoutError, match="nothing from broker 1"):
        call_in_slices(attempt, 0.05, threading.Event(), expired=lambda: TimeoutError("nothing from broker 1"))


def test_another_error_is_raised_at_once():
    calls = []

    def attempt(timeout_s: float) -> None:
        calls.append(timeout_s)
        raise ValueError("not a timeout")

    with pytest.raises(ValueError, match="not a timeout"):
        call_in_slices(attempt, 30.0, threading.Event(), retry_on=(NoAnswer,))
    assert len(calls) == 1


def test_a_stop_request_is_seen_within_one_slice_and_gives_none():
    stop = threading.Event()

    def attempt(timeout_s: float) -> None:
        time.sleep(min(timeout_s, 0.05))  # a broker that does not answer

    threading.Timer(0.1, stop.set).start()
    started = time.monotonic()
    assert call_in_slices(attempt, 30.0, stop) is None
    assert time.monotonic() - started < NETWORK_SLICE_S + scaled(0.5)
    stop.set()
    assert call_in_slices(attempt, 30.0, stop) is None
