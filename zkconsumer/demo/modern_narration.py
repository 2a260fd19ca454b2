"""The modern rebalance told in words as it happens: the group coordinator's events and the modern members' events
in, lines for a person out, in the style of the legacy narration (:mod:`zkconsumer.demo.narration`).

What a class should see of each protocol, from the events that say it:

* classic (``front.group.*``): who joined, the round that opens when the membership changes (the members learn of it
  from their heartbeats, answered REBALANCE_IN_PROGRESS, and send JoinGroup again), the generation it makes and its
  leader (the first member to join), the leader's assignment arriving in SyncGroup and how long the followers' own
  SyncGroup waited for it;
* KIP-848 (``front.consumer_group.*``): the group epoch bumped by a change, the target assignment the coordinator
  computes itself, each member's epoch, and the revoke-then-assign reconciliation (a partition is given to its new
  owner only after its old owner's heartbeat said it let go);
* each modern member (:mod:`zkconsumer.members.modern_member`, whose rebalance callbacks are written as the legacy
  steps' events): what it revoked, what it was given, and when it fetched again, measured from the coordinator's
  decision that caused it (the round's JoinGroup answers, or the epoch bump).

Pure and stateful only in what it has seen, as the legacy narrator: :meth:`ModernNarrator.feed` takes every event in
order and returns the lines to print. The coordinator's facts are worded by the trace tools
(:func:`zkconsumer.trace.words.describe_coordinator_event`), so that the live story and ``zkconsumer trace show``
agree; the narrator adds the round structure, the waits and the one-time explanations. A member is named by its
client id, which a modern member of this project sets to its consumer id, so coordinator and member lines match.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from zkconsumer.demo.narration import parse_time
from zkconsumer.events import catalogue as ev
from zkconsumer.trace.timeline import PartitionRef, partition_refs
from zkconsumer.trace.values import integer, json_list, text
from zkconsumer.trace.vocabulary import CLASSIC_PREFIX, CONSUMER_PREFIX
from zkconsumer.trace.words import describe_coordinator_event, fmt_ms, fmt_partitions

Event = Mapping[str, Any]

#: What a class reads once, the first time the thing it explains is told (keys are what ``_explain`` is given).
MEANINGS: dict[str, str] = {
    "classic_join": "JoinGroup: the member asks the coordinator to take part; the answer is held until the round "
                    "completes",
    "classic_round": "every member learns of the round from its next heartbeat, answered REBALANCE_IN_PROGRESS, "
                     "and sends JoinGroup again; the coordinator answers them all at once when all have",
    "classic_leader": "the leader (the first member to join) receives every member's subscription in its JoinGroup "
                      "answer and computes the assignment itself; the followers send SyncGroup at once and wait",
    "classic_sync": "the coordinator forwards each member's share of the leader's assignment in the SyncGroup "
                    "answers: the followers waited for the leader",
    "consumer_epoch": "KIP-848: no JoinGroup, no SyncGroup, no leader; a change bumps the group epoch and the "
                      "coordinator computes the target assignment itself",
    "consumer_revoke": "revoke-then-assign: a partition moves to its new owner only after its old owner's heartbeat "
                       "said it let go; the others keep fetching throughout",
    "consumer_epoch_member": "a member's epoch reaches the group's once it owns exactly its target",
    "consumer_upgrade": "Kafka 4.x's online upgrade: the classic members go on with JoinGroup, SyncGroup and "
                        "Heartbeat inside the consumer group, the coordinator assigning for them too, until each is "
                        "restarted with group.protocol=consumer",
    "eager_member": "eager (range, roundrobin): the member gives up everything before the round, and fetches "
                    "nothing until the new assignment arrives",
    "cooperative_member": "incremental: the member gives up only what moves and keeps fetching the rest",
}


@dataclass
class _Round:
    """The coordinator's round in progress (classic) or reconciliation (KIP-848) of one group."""

    group: str
    started: float
    epoch: int | None = None
    decided: float | None = None  # classic: the JoinGroup answers; KIP-848: the target assignment
    leader: str | None = None
    followers: tuple[str, ...] = ()


@dataclass
class _MemberAttempt:
    started: float
    steps: list[Event] = field(default_factory=list)


class ModernNarrator:
    """Feed it every event, in order; print what :meth:`feed` returns. Events it does not know give no line, so one
    narrator can be fed a demo's whole recording (the legacy members' events go to :class:`RebalanceNarrator`)."""

    def __init__(self, explain: bool = True) -> None:
        self.explain = explain
        self._explained: set[str] = set()
        self._names: dict[str, str] = {}  # member id -> client id
        self._rounds: dict[str, _Round] = {}  # group -> its round in progress
        self._last_decision: float | None = None  # when the latest round decided (for the members' resume times)
        self._attempts: dict[str, _MemberAttempt] = {}

    # --- in ---------------------------------------------------------------------------------------------------

    def feed(self, event: Event) -> list[str]:
        name = str(event.get("event", ""))
        if name.startswith(CLASSIC_PREFIX) or name.startswith(CONSUMER_PREFIX):
            group = text(event.get("group"))
            if group is None:
                return []
            classic = name.startswith(CLASSIC_PREFIX)
            kind = name[len(CLASSIC_PREFIX if classic else CONSUMER_PREFIX):]
            self._learn_name(event)
            lines = (self._classic(kind, group, event) if classic else self._consumer(kind, group, event))
            return lines
        if name.startswith("rebalance.") or name == ev.SESSION_EXPIRED:
            return self._member(name, event)
        return []

    def member(self, member_id: object) -> str:
        """A member's name: its client id where its join said one, else its member id."""
        key = str(member_id)
        return self._names.get(key, key)

    # --- the classic protocol ---------------------------------------------------------------------------------

    def _classic(self, kind: str, group: str, event: Event) -> list[str]:
        at = _time(event)
        who = self.member(event.get("member_id"))
        head = f"  coordinator {group}:"
        if kind == "member_joined":
            return [f"{head} {who} sent JoinGroup (protocols "
                    f"{', '.join(str(p) for p in json_list(event.get('protocols'))) or '?'})",
                    *self._explain("classic_join")]
        if kind == "round_started":
            generation = integer(event.get("generation"))
            self._rounds[group] = _Round(group, at, None if generation is None else generation + 1)
            wait = (f"waits {fmt_ms(integer(event.get('initial_delay_ms')))} for more members first (an empty "
                    f"group's initial delay)" if "initial_delay_ms" in event
                    else "waits until every member has rejoined")
            target = f"generation {generation + 1}" if generation is not None else "a new generation"
            return [f"{head} ROUND to {target} begins ({event.get('reason', '?')}); it {wait}",
                    *self._explain("classic_round")]
        if kind == "initial_delay_extended":
            return [f"    {describe_coordinator_event(CLASSIC_PREFIX + kind, event, self.member)}: a member joined "
                    f"during the wait"]
        if kind == "member_rejoined":
            return [f"    {who} rejoined (JoinGroup)"]
        if kind == "round_completed":
            rnd = self._rounds.pop(group, None) or _Round(group, at)
            members = [self.member(m) for m in json_list(event.get("members"))]
            leader = self.member(event.get("leader"))
            self._rounds[group] = _Round(group, rnd.started, integer(event.get("generation")), at, leader,
                                         tuple(m for m in members if m != leader))
            self._last_decision = at
            return [f"{head} generation {event.get('generation', '?')}: members {', '.join(members) or 'none'}; "
                    f"leader {leader}; protocol {event.get('protocol', '?')}; the JoinGroup answers went out "
                    f"{fmt_ms((at - rnd.started) * 1000)} after the round began",
                    *self._explain("classic_leader")]
        if kind == "assignment_sent":
            done = self._rounds.pop(group, None)
            leader = self.member(event.get("leader"))
            waited = ""
            if done is not None and done.decided is not None:
                followers = ", ".join(done.followers)
                waited = (f"; {followers} waited {fmt_ms((at - done.decided) * 1000)} in SyncGroup for it"
                          if done.followers else "; no follower to wait")
            return [f"    SyncGroup: leader {leader} sent the assignment of generation "
                    f"{event.get('generation', '?')}{waited}", *self._explain("classic_sync")]
        if kind in ("member_left", "member_expired", "static_member_replaced"):
            return [f"{head} {describe_coordinator_event(CLASSIC_PREFIX + kind, event, self.member)}"]
        if kind == "state_changed" and event.get("to") == "Stable":
            return [f"    group Stable at generation {event.get('generation', '?')}"]
        return []

    # --- KIP-848 ----------------------------------------------------------------------------------------------

    def _consumer(self, kind: str, group: str, event: Event) -> list[str]:
        at = _time(event)
        who = self.member(event.get("member_id"))
        head = f"  coordinator {group}:"
        if kind == "member_joined":
            topics = ", ".join(str(t) for t in json_list(event.get("subscribed_topic_names"))) or "?"
            return [f"{head} {who} joined by heartbeat (member epoch 0, subscribes {topics})"]
        if kind == "upgraded":
            kept = ", ".join(self.member(m) for m in json_list(event.get("members"))) or "none"
            return [f"{head} ONLINE UPGRADE: the live classic group ({event.get('classic_state', '?')}) becomes a "
                    f"consumer group at generation {event.get('generation', '?')} as its epoch; its classic members "
                    f"stay, each with its assignment: {kept}", *self._explain("consumer_upgrade")]
        if kind == "epoch_bumped":
            epoch = integer(event.get("to"))
            self._rounds[group] = _Round(group, at, epoch)
            self._last_decision = at
            return [f"{head} GROUP EPOCH {event.get('from', '?')} -> {event.get('to', '?')} "
                    f"({event.get('reason', '?')})", *self._explain("consumer_epoch")]
        if kind == "target_assignment_computed":
            rnd = self._rounds.get(group)
            if rnd is not None:
                rnd.decided = at
            return [f"    {describe_coordinator_event(CONSUMER_PREFIX + kind, event, self.member)}"]
        if kind == "partitions_revoked":
            return [f"    {who} (member epoch {event.get('member_epoch', '?')}) must first revoke "
                    f"{fmt_partitions(partition_refs(event.get('partitions')))}",
                    *self._explain("consumer_revoke")]
        if kind == "partitions_assigned":
            return [f"    {who} is given {fmt_partitions(partition_refs(event.get('partitions')))} at member epoch "
                    f"{event.get('member_epoch', '?')}"]
        if kind == "member_epoch_advanced":
            return [f"    {who}: member epoch {event.get('from', '?')} -> {event.get('to', '?')}"
                    f" ({event.get('state', '?')})", *self._explain("consumer_epoch_member")]
        if kind == "state_changed" and event.get("to") == "Stable":
            rnd = self._rounds.pop(group, None)
            took = f", reconciled {fmt_ms((at - rnd.started) * 1000)} after the bump" if rnd is not None else ""
            return [f"    group Stable at group epoch {event.get('group_epoch', '?')}{took}"]
        if kind in ("member_left", "member_expired", "member_fenced", "static_member_replaced",
                    "heartbeat_rejected"):
            return [f"{head} {describe_coordinator_event(CONSUMER_PREFIX + kind, event, self.member)}"]
        return []

    # --- the members --------------------------------------------------------------------------------------------

    def _member(self, name: str, event: Event) -> list[str]:
        who = str(event.get("consumer_id", "?"))
        if name == ev.SESSION_EXPIRED:
            return [f"  {who}: LOST {fmt_partitions(partition_refs(event.get('dropped')))} (its session ended "
                    f"without it)"]
        if name == ev.REBALANCE_STARTED:
            self._attempts[who] = _MemberAttempt(_time(event))
            return []
        attempt = self._attempts.get(who)
        if attempt is None:
            return []
        if name != ev.REBALANCE_COMPLETED:
            attempt.steps.append(event)
            return []
        del self._attempts[who]
        return self._tell_member(who, attempt, event)

    def _tell_member(self, who: str, attempt: _MemberAttempt, end: Event) -> list[str]:
        eager = any(s.get("event") == ev.REBALANCE_STOP_FETCHERS for s in attempt.steps)
        revoked = [r for s in attempt.steps if s.get("event") == ev.REBALANCE_RELEASE
                   for r in _plain(s.get("released"))]
        given = [r for s in attempt.steps if s.get("event") == ev.REBALANCE_ASSIGN
                 for r in _plain(s.get("assignment"))]
        restart = next((s for s in attempt.steps if s.get("event") == ev.REBALANCE_START_FETCHERS), None)
        parts = []
        if eager:
            parts.append("gave up everything it fetched (eager)" + (f": {fmt_partitions(revoked)}" if revoked else ""))
        elif revoked:
            parts.append(f"revoked {fmt_partitions(revoked)}")
        if restart is not None:
            parts.append(f"given {fmt_partitions(given)}" if given else "given nothing")
        lines = [f"  {who}: " + ("; ".join(parts) or "nothing moved")]
        owned = _plain(end.get("owned"))
        resumed = f"    => owns {fmt_partitions(owned) if owned else 'nothing'}"
        if restart is not None and owned:
            at = _time(restart)
            if eager:
                resumed += f"; fetched nothing for {fmt_ms((at - attempt.started) * 1000)}"
            if self._last_decision is not None and at >= self._last_decision:
                resumed += f"; fetching again {fmt_ms((at - self._last_decision) * 1000)} after the coordinator's " \
                           f"decision"
        lines.append(resumed)
        lines += self._explain("eager_member" if eager else "cooperative_member")
        return lines

    def _learn_name(self, event: Event) -> None:
        member_id, client = text(event.get("member_id")), text(event.get("client_id"))
        if member_id is not None and client:
            self._names[member_id] = client
        new_id, old_id = text(event.get("new_member_id")), text(event.get("old_member_id"))
        if new_id is not None and old_id is not None:
            self._names[new_id] = self.member(old_id)

    def _explain(self, key: str) -> list[str]:
        if not self.explain or key in self._explained:
            return []
        self._explained.add(key)
        return [f"      ({MEANINGS[key]})"]


def _plain(partitions: object) -> list[PartitionRef]:
    """A modern member's partitions without the thread the legacy-shaped events give them (the member itself)."""
    return [replace(ref, thread=None) for ref in partition_refs(partitions)]


def is_round_start(event: Event) -> bool:
    """Whether the coordinator begins a round (classic) or a reconciliation (KIP-848) with this event: where step
    mode stops before telling what follows."""
    name = str(event.get("event", ""))
    return name in (CLASSIC_PREFIX + "round_started", CONSUMER_PREFIX + "epoch_bumped")


def _time(event: Event) -> float:
    return parse_time(str(event.get("timestamp", "")))


class InTimeOrder:
    """Events from two sources that arrive at different delays (a member's stdout at once, the coordinator's log at
    its next read) put back in the order they happened: :meth:`add` holds an event, :meth:`release` gives back, in
    timestamp order, every event held that happened up to ``watermark`` (seconds since the epoch: the time up to
    which every source has been read). Pure; the caller serialises the calls."""

    def __init__(self) -> None:
        self._held: list[tuple[float, int, Event]] = []
        self._count = 0

    def add(self, event: Event) -> None:
        self._count += 1
        self._held.append((_time(event), self._count, event))

    def release(self, watermark: float) -> list[Event]:
        ready = sorted(item for item in self._held if item[0] <= watermark)
        self._held = [item for item in self._held if item[0] > watermark]
        return [event for _, _, event in ready]
