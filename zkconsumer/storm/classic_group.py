"""A classic group (:class:`ClassicGroup`): classic-protocol members (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
simulated against the front's own classic group coordinator
(:class:`zkconsumer.front.groups.classic_group.ClassicGroupCoordinator`), so every round, timeout and answer is the
real code's; the members and the network are the simulation's.

The coordinator sits behind a :class:`~zkconsumer.storm.request_queue.RequestQueue` (the front's event loop serves
one request at a time) and its timers are ticked at their deadlines, as the front's edge does. A member, as
librdkafka's consumer: joins (twice: KIP-394's MEMBER_ID_REQUIRED), the leader runs the client-side assignor (the
real :mod:`zkconsumer.assignors` ``range`` or ``cooperative-sticky``) over the members the JoinGroup answer lists and
sends it in its SyncGroup, everyone heartbeats every ``heartbeat.interval.ms`` and rejoins on REBALANCE_IN_PROGRESS.
Eager (``range``): a member gives up every partition before it rejoins. Cooperative: it keeps consuming through the
round, gives up what the new assignment leaves out, and rejoins at once when it gave something up (the second round
hands that over). Assignments travel as the partitions' numbers packed in the SyncGroup's bytes.
"""

from __future__ import annotations

import functools
import itertools
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.assignors import registry
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.front.groups import classic_group_messages as m
from zkconsumer.front.groups.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.modern_group import GROUP, TOPIC, ModernGroup
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.types import TopicPartition

E = m.ErrorCode


def pack(partitions: list[int]) -> bytes:
    return array("i", partitions).tobytes()


def unpack(data: bytes) -> list[int]:
    numbers = array("i")
    numbers.frombytes(data)
    return numbers.tolist()


@dataclass
class _ClassicMember:
    name: str
    alive: bool = False
    incarnation: int = 0
    member_id: str = ""
    generation: int = -1
    owned: list[int] = field(default_factory=list)  # consuming
    busy: bool = False


class ClassicGroup(ModernGroup):
    """One group of members of one strategy (``range``: eager; ``cooperative-sticky``) on one topic."""

    def __init__(self, loop: EventLoop, parameters: StormParameters, partitions: int, strategy: str = "range",
                 config: ClassicGroupConfig | None = None) -> None:
        super().__init__(loop, parameters, partitions)
        self.strategy_name = strategy
        self.strategy = registry.create(strategy)
        self.cooperative = strategy == "cooperative-sticky"
        uuids = itertools.count(1)
        self.coordinator = ClassicGroupCoordinator(config or ClassicGroupConfig(), new_uuid=lambda: f"u{next(uuids)}")
        self.members: dict[str, _ClassicMember] = {}
        self._ids = itertools.count(1)
        # request id -> the member, its incarnation, what it does with the answer
        self._waiting: dict[int, tuple[_ClassicMember, int, Callable[[Any], None] | None]] = {}

    # --- the scenario's actions ------------------------------------------------------------------------------------

    def start(self, name: str) -> None:
        member = self.members.setdefault(name, _ClassicMember(name))
        member.alive = True
        member.member_id, member.generation, member.owned = "", -1, []
        self._busy(member, True)
        self._join(member)

    def stop(self, name: str) -> None:
        member = self.members[name]
        leaving = member.member_id
        self._die(member)
        self._send(member, m.LeaveGroup(next(self._ids), GROUP, (m.LeavingMember(leaving),)), None)

    def grow(self, partitions: int) -> None:
        """The leader sees the new partitions at its next metadata refresh and rejoins."""
        self.measures.change_partitions(partitions)
        leader = self.coordinator.leader_of(GROUP) if GROUP in self.coordinator.group_ids() else None
        for member in self.members.values():
            if member.alive and member.member_id == leader:
                self._after(member, self.p.metadata_refresh_ms, functools.partial(self._rejoin, member))

    def settled(self) -> bool:
        return self.measures.settled and self.coordinator.state_of(GROUP) is m.GroupState.STABLE

    # --- the front's side ------------------------------------------------------------------------------------------

    def _send(self, member: _ClassicMember, request: m.Request, on: Callable[[Any], None] | None) -> None:
        """``on(response)`` runs at the member once its answer arrives, unless the member died meanwhile."""
        request_id = request.request_id
        self._waiting[request_id] = (member, member.incarnation, on)
        self.front.request(self.p.coordinator_request_ms,
                           lambda: self._deliver(self.coordinator.handle(request, int(self.loop.now_ms))),
                           lambda *_: None)

    def _deliver(self, step: m.Step) -> None:
        for effect in step.effects:
            member, incarnation, on = self._waiting.pop(effect.request_id)
            if isinstance(effect, m.Respond) and on is not None:
                self._answer_later(member, incarnation, on, effect.response)
        self._arm()

    def _answer_later(self, member: _ClassicMember, incarnation: int, on: Callable[[Any], None],
                      response: m.Response) -> None:
        def answered() -> None:
            if member.incarnation == incarnation:
                on(response)

        self.loop.after(self.front.half_rtt_ms, answered)

    def _next_deadline(self) -> int | None:
        return self.coordinator.next_deadline_ms()

    def _tick_coordinator(self) -> None:
        self._deliver(self.coordinator.tick(int(self.loop.now_ms)))

    # --- the member's side -----------------------------------------------------------------------------------------

    def _die(self, member: _ClassicMember) -> None:
        member.incarnation += 1
        member.alive = False
        self._busy(member, False)
        self._give_up(member, member.owned)

    def _give_up(self, member: _ClassicMember, partitions: list[int]) -> None:
        if partitions:
            gone = set(partitions)
            member.owned = [q for q in member.owned if q not in gone]
            self.measures.change_consuming(-len(partitions))

    def _after(self, member: _ClassicMember, delay_ms: float, then: Callable[[], None]) -> None:
        incarnation = member.incarnation

        def due() -> None:
            if member.incarnation == incarnation:
                then()

        self.loop.after(delay_ms, due)

    def _rejoin(self, member: _ClassicMember) -> None:
        self._busy(member, True)
        if self.cooperative:
            self._join(member)
            return
        owned = len(member.owned)
        self._give_up(member, member.owned)
        self._after(member, self.p.modern_per_partition_ms * owned, lambda: self._join(member))

    def _join(self, member: _ClassicMember) -> None:
        metadata = pack(member.owned) if self.cooperative else b""
        request = m.JoinGroup(next(self._ids), GROUP, member.member_id, "consumer",
                              (m.Protocol(self.strategy_name, metadata),), self.p.session_timeout_ms,
                              self.p.rebalance_timeout_ms, 5, client_id=member.name, client_host="/sim")
        self._send(member, request, lambda response: self._joined(member, response))

    def _joined(self, member: _ClassicMember, response: m.JoinGroupResponse) -> None:
        if response.error_code is E.member_id_required:
            member.member_id = response.member_id
            self._join(member)
            return
        if response.error_code is not E.none:
            self._lost(member, response.error_code)
            return
        member.generation = response.generation_id
        assignments: tuple[tuple[str, bytes], ...] = ()
        delay = 0.0
        if response.leader == member.member_id:
            assignments = self._assign(response.members, member.generation)
            delay = self.p.client_assign_per_partition_ms * self.measures.partitions
        sync = m.SyncGroup(next(self._ids), GROUP, member.generation, member.member_id, None, "consumer",
                           self.strategy_name, assignments)
        self._after(member, delay, lambda: self._send(member, sync, lambda r: self._synced(member, r)))

    def _assign(self, members: tuple[m.JoinGroupMember, ...], generation: int) -> tuple[tuple[str, bytes], ...]:
        request = AssignmentInput(
            partitions={TOPIC: self.measures.partitions},
            members=tuple(Member(j.member_id, topics=(TOPIC,), generation=generation - 1,
                                 owned=tuple(TopicPartition(TOPIC, q) for q in unpack(j.metadata)))
                          for j in members))
        result = self.strategy.assign(request).by_member(request.members)
        return tuple((member_id, pack([tp.partition for tp in tps])) for member_id, tps in result.items())

    def _synced(self, member: _ClassicMember, response: m.SyncGroupResponse) -> None:
        if response.error_code is not E.none:
            self._lost(member, response.error_code)
            return
        assigned = unpack(response.assignment)
        mine = set(assigned)
        revoked = [q for q in member.owned if q not in mine]
        held = set(member.owned)
        added = [q for q in assigned if q not in held]
        self._give_up(member, revoked)
        cost = self.p.modern_per_partition_ms * (len(revoked) + len(added))

        def consuming() -> None:
            member.owned.extend(added)
            self.measures.change_consuming(len(added))
            self.measures.rebalances += 1
            if revoked and self.cooperative:
                self._join(member)  # the follow-up round hands over what was given up
                return
            self._busy(member, False)
            self._after(member, self.p.heartbeat_interval_ms, lambda: self._heartbeat(member))

        self._after(member, cost, consuming)

    def _heartbeat(self, member: _ClassicMember) -> None:
        if member.busy:
            return
        request = m.Heartbeat(next(self._ids), GROUP, member.generation, member.member_id)

        def answered(response: m.HeartbeatResponse) -> None:
            if response.error_code is E.none:
                self._after(member, self.p.heartbeat_interval_ms, lambda: self._heartbeat(member))
            elif response.error_code is E.rebalance_in_progress:
                self._rejoin(member)
            else:
                self._lost(member, response.error_code)

        self._send(member, request, answered)

    def _lost(self, member: _ClassicMember, error: E) -> None:
        """REBALANCE_IN_PROGRESS rejoins; anything else (an unknown member, an old generation) loses the member's
        partitions first, and its id too when the coordinator no longer knows it."""
        if error is not E.rebalance_in_progress:
            self._give_up(member, member.owned)
        if error is E.unknown_member_id:
            member.member_id = ""
        self._busy(member, True)
        self._join(member)
