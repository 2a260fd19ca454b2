"""The sentences of the trace tools: how a duration, a partition list, a step's facts, a mark or a demo marker reads.

Shared by the terminal timeline (:mod:`zkconsumer.trace.timeline_text`), the HTML page
(:mod:`zkconsumer.trace.timeline_html`) and the live narration (:mod:`zkconsumer.demo.narration`), so that all
three say the same thing in the same way. The names they are built from (step titles, mark titles, how a gap or
an ownership ends) come from :mod:`zkconsumer.trace.vocabulary`, never from here. Plain ASCII only: the text goes
to terminals and pipes whose encoding nobody checked. Pure; every function takes model data and returns a string.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from zkconsumer.trace.timeline import (
    Gap,
    Mark,
    Marker,
    Ownership,
    PartitionRef,
    Rebalance,
    Step,
    partition_refs,
)
from zkconsumer.trace.vocabulary import CONFLICT, GAP_ENDS, OWNERSHIP_ENDS, mark_title

LIST_LIMIT = 8  # partitions named before "... (+N more)"


def fmt_ms(ms: float | None) -> str:
    """A duration with as many digits as mean something: steps are 0.01 ms to 100 ms, gaps up to seconds."""
    if ms is None:
        return "?"
    if ms < 10:
        return f"{ms:.2f} ms"
    if ms < 100:
        return f"{ms:.1f} ms"
    if ms < 10_000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.1f} s"


def fmt_offset(seconds: float) -> str:
    """A time on the timeline, relative to the start of the trace: ``+12.345s``."""
    return f"+{seconds:.3f}s" if seconds >= 0 else f"-{-seconds:.3f}s"


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def fmt_partition(ref: PartitionRef) -> str:
    return f"{ref.topic}-{ref.partition}"


def _limited(items: Sequence[str], limit: int) -> str:
    if len(items) <= limit:
        return ", ".join(items)
    return ", ".join(items[:limit]) + f", ... (+{len(items) - limit} more)"


def fmt_partitions(refs: Iterable[PartitionRef], limit: int = LIST_LIMIT) -> str:
    """``gs2_c3-0: sample-1, sample-2; gs2_c3-1: sample-3`` when the threads are known, else ``sample-1, sample-2``;
    ``none`` for an empty list. Grouped by thread because that is how the legacy consumer hands partitions out."""
    refs = list(refs)
    if not refs:
        return "none"
    if all(ref.thread is None for ref in refs):
        return _limited([fmt_partition(ref) for ref in refs], limit)
    by_thread: dict[str, list[str]] = {}
    for ref in refs:
        by_thread.setdefault(ref.thread or "?", []).append(fmt_partition(ref))
    return "; ".join(f"{thread}: {_limited(names, limit)}" for thread, names in by_thread.items())


def fmt_conflicts(fields: Mapping[str, Any], limit: int = LIST_LIMIT) -> str:
    """``sample-2 held by gs2_c1-0, ...``: the ``conflicts`` of a claim."""
    items = []
    for item in fields.get("conflicts") or []:
        if isinstance(item, dict):
            holder = item.get("holder")
            name = f"{item.get('topic')}-{item.get('partition')}"
            items.append(f"{name} held by {holder}" if isinstance(holder, str) else name)
    return _limited(items, limit) if items else "none"


def _count(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, list):
        return len(value)
    return None


def describe_step(step: Step) -> str:
    """The facts of a step's event that matter to a reader, short; empty when there is nothing to add."""
    return describe_step_fields(step.name, step.fields)


def describe_step_fields(name: str, fields: Mapping[str, Any]) -> str:
    """:func:`describe_step` from the step's name and its event's fields (the demo narrates raw events)."""
    if "error" in fields:  # the step raised: what it did not do matters less than why
        return f"FAILED: {fields['error']}"
    if name == "read_cluster":
        brokers = fields.get("brokers")
        if isinstance(brokers, list):
            return f"brokers {', '.join(str(b) for b in brokers)}" if brokers else "no broker registered"
    elif name == "stop_fetchers":
        dropped = _count(fields.get("chunks_dropped"))
        if dropped is not None:
            return f"{plural(dropped, 'fetched chunk')} dropped"
    elif name == "commit_offsets":
        if fields.get("auto_commit") is False:
            return "auto-commit off: nothing written"
        offsets = fmt_offsets(fields.get("offsets"))
        return f"wrote {offsets}" if offsets else "no offset to write"
    elif name == "release":
        released = partition_refs(fields.get("released"))
        return f"released {fmt_partitions(released)}" if released else "nothing to release"
    elif name == "assign":
        members = fields.get("members")
        share = partition_refs(fields.get("assignment"))
        strategy = fields.get("strategy") or "assignment"
        who = f" over members {', '.join(map(str, members))}" if isinstance(members, list) else ""
        return f"{strategy}{who} -> {fmt_partitions(share)}"
    elif name == "fetch_offsets":
        offsets = fmt_offsets(fields.get("offsets"))
        return f"committed {offsets}" if offsets else "no partition"
    elif name in ("build_registry", "start_fetchers"):
        count = _count(fields.get("partitions"))
        if count is not None:
            return plural(count, "partition")
    elif name == "claim":
        claimed = partition_refs(fields.get("claimed"))
        ours = partition_refs(fields.get("already_ours"))
        parts = [f"claimed {fmt_partitions(claimed)}"]
        if ours:
            parts.append(f"already ours {fmt_partitions(ours)}")
        if fields.get("conflicts"):
            parts.append(f"CONFLICT {fmt_conflicts(fields)}")
        return "; ".join(parts)
    return ""


def fmt_offsets(value: object, limit: int = LIST_LIMIT) -> str:
    """``sample-0=12, sample-1=-1``: an ``offsets`` list of the events (items with ``offset``); empty when there
    is no partition in it, so that each caller says what nothing means where it is."""
    items = [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []
    return _limited([f"{fmt_partition(ref)}={_offset(items, ref)}" for ref in partition_refs(items)], limit)


def _offset(items: Sequence[Mapping[str, Any]], ref: PartitionRef) -> str:
    for item in items:
        if (item.get("topic"), item.get("partition")) == (ref.topic, ref.partition):
            return str(item.get("offset"))
    return "?"


def describe_mark(mark: Mark) -> str:
    """One sentence about a mark, for the tooltip and the text line."""
    f = mark.fields
    if mark.kind == CONFLICT:
        return f"ownership conflict: {fmt_conflicts(f)}"
    if mark.kind == "attempt_failed":
        backoff = f.get("backoff_ms")
        after = f"; next attempt after {fmt_ms(backoff)}" if isinstance(backoff, (int, float)) else ""
        return f"attempt {mark.attempt or '?'} failed ({f.get('reason', 'no reason given')}){after}"
    if mark.kind == "rebalance_failed":
        return (f"rebalance failed after {f.get('attempts', '?')} attempts "
                f"({f.get('failures_in_a_row', '?')} failed rebalances in a row)")
    if mark.kind == "retrying":
        return f"keeps trying after {f.get('failures_in_a_row', '?')} failed rebalances in a row"
    if mark.kind == "rebalance_error":
        return f"rebalance error: {f.get('error', '?')}"
    if mark.kind == "no_brokers":
        return "no broker registered: owns nothing and waits for /brokers/ids"
    if mark.kind == "member_output":
        return f"printed: {f.get('line', '')}"
    if mark.kind == "session_expired":
        return f"session expired: dropped {fmt_partitions(partition_refs(f.get('dropped')))}"
    if mark.kind == "suspended_too_long":
        cut_off = f.get("suspended_ms")
        cut_off = cut_off if isinstance(cut_off, (int, float)) else None
        return (f"cut off from ZooKeeper for {fmt_ms(cut_off)}: stopped fetching "
                f"{fmt_partitions(partition_refs(f.get('owned')))} (still owned, until the session answers again)")
    return mark_title(mark.kind)


def describe_marker(marker: Marker) -> tuple[str, str]:
    """A demo marker's label and note (the note may be empty)."""
    f = marker.fields
    who = marker.consumer_id or "?"
    note = f.get("note")
    note = note if isinstance(note, str) else ""
    if marker.name == "demo.scene":
        title = f.get("title")
        scene = f.get("scene")
        label = f"scene {scene}" if scene is not None else "scene"
        return (f"{label}: {title}" if isinstance(title, str) and title else label), note
    if marker.name == "demo.member_started":
        extra = []
        if f.get("streams") is not None:
            extra.append(f"streams {f.get('streams')}")
        if f.get("pid") is not None:
            extra.append(f"pid {f.get('pid')}")
        return f"{who} started" + (f" ({', '.join(extra)})" if extra else ""), note
    if marker.name == "demo.member_killed":
        signal = f.get("signal")
        return f"{who} killed" + (f" ({signal})" if signal is not None else ""), note
    if marker.name == "demo.member_stopped":
        return f"{who} stopped", note
    if marker.name == "demo.settled":
        scene = f.get("scene")
        valid = f.get("valid")
        verdict = (", verified" if valid else ", NOT valid") if isinstance(valid, bool) else ""
        owners = partition_refs(f.get("owners"))
        return (f"scene {scene} settled{verdict}" if scene is not None else f"settled{verdict}",
                f"owners: {fmt_partitions(owners)}" if owners else note)
    if marker.name == "demo.partitions_added":
        return f"{f.get('topic')}: partitions {f.get('before')} -> {f.get('after')}", note
    return marker.kind.replace("_", " "), note


def describe_ownership(owner: Ownership) -> str:
    """``sample-1 owned by gs2_c2-0 from +6.102s to +14.127s (claimed by gs2_c3 ...)``."""
    who = owner.thread or owner.consumer_id
    span = f"from {fmt_offset(owner.start)} " + (
        f"to {fmt_offset(owner.end)}" if owner.end is not None else "to the end of the trace")
    text = f"{owner.topic}-{owner.partition} owned by {who} {span}"
    if owner.ended_by == "taken_over":
        text += f"; then claimed by {owner.successor} (the znode had gone: session expired or released unseen)"
    elif owner.ended_by in OWNERSHIP_ENDS:
        text += f"; {OWNERSHIP_ENDS[owner.ended_by]}"
    return text


def describe_gap(gap: Gap) -> str:
    if gap.finished:
        return f"stop-the-world {fmt_ms(gap.duration_ms)}"
    return f"fetchers stopped {fmt_ms(gap.duration_ms)} {GAP_ENDS.get(gap.ended_by, '')}, not restarted".replace(
        "  ", " ")


def describe_rebalance(rebalance: Rebalance) -> str:
    """``rebalance 2 (members_changed): completed in 1 attempt, 84 ms; stop-the-world 83.5 ms``."""
    head = f"rebalance {rebalance.rebalance_id}" + (f" ({rebalance.cause})" if rebalance.cause else "")
    attempts = plural(len(rebalance.attempts), "attempt")
    if rebalance.outcome == "completed":
        body = f"completed in {attempts}"
    elif rebalance.outcome == "failed":
        body = f"FAILED after {attempts}"
    else:
        body = f"unfinished after {attempts}"
    if rebalance.duration_ms is not None:
        body += f", {fmt_ms(rebalance.duration_ms)}"
    if rebalance.gap is not None:
        body += f"; {describe_gap(rebalance.gap)}"
    return f"{head}: {body}"
