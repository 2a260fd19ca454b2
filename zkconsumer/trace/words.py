"""The sentences of the trace tools: how a duration, a partition list, a step's facts, a mark or a demo marker reads.

Shared by the terminal timeline (:mod:`zkconsumer.trace.timeline_text`), the HTML page
(:mod:`zkconsumer.trace.timeline_html`) and the live narration (:mod:`zkconsumer.demo.narration`), so that all
three say the same thing in the same way. The names they are built from (step titles, mark titles, how a gap or
an ownership ends) come from :mod:`zkconsumer.trace.vocabulary`, never from here. Plain ASCII only: the text goes
to terminals and pipes whose encoding nobody checked. Pure; every function takes model data and returns a string.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from zkconsumer.events import catalogue as ev
from zkconsumer.trace.coordinator import ROUND_ENDS, CoordinatorRound, GroupStateStretch
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
from zkconsumer.trace.values import integer, json_list
from zkconsumer.trace.vocabulary import (
    CLASSIC_PREFIX,
    CONFLICT,
    CONSUMER_PREFIX,
    GAP_ENDS,
    OWNERSHIP_ENDS,
    mark_title,
    state_name,
)

LIST_LIMIT = 8  # partitions named before "... (+N more)"
FIELD_VALUE_CHARS = 160  # an event field's value in a tooltip, cut after this many characters


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
    if marker.name == ev.DEMO_SCENE:
        title = f.get("title")
        scene = f.get("scene")
        label = f"scene {scene}" if scene is not None else "scene"
        return (f"{label}: {title}" if isinstance(title, str) and title else label), note
    if marker.name == ev.DEMO_MEMBER_STARTED:
        extra = []
        if f.get("streams") is not None:
            extra.append(f"streams {f.get('streams')}")
        if f.get("pid") is not None:
            extra.append(f"pid {f.get('pid')}")
        return f"{who} started" + (f" ({', '.join(extra)})" if extra else ""), note
    if marker.name == ev.DEMO_MEMBER_KILLED:
        signal = f.get("signal")
        return f"{who} killed" + (f" ({signal})" if signal is not None else ""), note
    if marker.name == ev.DEMO_MEMBER_STOPPED:
        return f"{who} stopped", note
    if marker.name == ev.DEMO_SETTLED:
        scene = f.get("scene")
        valid = f.get("valid")
        verdict = (", verified" if valid else ", NOT valid") if isinstance(valid, bool) else ""
        owners = partition_refs(f.get("owners"))
        return (f"scene {scene} settled{verdict}" if scene is not None else f"settled{verdict}",
                f"owners: {fmt_partitions(owners)}" if owners else note)
    if marker.name == ev.DEMO_PARTITIONS_ADDED:
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


# --- the group coordinator's lane -------------------------------------------------------------------------------

# The fields every event has, or that a coordinator lane already says (its group): not repeated in a tooltip.
_COMMON_FIELDS = frozenset({"event", "timestamp", "level", "logger", "group"})


def fmt_fields(fields: Mapping[str, Any]) -> str:
    """Every field of an event but the common ones, ``name=value``, for a tooltip that shows all the event said."""
    parts = []
    for key, value in fields.items():
        if key in _COMMON_FIELDS:
            continue
        shown = value if isinstance(value, str) else json.dumps(value, default=str)
        if len(shown) > FIELD_VALUE_CHARS:
            shown = shown[:FIELD_VALUE_CHARS] + "..."
        parts.append(f"{key}={shown}")
    return ", ".join(parts)


def _epoch_word(protocol: str) -> str:
    return "group epoch" if protocol == "consumer" else "generation"


def describe_coordinator_event(name: str, fields: Mapping[str, Any], member: Callable[[object], str]) -> str:
    """One sentence about a coordinator's event, for the text timeline and a mark's tooltip; ``member`` names a
    member id (its client id where known)."""
    consumer = name.startswith(CONSUMER_PREFIX)
    kind = name[len(CONSUMER_PREFIX if consumer else CLASSIC_PREFIX):]
    f = fields
    who = member(f.get("member_id"))
    epoch = integer(f.get("group_epoch")) if consumer else integer(f.get("generation"))
    epoch_text = f" ({_epoch_word('consumer' if consumer else 'classic')} {epoch})" if epoch is not None else ""

    def ms(key: str) -> str:
        value = integer(f.get(key))
        return fmt_ms(value) if value is not None else "?"

    if kind == "created":
        kind_of = f.get("protocol_type")
        return "group created" + (f" (protocol type {kind_of})" if isinstance(kind_of, str) and kind_of else "")
    if kind == "state_changed":
        assignment = integer(f.get("assignment_epoch"))
        if consumer and assignment is not None:
            epoch_text = epoch_text[:-1] + f", assignment epoch {assignment})" if epoch_text else \
                f" (assignment epoch {assignment})"
        return f"state {state_name(str(f.get('from', '?')))} -> {state_name(str(f.get('to', '?')))}{epoch_text}"
    if kind == "member_id_required":
        return f"member id required (KIP-394): {who} must join again with it"
    instance = f.get("group_instance_id") or f.get("instance_id")
    if kind == "member_joined":
        bits = [f"member id {f.get('member_id')}"] if who != f.get("member_id") else []
        if instance:
            bits.append(f"static {instance}")
        if "session_timeout_ms" in f:
            bits.append(f"session {ms('session_timeout_ms')}")
        protocols = json_list(f.get("protocols"))
        if protocols:
            bits.append("protocols " + ", ".join(str(p) for p in protocols))
        topics = json_list(f.get("subscribed_topic_names"))
        if topics:
            bits.append("topics " + ", ".join(str(t) for t in topics))
        if isinstance(f.get("server_assignor"), str):
            bits.append(f"assignor {f.get('server_assignor')}")
        return f"member joined: {who}" + (f" ({'; '.join(bits)})" if bits else "")
    if kind == "member_rejoined":
        return f"{who} rejoined" + (" with changed protocols" if f.get("protocols_changed") is True else "")
    if kind == "static_member_replaced":
        return (f"static member {instance or '?'} replaced: {member(f.get('old_member_id'))} "
                f"fenced, {member(f.get('new_member_id'))} takes its place")
    if kind == "member_left":
        reason = f.get("reason")
        if f.get("temporary") is True:
            return f"member left for now: {who} (static, keeps its partitions until its session ends)"
        return f"member left: {who}" + (f" ({reason})" if isinstance(reason, str) and reason else "")
    if kind == "member_expired":
        cause = f.get("cause")
        why = cause if isinstance(cause, str) else f"session timeout {ms('session_timeout_ms')}"
        return f"member expired: {who} ({why})"
    if kind == "member_fenced":
        reason = f.get("reason")
        if "rebalance_timeout_ms" in f and not isinstance(reason, str):
            reason = f"did not revoke within its rebalance timeout {ms('rebalance_timeout_ms')}"
        return f"member fenced: {who}" + (f" ({reason})" if isinstance(reason, str) and reason else "")
    if kind == "round_started":
        wait = (f"initial delay {ms('initial_delay_ms')}" if "initial_delay_ms" in f
                else f"rebalance timeout {ms('rebalance_timeout_ms')}")
        return f"round started after generation {f.get('generation', '?')} ({f.get('reason', '?')}); waits {wait}"
    if kind == "initial_delay_extended":
        return f"initial delay extended by {ms('delay_ms')} ({ms('remaining_ms')} left)"
    if kind == "round_completed":
        members = [member(m) for m in json_list(f.get("members"))]
        return (f"round completed: generation {f.get('generation', '?')}, protocol {f.get('protocol', '?')}, "
                f"leader {member(f.get('leader'))}, members {_limited(members, LIST_LIMIT) or 'none'}")
    if kind == "round_postponed":
        return f"no member rejoined: the round waits {ms('rebalance_timeout_ms')} more"
    if kind == "assignment_sent":
        sizes = [f"{member(m.get('member_id'))} {m.get('bytes', '?')} B" for m in json_list(f.get("members"))
                 if isinstance(m, dict)]
        return f"assignment sent{epoch_text}: {_limited(sizes, LIST_LIMIT) or 'no member'}"
    if kind == "epoch_bumped":
        reason = f.get("reason")
        return (f"group epoch {f.get('from', '?')} -> {f.get('to', '?')}"
                + (f" ({reason})" if isinstance(reason, str) else ""))
    if kind == "target_assignment_computed":
        shares = []
        for item in json_list(f.get("members")):
            if isinstance(item, dict):
                refs = partition_refs(item.get("partitions"))
                shares.append(f"{member(item.get('member_id'))}: {_limited([fmt_partition(r) for r in refs], 4)}"
                              if refs else member(item.get("member_id")))
            else:
                shares.append(member(item))
        assignor = f.get("assignor")
        return (f"target assignment for group epoch {f.get('epoch', '?')}"
                + (f" by {assignor}" if isinstance(assignor, str) else "")
                + f": {'; '.join(shares[:LIST_LIMIT]) or 'no member'}"
                + (f"; ... (+{len(shares) - LIST_LIMIT} more)" if len(shares) > LIST_LIMIT else ""))
    if kind == "member_epoch_advanced":
        state = f.get("state")
        return (f"{who} member epoch {f.get('from', '?')} -> {f.get('to', '?')}"
                + (f" ({state})" if isinstance(state, str) else ""))
    if kind == "member_state_changed":
        return f"{who} {f.get('from', '?')} -> {f.get('to', '?')}"
    if kind in ("partitions_revoked", "partitions_assigned"):
        verb = "asked to revoke" if kind == "partitions_revoked" else "given"
        return f"{who} {verb} {fmt_partitions(partition_refs(f.get('partitions')))}"
    if kind == "heartbeat_rejected":
        return f"heartbeat of {who} rejected: {f.get('error', '?')}" + (
            f" ({f.get('message')})" if isinstance(f.get("message"), str) and f.get("message") else "")
    if kind == "deleted":
        return "group deleted"
    return kind.replace("_", " ")


def describe_round(rnd: CoordinatorRound) -> str:
    """``round to generation 3, 250 ms, completed: protocol range, leader m1, members m1, m2``."""
    word = _epoch_word(rnd.protocol)
    if rnd.epoch is not None:
        head = f"round to {word} {rnd.epoch}"
    elif rnd.previous is not None:
        head = f"round after {word} {rnd.previous}"
    else:
        head = "round"
    facts = [f"{fmt_offset(rnd.start)} to {fmt_offset(rnd.end)} ({fmt_ms((rnd.end - rnd.start) * 1000)})",
             ROUND_ENDS.get(rnd.ended_by, rnd.ended_by)]
    if rnd.reason:
        facts.append(f"reason {rnd.reason}")
    if rnd.chosen_protocol:
        facts.append(f"protocol {rnd.chosen_protocol}")
    if rnd.leader:
        facts.append(f"leader {rnd.leader}")
    facts.append(f"members {_limited(list(rnd.members), LIST_LIMIT) or 'none'}")
    if rnd.delay_ms is not None:
        facts.append(f"waits up to {fmt_ms(rnd.delay_ms)}")
    if rnd.extensions:
        facts.append(f"initial delay extended {plural(rnd.extensions, 'time')}")
    if rnd.postponed:
        facts.append(f"postponed {plural(rnd.postponed, 'time')} (no member rejoined)")
    return f"{head}: " + "; ".join(facts)


def round_label(rnd: CoordinatorRound) -> str:
    """The short label on a round's block: ``gen 3`` or ``epoch 7``; ``gen 4?`` for a round that never said."""
    word = "epoch" if rnd.protocol == "consumer" else "gen"
    if rnd.epoch is not None:
        return f"{word} {rnd.epoch}"
    return f"{word} {rnd.previous + 1}?" if rnd.previous is not None else f"{word} ?"


def describe_state(stretch: GroupStateStretch, protocol: str) -> str:
    """``Stable (generation 3), +1.200s to +5.000s (3.8 s)``."""
    epoch = f" ({_epoch_word(protocol)} {stretch.epoch})" if stretch.epoch is not None else ""
    return (f"{stretch.state}{epoch}, {fmt_offset(stretch.start)} to {fmt_offset(stretch.end)} "
            f"({fmt_ms((stretch.end - stretch.start) * 1000)})")
