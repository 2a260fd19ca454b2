"""When a group of member processes has settled: the rule the demo and the migration comparison wait on.

Read from the members' own events alone (``rebalance.started``, ``rebalance.completed`` and its ``owned``), so it
holds for legacy and modern members alike; the demo adds ZooKeeper's verdict on top.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.events import catalogue as ev
from zkconsumer.trace.timeline import parse_timestamp
from zkconsumer.types import TopicPartition


@dataclass
class MemberState:
    """A member's place in its group as its own rebalance events tell it."""

    rebalancing: bool = False
    completed: int = 0  # rebalances completed
    last_completed: float = 0.0  # seconds since the epoch of the last rebalance.completed
    owned: dict[TopicPartition, str] = field(default_factory=dict)  # partition -> the thread (or member) fetching it

    def observe(self, event: Mapping[str, Any]) -> None:
        name = event.get("event")
        if name == ev.REBALANCE_STARTED:
            self.rebalancing = True
        elif name == ev.REBALANCE_COMPLETED:
            self.rebalancing = False
            self.completed += 1
            stamp = parse_timestamp(event.get("timestamp"))
            self.last_completed = stamp.timestamp() if stamp is not None else 0.0
            self.owned = {TopicPartition(p["topic"], p["partition"]): str(p.get("thread", ""))
                          for p in event.get("owned") or () if isinstance(p, dict)}


def settled(live: Iterable[MemberState], partitions: int, *, quiet_for: float, quiet_s: float,
            completed_after: float | None = None) -> bool:
    """The live members have each completed a rebalance (one that completed after ``completed_after``, seconds since
    the epoch, when given) and none is in one, no rebalance event came for ``quiet_s`` (``quiet_for``: seconds
    since the last), and together they fetch all ``partitions``."""
    states = list(live)
    if not states:
        return False
    for state in states:
        if state.rebalancing or state.completed == 0:
            return False
        if completed_after is not None and state.last_completed < completed_after:
            return False
    if quiet_for < quiet_s:
        return False
    return len({tp for state in states for tp in state.owned}) == partitions
