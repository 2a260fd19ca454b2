"""The front's own tests put their fronts in front of the session's broker itself: ``bootstrap_servers`` is the
broker's own address here (:func:`conftest.broker_bootstrap`), never the session's front, so a front under test is
never a front in front of another."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from differential import Coordinator, coordinators

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


@pytest.fixture(scope="session")
def pair(broker_bootstrap, tmp_path_factory) -> Iterator[tuple[Coordinator, Coordinator]]:
    """Kafka 4.x and a front for the differential stories (tests/front/differential.py), started once for the
    modules that play theirs at the default settings (a worker's modules share them: a Kafka node is the costliest
    server of the suite to start), with the topics their stories take; a module with settings of its own overrides
    it."""
    with coordinators(broker_bootstrap, tmp_path_factory.mktemp("differential"), {4: 28, 6: 7}) as both:
        yield both
