"""Who owned which partition when, read from each member's own events rather than from the owner znodes: a znode
left by a failed attempt names a member that does not fetch the partition, and a member whose session died
unnoticed (paused, cut off) still fetches one whose znode has gone."""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zkconsumer.events import catalogue as ev
from zkconsumer.trace.timeline import Event

# The events after which a member no longer fetches what it claimed.
TENURE_ENDS = (ev.REBALANCE_STOP_FETCHERS, ev.REBALANCE_ATTEMPT_FAILED, ev.SESSION_EXPIRED, ev.CONSUMER_SHUTDOWN)
DEATH = "death"
END_OF_RUN = "end of run"


@dataclass(frozen=True)
class Tenure:
    """A member owning a partition, from its claim to the first event (or death) that stopped its fetchers."""

    member: str
    topic: str
    partition: int
    start: float
    end: float
    ended_by: str


def tenures(member: str, events: Iterable[Event], deaths: Sequence[float], end_of_run: float) -> list[Tenure]:
    """One member's tenures from its events, in order. A claim opens a tenure for each partition it took (claimed
    or already ours) unless it met conflicts; the tenure ends at the next fetcher stop, failed attempt, session
    expiry or shutdown, else at the death of its process (``deaths``: the times its processes were killed or
    exited), else at the end of the run."""
    out: list[Tenure] = []
    open_since: dict[tuple[str, int], float] = {}
    pending_deaths = sorted(deaths)

    def close(at: float, why: str) -> None:
        for (topic, partition), start in open_since.items():
            out.append(Tenure(member, topic, partition, start, max(at, start), why))
        open_since.clear()

    for event in events:
        at = event.timestamp.timestamp()
        if open_since and pending_deaths and pending_deaths[0] < at:  # the previous process died with partitions open
            close(pending_deaths[0], DEATH)
        while pending_deaths and pending_deaths[0] < at:
            pending_deaths.pop(0)
        fields = event.fields
        if event.name == ev.REBALANCE_CLAIM and not fields.get("conflicts") and "error" not in fields:
            for row in [*fields.get("claimed", []), *fields.get("already_ours", [])]:
                open_since.setdefault((row["topic"], int(row["partition"])), at)
        elif event.name in TENURE_ENDS:
            close(at, event.name)
    if open_since:
        close(pending_deaths[0] if pending_deaths else end_of_run, DEATH if pending_deaths else END_OF_RUN)
    return out


def by_partition(all_tenures: Iterable[Tenure]) -> dict[tuple[str, int], list[Tenure]]:
    """Tenures grouped by partition, each group in order of start."""
    grouped: dict[tuple[str, int], list[Tenure]] = defaultdict(list)
    for t in all_tenures:
        grouped[(t.topic, t.partition)].append(t)
    for ts in grouped.values():
        ts.sort(key=lambda t: t.start)
    return dict(grouped)


def handovers(all_tenures: Iterable[Tenure]) -> int:
    """How many times a partition's tenure was followed by another member's."""
    return sum(1 for ts in by_partition(all_tenures).values()
               for a, b in itertools.pairwise(ts) if a.member != b.member)
