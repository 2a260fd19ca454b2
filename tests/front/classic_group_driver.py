"""A test driver for the classic group coordinator: numbers requests, keeps the clock, records every answer and checks
that no request is answered twice, as the front's edge would."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field

from zkconsumer.front.groups import classic_group_messages as m
from zkconsumer.front.groups.classic_group import ClassicGroupConfig, ClassicGroupCoordinator

GROUP = "g"
SESSION_MS = 45_000
REBALANCE_MS = 300_000
RANGE = (m.Protocol("range", b"range-meta"),)


@dataclass
class Driver:
    config: ClassicGroupConfig = field(default_factory=ClassicGroupConfig)
    now: int = 0

    def __post_init__(self) -> None:
        uuids = itertools.count(1)
        self.coordinator = ClassicGroupCoordinator(self.config, new_uuid=lambda: f"u{next(uuids)}")
        self._ids = itertools.count(1)
        self.answers: dict[int, m.Response] = {}
        self.answered_at: dict[int, int] = {}
        self.dropped: set[int] = set()
        self.issued: set[int] = set()
        self.events: list[m.GroupEvent] = []

    # --- plumbing -------------------------------------------------------------------------------------------------

    def record(self, step: m.Step) -> None:
        for effect in step.effects:
            assert effect.request_id in self.issued, f"answer to a request never sent: {effect}"
            assert effect.request_id not in self.answers and effect.request_id not in self.dropped, (
                f"request {effect.request_id} answered twice")
            if isinstance(effect, m.Respond):
                self.answers[effect.request_id] = effect.response
                self.answered_at[effect.request_id] = self.now
            else:
                assert isinstance(effect, m.Drop)
                self.dropped.add(effect.request_id)
        self.events.extend(step.events)

    def send(self, request: m.Request) -> int:
        self.issued.add(request.request_id)
        self.record(self.coordinator.handle(request, self.now))
        return request.request_id

    def next_id(self) -> int:
        return next(self._ids)

    def advance_to(self, t: int) -> None:
        """Move the clock to ``t``, ticking at every deadline on the way as the edge's timer would."""
        while (deadline := self.coordinator.next_deadline_ms()) is not None and deadline <= t:
            self.now = max(self.now, deadline)
            self.record(self.coordinator.tick(self.now))
        self.now = max(self.now, t)
        self.record(self.coordinator.tick(self.now))

    def advance_until(self, done: Callable[[], bool], limit_ms: int = 3_600_000) -> None:
        """Tick from deadline to deadline until ``done()``; fails if the clock would pass ``limit_ms`` from now."""
        end = self.now + limit_ms
        while not done():
            deadline = self.coordinator.next_deadline_ms()
            assert deadline is not None and deadline <= end, "nothing left to wait for"
            self.advance_to(deadline)

    def advance(self, ms: int) -> None:
        self.advance_to(self.now + ms)

    def answer(self, request_id: int) -> m.Response | None:
        return self.answers.get(request_id)

    def join_answer(self, request_id: int) -> m.JoinGroupResponse:
        response = self.answers[request_id]
        assert isinstance(response, m.JoinGroupResponse)
        return response

    def sync_answer(self, request_id: int) -> m.SyncGroupResponse:
        response = self.answers[request_id]
        assert isinstance(response, m.SyncGroupResponse)
        return response

    def event_names(self) -> list[str]:
        return [e.name for e in self.events]

    def events_named(self, name: str) -> list[m.GroupEvent]:
        return [e for e in self.events if e.name == name]

    # --- requests -------------------------------------------------------------------------------------------------

    def join(self, member_id: str = "", *, group: str = GROUP, instance: str | None = None,
             protocols: tuple[m.Protocol, ...] = RANGE, session_ms: int = SESSION_MS,
             rebalance_ms: int = REBALANCE_MS, version: int = 5, client: str = "c",
             protocol_type: str = "consumer") -> int:
        return self.send(m.JoinGroup(
            self.next_id(), group, member_id, protocol_type, protocols, session_ms, rebalance_ms, version,
            group_instance_id=instance, client_id=client, client_host="/127.0.0.1"))

    def join_new(self, **kwargs: object) -> tuple[str, int]:
        """A dynamic member's two JoinGroups (KIP-394): its id, and the second m.JoinGroup's request id."""
        first = self.join(**kwargs)  # type: ignore[arg-type]
        response = self.join_answer(first)
        assert response.error_code is m.ErrorCode.member_id_required
        return response.member_id, self.join(response.member_id, **kwargs)  # type: ignore[arg-type]

    def sync(self, member_id: str, generation: int, assignments: dict[str, bytes] | None = None, *,
             group: str = GROUP, instance: str | None = None, protocol_type: str | None = None,
             protocol_name: str | None = None) -> int:
        return self.send(m.SyncGroup(
            self.next_id(), group, generation, member_id, instance, protocol_type, protocol_name,
            tuple((assignments or {}).items())))

    def heartbeat(self, member_id: str, generation: int, *, group: str = GROUP,
                  instance: str | None = None) -> m.ErrorCode:
        rid = self.send(m.Heartbeat(self.next_id(), group, generation, member_id, instance))
        response = self.answers[rid]
        return response.error_code  # type: ignore[union-attr]

    def leave(self, *members: m.LeavingMember, group: str = GROUP) -> int:
        return self.send(m.LeaveGroup(self.next_id(), group, members))

    def commit(self, member_id: str, generation: int, *, group: str = GROUP, instance: str | None = None,
               version: int = 8, transactional: bool = False) -> m.ErrorCode:
        rid = self.send(m.OffsetCommit(self.next_id(), group, generation, member_id, instance, api_version=version,
                                       transactional=transactional))
        return self.answers[rid].error_code  # type: ignore[union-attr]

    def describe(self, *group_ids: str) -> int:
        return self.send(m.DescribeGroups(self.next_id(), group_ids))

    def list_groups(self, states: tuple[str, ...] = (), types: tuple[str, ...] = ()) -> int:
        return self.send(m.ListGroups(self.next_id(), states, types))

    def delete(self, *group_ids: str) -> int:
        return self.send(m.DeleteGroups(self.next_id(), group_ids))

    # --- whole scenes ---------------------------------------------------------------------------------------------

    def stable_group(self, n: int, **kwargs: object) -> list[str]:
        """``n`` dynamic members join an empty group together, the first round completes after the initial delay, and
        the leader's assignment reaches everyone: the group is Stable at generation 1. Returns ids in join order."""
        joined = [self.join_new(client=f"c{i}", **kwargs) for i in range(n)]
        self.advance_until(lambda: all(rid in self.answers for _, rid in joined))
        self.finish_round(joined)
        return [member_id for member_id, _ in joined]

    def finish_round(self, joined: list[tuple[str, int]], group: str = GROUP) -> int:
        """Every member of a completed round syncs, the leader first; returns the generation."""
        answers = {member_id: self.join_answer(rid) for member_id, rid in joined}
        assert all(a.error_code is m.ErrorCode.none for a in answers.values()), answers
        generation = next(iter(answers.values())).generation_id
        leader = next(a.leader for a in answers.values())
        listed = [m.member_id for m in answers[leader].members]
        assignments = {m: f"assignment-of-{m}".encode() for m in listed}
        syncs = {leader: self.sync(leader, generation, assignments, group=group)}
        for member_id in answers:
            if member_id != leader:
                syncs[member_id] = self.sync(member_id, generation, group=group)
        for member_id, rid in syncs.items():
            assert self.sync_answer(rid).error_code is m.ErrorCode.none
            assert self.sync_answer(rid).assignment == assignments[member_id]
        return generation
