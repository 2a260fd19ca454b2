"""Spans in which no member fetched a partition. Read from the tenures, not the owner znodes: a znode left by a
failed attempt names a member that does not fetch the partition."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zkconsumer.chaos.records import FaultSpan
from zkconsumer.chaos.tenures import Tenure


@dataclass(frozen=True)
class UnfetchedSpan:
    topic: str
    partition: int
    start: float
    end: float
    counted_s: float  # its length without the excused spans


def unfetched_spans(all_tenures: Sequence[Tenure], partitions: Iterable[tuple[str, int]], start: float, end: float,
                    excused: Sequence[FaultSpan]) -> list[UnfetchedSpan]:
    """Spans of [start, end] in which no member had a tenure of a partition; ``excused`` spans (ZooKeeper down:
    nobody can claim) do not count towards their length."""
    out = []
    for topic, partition in partitions:
        spans = sorted((t.start, t.end) for t in all_tenures if (t.topic, t.partition) == (topic, partition))
        cursor = start
        gaps = []
        for s, e in spans:
            if s > cursor:
                gaps.append((cursor, min(s, end)))
            cursor = max(cursor, e)
        if cursor < end:
            gaps.append((cursor, end))
        for a, b in gaps:
            if b <= a:
                continue
            excused_s = sum(max(0.0, min(b, f.end) - max(a, f.start)) for f in excused)
            out.append(UnfetchedSpan(topic, partition, a, b, (b - a) - excused_s))
    return out
