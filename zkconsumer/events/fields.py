"""Field values every event shares, made one way: ``duration_ms`` (milliseconds as a float, to the microsecond, from
a monotonic clock), partition lists (objects, so timelines and Spark read them without parsing strings) and the
ISO 8601 UTC timestamp the JSON lines carry.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from zkconsumer.types import TopicPartition, sorted_partitions


def elapsed_ms(started: float) -> float:
    """``duration_ms`` of something that began at ``started`` (a :func:`time.monotonic` reading)."""
    return duration_ms(time.monotonic() - started)


def duration_ms(seconds: float) -> float:
    """A duration in seconds as the ``duration_ms`` field: milliseconds, rounded to the microsecond."""
    return round(seconds * 1000, 3)


def partition_list(partitions: Iterable[TopicPartition],
                   **per_partition: Mapping[TopicPartition, Any]) -> list[dict[str, Any]]:
    """Partitions as event fields, sorted: ``[{"topic": ..., "partition": ..., <name>: per_partition[name][tp]}]``."""
    rows = []
    for tp in sorted_partitions(partitions):
        row: dict[str, Any] = {"topic": tp.topic, "partition": tp.partition}
        for name, values in per_partition.items():
            row[name] = values[tp]
        rows.append(row)
    return rows


def partition_rows(numbers_by_topic: Iterable[tuple[str, Iterable[int]]]) -> list[dict[str, Any]]:
    """:func:`partition_list` of partitions given as numbers per topic name, without per-partition fields, and
    without a :class:`TopicPartition` made and sorted for each (a coordinator lists every member's target assignment
    each time it computes one)."""
    merged: dict[str, list[int]] = {}
    for topic, numbers in numbers_by_topic:
        merged.setdefault(topic, []).extend(numbers)
    return [{"topic": topic, "partition": p} for topic in sorted(merged) for p in sorted(merged[topic])]


def now_iso() -> str:
    """The current time as the events' ``timestamp``: ISO 8601, UTC, microseconds, ``Z``."""
    return iso(datetime.now(UTC))


def iso(moment: datetime | float) -> str:
    """A moment (a datetime, or seconds since the epoch) as the events' ``timestamp``."""
    when = moment if isinstance(moment, datetime) else datetime.fromtimestamp(moment, UTC)
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
