"""The group coordinator's lane of the timeline: what the front's coordinator (:mod:`zkconsumer.front`) did to a
group, drawn beside its members' lanes. One lane per group, from the coordinator's ``front.group.*`` (classic) and
``front.consumer_group.*`` (KIP-848) events (:mod:`zkconsumer.trace.vocabulary` lists them):

* the group's state over time (Empty, PreparingRebalance, CompletingRebalance, Stable; KIP-848's Assigning and
  Reconciling; Dead once deleted), as stretches;
* its rounds: classic, from ``round_started`` to ``round_completed`` with the generation it made and its members;
  KIP-848, from a group epoch bump until the group is Stable again at that epoch or later (a state change, or, when
  the group never left Stable, its last member's epoch reaching it);
* marks for members joining, leaving, expiring, fenced, and assignments sent (or computed).

A member appears under its ``client_id`` where its ``member_joined`` said one (a modern member of this project sets
``client.id`` to its consumer id, so the names match the members' lanes), else under its member id; when several
member ids share a client id (a client's default, ``rdkafka``, or one consumer joining again under a new id), each
is shown as ``client#`` and the end of its member id, so that no two members look alike. A static member's new
instance (``static_member_replaced``) keeps the name of the one it replaced: it is the same member to the group.

Pure and independent of the members' timeline (:mod:`zkconsumer.trace.timeline` feeds it its events, in timestamp
order, with their times on the shared axis). Like that one, it trusts no field's type: a field of the wrong type
counts as missing, and an event whose ``group`` is not a string is not given to it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from zkconsumer.trace.values import integer, json_list, text
from zkconsumer.trace.vocabulary import (
    CLASSIC_PREFIX,
    CONSUMER_PREFIX,
    COORDINATOR_MARK_EVENTS,
    coordinator_protocol,
    state_key,
    state_name,
)

# How a round ends (``CoordinatorRound.ended_by``), as the end of a sentence.
ROUND_ENDS: dict[str, str] = {
    "completed": "completed",
    "superseded": "gave way to a newer round",
    "emptied": "ended when the group emptied",
    "deleted": "ended when the group was deleted",
    "trace_end": "unfinished at the end of the trace",
}


@dataclass(frozen=True, slots=True)
class GroupStateStretch:
    """The group in ``state`` (Kafka's spelling where known) from ``start`` to ``end``; ``epoch`` is the generation
    (classic) or the group epoch (KIP-848) the state change named, if it did."""

    state: str
    start: float
    end: float
    epoch: int | None


@dataclass(frozen=True, slots=True)
class CoordinatorRound:
    """One round of the group. ``epoch``: the generation (classic) or group epoch (KIP-848) the round makes, or
    ``None`` when an unfinished classic round never said (its ``round_started`` names the generation ending, so the
    one it would have made is ``previous + 1``). ``members``: the members' names at its completion (classic: the
    round's; KIP-848: the group's), or at its start when it did not complete. The rest is what its events said, for
    the tooltip: why it started, the protocol the members' vote chose and the leader (classic), how long it may wait
    (the initial delay or the rebalance timeout), how often the initial delay was extended and the round postponed."""

    protocol: str
    start: float
    end: float
    epoch: int | None
    previous: int | None
    members: tuple[str, ...]
    ended_by: str
    reason: str | None = None
    leader: str | None = None
    chosen_protocol: str | None = None
    delay_ms: int | None = None
    extensions: int = 0
    postponed: int = 0

    @property
    def completed(self) -> bool:
        return self.ended_by == "completed"


@dataclass(frozen=True, slots=True)
class CoordinatorMark:
    """Something the coordinator did to a member: ``kind`` is one of the vocabulary's ``COORDINATOR_MARK_KINDS``;
    ``member`` the member's name (``None`` for an assignment, which is the group's); ``name`` and ``fields`` the
    event's, for the words."""

    kind: str
    time: float
    member: str | None
    name: str
    fields: Mapping[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class CoordinatorLane:
    """One group as its coordinator saw it, from its first event to the end of the trace. ``protocol``: ``classic``,
    ``consumer`` (KIP-848), or ``classic+consumer`` when both protocols' events name the group. ``names`` maps a
    member id to the name it is shown under."""

    group: str
    protocol: str
    start: float
    end: float
    states: tuple[GroupStateStretch, ...]
    rounds: tuple[CoordinatorRound, ...]
    marks: tuple[CoordinatorMark, ...]
    events: int
    names: Mapping[str, str] = field(repr=False, compare=False)

    def member_name(self, member_id: object) -> str:
        return _member_name(self.names, member_id)


def _member_name(names: Mapping[str, str], member_id: object) -> str:
    if not isinstance(member_id, str):
        return "?"
    return names.get(member_id, member_id) or "?"


def _epoch(protocol: str, kind: str, fields: Mapping[str, Any]) -> int | None:
    """The generation a classic event names, the group epoch a KIP-848 one does (``epoch_bumped``: the new one in
    ``to``; ``target_assignment_computed``: the one it was computed for, in ``epoch``)."""
    if protocol == "classic":
        return integer(fields.get("generation"))
    key = {"epoch_bumped": "to", "target_assignment_computed": "epoch"}.get(kind, "group_epoch")
    return integer(fields.get(key))


def _member_ids(value: object) -> list[str]:
    """``members`` as the events list them: ids, or objects with a ``member_id``."""
    ids = []
    for item in json_list(value):
        member = item.get("member_id") if isinstance(item, dict) else item
        if isinstance(member, str) and member:
            ids.append(member)
    return ids


class _OpenRound:
    def __init__(self, protocol: str, start: float, previous: int | None, epoch: int | None, reason: str | None,
                 members: tuple[str, ...], delay_ms: int | None) -> None:
        self.protocol, self.start, self.previous, self.epoch = protocol, start, previous, epoch
        self.reason, self.members, self.delay_ms = reason, members, delay_ms
        self.extensions = self.postponed = 0
        self.leader: str | None = None
        self.chosen_protocol: str | None = None

    def close(self, end: float, ended_by: str) -> CoordinatorRound:
        return CoordinatorRound(self.protocol, self.start, max(end, self.start), self.epoch, self.previous,
                                self.members, ended_by, self.reason, self.leader, self.chosen_protocol, self.delay_ms,
                                self.extensions, self.postponed)


class _LaneBuilder:
    def __init__(self, group: str, start: float) -> None:
        self.group = group
        self.start = start
        self.protocols: set[str] = set()
        self.names: dict[str, str] = {}  # member id -> client id
        self.successors: dict[str, str] = {}  # a static member's new member id -> the one it replaced
        self.members: dict[str, None] = {}  # the group's members, in join order
        self.member_epochs: dict[str, int] = {}  # KIP-848: each member's epoch
        self.state: tuple[str, float, int | None] | None = None  # the current state, since when, its epoch
        self.states: list[GroupStateStretch] = []
        self.round: _OpenRound | None = None
        self.rounds: list[CoordinatorRound] = []
        self.marks: list[CoordinatorMark] = []
        self.events = 0

    def member_ids(self) -> tuple[str, ...]:
        """The group's members now, in join order (names are given at the end, once every client id is known)."""
        return tuple(self.members)

    def enter(self, state: str, time: float, epoch: int | None) -> None:
        if self.state is not None:
            current, since, current_epoch = self.state
            self.states.append(GroupStateStretch(current, since, time, current_epoch))
        self.state = (state_name(state), time, epoch)

    def remove(self, member_id: str) -> None:
        self.members.pop(member_id, None)
        self.member_epochs.pop(member_id, None)

    def end_round(self, time: float, ended_by: str) -> None:
        if self.round is not None:
            self.rounds.append(self.round.close(time, ended_by))
            self.round = None

    def finish(self, end: float) -> CoordinatorLane:
        self.enter("", end, None)  # closes the current stretch
        self.end_round(end, "trace_end")
        protocol = "+".join(sorted(self.protocols))
        names = _display_names(self.names, self.successors)

        def name(member_id: str | None) -> str | None:
            return _member_name(names, member_id) if member_id is not None else None

        rounds = tuple(replace(r, members=tuple(_member_name(names, m) for m in r.members), leader=name(r.leader))
                       for r in self.rounds)
        marks = tuple(replace(m, member=name(m.member)) for m in self.marks)
        return CoordinatorLane(self.group, protocol, self.start, end, tuple(self.states), rounds, marks, self.events,
                               names)


def _display_names(clients: Mapping[str, str], successors: Mapping[str, str]) -> dict[str, str]:
    """Member id -> the name it is shown under: its client id, made unique with the end of its member id where
    several members share it (a static member's instances are one member, named after the first)."""

    def first(member_id: str) -> str:
        seen = {member_id}
        while member_id in successors and successors[member_id] not in seen:
            member_id = successors[member_id]
            seen.add(member_id)
        return member_id

    shared = Counter(client for _, client in {(first(m), c) for m, c in clients.items()})
    return {member_id: client if shared[client] == 1 else f"{client}#{first(member_id)[-4:]}"
            for member_id, client in clients.items()}


class CoordinatorLanes:
    """Builds the coordinator lanes: :meth:`feed` each coordinator event in timestamp order, then :meth:`finish`."""

    def __init__(self) -> None:
        self._lanes: dict[str, _LaneBuilder] = {}

    def feed(self, name: str, time: float, fields: Mapping[str, Any]) -> None:
        group = text(fields.get("group"))
        protocol = coordinator_protocol(name)
        if group is None or protocol is None:
            return
        lane = self._lanes.get(group)
        if lane is None:
            lane = self._lanes[group] = _LaneBuilder(group, time)
        lane.protocols.add(protocol)
        lane.events += 1
        kind = name[len(CLASSIC_PREFIX if protocol == "classic" else CONSUMER_PREFIX):]
        member_id = text(fields.get("member_id"))
        if kind == "member_joined" and member_id is not None:
            client = text(fields.get("client_id"))
            if client is not None:
                lane.names[member_id] = client
        _apply(lane, protocol, kind, time, fields)
        mark = COORDINATOR_MARK_EVENTS.get(name)
        if mark is not None:
            who = text(fields.get("old_member_id")) if kind == "static_member_replaced" else member_id
            lane.marks.append(CoordinatorMark(mark, time, who, name, fields))

    def finish(self, end: float) -> tuple[CoordinatorLane, ...]:
        return tuple(lane.finish(max(end, lane.start)) for lane in self._lanes.values())


def _apply(lane: _LaneBuilder, protocol: str, kind: str, time: float, fields: Mapping[str, Any]) -> None:
    """What one event changes of its lane: the state, the open round, the members."""
    member_id = text(fields.get("member_id"))
    epoch = _epoch(protocol, kind, fields)
    if kind == "created" and lane.state is None:
        lane.enter("Empty", time, None)
    elif kind == "state_changed":
        to, before = text(fields.get("to")), text(fields.get("from"))
        if lane.state is None and before is not None:  # the trace begins in the middle of the group's life
            lane.enter(before, lane.start, None)
        if to is not None:
            lane.enter(to, time, epoch)
            key = state_key(to)
            if key in ("empty", "dead"):
                lane.end_round(time, "emptied" if key == "empty" else "deleted")
            elif key == "stable" and protocol == "consumer" and lane.round is not None and (
                    lane.round.epoch is None or epoch is None or epoch >= lane.round.epoch):
                _complete_consumer_round(lane, time)
    elif kind == "deleted":
        lane.end_round(time, "deleted")
        lane.enter("Dead", time, None)
    elif kind in ("member_joined", "member_rejoined") and member_id is not None:
        lane.members.setdefault(member_id, None)
        if protocol == "consumer" and kind == "member_joined":
            lane.member_epochs[member_id] = 0  # a KIP-848 member joins at epoch 0
    elif kind == "static_member_replaced":
        old, new = text(fields.get("old_member_id")), text(fields.get("new_member_id"))
        if old is not None:
            lane.remove(old)
            if new is not None and new != old:
                lane.successors[new] = old
                if old in lane.names:
                    lane.names.setdefault(new, lane.names[old])
        if new is not None:
            lane.members.setdefault(new, None)
    elif kind in ("member_left", "member_expired", "member_fenced") and member_id is not None:
        if fields.get("temporary") is not True:  # a KIP-848 static member's -2 stays in the group
            lane.remove(member_id)
    elif kind == "member_epoch_advanced" and member_id is not None:
        advanced = integer(fields.get("to"))
        if advanced is not None:
            lane.member_epochs[member_id] = advanced
            _maybe_reconciled(lane, time)
    elif kind == "round_started":
        lane.end_round(time, "superseded")
        delay = integer(fields.get("initial_delay_ms"))
        lane.round = _OpenRound(protocol, time, epoch, None, text(fields.get("reason")), lane.member_ids(),
                                delay if delay is not None else integer(fields.get("rebalance_timeout_ms")))
    elif kind == "epoch_bumped":
        lane.end_round(time, "superseded")
        lane.round = _OpenRound(protocol, time, integer(fields.get("from")), epoch, text(fields.get("reason")),
                                lane.member_ids(), None)
    elif lane.round is not None:
        _apply_to_round(lane, lane.round, kind, time, fields)


def _complete_consumer_round(lane: _LaneBuilder, time: float) -> None:
    if lane.round is not None:
        lane.round.members = lane.member_ids()
        lane.end_round(time, "completed")


def _maybe_reconciled(lane: _LaneBuilder, time: float) -> None:
    """A KIP-848 round in a group that stayed Stable (no state change tells its end): complete once every member's
    epoch has reached the round's."""
    rnd = lane.round
    if (rnd is None or rnd.protocol != "consumer" or rnd.epoch is None or lane.state is None
            or state_key(lane.state[0]) != "stable" or not lane.members):
        return
    if all(lane.member_epochs.get(member, -1) >= rnd.epoch for member in lane.members):
        _complete_consumer_round(lane, time)


def _apply_to_round(lane: _LaneBuilder, rnd: _OpenRound, kind: str, time: float, fields: Mapping[str, Any]) -> None:
    if kind == "initial_delay_extended":
        rnd.extensions += 1
    elif kind == "round_postponed":
        rnd.postponed += 1
    elif kind == "round_completed":
        rnd.epoch = integer(fields.get("generation"))
        rnd.members = tuple(_member_ids(fields.get("members")))
        rnd.chosen_protocol = text(fields.get("protocol"))
        leader = text(fields.get("leader"))
        rnd.leader = leader
        lane.end_round(time, "completed")
    elif kind == "target_assignment_computed":
        ids = _member_ids(fields.get("members"))
        if ids:
            rnd.members = tuple(ids)
