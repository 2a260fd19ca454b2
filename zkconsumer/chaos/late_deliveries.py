"""A member delivering a partition after its own ownership of it ended: the messages an old owner still had in
hand when it stopped fetching."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from zkconsumer.chaos.records import Delivery
from zkconsumer.chaos.tenures import Tenure
from zkconsumer.events.fields import duration_ms


@dataclass(frozen=True)
class LateDelivery:
    """A delivery outside every tenure of its member on its partition."""

    delivery: Delivery
    late_ms: float  # after the end of the member's last tenure before it; infinite when there was none


def late_deliveries(all_tenures: Iterable[Tenure], deliveries: Iterable[Delivery]) -> list[LateDelivery]:
    """Deliveries outside every tenure of their member on their partition, in their order."""
    by_key: dict[tuple[str, str, int], list[Tenure]] = defaultdict(list)
    for t in all_tenures:
        by_key[(t.member, t.topic, t.partition)].append(t)
    out = []
    for d in deliveries:
        ts = by_key[(d.member, d.topic, d.partition)]
        if any(t.start <= d.at <= t.end for t in ts):
            continue
        before = [t.end for t in ts if t.end < d.at]
        out.append(LateDelivery(d, duration_ms(d.at - max(before)) if before else float("inf")))
    return out
