"""The chaos run's invariants applied to what one run recorded: each rule's measure as a finding, each breach as a
violation. Pure: :class:`RunRecord` in, :class:`Findings` out.

The rules: every produced message delivered; every repeat after some fault; no member woken from a pause handing
out anything of a partition another member claimed meanwhile (streams fence their chunks on the session's liveness:
``Limits.stale_after_pause_ms`` is 0 by default); no old owner still delivering beside a new one, and no member
delivering a partition after its ownership of it ended, for longer than ``Limits.overlap_ms``; no partition fetched by
nobody for longer than ``Limits.unfetched_s`` while ZooKeeper is up. (Committed offsets, and what is left behind at the
end, are watched by the run itself.)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from zkconsumer.chaos.duplicates import DuplicateBurst, find_duplicates
from zkconsumer.chaos.late_deliveries import late_deliveries
from zkconsumer.chaos.overlaps import StaleWake, overlaps, stale_wakes
from zkconsumer.chaos.records import Delivery, FaultSpan, Pause
from zkconsumer.chaos.tenures import Tenure, handovers, tenures
from zkconsumer.chaos.unfetched import unfetched_spans
from zkconsumer.events import catalogue as ev
from zkconsumer.trace.timeline import Event

LOST_NAMED = 5  # how many lost messages a violation names


@dataclass(frozen=True)
class Limits:
    overlap_ms: float  # how long an old owner may still deliver while it stops
    unfetched_s: float  # how long a partition may go unfetched with ZooKeeper up
    # how long a member woken from a pause may still hand out what another member claimed meanwhile: 0, nothing at
    # all (a stream hands out no chunk once its member's session may be gone: stream.chunk_fenced)
    stale_after_pause_ms: float = 0.0


@dataclass(frozen=True)
class RunRecord:
    """What one run recorded. Times are wall clock; the findings give them as seconds since ``started``."""

    started: float
    produced: frozenset[str]  # the values the broker acknowledged
    deliveries: Sequence[Delivery]  # in any order
    events: Mapping[str, Sequence[Event]]  # every member's, in the order it logged them
    deaths: Mapping[str, Sequence[float]]  # when each member's processes were killed or exited
    pauses: Sequence[Pause]
    faults: Sequence[FaultSpan]
    zookeeper_down: Sequence[FaultSpan]  # nobody can claim meanwhile
    partitions: Sequence[tuple[str, int]]
    formed_at: float  # the group has formed: unfetched partitions count from here
    leaving_at: float  # the members were told to leave: unfetched partitions count until here
    ended: float  # tenures still open end here


@dataclass
class Findings:
    """The report's measures of one run, and the violations among them."""

    produced: int = 0
    delivered: int = 0
    delivered_distinct: int = 0
    lost: int = 0
    duplicates: int = 0
    duplicates_by_fault: dict[str, int] = field(default_factory=dict)
    # re-deliveries of one partition by one member close together: where each came from
    duplicate_bursts: list[dict[str, Any]] = field(default_factory=list)
    max_overlap_ms: float = 0.0  # from the deliveries: an old owner still delivering after the new one began
    max_overlap_at: str = ""
    max_event_overlap_ms: float = 0.0  # from the events: the new owner's claim to the old owner's fetcher stop
    max_event_overlap_at: str = ""
    handovers: int = 0  # a partition's tenure followed by another member's
    max_late_ms: float = 0.0  # a delivery after the end of its member's own tenure of the partition
    deliveries_outside_tenure: int = 0
    # a member woken from a pause, delivering partitions others claimed meanwhile
    stale_after_pause: list[dict[str, Any]] = field(default_factory=list)
    max_stale_after_pause_ms: float = 0.0
    # chunks the members' streams dropped unhanded because the session may have been lost (stream.chunk_fenced)
    fenced_chunks: int = 0
    fenced_messages: int = 0
    max_unfetched_s: float = 0.0  # longest span a partition had no member fetching it (ZooKeeper down excepted)
    violations: list[str] = field(default_factory=list)


def analyse(record: RunRecord, limits: Limits) -> Findings:
    record = replace(record, deliveries=sorted(record.deliveries))  # in order of time, as the violations name them
    findings = Findings(produced=len(record.produced), delivered=len(record.deliveries))
    _deliveries(record, findings)
    all_tenures = [t for member, events in record.events.items()
                   for t in tenures(member, events, record.deaths.get(member, ()), record.ended)]
    findings.handovers = handovers(all_tenures)
    fenced = [e for events in record.events.values() for e in events if e.name == ev.STREAM_CHUNK_FENCED]
    findings.fenced_chunks = len(fenced)
    findings.fenced_messages = sum(int(e.fields.get("messages") or 0) for e in fenced)
    _stale_wakes(record, limits, all_tenures, findings)
    _overlaps(record, limits, all_tenures, findings)
    _unfetched(record, limits, all_tenures, findings)
    _late(record, limits, all_tenures, findings)
    return findings


def _since(record: RunRecord, at: float) -> float:
    return at - record.started


def _deliveries(record: RunRecord, findings: Findings) -> None:
    """Every produced message delivered at least once; every repeat after a fault."""
    duplicates = find_duplicates(record.deliveries, record.faults)
    findings.duplicates = duplicates.count
    findings.duplicates_by_fault = duplicates.by_fault
    findings.duplicate_bursts = [_burst_row(record, burst) for burst in duplicates.bursts]
    findings.delivered_distinct = len(duplicates.first)
    for d in duplicates.unexplained:
        findings.violations.append(f"{d.value} delivered again at {_since(record, d.at):.1f}s by {d.member}, "
                                   f"before any fault")
    lost = sorted(record.produced - duplicates.first.keys(), key=lambda v: (len(v), v))  # m9 before m10
    findings.lost = len(lost)
    if lost:
        findings.violations.append(f"{len(lost)} produced messages never delivered (first: {lost[:LOST_NAMED]})")


def _burst_row(record: RunRecord, burst: DuplicateBurst) -> dict[str, Any]:
    cause = burst.fault
    return {"at_s": round(_since(record, burst.at), 2), "partition": f"{burst.topic}/{burst.partition}",
            "member": burst.member, "first_by": burst.first_by, "first_at_s": round(_since(record, burst.first_at), 2),
            "from_offset": burst.from_offset, "count": burst.count,
            "fault": f"{cause.kind} at {_since(record, cause.start):.1f}s" if cause else None}


def _stale_wakes(record: RunRecord, limits: Limits, all_tenures: list[Tenure], findings: Findings) -> None:
    """A member woken from a pause cannot notice its session expired before it runs again, but it must not hand out,
    meanwhile, what it fetched before the pause: its streams check that the server confirmed its session recently
    enough before each chunk. So with the default limit of 0 any such delivery breaks the run."""
    for wake in stale_wakes(all_tenures, record.deliveries, record.pauses):
        findings.stale_after_pause.append(_stale_row(record, wake))
        findings.max_stale_after_pause_ms = round(max(findings.max_stale_after_pause_ms, wake.last_ms), 1)
        if limits.stale_after_pause_ms == 0 or wake.last_ms > limits.stale_after_pause_ms:
            findings.violations.append(
                f"{wake.member}, woken from a pause at {_since(record, wake.resumed):.1f}s, delivered "
                f"{wake.deliveries} messages of {', '.join(wake.partitions)} (claimed by another member meanwhile) "
                f"for {wake.last_ms:.0f} ms before it noticed its session was gone")


def _stale_row(record: RunRecord, wake: StaleWake) -> dict[str, Any]:
    return {"member": wake.member, "resumed_at_s": round(_since(record, wake.resumed), 2),
            "deliveries": wake.deliveries, "partitions": list(wake.partitions),
            "last_ms_after_resume": round(wake.last_ms, 1)}


def _overlaps(record: RunRecord, limits: Limits, all_tenures: list[Tenure], findings: Findings) -> None:
    """No old owner still delivering a partition, beside its new owner, beyond the limit."""
    for o in overlaps(all_tenures, record.deliveries, record.pauses):
        where = f"{o.topic}/{o.partition} {o.old}->{o.new} claimed at {_since(record, o.claimed_at):.1f}s"
        if o.event_ms > findings.max_event_overlap_ms:
            findings.max_event_overlap_ms, findings.max_event_overlap_at = round(o.event_ms, 1), where
        if o.delivery_ms > findings.max_overlap_ms:
            findings.max_overlap_ms, findings.max_overlap_at = round(o.delivery_ms, 1), where
        if o.delivery_ms > limits.overlap_ms:
            findings.violations.append(f"{o.topic}/{o.partition}: {o.old} still delivered it {o.delivery_ms:.0f} ms "
                                       f"after {o.new} began, from {_since(record, o.claimed_at):.1f}s")


def _unfetched(record: RunRecord, limits: Limits, all_tenures: list[Tenure], findings: Findings) -> None:
    """No partition fetched by nobody, from when the group has formed to when the members are told to leave, for
    longer than the limit; ZooKeeper's time down does not count, as nobody can claim then."""
    for span in unfetched_spans(all_tenures, record.partitions, record.formed_at, record.leaving_at,
                                record.zookeeper_down):
        findings.max_unfetched_s = round(max(findings.max_unfetched_s, span.counted_s), 1)
        if span.counted_s > limits.unfetched_s:
            findings.violations.append(
                f"{span.topic}/{span.partition} fetched by no member from {_since(record, span.start):.1f}s to "
                f"{_since(record, span.end):.1f}s ({span.counted_s:.0f} s with ZooKeeper up)")


def _late(record: RunRecord, limits: Limits, all_tenures: list[Tenure], findings: Findings) -> None:
    """No member delivering a partition longer than the limit after its own ownership of it ended."""
    late = late_deliveries(all_tenures, record.deliveries)
    findings.deliveries_outside_tenure = len(late)
    for item in late:
        d = item.delivery
        findings.max_late_ms = round(max(findings.max_late_ms, item.late_ms), 1)
        if item.late_ms > limits.overlap_ms:
            findings.violations.append(f"{d.member} delivered {d.topic}/{d.partition} offset {d.offset} at "
                                       f"{_since(record, d.at):.1f}s, {item.late_ms:.0f} ms after it last owned it")
