"""Reads where a missing znode means "nothing there yet", not an error.

Kafka never pre-creates most of its directories (``/consumers/<g>/owners`` appears with the first claim,
``/brokers/ids`` with the first broker), and any znode can vanish between a listing and a read. Every reader of
the group, the cluster or the bridge's view treats absence the same way; this is that way, written once.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from kazoo.protocol.states import ZnodeStat

K = TypeVar("K")


def children(zk: KazooClient, path: str) -> list[str]:
    """The children of ``path``, sorted as strings; ``[]`` when ``path`` does not exist."""
    try:
        return sorted(zk.get_children(path))
    except NoNodeError:
        return []


def value_or_none(async_result: Any) -> Any:
    """The value of a kazoo async call, or ``None`` for a znode that does not exist (or vanished meanwhile)."""
    try:
        return async_result.get()
    except NoNodeError:
        return None


def pipelined_get(zk: KazooClient, paths_by_key: Iterable[tuple[K, str]]) -> dict[K, tuple[bytes, ZnodeStat] | None]:
    """Data and stat of many znodes in one round trip (every request sent before any answer is read); ``None``
    for a znode that does not exist. Reading 10,000 znodes one by one is 10,000 round trips."""
    calls = {key: zk.get_async(path) for key, path in paths_by_key}
    return {key: value_or_none(call) for key, call in calls.items()}
