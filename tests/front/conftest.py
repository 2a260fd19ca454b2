"""The front's own tests put their fronts in front of the session's broker itself: ``bootstrap_servers`` is the
broker's own address here (:func:`conftest.broker_bootstrap`), never the session's front, so a front under test is
never a front in front of another."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from zkconsumer.embedded.front_process import FrontProcess


@pytest.fixture(scope="session")
def bootstrap_servers(broker_bootstrap) -> str:
    return broker_bootstrap


@pytest.fixture
def fronts() -> Iterator[list[FrontProcess]]:
    """The fronts a test starts (:func:`test_front_restart.start`), stopped after it."""
    started: list[FrontProcess] = []
    yield started
    for front in started:
        front.stop()
