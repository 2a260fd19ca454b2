"""Made-up member events for the chaos analysis' tests: times are plain seconds, as the analysis reads them."""

from __future__ import annotations

from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

from zkconsumer.trace.timeline import Event


def event(name: str, at: float, **fields: Any) -> Event:
    return Event(0, name, datetime.fromtimestamp(at, UTC), MappingProxyType({"event": name, **fields}))


def claim(at: float, *partitions: int, topic: str = "t") -> Event:
    return event("rebalance.claim", at, claimed=[{"topic": topic, "partition": p} for p in partitions],
                 already_ours=[], conflicts=[])


def end(at: float, name: str = "rebalance.stop_fetchers") -> Event:
    return event(name, at)
