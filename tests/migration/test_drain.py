"""When a protocol's run stops waiting for its members (zkconsumer.migration.run.caught_up): not while a message is
still awaiting its delivery report. On a loaded machine the last reports came seconds after production stopped,
the members were stopped first, and the report counted those messages as lost (a fresh clone's make test, run 59)."""

from __future__ import annotations

from pathlib import Path

from zkconsumer.migration.measures import Delivery, Produced
from zkconsumer.migration.run import ProtocolRun, caught_up
from zkconsumer.migration.scenes import parse_protocols


def a_run() -> ProtocolRun:
    (protocol,) = parse_protocols("range")
    return ProtocolRun(protocol, "t", "g", Path("/nonexistent"), 2)


def delivered(*messages: Produced) -> list[Delivery]:
    return [Delivery("m1", m.partition, m.offset, m.value) for m in messages]


def test_the_run_waits_for_every_report_then_for_every_message_acknowledged():
    run = a_run()
    first, second = Produced("range:0", 0, 5, 0), Produced("range:1", 1, 5, 0)
    run.produced.append(first)
    run.in_flight = 1  # the second message sent, its report not come yet
    assert not caught_up(run, delivered(first), given_up=())
    run.in_flight = 0
    run.produced.append(second)
    assert not caught_up(run, delivered(first), given_up=())
    assert caught_up(run, delivered(first, second), given_up=())
    assert caught_up(run, delivered(first), given_up={(1, 0)})  # the application gave up on it: it is not coming
