"""The classic group coordinator (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, and the group checks of OffsetCommit,
DescribeGroups, ListGroups, DeleteGroups) as a pure state machine that behaves as Kafka 3.x/4.x's does
(``group-coordinator``: ``GroupMetadataManager``'s classic paths, ``ClassicGroup``, ``ClassicGroupMember``).

Pure: no sockets, threads, asyncio or clock. Time comes in with every input as ``now_ms``, and the coordinator's
timers (Kafka's ``CoordinatorTimer`` keys) fire when an input's ``now_ms`` passes their deadline; each fires at its own
deadline, in deadline order, so the outcome does not depend on how often the edge ticks. One mutable object holds every
group: the edge owns one instance and drives it from one thread or event loop, and every input returns a :class:`Step`
(effects and events) instead of calling back. A mutable object rather than functions over immutable state because a
round touches many members at once and nothing ever needs an old state back; what matters, that the same inputs give
the same outputs, holds either way (member ids come from an injectable ``new_uuid``).

The behaviour, as Kafka's:

- States Empty, PreparingRebalance, CompletingRebalance, Stable, Dead, moving only along Kafka's valid transitions.
- An empty group's first round waits ``group.initial.rebalance.delay.ms`` (3000), extended by up to that delay again
  each time a member joined during the last wait, never past the group's rebalance timeout (``InitialDelayedJoin``).
  Any other round completes as soon as every member has rejoined and no MEMBER_ID_REQUIRED member is still due, or at
  the rebalance timeout (the largest of the members'), removing the dynamic members that did not rejoin.
- JoinGroup v4+ from an unknown dynamic member: a member id is generated and answered with MEMBER_ID_REQUIRED; the
  member is pending until it rejoins with that id, or for its session timeout.
- Static members (``group.instance.id``): an unknown-member-id join with a known instance id takes over that member
  (the old id's waiting requests get FENCED_INSTANCE_ID, and so does anything it sends later); in Stable it causes no
  rebalance unless the group's chosen protocol would change; static members that did not rejoin stay in the round.
- The leader is the first member to join; when it leaves, the next in join order (Kafka takes the next in its hash
  map's order, which depends on random member ids, so no client can rely on either). The leader's SyncGroup carries
  the assignment and answers every follower's waiting SyncGroup.
- Session timeouts: a heartbeat (or an offset commit in Stable or PreparingRebalance) restarts the member's session;
  a member waiting for its JoinGroup or SyncGroup answer counts as alive, except a new member in its first round,
  which must complete it within Kafka's fixed 5 minutes (``new_member_join_timeout_ms``). A member whose session
  expires is removed and, in CompletingRebalance or Stable, a rebalance starts.
- After a round, every member must send SyncGroup within the rebalance timeout; those that did not are removed and
  a rebalance starts (Kafka's pending-sync expiration).
- The protocol is chosen by vote: candidates are the protocols every member supports; each member votes for its first
  listed candidate; most votes win, ties going to the first in the iteration order of Kafka's ``HashMap`` of votes
  (Java's string hash of the protocol names).
- ``group.max.size`` (default unlimited) as Kafka counts it: in PreparingRebalance by members already waiting.

Events: :class:`GroupEvent` (``name``, ``fields``, and ``group_id`` and ``at_ms`` on every one); the
``front.group.*`` events are declared once in :mod:`zkconsumer.events.front` and listed on the events page
(``docs/events.md``).

It is driven through the group coordinator's facade (:mod:`.coordinator`), which routes each request to it or
to the other machine; how the edge drives the facade: ``docs/front.md``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum

from zkconsumer.assignors.java_hash import java_hashmap_order
from zkconsumer.events import catalogue as ev
from zkconsumer.front.groups.classic_group_messages import (
    CLASSIC_GROUP_TYPE,
    VALID_PREVIOUS_STATES,
    DeleteGroups,
    DeleteGroupsResponse,
    DescribedGroup,
    DescribedMember,
    DescribeGroups,
    DescribeGroupsResponse,
    Drop,
    Effect,
    ErrorCode,
    GroupEvent,
    GroupState,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupMember,
    JoinGroupResponse,
    LeaveGroup,
    LeaveGroupResponse,
    LeaveMemberResponse,
    ListedGroup,
    ListGroups,
    ListGroupsResponse,
    OffsetCommit,
    OffsetCommitVerdict,
    Protocol,
    Request,
    Respond,
    Response,
    Step,
    SyncGroup,
    SyncGroupResponse,
)
from zkconsumer.front.groups.coordinator_clock import CoordinatorClock
from zkconsumer.front.groups.deadline_timers import Due
from zkconsumer.front.groups.group_records import ClassicGroupRecord, ClassicMemberRecord

EMPTY = GroupState.EMPTY
PREPARING = GroupState.PREPARING_REBALANCE
COMPLETING = GroupState.COMPLETING_REBALANCE
STABLE = GroupState.STABLE
DEAD = GroupState.DEAD

#: JoinGroup versions from which an unknown dynamic member must first get its id (KIP-394)
REQUIRE_KNOWN_MEMBER_ID_VERSION = 4
#: JoinGroup versions from which a static leader rejoining a stable group is told to skip the assignment (KIP-814)
SKIP_ASSIGNMENT_VERSION = 9
#: OffsetCommit versions that answer GROUP_ID_NOT_FOUND (not ILLEGAL_GENERATION) for a group that does not exist
GROUP_ID_NOT_FOUND_COMMIT_VERSION = 9


@dataclass(frozen=True)
class ClassicGroupConfig:
    """The broker settings of Kafka's classic groups, with Kafka's defaults."""

    #: ``group.initial.rebalance.delay.ms``
    initial_rebalance_delay_ms: int = 3000
    #: ``group.min.session.timeout.ms`` / ``group.max.session.timeout.ms``
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    #: ``group.max.size``; ``None``: unlimited (Kafka's default is Int.MaxValue)
    max_size: int | None = None
    #: how long a new member may take to complete its first round (Kafka's fixed 5 minutes)
    new_member_join_timeout_ms: int = 300_000


class _TimerKind(Enum):
    JOIN = "join"
    SYNC = "sync"
    HEARTBEAT = "heartbeat"


_TimerKey = tuple[_TimerKind, str, str]
"""A timer's key: its kind, group id and member id (``""`` for a group's JOIN and SYNC timers), as Kafka's timer
keys, so arming one again replaces it."""


@dataclass(frozen=True)
class _TimerArgs:
    """What a timer needs, beyond its key, to do its work when it fires."""

    #: JOIN: an initial-delay wait (with its delay and what remains of the rebalance timeout) or the rebalance timeout
    initial: bool = False
    delay_ms: int = 0
    remaining_ms: int = 0
    #: SYNC: the generation whose syncs are awaited
    generation: int = 0


@dataclass
class _Member:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[Protocol, ...]
    assignment: bytes = b""
    awaiting_join: JoinGroup | None = None
    awaiting_sync: int | None = None
    is_new: bool = False

    def metadata(self, protocol_name: str | None) -> bytes:
        return next((p.metadata for p in self.protocols if p.name == protocol_name), b"")

    def protocol_names(self) -> list[str]:
        return list(dict.fromkeys(p.name for p in self.protocols))

    def vote(self, candidates: set[str]) -> str:
        return next(p.name for p in self.protocols if p.name in candidates)

    def has_satisfied_heartbeat(self) -> bool:
        if self.is_new:
            return False
        return self.awaiting_join is not None or self.awaiting_sync is not None


@dataclass
class _Group:
    group_id: str
    state: GroupState
    previous_state: GroupState
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation_id: int = 0
    leader_id: str | None = None
    #: in join order
    members: dict[str, _Member] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    pending_join: set[str] = field(default_factory=set)
    pending_sync: set[str] = field(default_factory=set)
    new_member_added: bool = False

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    def awaiting_join_count(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join is not None)

    def has_all_members_joined(self) -> bool:
        return self.awaiting_join_count() == len(self.members) and not self.pending_join

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def candidate_protocols(self) -> set[str]:
        members = list(self.members.values())
        if not members:
            return set()
        common = set(members[0].protocol_names())
        for member in members[1:]:
            common &= set(member.protocol_names())
        return common

    def supports_protocols(self, protocol_type: str, protocols: Iterable[Protocol]) -> bool:
        names = {p.name for p in protocols}
        if self.state is EMPTY:
            return protocol_type != "" and bool(names)
        if self.protocol_type != protocol_type:
            return False
        # Kafka counts, per protocol, the members supporting it, and takes those supported by all: with no member
        # left (a first round whose members all left), every protocol is.
        return bool(names & self.candidate_protocols()) if self.members else bool(names)

    def select_protocol(self) -> str:
        candidates = self.candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members.values():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        # Kafka takes the max over a HashMap's entries, keeping the first on a tie: its iteration order decides.
        best: str | None = None
        for name in java_hashmap_order(list(votes)):
            if best is None or votes[name] > votes[best]:
                best = name
        assert best is not None, "a group with members always has a candidate protocol"
        return best

    def static_member_id(self, group_instance_id: str | None) -> str | None:
        return None if group_instance_id is None else self.static_members.get(group_instance_id)

    def validate_member(self, member_id: str, group_instance_id: str | None) -> ErrorCode:
        """Kafka's ``ClassicGroup.validateMember``: the instance id, if given, must map to this member id."""
        if group_instance_id is not None:
            existing = self.static_members.get(group_instance_id)
            if existing is None:
                return ErrorCode.unknown_member_id
            if existing != member_id:
                return ErrorCode.fenced_instance_id
        if member_id not in self.members:
            return ErrorCode.unknown_member_id
        return ErrorCode.none

    def join_members(self) -> tuple[JoinGroupMember, ...]:
        return tuple(JoinGroupMember(m.member_id, m.group_instance_id, m.metadata(self.protocol_name))
                     for m in self.members.values())


def _uuid() -> str:
    return str(uuid.uuid4())


class ClassicGroupCoordinator(CoordinatorClock[_TimerKind, _TimerArgs]):
    """Every classic group of one coordinator. See the module docstring for how to drive it."""

    def __init__(self, config: ClassicGroupConfig | None = None, *, new_uuid: Callable[[], str] = _uuid) -> None:
        super().__init__()
        self.config = config or ClassicGroupConfig()
        self._new_uuid = new_uuid
        self._groups: dict[str, _Group] = {}
        self._effects: list[Effect] = []
        self._events: list[GroupEvent] = []

    # --- inputs -------------------------------------------------------------------------------------------------

    def handle(self, request: Request, now_ms: int) -> Step:
        """Fire the timers due by ``now_ms``, then handle ``request``, then fire any timer it left due at once."""
        now_ms = self.advance(now_ms)
        self._dispatch(request)
        self._fire_due(now_ms)
        return self._drain()

    def tick(self, now_ms: int) -> Step:
        """Fire every timer whose deadline is at or before ``now_ms``, each at its deadline, in order."""
        self.advance(now_ms)
        return self._drain()

    # --- read-only views (tests, the edge's status) ---------------------------------------------------------------

    def group_ids(self) -> list[str]:
        return list(self._groups)

    def state_of(self, group_id: str) -> GroupState:
        group = self._groups.get(group_id)
        return group.state if group else DEAD

    def generation_of(self, group_id: str) -> int:
        group = self._groups.get(group_id)
        return group.generation_id if group else -1

    def members_of(self, group_id: str) -> list[str]:
        group = self._groups.get(group_id)
        return list(group.members) if group else []

    def leader_of(self, group_id: str) -> str | None:
        group = self._groups.get(group_id)
        return group.leader_id if group else None

    def protocol_of(self, group_id: str) -> str | None:
        group = self._groups.get(group_id)
        return group.protocol_name if group else None

    def pending_members_of(self, group_id: str) -> list[str]:
        group = self._groups.get(group_id)
        return sorted(group.pending_join) if group else []

    def assignment_of(self, group_id: str, member_id: str) -> bytes | None:
        group = self._groups.get(group_id)
        member = group.members.get(member_id) if group else None
        return member.assignment if member else None

    # --- durable state (:mod:`.group_records`) ---------------------------------------------------------------------

    def settled(self, group_id: str) -> bool:
        """Whether the group is where Kafka stores it (Empty or Stable, or gone): not in the middle of a round, whose
        outcome is stored once it has one."""
        group = self._groups.get(group_id)
        return group is None or group.state in (EMPTY, STABLE)

    def record_of(self, group_id: str) -> ClassicGroupRecord | None:
        """The group as Kafka's ``GroupMetadataValue`` holds it; ``None`` for a group that is not there or holds no
        more than offsets (created by a commit, never joined), of which Kafka stores nothing either."""
        group = self._groups.get(group_id)
        if group is None or (group.generation_id == 0 and not group.members):
            return None
        return _record(group)

    def load(self, group_id: str, record: ClassicGroupRecord, now_ms: int) -> Step:
        """Take in a group replayed from its record, as Kafka's ``GroupMetadataManager`` replays a
        ``GroupMetadataValue`` and ``onLoaded`` re-arms its members' sessions: Stable with its members (Empty without),
        every member given a whole session timeout from ``now_ms``; a group over ``group.max.size`` rebalances."""
        self.advance(now_ms)
        group = self._install(group_id, record)
        self._event(ev.FRONT_GROUP_LOADED, group_id, state=group.state.value, generation=group.generation_id,
                    protocol=group.protocol_name, leader=group.leader_id, members=list(group.members))
        limit = self.config.max_size
        if limit is not None and len(group.members) > limit:
            self._prepare_rebalance(group, f"loaded with {len(group.members)} members, over group.max.size {limit}")
        return self._drain()

    def _install(self, group_id: str, record: ClassicGroupRecord) -> _Group:
        """The group of ``record``, Stable with its members (Empty without), each member's session started."""
        group = _Group(group_id, STABLE if record.members else EMPTY, EMPTY if record.members else DEAD,
                       protocol_type=record.protocol_type or None, protocol_name=record.protocol,
                       generation_id=record.generation, leader_id=record.leader)
        for m in record.members:
            member = _Member(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                             m.session_timeout_ms, record.protocol_type,
                             (Protocol(record.protocol or "", m.subscription),), assignment=m.assignment)
            group.members[m.member_id] = member
            if m.group_instance_id is not None:
                group.static_members[m.group_instance_id] = m.member_id
        if group.leader_id not in group.members:
            group.leader_id = next(iter(group.members), None)
        self._timers.cancel_where(lambda key: key[1] == group_id)
        self._groups[group_id] = group
        for member in group.members.values():
            self._reschedule_heartbeat(group, member)
        return group

    def adopt(self, group_id: str, record: ClassicGroupRecord, now_ms: int, rebalance: bool = True) -> Step:
        """Take in a consumer group converted back (Kafka's ``convertToClassicGroup``): Stable at the group epoch
        as its generation, each member with its assignment and a whole session, then, where a member left
        (``rebalance``), a rebalance at once, in which every member rejoins and the leader assigns; where a classic
        static member took a consumer-protocol member's place instead, the group stays as it is."""
        self.advance(now_ms)
        group = self._install(group_id, record)
        if rebalance:
            self._prepare_rebalance(group, "converted from a consumer group")
        return self._drain()

    def hand_over(self, group_id: str, now_ms: int) -> tuple[ClassicGroupRecord | None, str, Step]:
        """Give a live group up to the KIP-848 coordinator (Kafka's ``convertToConsumerGroup``): its record as it
        stands (a member in the middle of a round with the assignment it last had, or none), the state it was in, and
        every JoinGroup and SyncGroup still waiting answered REBALANCE_IN_PROGRESS so that its member joins the
        consumer group. The group is forgotten here; ``None`` for a group that is not here."""
        self.advance(now_ms)
        group = self._groups.get(group_id)
        if group is None:
            return None, DEAD.value, self._drain()
        record = _record(group)
        for member in group.members.values():
            self._complete_join_future(group, member, JoinGroupResponse(ErrorCode.rebalance_in_progress,
                                                                        member_id=member.member_id))
            self._complete_sync_future(member, SyncGroupResponse(ErrorCode.rebalance_in_progress))
        state = group.state.value
        self._forget(group_id)
        return record, state, self._drain()

    def awaiting_requests(self) -> set[int]:
        """Ids of the requests still waiting for their answer (JoinGroups and SyncGroups)."""
        waiting: set[int] = set()
        for group in self._groups.values():
            for member in group.members.values():
                if member.awaiting_join is not None:
                    waiting.add(member.awaiting_join.request_id)
                if member.awaiting_sync is not None:
                    waiting.add(member.awaiting_sync)
        return waiting

    # --- plumbing -------------------------------------------------------------------------------------------------

    def _drain(self) -> Step:
        step = Step(tuple(self._effects), tuple(self._events))
        self._effects = []
        self._events = []
        return step

    def _respond(self, request_id: int, response: Response) -> None:
        self._effects.append(Respond(request_id, response))

    def _event(self, name: str, group_id: str, **fields: object) -> None:
        self._events.append(GroupEvent(name, group_id, self._now, fields))

    def _schedule(self, kind: _TimerKind, group_id: str, after_ms: int, member_id: str = "", *, initial: bool = False,
                  delay_ms: int = 0, remaining_ms: int = 0, generation: int = 0) -> None:
        """Arm a timer ``after_ms`` from now, replacing the one of the same key, as Kafka's timer does."""
        self._timers.arm((kind, group_id, member_id), self._now + after_ms, _TimerArgs(
            initial=initial, delay_ms=delay_ms, remaining_ms=remaining_ms, generation=generation))

    def _cancel(self, kind: _TimerKind, group_id: str, member_id: str = "") -> None:
        self._timers.cancel((kind, group_id, member_id))

    def _fire(self, due: Due[_TimerKey, _TimerArgs]) -> None:
        """A due timer, at its deadline: the group moves on as it would have on time."""
        kind, group_id, member_id = due.key
        args = due.value
        group = self._groups.get(group_id)
        if group is None:
            return
        if kind is _TimerKind.HEARTBEAT:
            self._expire_heartbeat(group, member_id)
        elif kind is _TimerKind.SYNC:
            self._expire_pending_sync(group, args.generation)
        elif args.initial:
            self._try_complete_initial_rebalance(group, args.delay_ms, args.remaining_ms)
        else:
            self._complete_join(group)

    def _dispatch(self, request: Request) -> None:
        if isinstance(request, JoinGroup):
            self._join(request)
        elif isinstance(request, SyncGroup):
            self._sync(request)
        elif isinstance(request, Heartbeat):
            self._respond(request.request_id, HeartbeatResponse(self._heartbeat(request)))
        elif isinstance(request, LeaveGroup):
            self._respond(request.request_id, self._leave(request))
        elif isinstance(request, OffsetCommit):
            self._respond(request.request_id, OffsetCommitVerdict(self._offset_commit(request)))
        elif isinstance(request, DescribeGroups):
            self._respond(request.request_id, self._describe(request))
        elif isinstance(request, ListGroups):
            self._respond(request.request_id, self._list(request))
        else:
            self._respond(request.request_id, self._delete(request))

    # --- group and member bookkeeping -----------------------------------------------------------------------------

    def _transition(self, group: _Group, to: GroupState) -> None:
        if group.state not in VALID_PREVIOUS_STATES[to]:
            raise AssertionError(f"group {group.group_id}: {group.state.value} -> {to.value} is not a valid transition")
        group.previous_state, group.state = group.state, to
        self._event(ev.FRONT_GROUP_STATE_CHANGED, group.group_id, **{
            "from": group.previous_state.value, "to": to.value, "generation": group.generation_id})

    def _create_group(self, group_id: str, protocol_type: str) -> _Group:
        group = _Group(group_id, EMPTY, DEAD)
        self._groups[group_id] = group
        self._event(ev.FRONT_GROUP_CREATED, group_id, protocol_type=protocol_type)
        return group

    def _add(self, group: _Group, member: _Member) -> None:
        if member.group_instance_id is not None:
            group.static_members[member.group_instance_id] = member.member_id
        if not group.members:
            group.protocol_type = member.protocol_type
        if group.leader_id is None:
            group.leader_id = member.member_id
        group.members[member.member_id] = member
        group.pending_join.discard(member.member_id)

    def _remove(self, group: _Group, member_id: str) -> None:
        """Kafka's ``ClassicGroup.remove`` plus the timer cancel its callers do; a request the member still waits on
        is dropped (Kafka leaves it unanswered)."""
        member = group.members.pop(member_id, None)
        if member is not None:
            if member.group_instance_id is not None and group.static_members.get(member.group_instance_id) == member_id:
                del group.static_members[member.group_instance_id]
            if member.awaiting_join is not None:
                self._effects.append(Drop(member.awaiting_join.request_id))
                member.awaiting_join = None
            if member.awaiting_sync is not None:
                self._effects.append(Drop(member.awaiting_sync))
                member.awaiting_sync = None
        if group.leader_id == member_id:
            group.leader_id = next(iter(group.members), None)
        group.pending_join.discard(member_id)
        group.pending_sync.discard(member_id)
        self._cancel(_TimerKind.HEARTBEAT, group.group_id, member_id)

    def _complete_join_future(self, group: _Group, member: _Member, response: JoinGroupResponse) -> bool:
        if member.awaiting_join is None:
            return False
        self._respond(member.awaiting_join.request_id, response)
        member.awaiting_join = None
        return True

    def _complete_sync_future(self, member: _Member, response: SyncGroupResponse) -> bool:
        if member.awaiting_sync is None:
            return False
        self._respond(member.awaiting_sync, response)
        member.awaiting_sync = None
        return True

    def _set_awaiting_join(self, member: _Member, request: JoinGroup | None) -> None:
        if member.awaiting_join is not None and request is not None:
            self._effects.append(Drop(member.awaiting_join.request_id))
        member.awaiting_join = request

    def _reschedule_heartbeat(self, group: _Group, member: _Member, timeout_ms: int | None = None) -> None:
        self._schedule(_TimerKind.HEARTBEAT, group.group_id,
                       member.session_timeout_ms if timeout_ms is None else timeout_ms, member.member_id)

    def _generate_member_id(self, request: JoinGroup) -> str:
        prefix = request.group_instance_id if request.group_instance_id is not None else request.client_id
        return f"{prefix}-{self._new_uuid()}"

    def _current_join_response(self, group: _Group, member_id: str, *, with_members: bool) -> JoinGroupResponse:
        return JoinGroupResponse(
            ErrorCode.none, member_id=member_id, generation_id=group.generation_id, protocol_type=group.protocol_type,
            protocol_name=group.protocol_name, leader=group.leader_id or "",
            members=group.join_members() if with_members else ())

    # --- JoinGroup --------------------------------------------------------------------------------------------------

    def _join(self, request: JoinGroup) -> None:
        def error(code: ErrorCode, member_id: str = request.member_id) -> None:
            self._respond(request.request_id, JoinGroupResponse(code, member_id=member_id))

        if not request.group_id:
            return error(ErrorCode.invalid_group_id)
        if not self.config.min_session_timeout_ms <= request.session_timeout_ms <= self.config.max_session_timeout_ms:
            return error(ErrorCode.invalid_session_timeout)
        unknown_member = request.member_id == ""
        group = self._groups.get(request.group_id)
        if group is None:
            if not unknown_member:
                return error(ErrorCode.unknown_member_id)
            group = self._create_group(request.group_id, request.protocol_type)
        if not self._accept_joining_member(group, request.member_id):
            if request.member_id in group.members or request.member_id in group.pending_join:
                self._event(ev.FRONT_GROUP_MEMBER_LEFT, group.group_id, member_id=request.member_id,
                            group_instance_id=request.group_instance_id, reason="group_max_size")
            self._remove(group, request.member_id)
            return error(ErrorCode.group_max_size_reached, "")
        if unknown_member:
            self._join_new_member(group, request)
        else:
            self._join_existing_member(group, request)
        return None

    def _accept_joining_member(self, group: _Group, member_id: str) -> bool:
        limit = self.config.max_size
        if limit is None or group.state in (EMPTY, DEAD):
            return True
        if group.state is PREPARING:
            member = group.members.get(member_id)
            return (member is not None and member.awaiting_join is not None) or group.awaiting_join_count() < limit
        return member_id in group.members or len(group.members) < limit

    def _join_new_member(self, group: _Group, request: JoinGroup) -> None:
        if not group.supports_protocols(request.protocol_type, request.protocols):
            self._respond(request.request_id, JoinGroupResponse(ErrorCode.inconsistent_group_protocol))
            return
        new_member_id = self._generate_member_id(request)
        if request.group_instance_id is not None:
            existing = group.static_members.get(request.group_instance_id)
            if existing is not None:
                self._replace_static_member(group, request, existing, new_member_id)
            else:
                self._add_member_then_rebalance_or_complete(group, request, new_member_id)
        elif request.api_version >= REQUIRE_KNOWN_MEMBER_ID_VERSION:
            group.pending_join.add(new_member_id)
            self._schedule(_TimerKind.HEARTBEAT, group.group_id, request.session_timeout_ms, new_member_id)
            self._event(ev.FRONT_GROUP_MEMBER_ID_REQUIRED, group.group_id, member_id=new_member_id,
                        client_id=request.client_id, session_timeout_ms=request.session_timeout_ms)
            self._respond(request.request_id, JoinGroupResponse(ErrorCode.member_id_required, member_id=new_member_id))
        else:
            self._add_member_then_rebalance_or_complete(group, request, new_member_id)

    def _join_existing_member(self, group: _Group, request: JoinGroup) -> None:
        member_id = request.member_id
        if not group.supports_protocols(request.protocol_type, request.protocols):
            self._respond(request.request_id,
                          JoinGroupResponse(ErrorCode.inconsistent_group_protocol, member_id=member_id))
            return
        if member_id in group.pending_join:
            if request.group_instance_id is not None:
                # Kafka raises an IllegalStateException here, which its service answers as an unknown server error.
                self._respond(request.request_id,
                              JoinGroupResponse(ErrorCode.unknown_server_error, member_id=member_id))
                return
            self._add_member_then_rebalance_or_complete(group, request, member_id)
            return
        invalid = group.validate_member(member_id, request.group_instance_id)
        if invalid is not ErrorCode.none:
            self._respond(request.request_id, JoinGroupResponse(invalid, member_id=member_id))
            return
        member = group.members[member_id]
        changed = member.protocols != request.protocols
        if group.state is PREPARING:
            self._update_member_then_rebalance_or_complete(group, member, request, "member rejoining during a round")
        elif group.state is COMPLETING:
            if not changed:
                # The member lost its JoinGroup answer: the same one again.
                self._respond(request.request_id, self._current_join_response(
                    group, member_id, with_members=group.is_leader(member_id)))
            else:
                self._update_member_then_rebalance_or_complete(group, member, request, "member metadata changed")
        elif group.state is STABLE:
            if group.is_leader(member_id) or changed:
                reason = "leader rejoined" if not changed else "member metadata changed"
                self._update_member_then_rebalance_or_complete(group, member, request, reason)
            else:
                self._respond(request.request_id, self._current_join_response(group, member_id, with_members=False))
        else:
            self._respond(request.request_id, JoinGroupResponse(ErrorCode.unknown_member_id, member_id=member_id))

    def _add_member_then_rebalance_or_complete(self, group: _Group, request: JoinGroup, member_id: str) -> None:
        member = _Member(
            member_id, request.group_instance_id, request.client_id, request.client_host,
            request.rebalance_timeout_ms, request.session_timeout_ms, request.protocol_type, request.protocols,
            is_new=True)
        if group.state is PREPARING and group.previous_state is EMPTY:
            group.new_member_added = True
        self._add(group, member)
        self._set_awaiting_join(member, request)
        # A new member cannot heartbeat yet and its socket is parked: it gets a long, fixed time to finish its round.
        self._reschedule_heartbeat(group, member, self.config.new_member_join_timeout_ms)
        self._event(ev.FRONT_GROUP_MEMBER_JOINED, group.group_id, member_id=member_id,
                    group_instance_id=request.group_instance_id, client_id=request.client_id,
                    client_host=request.client_host, session_timeout_ms=request.session_timeout_ms,
                    rebalance_timeout_ms=request.rebalance_timeout_ms,
                    protocols=[p.name for p in request.protocols])
        self._maybe_prepare_rebalance_or_complete_join(group, f"new member {member_id} joined")

    def _update_member(self, member: _Member, request: JoinGroup | None) -> None:
        if request is not None:
            member.protocols = request.protocols
            member.rebalance_timeout_ms = request.rebalance_timeout_ms
            member.session_timeout_ms = request.session_timeout_ms
        self._set_awaiting_join(member, request)

    def _update_member_then_rebalance_or_complete(
            self, group: _Group, member: _Member, request: JoinGroup, reason: str) -> None:
        changed = member.protocols != request.protocols
        self._update_member(member, request)
        self._event(ev.FRONT_GROUP_MEMBER_REJOINED, group.group_id, member_id=member.member_id,
                    protocols_changed=changed)
        self._maybe_prepare_rebalance_or_complete_join(group, f"{reason}: {member.member_id}")

    def _replace_static_member(self, group: _Group, request: JoinGroup, old_member_id: str, new_member_id: str) -> None:
        previous_leader = group.leader_id
        old = group.members[old_member_id]
        fenced_join = JoinGroupResponse(ErrorCode.fenced_instance_id, member_id=old_member_id)
        self._complete_join_future(group, old, fenced_join)
        self._complete_sync_future(old, SyncGroupResponse(ErrorCode.fenced_instance_id))
        # Keep the member's place in join order under its new id.
        new = _Member(new_member_id, old.group_instance_id, old.client_id, old.client_host, old.rebalance_timeout_ms,
                      old.session_timeout_ms, old.protocol_type, old.protocols, assignment=old.assignment)
        group.members = {(new_member_id if k == old_member_id else k): (new if k == old_member_id else v)
                         for k, v in group.members.items()}
        if group.leader_id == old_member_id:
            group.leader_id = new_member_id
        if new.group_instance_id is not None:
            group.static_members[new.group_instance_id] = new_member_id
        if old_member_id in group.pending_sync:
            # The sync still owed is owed by the new id. (Kafka leaves the old id in its pending set, so its
            # expiration then rebalances even after the new id synced; the member's intent is the same either way.)
            group.pending_sync.discard(old_member_id)
            group.pending_sync.add(new_member_id)
        self._cancel(_TimerKind.HEARTBEAT, group.group_id, old_member_id)
        self._reschedule_heartbeat(group, new)
        self._event(ev.FRONT_GROUP_STATIC_MEMBER_REPLACED, group.group_id,
                    group_instance_id=request.group_instance_id, old_member_id=old_member_id,
                    new_member_id=new_member_id)
        self._update_member(new, request)

        if group.state is STABLE:
            if group.protocol_name == group.select_protocol():
                # The group's choice stands: no rebalance; the member gets the current generation back.
                assert new.awaiting_join is not None
                if request.api_version >= SKIP_ASSIGNMENT_VERSION:
                    is_leader = group.is_leader(new_member_id)
                    response = self._current_join_response(group, new_member_id, with_members=is_leader)
                    response = JoinGroupResponse(**{**response.__dict__, "skip_assignment": is_leader})
                else:
                    # Older clients learn the previous leader id, so a rejoining static leader does not assign.
                    response = JoinGroupResponse(
                        ErrorCode.none, member_id=new_member_id, generation_id=group.generation_id,
                        protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                        leader=previous_leader or "")
                self._complete_join_future(group, new, response)
            else:
                self._maybe_prepare_rebalance_or_complete_join(
                    group, f"static member {request.group_instance_id} changed the group's protocol")
        elif group.state is COMPLETING:
            # The leader may be assigning to the old member id: the round must be redone.
            self._prepare_rebalance(group, f"static member {request.group_instance_id} rejoined during the sync")
        else:
            self._maybe_complete_join_phase(group)

    # --- the join phase ---------------------------------------------------------------------------------------------

    def _maybe_prepare_rebalance_or_complete_join(self, group: _Group, reason: str) -> None:
        if group.state in VALID_PREVIOUS_STATES[PREPARING]:
            self._prepare_rebalance(group, reason)
        else:
            self._maybe_complete_join_phase(group)

    def _maybe_complete_join_phase(self, group: _Group) -> None:
        if group.state is not PREPARING or group.previous_state is EMPTY or not group.has_all_members_joined():
            return
        self._complete_join(group)

    def _prepare_rebalance(self, group: _Group, reason: str) -> None:
        if group.state is COMPLETING:
            self._reset_and_propagate_assignment_with_error(group, ErrorCode.rebalance_in_progress)
        group.pending_sync.clear()
        self._cancel(_TimerKind.SYNC, group.group_id)
        initial = group.state is EMPTY
        members = list(group.members)
        if initial:
            delay = self.config.initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule(_TimerKind.JOIN, group.group_id, delay, initial=True, delay_ms=delay, remaining_ms=remaining)
        self._transition(group, PREPARING)
        timing: dict[str, object] = (
            {"initial_delay_ms": self.config.initial_rebalance_delay_ms} if initial
            else {"rebalance_timeout_ms": group.rebalance_timeout_ms()})
        self._event(ev.FRONT_GROUP_ROUND_STARTED, group.group_id, generation=group.generation_id, reason=reason,
                    members=members, **timing)
        if not initial:
            self._maybe_complete_join_else_schedule(group)

    def _maybe_complete_join_else_schedule(self, group: _Group) -> None:
        if group.has_all_members_joined():
            self._complete_join(group)
        else:
            self._schedule(_TimerKind.JOIN, group.group_id, group.rebalance_timeout_ms())

    def _try_complete_initial_rebalance(self, group: _Group, delay_ms: int, remaining_ms: int) -> None:
        if group.new_member_added and remaining_ms != 0:
            group.new_member_added = False
            new_delay = min(self.config.initial_rebalance_delay_ms, remaining_ms)
            new_remaining = max(remaining_ms - delay_ms, 0)
            self._schedule(_TimerKind.JOIN, group.group_id, new_delay, initial=True, delay_ms=new_delay,
                           remaining_ms=new_remaining)
            self._event(ev.FRONT_GROUP_INITIAL_DELAY_EXTENDED, group.group_id, delay_ms=new_delay,
                        remaining_ms=new_remaining)
        else:
            self._complete_join(group)

    def _complete_join(self, group: _Group) -> None:
        self._cancel(_TimerKind.JOIN, group.group_id)
        if group.state is not PREPARING:
            return
        for member in [m for m in group.members.values() if m.awaiting_join is None and m.group_instance_id is None]:
            self._event(ev.FRONT_GROUP_MEMBER_EXPIRED, group.group_id, member_id=member.member_id,
                        group_instance_id=None, cause="not_rejoined")
            self._remove(group, member.member_id)
        if not self._maybe_elect_new_joined_leader(group) and group.members:
            # Only static members that did not rejoin are left: wait once more for them to rejoin or expire.
            self._schedule(_TimerKind.JOIN, group.group_id, group.rebalance_timeout_ms())
            self._event(ev.FRONT_GROUP_ROUND_POSTPONED, group.group_id,
                        rebalance_timeout_ms=group.rebalance_timeout_ms())
            return
        self._init_next_generation(group)
        if group.state is EMPTY:
            return
        self._event(ev.FRONT_GROUP_ROUND_COMPLETED, group.group_id, generation=group.generation_id,
                    protocol=group.protocol_name, leader=group.leader_id, members=list(group.members))
        for member in group.members.values():
            self._complete_join_future(group, member, self._current_join_response(
                group, member.member_id, with_members=group.is_leader(member.member_id)))
            self._reschedule_heartbeat(group, member)
            member.is_new = False
            group.pending_sync.add(member.member_id)
        self._schedule(_TimerKind.SYNC, group.group_id, group.rebalance_timeout_ms(), generation=group.generation_id)

    def _maybe_elect_new_joined_leader(self, group: _Group) -> bool:
        if group.leader_id is None:
            return False
        if group.members[group.leader_id].awaiting_join is not None:
            return True
        for member in group.members.values():
            if member.awaiting_join is not None:
                group.leader_id = member.member_id
                return True
        return False

    def _init_next_generation(self, group: _Group) -> None:
        group.generation_id += 1
        if group.members:
            group.protocol_name = group.select_protocol()
            self._transition(group, COMPLETING)
        else:
            group.protocol_name = None
            self._transition(group, EMPTY)
        group.pending_sync.clear()

    # --- the sync phase ---------------------------------------------------------------------------------------------

    def _reset_and_propagate_assignment_with_error(self, group: _Group, error: ErrorCode) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: _Group, error: ErrorCode) -> None:
        ok = error is ErrorCode.none
        for member in group.members.values():
            response = SyncGroupResponse(
                error, assignment=member.assignment, protocol_type=group.protocol_type if ok else None,
                protocol_name=group.protocol_name if ok else None)
            if self._complete_sync_future(member, response):
                # The member waited on us, so its session did not run: it starts again now.
                self._reschedule_heartbeat(group, member)

    def _remove_pending_sync_member(self, group: _Group, member_id: str) -> None:
        group.pending_sync.discard(member_id)
        if not group.pending_sync:
            self._cancel(_TimerKind.SYNC, group.group_id)

    def _sync(self, request: SyncGroup) -> None:
        def error(code: ErrorCode) -> None:
            self._respond(request.request_id, SyncGroupResponse(code))

        if not request.group_id:
            return error(ErrorCode.invalid_group_id)
        group = self._groups.get(request.group_id)
        if group is None or group.state is EMPTY:
            return error(ErrorCode.unknown_member_id)
        invalid = group.validate_member(request.member_id, request.group_instance_id)
        if invalid is not ErrorCode.none:
            return error(invalid)
        if request.generation_id != group.generation_id:
            return error(ErrorCode.illegal_generation)
        if _inconsistent(request.protocol_type, group.protocol_type) or _inconsistent(
                request.protocol_name, group.protocol_name):
            return error(ErrorCode.inconsistent_group_protocol)
        if group.state is PREPARING:
            return error(ErrorCode.rebalance_in_progress)
        member = group.members[request.member_id]
        if group.state is COMPLETING:
            if member.awaiting_sync is not None:
                self._effects.append(Drop(member.awaiting_sync))
            member.awaiting_sync = request.request_id
            self._remove_pending_sync_member(group, request.member_id)
            if group.is_leader(request.member_id):
                given = dict(request.assignments)
                assignment = {m: given.get(m, b"") for m in group.members}
                for m, data in assignment.items():
                    group.members[m].assignment = data
                self._event(ev.FRONT_GROUP_ASSIGNMENT_SENT, group.group_id, generation=group.generation_id,
                            leader=request.member_id,
                            members=[{"member_id": m, "bytes": len(data)} for m, data in assignment.items()])
                self._propagate_assignment(group, ErrorCode.none)
                self._transition(group, STABLE)
            return None
        # Stable: the current assignment.
        self._remove_pending_sync_member(group, request.member_id)
        self._respond(request.request_id, SyncGroupResponse(
            ErrorCode.none, assignment=member.assignment, protocol_type=group.protocol_type,
            protocol_name=group.protocol_name))
        return None

    def _expire_pending_sync(self, group: _Group, generation: int) -> None:
        if generation != group.generation_id or group.state not in (COMPLETING, STABLE) or not group.pending_sync:
            return
        late = [m for m in group.members if m in group.pending_sync]
        for member_id in late:
            self._event(ev.FRONT_GROUP_MEMBER_EXPIRED, group.group_id, member_id=member_id,
                        group_instance_id=group.members[member_id].group_instance_id, cause="sync_timeout")
            self._remove(group, member_id)
        self._prepare_rebalance(group, f"no SyncGroup in time from {', '.join(late)}")

    # --- sessions ---------------------------------------------------------------------------------------------------

    def _expire_heartbeat(self, group: _Group, member_id: str) -> None:
        if member_id in group.pending_join:
            self._event(ev.FRONT_GROUP_MEMBER_EXPIRED, group.group_id, member_id=member_id, group_instance_id=None,
                        cause="pending_member_timeout")
            self._remove(group, member_id)
            if group.state is PREPARING and group.has_all_members_joined():
                self._complete_join(group)
            return
        member = group.members.get(member_id)
        if member is None or member.has_satisfied_heartbeat():
            return
        cause = "new_member_join_timeout" if member.is_new else "session_timeout"
        self._event(ev.FRONT_GROUP_MEMBER_EXPIRED, group.group_id, member_id=member_id,
                    group_instance_id=member.group_instance_id, cause=cause)
        self._remove_member_and_update_group(group, member, f"member {member_id} expired ({cause})")

    def _remove_member_and_update_group(self, group: _Group, member: _Member, reason: str) -> None:
        self._complete_join_future(group, member, JoinGroupResponse(ErrorCode.unknown_member_id))
        self._remove(group, member.member_id)
        if group.state in (STABLE, COMPLETING):
            self._maybe_prepare_rebalance_or_complete_join(group, reason)
        elif group.state is PREPARING and group.has_all_members_joined():
            self._complete_join(group)

    def _heartbeat(self, request: Heartbeat) -> ErrorCode:
        if not request.group_id:
            return ErrorCode.invalid_group_id
        group = self._groups.get(request.group_id)
        if group is None:
            return ErrorCode.unknown_member_id
        invalid = group.validate_member(request.member_id, request.group_instance_id)
        if invalid is not ErrorCode.none:
            return invalid
        if request.generation_id != group.generation_id:
            return ErrorCode.illegal_generation
        if group.state is EMPTY:
            return ErrorCode.unknown_member_id
        self._reschedule_heartbeat(group, group.members[request.member_id])
        # Heartbeats in CompletingRebalance are normal ones: the member has its JoinGroup answer and syncs next.
        return ErrorCode.rebalance_in_progress if group.state is PREPARING else ErrorCode.none

    # --- LeaveGroup -------------------------------------------------------------------------------------------------

    def _leave(self, request: LeaveGroup) -> LeaveGroupResponse:
        if not request.group_id:
            return LeaveGroupResponse(ErrorCode.invalid_group_id)
        group = self._groups.get(request.group_id)
        if group is None:
            return LeaveGroupResponse(ErrorCode.unknown_member_id)
        results: list[LeaveMemberResponse] = []
        for leaving in request.members:
            code = self._leave_one(group, leaving.member_id, leaving.group_instance_id, leaving.reason)
            results.append(LeaveMemberResponse(leaving.member_id, leaving.group_instance_id, code))
        if any(r.error_code is ErrorCode.none for r in results):
            if group.state in (STABLE, COMPLETING):
                self._maybe_prepare_rebalance_or_complete_join(group, "members left")
            elif group.state is PREPARING:
                self._maybe_complete_join_phase(group)
        return LeaveGroupResponse(ErrorCode.none, tuple(results))

    def _leave_one(self, group: _Group, member_id: str, group_instance_id: str | None, reason: str | None) -> ErrorCode:
        if member_id == "":
            # An administrator removing a static member by its instance id.
            static_id = group.static_member_id(group_instance_id)
            if static_id is None:
                return ErrorCode.unknown_member_id
            self._remove_leaving_member(group, group.members[static_id], reason)
            return ErrorCode.none
        if member_id in group.pending_join:
            self._event(ev.FRONT_GROUP_MEMBER_LEFT, group.group_id, member_id=member_id, group_instance_id=None,
                        reason=reason)
            self._remove(group, member_id)
            return ErrorCode.none
        invalid = group.validate_member(member_id, group_instance_id)
        if invalid is not ErrorCode.none:
            return invalid
        self._remove_leaving_member(group, group.members[member_id], reason)
        return ErrorCode.none

    def _remove_leaving_member(self, group: _Group, member: _Member, reason: str | None) -> None:
        self._event(ev.FRONT_GROUP_MEMBER_LEFT, group.group_id, member_id=member.member_id,
                    group_instance_id=member.group_instance_id, reason=reason)
        self._complete_join_future(group, member, JoinGroupResponse(ErrorCode.unknown_member_id))
        self._remove(group, member.member_id)

    # --- offsets and administration -----------------------------------------------------------------------------------

    def _offset_commit(self, request: OffsetCommit) -> ErrorCode:
        group = self._groups.get(request.group_id)
        if group is None:
            if request.generation_id < 0:
                # A simple consumer or an administrator: the group exists from now on, holding only offsets.
                self._create_group(request.group_id, "")
                return ErrorCode.none
            if request.api_version >= GROUP_ID_NOT_FOUND_COMMIT_VERSION and not request.transactional:
                return ErrorCode.group_id_not_found
            return ErrorCode.illegal_generation
        if request.generation_id < 0 and group.state is EMPTY:
            return ErrorCode.none
        if request.generation_id >= 0 or request.member_id or request.group_instance_id is not None:
            invalid = group.validate_member(request.member_id, request.group_instance_id)
            if invalid is not ErrorCode.none:
                return invalid
            if request.generation_id != group.generation_id:
                return ErrorCode.illegal_generation
        elif group.state is not EMPTY and not request.transactional:  # an old transactional client names no member
            return ErrorCode.unknown_member_id
        if request.transactional:
            return ErrorCode.none
        if group.state is COMPLETING:
            return ErrorCode.rebalance_in_progress
        if group.state in (STABLE, PREPARING):
            # A commit keeps the member's session alive, as a heartbeat would.
            self._reschedule_heartbeat(group, group.members[request.member_id])
        return ErrorCode.none

    def _describe(self, request: DescribeGroups) -> DescribeGroupsResponse:
        described: list[DescribedGroup] = []
        for group_id in request.group_ids:
            group = self._groups.get(group_id)
            if group is None:
                described.append(DescribedGroup(group_id, ErrorCode.none, DEAD.value, "", ""))
                continue
            stable = group.state is STABLE
            members = tuple(
                DescribedMember(m.member_id, m.group_instance_id, m.client_id, m.client_host,
                                m.metadata(group.protocol_name) if stable else b"", m.assignment)
                for m in group.members.values())
            described.append(DescribedGroup(
                group_id, ErrorCode.none, group.state.value, group.protocol_type or "",
                (group.protocol_name or "") if stable else "", members))
        return DescribeGroupsResponse(tuple(described))

    def _list(self, request: ListGroups) -> ListGroupsResponse:
        states = {s.strip().lower() for s in request.states_filter}
        types = {t.lower() for t in request.types_filter}
        listed = tuple(
            ListedGroup(g.group_id, g.protocol_type or "", g.state.value)
            for g in self._groups.values()
            if (not states or g.state.value.lower() in states) and (not types or CLASSIC_GROUP_TYPE in types))
        return ListGroupsResponse(ErrorCode.none, listed)

    def _delete(self, request: DeleteGroups) -> DeleteGroupsResponse:
        results: list[tuple[str, ErrorCode]] = []
        for group_id in request.group_ids:
            group = self._groups.get(group_id)
            if not group_id:
                results.append((group_id, ErrorCode.invalid_group_id))
            elif group is None:
                results.append((group_id, ErrorCode.group_id_not_found))
            elif group.state is not EMPTY:
                results.append((group_id, ErrorCode.non_empty_group))
            else:
                self._transition(group, DEAD)
                self._forget(group_id)
                self._event(ev.FRONT_GROUP_DELETED, group_id)
                results.append((group_id, ErrorCode.none))
        return DeleteGroupsResponse(tuple(results))

    def _forget(self, group_id: str) -> None:
        del self._groups[group_id]
        self._timers.cancel_where(lambda key: key[1] == group_id)


def _record(group: _Group) -> ClassicGroupRecord:
    """The group as ``GroupMetadataValue`` holds it; a member's metadata is that of the chosen protocol (of its first
    protocol before any was chosen)."""
    return ClassicGroupRecord(
        protocol_type=group.protocol_type or "", generation=group.generation_id, protocol=group.protocol_name,
        leader=group.leader_id, members=tuple(
            ClassicMemberRecord(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                                m.session_timeout_ms,
                                m.metadata(group.protocol_name) or (m.protocols[0].metadata if m.protocols else b""),
                                m.assignment)
            for m in group.members.values()))


def _inconsistent(requested: str | None, current: str | None) -> bool:
    return requested is not None and current is not None and requested != current
