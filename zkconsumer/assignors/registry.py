"""Every strategy by the name users and scenarios give it, behind the one :class:`Assignor` interface.

The CLI, the comparison and later callers (the connector, the Spark pipeline) look strategies up here,
so they all run the same code and adding a strategy is one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from zkconsumer.assignors.consumer_range import range_assign
from zkconsumer.assignors.consumer_uniform import uniform_assign
from zkconsumer.assignors.cooperative_sticky import CooperativeStickyAssignor
from zkconsumer.assignors.group_spec import ServerSideAssignor
from zkconsumer.assignors.legacy_range import LegacyRangeAssignor
from zkconsumer.assignors.legacy_roundrobin import HashFormat, LegacyRoundRobinAssignor
from zkconsumer.assignors.model import AssignmentError, Assignor
from zkconsumer.assignors.range import RangeAssignor
from zkconsumer.assignors.roundrobin import RoundRobinAssignor
from zkconsumer.assignors.sticky import StickyAssignor


@dataclass(frozen=True, slots=True)
class StrategyOptions:
    """Knobs of individual strategies; each strategy reads only its own."""

    roundrobin_hash: HashFormat = "bracket"


_FACTORIES: dict[str, Callable[[StrategyOptions], Assignor]] = {
    "legacy-range": lambda options: LegacyRangeAssignor(),
    "legacy-roundrobin": lambda options: LegacyRoundRobinAssignor(hash_format=options.roundrobin_hash),
    "range": lambda options: RangeAssignor(),
    "roundrobin": lambda options: RoundRobinAssignor(),
    "sticky": lambda options: StickyAssignor(),
    "cooperative-sticky": lambda options: CooperativeStickyAssignor(),
    "consumer-uniform": lambda options: ServerSideAssignor("consumer-uniform", uniform_assign),
    "consumer-range": lambda options: ServerSideAssignor("consumer-range", range_assign),
}

NAMES: tuple[str, ...] = tuple(_FACTORIES)


def create(name: str, options: StrategyOptions | None = None) -> Assignor:
    factory = _FACTORIES.get(name)
    if factory is None:
        raise AssignmentError(f"unknown strategy {name!r} (known: {', '.join(NAMES)})")
    return factory(options or StrategyOptions())
