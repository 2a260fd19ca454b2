"""The terminal timeline (``zkconsumer trace show``): one line per event worth reading, in time order.

Each line is the time since the start of the trace, the consumer, and what happened in a few words: a step with
its title (from :mod:`zkconsumer.trace.vocabulary`) and duration, a rebalance's outcome with its stop-the-world
gap and the ownership it ended with, conflicts and failures flagged ``!!``. A group coordinator's events are lines
of their own, under ``coordinator <group>``: its rounds, state changes and what it did to members (an expiry or a
fencing flagged). The demo's markers are headings, so a scene and what the members did in it read together.
Fetcher events are left out (there are many, and they say how data moved, not how the group rebalanced); they are
counted in the header. A summary per consumer, and per coordinator, closes it.

Pure: returns the lines; printing them is the CLI's job.
"""

from __future__ import annotations

from collections.abc import Iterable

from zkconsumer.events import catalogue as ev
from zkconsumer.trace.coordinator import CoordinatorLane
from zkconsumer.trace.roles import later_step
from zkconsumer.trace.timeline import (
    Entry,
    Event,
    EventLog,
    Mark,
    Marker,
    Ownership,
    Rebalance,
    Step,
    Timeline,
    build_timeline,
)
from zkconsumer.trace.vocabulary import BY_EVENT, MARK_EVENTS
from zkconsumer.trace.words import (
    describe_coordinator_event,
    describe_mark,
    describe_marker,
    describe_rebalance,
    describe_round,
    describe_step,
    fmt_ms,
    fmt_offset,
    fmt_offsets,
    fmt_partitions,
    plural,
)

ALERT = "!!"
# Flagged in the text: a member removed by a timeout, or fenced, or a heartbeat refused.
COORDINATOR_ALERTS = ("member_expired", "member_fenced", "static_member_replaced", "heartbeat_rejected")


def render_text(source: Timeline | EventLog | Iterable[Event]) -> list[str]:
    """The timeline as lines of plain ASCII text (no trailing newlines)."""
    timeline = source if isinstance(source, Timeline) else build_timeline(source)
    if timeline.empty or timeline.origin is None:
        return ["(no consumer or demo event in this trace)"]
    coordinators = {lane.group: lane for lane in timeline.coordinators}
    width = max([len(lane.consumer_id) for lane in timeline.lanes]
                + [len(_coordinator_column(group)) for group in coordinators], default=8)
    lookup = _Lookup(timeline)
    also = f", {plural(len(coordinators), 'group coordinator')}" if coordinators else ""
    lines = [
        f"trace from {timeline.origin.strftime('%Y-%m-%dT%H:%M:%S.%f')[:-3]}Z, {timeline.end:.3f} s, "
        f"{plural(len(timeline.lanes), 'consumer')}{also}, {plural(len(timeline.markers), 'marker')} "
        f"({plural(timeline.fetcher_events, 'fetcher event')} not shown)",
    ]
    for entry in timeline.entries:
        if entry.marker:
            lines.extend(_marker_lines(entry))
            continue
        group = entry.event.coordinator_group
        if group is not None and group in coordinators:
            lines.append(f"{fmt_offset(entry.time):>10}  {_coordinator_column(group):<{width}}  "
                         f"{_describe_coordinator(entry, coordinators[group])}")
            continue
        text = _describe(entry, lookup)
        if text is not None:
            consumer = entry.event.consumer_id or ""
            lines.append(f"{fmt_offset(entry.time):>10}  {consumer:<{width}}  {text}")
    lines.extend(_summary(timeline))
    return lines


def _coordinator_column(group: str) -> str:
    return f"coordinator {group}"


def _describe_coordinator(entry: Entry, lane: CoordinatorLane) -> str:
    name = entry.event.name
    alert = f"{ALERT} " if name.endswith(COORDINATOR_ALERTS) else ""
    return alert + describe_coordinator_event(name, entry.event.fields, lane.member_name)


class _Lookup:
    """From an entry back to the model objects built from its event: steps by the event itself, rebalances by
    their end (the ``rebalance.completed`` time; a consumer id run twice reuses rebalance ids)."""

    def __init__(self, timeline: Timeline) -> None:
        self.steps: dict[int, Step] = {}
        self.rebalances: dict[tuple[str, float], Rebalance] = {}
        self.marks: dict[int, Mark] = {}
        self.takeovers: dict[tuple[str, float], list[Ownership]] = {}
        for owner in timeline.ownership:
            if owner.ended_by == "taken_over" and owner.successor is not None and owner.end is not None:
                self.takeovers.setdefault((owner.successor, owner.end), []).append(owner)
        for lane in timeline.lanes:
            for rebalance in lane.rebalances:
                self.rebalances[(lane.consumer_id, rebalance.end)] = rebalance
                for step in rebalance.steps:
                    self.steps[id(step.event)] = step
            for mark in lane.marks:
                self.marks[id(mark.event)] = mark


def _marker_lines(entry: Entry) -> list[str]:
    label, note = describe_marker(Marker(entry.time, entry.event.name, entry.event.fields))
    lines = ["", f"=== {fmt_offset(entry.time)}  {label} ==="]
    if note:
        lines.append(f"    {note}")
    return lines


def _describe(entry: Entry, lookup: _Lookup) -> str | None:
    event, time = entry.event, entry.time
    name, f = event.name, event.fields
    consumer = event.consumer_id or ""
    step_def = BY_EVENT.get(name)
    if step_def is not None or later_step(name, f):
        step = lookup.steps.get(id(event))
        if step is None:
            return None
        facts = describe_step(step)
        prefix = f"{ALERT} " if step.name == "claim" and f.get("conflicts") else ""
        taken = lookup.takeovers.get((consumer, time), []) if step.name == "claim" else []
        if taken:
            facts += "; took over " + ", ".join(
                f"{o.topic}-{o.partition} from {o.thread or o.consumer_id}" for o in taken)
        rid = f.get("rebalance_id", "?")
        return (f"{prefix}[r{rid} a{step.attempt}] {step.number} {step.title} ({fmt_ms(step.duration_ms)})"
                + (f": {facts}" if facts else ""))
    if name in MARK_EVENTS:
        mark = lookup.marks.get(id(event))
        return f"{ALERT} {describe_mark(mark)}" if mark is not None else None
    if name == ev.REBALANCE_STARTED:
        return f"rebalance {f.get('rebalance_id', '?')} started ({f.get('cause', '?')}, {f.get('strategy', '?')})"
    if name == ev.REBALANCE_COMPLETED:
        rebalance = lookup.rebalances.get((consumer, time))
        if rebalance is None:
            return None
        return f"{describe_rebalance(rebalance)}; owns {fmt_partitions(rebalance.owned or ())}"
    if name == ev.REBALANCE_TRIGGERED:
        members = f.get("members")
        extra = f"; members {', '.join(str(m) for m in members)}" if isinstance(members, list) else ""
        return f"watch fired: {f.get('cause', '?')}{extra}"
    if name == ev.CONSUMER_CONNECTED:
        where = f" {f['zookeeper']}" if f.get("zookeeper") else ""
        return f"connected to ZooKeeper{where} (session {f.get('session_id', '?')})"
    if name == ev.CONSUMER_REGISTERED:
        again = " again, after a session expiry" if f.get("reregistered") else ""
        return f"registered{again} at {f.get('path', '?')}"
    if name == ev.CONSUMER_REGISTRATION_WAITING:
        return f"waiting: {f.get('path', '?')} still held by session {f.get('owner_session', '?')}"
    if name == ev.ZOOKEEPER_CONNECTED:
        return "reconnected to ZooKeeper with a new session" if f.get("new_session") else "reconnected to ZooKeeper"
    if name == ev.CONSUMER_SHUTTING_DOWN:
        return "shutting down"
    if name == ev.CONSUMER_SHUTDOWN:
        duration = f.get("duration_ms")
        return "shut down" + (f" in {fmt_ms(duration)}" if isinstance(duration, (int, float)) else "") + \
            ": its owner znodes go with its session"
    if name == ev.CONSUMER_SHUTDOWN_ERROR:
        return f"{ALERT} shutdown error: {f.get('error', '?')}"
    if name == ev.OFFSETS_COMMITTED:
        where = " to Kafka" if f.get("store") == "kafka" else ""
        return f"committed offsets{where} ({f.get('reason', '?')}): {fmt_offsets(f.get('offsets')) or 'none'}"
    if name == ev.OFFSETS_COMMIT_SKIPPED:
        store = "Kafka" if f.get("store") == "kafka" else "ZooKeeper"
        return f"{ALERT} commit skipped ({f.get('reason', '?')}): a higher offset is in {store}"
    if name == ev.OFFSETS_COMMIT_FAILED:
        return f"{ALERT} commit failed ({f.get('reason', '?')}): {f.get('error', '?')}"
    if name == ev.ZNODE_MALFORMED:
        return f"{ALERT} znode {f.get('path', '?')}: {f.get('problem', '?')}"
    if name == ev.STREAM_OFFSET_GAP:
        return (f"{ALERT} offset gap in {f.get('topic')}-{f.get('partition')}: consumed {f.get('consumed_offset')}, "
                f"next chunk at {f.get('fetch_offset')} (may lose data)")
    if name == ev.STREAM_END:
        return f"stream {f.get('stream', '?')} ended"
    level = f.get("level")
    if level in ("warning", "error", "critical"):
        return f"{ALERT} {level}: {name}"
    return None


def _summary(timeline: Timeline) -> list[str]:
    lines = ["", "=== summary ==="]
    for lane in timeline.lanes:
        s = lane.summary()
        longest = (f", longest {fmt_ms(s.longest_gap_ms)} (rebalance {s.longest_gap_rebalance})"
                   if s.longest_gap_ms is not None else "")
        unfinished = f", {s.unfinished} not completed" if s.unfinished else ""
        lines.append(f"{lane.consumer_id}: {plural(s.rebalances, 'rebalance')} ({plural(s.attempts, 'attempt')}, "
                     f"{s.failed_attempts} failed, {plural(s.conflicts, 'conflict')}{unfinished}); "
                     f"stop-the-world {fmt_ms(s.stop_the_world_ms)}{longest}")
    for coordinator in timeline.coordinators:
        lines.append(_coordinator_summary(coordinator))
    owners = [o for o in timeline.ownership if o.end is None]
    if owners:
        lines.append("owners at the end: " + ", ".join(
            f"{o.topic}-{o.partition} {o.thread or o.consumer_id}" for o in owners))
    if timeline.skipped_lines:
        lines.append(f"{plural(timeline.skipped_lines, 'broken line')} skipped")
    return lines


def _coordinator_summary(lane: CoordinatorLane) -> str:
    """``coordinator g (classic): 3 rounds, 1 not completed; longest round to generation 2: ...``."""
    unfinished = sum(1 for rnd in lane.rounds if not rnd.completed)
    longest = max(lane.rounds, key=lambda rnd: rnd.end - rnd.start, default=None)
    text = (f"{_coordinator_column(lane.group)} ({lane.protocol}): {plural(len(lane.rounds), 'round')}"
            + (f", {unfinished} not completed" if unfinished else ""))
    return text + (f"; longest {describe_round(longest)}" if longest is not None else "")
