"""The rebalance told in words as it happens: the connector's events in, lines for a person out.

Pure and stateful only in what it has seen: :class:`RebalanceNarrator` buffers the steps of each member's current
attempt and tells the attempt as one block when it ends (completed, failed, retried), so that three members
rebalancing at once still read as three stories, not one interleaved log. Each step gets its number, title and
plain-words meaning from the trace tools' vocabulary (:mod:`zkconsumer.trace.vocabulary`, the steps of
:mod:`zkconsumer.events.rebalance_steps`); the meaning is added the first time that step is told, so a classroom
reads each meaning once and then just watches the numbers. The per-step details, the partitions and the
stop-the-world gap are the trace tools' sentences (:mod:`zkconsumer.trace.words`), so the live story and
``zkconsumer trace show`` agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zkconsumer.events import catalogue as ev
from zkconsumer.trace.roles import ERROR, PAUSE_BEGINS, PAUSE_ENDS
from zkconsumer.trace.timeline import Gap, parse_timestamp, partition_refs
from zkconsumer.trace.vocabulary import BY_EVENT, STEPS
from zkconsumer.trace.words import describe_gap, describe_step_fields, fmt_partitions

Event = Mapping[str, Any]


def parse_time(timestamp: str) -> float:
    """Seconds since the epoch of an event's ``timestamp`` (0.0 when it has none that parses)."""
    parsed = parse_timestamp(timestamp)
    return parsed.timestamp() if parsed is not None else 0.0


def owned_text(partitions: object) -> str:
    """``c1-0: demo-0, demo-1; c1-1: demo-2``: partitions grouped by the thread that got them."""
    return fmt_partitions(partition_refs(partitions)) if partitions else "nothing"


def step_detail(event: Event) -> str:
    """What a step did, in the trace tools' words (:func:`zkconsumer.trace.words.describe_step_fields`)."""
    return describe_step_fields(BY_EVENT[event["event"]].name, event)


def step_started(event: Event) -> float:
    """A step's event is written when the step ends: it started ``duration_ms`` before its timestamp."""
    return parse_time(event["timestamp"]) - float(event.get("duration_ms", 0)) / 1000


def numbering_note(numbers: list[int]) -> str | None:
    """What a reader needs to know about a block's step numbers that repeat or skip, or None when they run 1, 2, 3...:
    the numbers are Kafka's (``ZKRebalancerListener.rebalance``), where one number can cover two actions and the
    rebalance listener's steps happen only when the application set one."""
    if not numbers:
        return None
    seen = set(numbers)
    parts = []
    for number in sorted(n for n in seen if numbers.count(n) > 1):
        titles = [step.title for step in STEPS if step.number == number]
        parts.append(f"{number} is {' then '.join(titles)}")
    for number in range(min(numbers), max(numbers) + 1):
        if number not in seen:
            titles = [step.title for step in STEPS if step.number == number]
            why = "no rebalance listener is set" if all(t.startswith("listener") for t in titles) else "not done here"
            parts.append(f"{number} ({' / '.join(titles) or '?'}) is skipped: {why}")
    if not parts:
        return None
    return "the numbers are the steps of Kafka's ZKRebalancerListener.rebalance, in its order: " + "; ".join(parts)


class RebalanceNarrator:
    """Feed it every event, in order; print what :meth:`feed` returns."""

    def __init__(self, explain: bool = True) -> None:
        self.explain = explain
        self._explained: set[str] = set()
        self._attempt_steps: dict[str, list[Event]] = {}
        self._causes: dict[str, str] = {}
        #: when the current rebalance first stopped the fetchers: the stop-the-world gap runs from there to the
        #: restart of the attempt that completes, failed attempts included (as in docs/events.md and the timeline)
        self._stopped_at: dict[str, float] = {}

    def feed(self, event: Event) -> list[str]:
        name = str(event.get("event", ""))
        who = str(event.get("consumer_id", "?"))
        if name in BY_EVENT:
            self._attempt_steps.setdefault(who, []).append(event)
            if name == PAUSE_BEGINS.event:
                self._stopped_at.setdefault(who, step_started(event))
            return []
        if name == ev.REBALANCE_STARTED:
            self._causes[who] = str(event.get("cause", ""))
            self._attempt_steps[who] = []
            self._stopped_at.pop(who, None)
            return []
        if name == ev.REBALANCE_COMPLETED:
            return self._tell(who, event, f"done: owns {owned_text(event.get('owned'))}")
        if name == ev.REBALANCE_ATTEMPT_FAILED:
            return self._tell(who, event, f"attempt failed ({event.get('reason')}); retrying after "
                                          f"{event.get('backoff_ms')} ms")
        if name == ev.REBALANCE_FAILED:
            return self._tell(who, event, f"REBALANCE FAILED after {event.get('attempts')} attempts")
        return self._instant(who, name, event)

    def _tell(self, who: str, end: Event, outcome: str) -> list[str]:
        steps = self._attempt_steps.pop(who, [])
        self._attempt_steps[who] = []
        cause = self._causes.get(who, "")
        # An attempt that ended before its first step (registration gone) has no step: the end event's own number
        # is then the only one there is.
        attempt = steps[0].get("attempt", 1) if steps else end.get("attempt", end.get("attempts", 1))
        lines = [f"  {who}: rebalance {end.get('rebalance_id')} ({cause}), attempt {attempt}"]
        lines += self._numbering(steps)
        for step in steps:
            info = BY_EVENT[step["event"]]
            lines.append(f"    {info.number} {info.title:<24} {float(step.get('duration_ms', 0)):8.1f} ms  "
                         f"{step_detail(step)}")
            if self.explain and info.name not in self._explained:
                self._explained.add(info.name)
                lines.append(f"      ({info.meaning})")
        restart = next((s for s in steps if s["event"] == PAUSE_ENDS.event and ERROR not in s), None)
        if restart is not None and who in self._stopped_at:
            gap = Gap(self._stopped_at.pop(who), parse_time(restart["timestamp"]), True, "restart")
            outcome += f"; {describe_gap(gap)}"
            if int(attempt) > 1:
                outcome += " (since attempt 1 stopped the fetchers)"
        lines.append(f"    => {outcome}")
        return lines

    def _numbering(self, steps: list[Event]) -> list[str]:
        """Why a block's numbers repeat or skip (``1, 2, 2, 4, 5...``), told once, the first time they do: they are
        the original's, so that a reader can follow the same steps in Kafka's ``rebalance`` method."""
        note = numbering_note([BY_EVENT[step["event"]].number for step in steps])
        if not self.explain or note is None or "numbering" in self._explained:
            return []
        self._explained.add("numbering")
        return [f"      ({note})"]

    def _instant(self, who: str, name: str, event: Event) -> list[str]:
        if name == ev.REBALANCE_TRIGGERED:
            detail = {
                "members_changed": f"the members are now {', '.join(event.get('members') or [])}",
                "topic_changed": f"topic {event.get('topic')} changed (partitions added?)",
                "topics_changed": "the set of topics changed",
                "brokers_appeared": "brokers appeared",
            }.get(str(event.get("cause")), str(event.get("cause")))
            return [f"  {who}: watch fired: {detail}"]
        if name == ev.CONSUMER_REGISTERED:
            return [f"  {who}: registered at {event.get('path')}"
                    + (" (again, after its session expired)" if event.get("reregistered") else "")]
        if name == ev.SESSION_EXPIRED:
            return [f"  {who}: SESSION EXPIRED: dropped {owned_text(event.get('dropped'))}"]
        if name == ev.REBALANCE_RETRYING_AFTER_FAILURE:
            return [f"  {who}: gave up this rebalance, will keep retrying "
                    f"({event.get('failures_in_a_row')} failures in a row)"]
        if name == ev.OFFSETS_COMMIT_SKIPPED:
            return [f"  {who}: commit skipped: someone committed higher offsets meanwhile"]
        if name == ev.CONSUMER_SHUTDOWN:
            return [f"  {who}: shut down cleanly: offsets committed, its ephemeral znodes gone with its session"]
        return []
