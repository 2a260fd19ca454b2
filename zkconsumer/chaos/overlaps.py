"""Two members delivering one partition at once. An old owner may go on delivering only while it is still stopping;
a member stopped (SIGSTOP) cannot notice anything before it runs again, so it counts as live from its SIGCONT, and
what it hands out on waking, of partitions another member claimed meanwhile, is named on its own."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zkconsumer.chaos.records import Delivery, Pause
from zkconsumer.chaos.tenures import Tenure, by_partition
from zkconsumer.events.fields import duration_ms


@dataclass(frozen=True)
class Overlap:
    """A new tenure that began before another member's tenure of the partition ended."""

    topic: str
    partition: int
    old: str
    new: str
    claimed_at: float  # the new owner's claim
    event_ms: float  # the old tenure's end after the new claim
    delivery_ms: float  # the old owner's last delivery in the new tenure after the new owner's first


@dataclass(frozen=True)
class StaleWake:
    """Deliveries of a member woken from a pause, of partitions another member had claimed meanwhile."""

    member: str
    resumed: float
    deliveries: int
    partitions: tuple[str, ...]
    last_ms: float  # the last of them, after SIGCONT


def overlaps(all_tenures: Iterable[Tenure], deliveries: Iterable[Delivery],
             pauses: Sequence[Pause] = ()) -> list[Overlap]:
    """Every new tenure that began while another member's tenure of the partition had not ended, with how long
    that lasted (events) and how long both delivered it (deliveries). Both deliver only while both are live: an
    old owner stopped (SIGSTOP) when the new one began counts from its SIGCONT (what it delivers then is
    :func:`stale_wakes`' to report)."""
    delivered_at: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for d in deliveries:
        delivered_at[(d.member, d.topic, d.partition)].append(d.at)
    out = []
    for (topic, partition), ts in by_partition(all_tenures).items():
        for i, new in enumerate(ts):
            for old in ts[:i]:
                if old.member == new.member or old.end <= new.start:
                    continue
                window_end = min(old.end, new.end)
                olds = [a for a in delivered_at[(old.member, topic, partition)] if new.start <= a <= old.end]
                news = [a for a in delivered_at[(new.member, topic, partition)] if new.start <= a <= window_end]
                both = 0.0
                if olds and news:
                    since = min(news)
                    for pause in pauses:
                        if pause.member == old.member and pause.stopped <= since <= pause.resumed:
                            since = pause.resumed
                    both = max(0.0, max(olds) - since)
                out.append(Overlap(topic, partition, old.member, new.member, new.start,
                                   duration_ms(old.end - new.start), duration_ms(both)))
    return out


def stale_wakes(all_tenures: Sequence[Tenure], deliveries: Sequence[Delivery],
                pauses: Iterable[Pause]) -> list[StaleWake]:
    """For each pause: what the member delivered after SIGCONT, of partitions it held across the pause, that another
    member claimed while it was stopped. A member cannot notice a pause before it wakes; what it may not do is hand
    out, on waking, what it fetched before it, as the owner it no longer is."""
    out = []
    for pause in pauses:
        held = [t for t in all_tenures
                if t.member == pause.member and t.start < pause.stopped and t.end > pause.resumed]
        taken = {(t.topic, t.partition) for t in held for other in all_tenures
                 if other.member != pause.member and (other.topic, other.partition) == (t.topic, t.partition)
                 and pause.stopped <= other.start <= t.end}
        stale = [d for d in deliveries if d.member == pause.member and (d.topic, d.partition) in taken
                 and any(t.topic == d.topic and t.partition == d.partition and pause.resumed <= d.at <= t.end
                         for t in held)]
        if stale:
            out.append(StaleWake(pause.member, pause.resumed, len(stale),
                                 tuple(sorted({f"{d.topic}/{d.partition}" for d in stale})),
                                 duration_ms(max(d.at for d in stale) - pause.resumed)))
    return out
