"""The suite's one time scale (tests/time_scale.py, applied by conftest.py and support.wait_for)."""

from __future__ import annotations

import os
import time

import pytest
import time_scale
from support import wait_for


def test_the_calibration_measures_this_machine_and_is_never_below_one():
    started = time.monotonic()
    factor = time_scale.calibrate(runs=1)
    assert 1.0 <= factor <= time_scale.MAX_FACTOR
    assert time.monotonic() - started < time_scale.scaled(30)


def test_the_session_has_one_factor_shared_with_the_processes_it_starts():
    assert float(os.environ[time_scale.ENV]) == time_scale.factor()


@pytest.mark.timeout(40)
def test_a_tests_own_limit_is_its_written_figure_times_the_factor(request):
    assert request.node.get_closest_marker("timeout").args[0] == pytest.approx(40 * time_scale.factor())


def test_the_default_limit_is_scaled_too(request):
    assert request.node.get_closest_marker("timeout").args[0] == pytest.approx(
        float(request.config.getini("timeout")) * time_scale.factor())


@pytest.mark.timeout(20)
def test_an_inner_wait_ends_before_the_tests_own_limit_with_the_assertions_message():
    limit = 20 * time_scale.factor()
    assert time_scale.bounded(1_000) <= limit - 3.0  # the margin kept for the teardown and the report
    assert time_scale.bounded(0.5) == pytest.approx(0.5 * time_scale.factor())
    started = time.monotonic()
    with pytest.raises(AssertionError, match=r"condition not met within .* at time scale"):
        wait_for(lambda: False, timeout=0.2)
    assert time.monotonic() - started >= 0.2 * time_scale.factor()


def test_a_bad_factor_is_refused_in_one_line(monkeypatch):
    monkeypatch.setattr(time_scale, "_factor", None)
    monkeypatch.setenv(time_scale.ENV, "fast")
    with pytest.raises(SystemExit, match="ZKCONSUMER_TEST_TIME_SCALE='fast': not a number"):
        time_scale.factor()
