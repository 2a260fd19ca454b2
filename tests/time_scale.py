"""One time scale for the whole suite: every deadline a test waits for is its figure for a quiet machine of the
kind the suite was written on, times one factor.

The factor comes from ``ZKCONSUMER_TEST_TIME_SCALE`` when it is set (``scripts/run_tests.sh`` sets it once for
every pass, so the two pytest runs, their workers and the container pass share it), else from a short calibration
(:func:`calibrate`): a fixed amount of Python work done in two processes at once, as the suite's own passes run side
by side, timed against what the reference machine takes. A machine half as fast, or one whose other core is busy,
gets deadlines twice as long, instead of failures; a faster one keeps the written figures (the factor is never below
1: a deadline is a bound on a hang, not a speed test).

The test's own limit (pytest-timeout's, scaled the same way by ``conftest.py``) is the outermost deadline. Inner waits
end before it (:func:`bounded`), so that a slow machine fails with the assertion's message rather than with
pytest-timeout's stack dump.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

ENV = "ZKCONSUMER_TEST_TIME_SCALE"
#: the calibration's wall time on the reference machine (2 cores, quiet: 0.18-0.21 s in ten rounds; 0.29-0.32 s with
#: one core held by a CPU hog, a factor of 1.5), in seconds
REFERENCE_S = 0.20
#: the calibration's work: a pure-Python loop, the kind of work that competes with the suite's clients and servers
_WORK = "import time\nt=time.perf_counter()\nx=0\nfor i in range(3_000_000): x^=i*7\nprint(time.perf_counter()-t)"
#: a factor beyond this says the calibration itself went wrong (a machine paused mid-run), not how slow it is
MAX_FACTOR = 6.0

_factor: float | None = None
_source = ""
_deadline: float | None = None  # when the running test's own limit ends (monotonic), set by conftest.py


def calibrate(runs: int = 2) -> float:
    """How much slower than the reference machine this one is now (at least 1): the best of ``runs`` rounds, each
    the slower of two processes doing the same work at once. The best round, because a passing spike is noise while
    a sustained load (a CPU hog, other jobs) is in every round."""
    best = float("inf")
    for _ in range(runs):
        workers = [subprocess.Popen([sys.executable, "-c", _WORK], stdout=subprocess.PIPE, text=True)
                   for _ in range(2)]
        times = [float(worker.communicate(timeout=120)[0]) for worker in workers]
        best = min(best, max(times))
    return min(max(best / REFERENCE_S, 1.0), MAX_FACTOR)


def factor() -> float:
    """The suite's time scale: ``ZKCONSUMER_TEST_TIME_SCALE``, else calibrated once (and exported, so that the
    processes this one starts use the same)."""
    global _factor, _source
    if _factor is None:
        given = os.environ.get(ENV)
        if given:
            try:
                _factor = float(given)
            except ValueError:
                raise SystemExit(f"{ENV}={given!r}: not a number (a factor such as 1.5)") from None
            if _factor <= 0:
                raise SystemExit(f"{ENV}={given!r}: must be positive")
            _source = "from " + ENV
        else:
            _factor = round(calibrate(), 2)
            _source = "calibrated"
            os.environ[ENV] = str(_factor)
    return _factor


def describe() -> str:
    value = factor()
    return f"time scale {value:g} ({_source})"


def scaled(seconds: float) -> float:
    """``seconds`` on this machine: a figure for the reference machine times the factor."""
    return seconds * factor()


def set_test_deadline(limit_s: float | None) -> None:
    """The running test's own limit, ``limit_s`` from now (``None``: no limit). Inner waits end a margin before it:
    a tenth of the limit, at least 3 s, for the test's teardown and its failure report."""
    global _deadline
    _deadline = None if not limit_s else time.monotonic() + limit_s - max(3.0, 0.1 * limit_s)


def time_left() -> float | None:
    """Seconds an inner wait may still take before the running test's own limit (its margin kept); ``None``
    outside a test with a limit."""
    if _deadline is None:
        return None
    return max(_deadline - time.monotonic(), 0.5)


def bounded(seconds: float) -> float:
    """An inner wait of ``seconds`` on the reference machine: scaled, and ending before the test's own limit."""
    left = time_left()
    wanted = scaled(seconds)
    return wanted if left is None else min(wanted, left)


if __name__ == "__main__":  # scripts/run_tests.sh: calibrate once for every pass
    print(round(calibrate(), 2))
