"""Messages delivered more than once. At-least-once delivery allows a repeat only where a fault interrupted
something: a commit that did not happen, an owner that did not stop in time. So each repeat is charged to a fault,
and a repeat no fault explains breaks the run."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from zkconsumer.chaos.records import Delivery, FaultSpan

BURST_GAP_S = 2.0  # re-deliveries of one partition by one member this close together are one burst
UNCOMMITTED_S = 1.0  # how long before its first delivery a message may have been consumed and not yet committed


@dataclass
class DuplicateBurst:
    """Re-deliveries of one partition by one member, each within :data:`BURST_GAP_S` of the one before."""

    at: float  # the first re-delivery
    topic: str
    partition: int
    member: str
    first_by: str  # who delivered the burst's first message the first time, and when
    first_at: float
    from_offset: int
    fault: FaultSpan | None  # what its first re-delivery is charged to
    count: int = 0
    last: float = 0.0  # the latest re-delivery so far


@dataclass(frozen=True)
class Duplicates:
    first: dict[str, Delivery]  # each value's first delivery
    count: int  # deliveries after the first of their value
    by_fault: dict[str, int]  # of those, how many charged to each kind of fault
    bursts: list[DuplicateBurst]
    unexplained: list[Delivery] = field(default_factory=list)  # repeats with no fault before them


def blame(faults: Sequence[FaultSpan], first: float, again: float) -> FaultSpan | None:
    """The fault a message delivered at ``first`` and again at ``again`` is charged to: the earliest under way
    between :data:`UNCOMMITTED_S` before the first delivery (what was consumed but not yet committed, auto-commit
    being 0.5 s) and the repeat; else the latest before the repeat; None when no fault came before it. The earliest,
    because a fault that left offsets uncommitted causes the repeats that a later fault's rebalance hands out."""
    under_way = [f for f in faults if f.start <= again and f.end >= first - UNCOMMITTED_S]
    if under_way:
        return min(under_way, key=lambda f: f.start)
    before = [f for f in faults if f.start <= again]
    return max(before, key=lambda f: f.start) if before else None


def find_duplicates(deliveries: Iterable[Delivery], faults: Sequence[FaultSpan]) -> Duplicates:
    """Every repeat among ``deliveries`` (in order of time), charged to a fault and grouped into bursts."""
    first: dict[str, Delivery] = {}
    by_fault: dict[str, int] = defaultdict(int)
    bursts: list[DuplicateBurst] = []
    open_bursts: dict[tuple[str, int, str], DuplicateBurst] = {}
    unexplained: list[Delivery] = []
    count = 0
    for d in sorted(deliveries):
        earlier = first.get(d.value)
        if earlier is None:
            first[d.value] = d
            continue
        count += 1
        cause = blame(faults, earlier.at, d.at)
        if cause is not None:
            by_fault[cause.kind] += 1
        else:
            unexplained.append(d)
        key = (d.topic, d.partition, d.member)
        burst = open_bursts.get(key)
        if burst is None or d.at - burst.last > BURST_GAP_S:
            burst = open_bursts[key] = DuplicateBurst(d.at, d.topic, d.partition, d.member, earlier.member,
                                                      earlier.at, d.offset, cause)
            bursts.append(burst)
        burst.count += 1
        burst.last = d.at
    return Duplicates(first, count, dict(by_fault), bursts, unexplained)
