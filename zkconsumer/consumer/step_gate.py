"""A teaching and debugging hook of the connector, not part of the legacy API: a gate called before each numbered
step of a rebalance attempt (:mod:`zkconsumer.events.rebalance_steps`), on the thread running the rebalance (the
caller of ``create_message_streams`` for the first, the connector's rebalance thread after), which runs the step when
the gate returns. A gate should return once the connector shuts down: shutdown waits for the rebalance.

``zkconsumer demo --step`` uses it to stop a member before a step happens, so that a class can say what comes next
before seeing it (:mod:`zkconsumer.members.step_control`). A gate may block as long as it likes: the rebalance thread
holds only the connector's rebalance lock meanwhile (never the ownership's lock, which commits take:
:mod:`zkconsumer.consumer.partition_ownership`), and the session's heartbeats and watches run on kazoo's own threads,
which take neither, so the session stays alive and changes are still recorded, to be handled by the next rebalance. A
step's event and ``duration_ms`` begin when the gate returns; an attempt's and a rebalance's duration include the time
held. Without a gate (the default) nothing is called.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from zkconsumer.events.rebalance_steps import RebalanceStep


@dataclass(frozen=True, slots=True)
class StepContext:
    """Which attempt a step belongs to, as that attempt's events name it."""

    consumer_id: str
    rebalance_id: int
    attempt: int


StepGate = Callable[[RebalanceStep, StepContext], None]
