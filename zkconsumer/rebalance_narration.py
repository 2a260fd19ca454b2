"""The rebalance told in words as it happens: the connector's events in, lines for a person out.

Pure and stateful only in what it has seen: :class:`RebalanceNarrator` buffers the steps of each member's current
attempt and tells the attempt as one block when it ends (completed, failed, retried), so that three members
rebalancing at once still read as three stories, not one interleaved log. Each step gets its title and duration
from :mod:`zkconsumer.rebalance_steps`; its plain-words meaning is added the first time that step is told, so a
classroom reads each meaning once and then just watches the numbers. The same per-step details serve
``zkconsumer trace show`` (:func:`step_detail`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from zkconsumer.rebalance_steps import BY_EVENT

Event = Mapping[str, Any]


def parse_time(timestamp: str) -> datetime:
    """structlog's ISO timestamps end in ``Z``; ``fromisoformat`` accepts that only from Python 3.11."""
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def partitions_text(partitions: Sequence[Mapping[str, Any]], key: str | None = None) -> str:
    """``demo-0, demo-1`` or, with ``key``, ``demo-0@12`` / ``demo-0 (c1-0)``; ``none`` when empty."""
    if not partitions:
        return "none"
    shown = []
    for p in partitions:
        name = f"{p.get('topic')}-{p.get('partition')}"
        if key == "offset":
            name += f"@{p.get('offset')}"
        elif key is not None and p.get(key) is not None:
            name += f" ({p.get(key)})"
        shown.append(name)
    return ", ".join(shown)


def by_thread(partitions: Sequence[Mapping[str, Any]]) -> str:
    """``c1-0: demo-0, demo-1; c1-1: demo-2``: an assignment grouped by consumer thread."""
    threads: dict[str, list[str]] = {}
    for p in partitions:
        threads.setdefault(str(p.get("thread")), []).append(f"{p.get('topic')}-{p.get('partition')}")
    return "; ".join(f"{thread}: {', '.join(names)}" for thread, names in sorted(threads.items())) or "nothing"


def step_detail(event: Event) -> str:
    """What a step did, in a few words: the fields a learner should look at."""
    name = event.get("event")
    if name == "rebalance.read_cluster":
        return f"brokers {', '.join(map(str, event.get('brokers') or [])) or 'none'}"
    if name == "rebalance.stop_fetchers":
        return f"{event.get('chunks_dropped', 0)} fetched chunk(s) dropped"
    if name == "rebalance.commit_offsets":
        offsets = event.get("offsets") or []
        return f"committed {partitions_text(offsets, 'offset')}" if offsets else "nothing new to commit"
    if name == "rebalance.release":
        return f"released {partitions_text(event.get('released') or [])}"
    if name == "rebalance.assign":
        members = ", ".join(event.get("members") or [])
        return f"{event.get('strategy')} over members {members} -> {by_thread(event.get('assignment') or [])}"
    if name == "rebalance.fetch_offsets":
        return f"resume at {partitions_text(event.get('offsets') or [], 'offset')}"
    if name == "rebalance.build_registry":
        return f"{event.get('partitions', 0)} PartitionTopicInfo"
    if name == "rebalance.claim":
        text = f"claimed {partitions_text(event.get('claimed') or [])}"
        if event.get("already_ours"):
            text += f", already ours {partitions_text(event['already_ours'])}"
        if event.get("conflicts"):
            text += f"; CONFLICT: {partitions_text(event['conflicts'], 'holder')} still held"
        return text
    if name == "rebalance.start_fetchers":
        return f"{event.get('partitions', 0)} partition(s) handed to the fetcher manager"
    return ""


def gap_ms(stop_fetchers: Event, start_fetchers: Event) -> float:
    """Stop-the-world: from the start of step 2 (stop fetchers) to the end of step 9 (restart fetchers)."""
    stopped = parse_time(stop_fetchers["timestamp"]).timestamp() - float(stop_fetchers.get("duration_ms", 0)) / 1000
    return max(0.0, (parse_time(start_fetchers["timestamp"]).timestamp() - stopped) * 1000)


class RebalanceNarrator:
    """Feed it every event, in order; print what :meth:`feed` returns."""

    def __init__(self, explain: bool = True) -> None:
        self.explain = explain
        self._explained: set[str] = set()
        self._attempt_steps: dict[str, list[Event]] = {}
        self._causes: dict[str, str] = {}

    def feed(self, event: Event) -> list[str]:
        name = str(event.get("event", ""))
        who = str(event.get("consumer_id", "?"))
        if name in BY_EVENT:
            self._attempt_steps.setdefault(who, []).append(event)
            return []
        if name == "rebalance.started":
            self._causes[who] = str(event.get("cause", ""))
            self._attempt_steps[who] = []
            return []
        if name == "rebalance.completed":
            return self._tell(who, event, f"done: owns {by_thread(event.get('owned') or [])}")
        if name == "rebalance.attempt_failed":
            return self._tell(who, event, f"attempt failed ({event.get('reason')}); retrying after "
                                          f"{event.get('backoff_ms')} ms")
        if name == "rebalance.failed":
            return self._tell(who, event, f"REBALANCE FAILED after {event.get('attempts')} attempts")
        return self._instant(who, name, event)

    def _tell(self, who: str, end: Event, outcome: str) -> list[str]:
        steps = self._attempt_steps.pop(who, [])
        self._attempt_steps[who] = []
        cause = self._causes.get(who, "")
        attempt = steps[0].get("attempt", 1) if steps else end.get("attempts", 1)
        lines = [f"  {who}: rebalance {end.get('rebalance_id')} ({cause}), attempt {attempt}"]
        for step in steps:
            info = BY_EVENT[step["event"]]
            lines.append(f"    {info.number} {info.title:<24} {float(step.get('duration_ms', 0)):8.1f} ms  "
                         f"{step_detail(step)}")
            if self.explain and info.name not in self._explained:
                self._explained.add(info.name)
                lines.append(f"      ({info.meaning})")
        stop = next((s for s in steps if s["event"] == "rebalance.stop_fetchers"), None)
        start = next((s for s in steps if s["event"] == "rebalance.start_fetchers"), None)
        if stop is not None and start is not None:
            outcome += f"; fetching was stopped for {gap_ms(stop, start):.1f} ms"
        lines.append(f"    => {outcome}")
        return lines

    def _instant(self, who: str, name: str, event: Event) -> list[str]:
        if name == "rebalance.triggered":
            detail = {
                "members_changed": f"the members are now {', '.join(event.get('members') or [])}",
                "topic_changed": f"topic {event.get('topic')} changed (partitions added?)",
                "topics_changed": "the set of topics changed",
                "brokers_appeared": "brokers appeared",
            }.get(str(event.get("cause")), str(event.get("cause")))
            return [f"  {who}: watch fired: {detail}"]
        if name == "consumer.registered":
            return [f"  {who}: registered at {event.get('path')}"
                    + (" (again, after its session expired)" if event.get("reregistered") else "")]
        if name == "session.expired":
            return [f"  {who}: SESSION EXPIRED: dropped {partitions_text(event.get('dropped') or [])}"]
        if name == "rebalance.retrying_after_failure":
            return [f"  {who}: gave up this rebalance, will keep retrying "
                    f"({event.get('failures_in_a_row')} failures in a row)"]
        if name == "offsets.commit_skipped":
            return [f"  {who}: commit skipped: someone committed higher offsets meanwhile"]
        if name == "consumer.shutdown":
            return [f"  {who}: shut down cleanly: offsets committed, its ephemeral znodes gone with its session"]
        return []
