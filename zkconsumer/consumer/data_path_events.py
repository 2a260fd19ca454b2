"""How the data path (fetcher manager, leader finder, fetcher threads, stream iterators) emits its events.

Its events are listed in ``docs/events.md`` (Data path, Fetchers); the fetchers' name partitions as
``topic-partition`` strings (:func:`partition_names`), where the rebalance's carry objects. None of them may fail the
code that emits it: a fetcher or the leader finder that died of a broken log sink (a closed stderr) would leave its
partitions silently unfetched, and a stream's iterator would be left failed for good. So an event that cannot be
written is dropped instead (:func:`emit`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

from zkconsumer.types import TopicPartition, sorted_partitions


def partition_names(partitions: Iterable[TopicPartition]) -> list[str]:
    """The ``topic-partition`` strings the data path's events carry, sorted."""
    return [str(tp) for tp in sorted_partitions(partitions)]


def emit(logger: Any, level: str, event: str, **fields: Any) -> None:
    """Log ``event`` at ``level`` (``debug``, ``info``, ``warning``...) on ``logger``, dropping it if the sink
    fails."""
    with contextlib.suppress(Exception):
        getattr(logger, level)(event, **fields)
