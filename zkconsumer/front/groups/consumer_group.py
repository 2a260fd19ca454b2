"""KIP-848's consumer group coordinator (ConsumerGroupHeartbeat, ConsumerGroupDescribe, and the member-epoch checks of
OffsetCommit/OffsetFetch) as a pure state machine that behaves as Kafka 4.x's does (``group-coordinator``:
``GroupMetadataManager.consumerGroupHeartbeat`` and its helpers, ``ConsumerGroup``, ``ConsumerGroupMember``,
``TargetAssignmentBuilder``; reconciliation in :mod:`.consumer_group_reconcile`).

Pure: no sockets, threads, asyncio or clock. Time comes in with every input as ``now_ms``; the coordinator's timers
(session and rebalance timeouts) fire when an input's ``now_ms`` passes their deadline, each at its own deadline, in
deadline order, so the outcome does not depend on how often the edge ticks. Heartbeats are answered at once (KIP-848
does not hold them); one mutable object holds every consumer group, as the classic coordinator does, and member ids
come from an injectable ``new_member_id`` so the same inputs give the same outputs.

The behaviour, as Kafka's:

- A new group starts at group and assignment epoch 1, an empty assignment (Kafka 4.3 on, KAFKA-20268), so its first
  member's join makes epoch 2. A heartbeat first creates or updates its member. The **group epoch** is bumped when a
  member joins, changes its
  subscribed topic names or regex, leaves or is fenced, and when the metadata of the subscribed topics (their ids and
  partition counts, as the edge last supplied them) changed since the group last looked; metadata is looked at on
  every heartbeat, so a new topic or partition takes effect at the next heartbeat of any member.
- When the group epoch is ahead of the **target assignment** epoch, the heartbeat computes a new target assignment for
  every member with the server assignor the members prefer (the most named in their ``server_assignor``; the first of
  ``assignors``, ``uniform``, when none names one), given the previous target assignment as its stickiness input. The
  assignors are :mod:`zkconsumer.assignors`' ``uniform_assign`` and ``range_assign``, which reproduce Kafka's
  iteration orders; members enter the assignor's members map in the order they joined the group.
- Each member then **reconciles** towards its target (``CurrentAssignmentBuilder``, as of Kafka 4.2: see
  :mod:`.consumer_group_reconcile`): it is first asked to revoke what is no longer its own (UNREVOKED_PARTITIONS, at
  its current epoch), moves to the target epoch only once it reports not owning them, and is given a partition only
  once no other member holds it (UNRELEASED_PARTITIONS until then). A partition is therefore never held by two members
  at once. A member that unsubscribes from a topic is asked to revoke its partitions on that very heartbeat.
- **Member epochs**: a heartbeat with a greater epoch than the member's, or a smaller one that is not its previous
  epoch with owned partitions within its assignment (a lost response), gets FENCED_MEMBER_EPOCH; an unknown member id
  gets UNKNOWN_MEMBER_ID; an unknown group (epoch > 0) GROUP_ID_NOT_FOUND. Epoch 0 from a known dynamic member id is
  a rejoin and is accepted (KAFKA-19233, the fix that lets a fenced member rejoin with the member id KIP-1082 has it
  keep); a static member may rejoin only after its -2, whatever its member id, unless it or the member holding its
  instance speaks the classic protocol (a classic static member never says it leaves): then at once.
- **Session timeout** (``group.consumer.session.timeout.ms``, 45000): every accepted heartbeat restarts it; when it
  passes the member is removed. **Rebalance timeout** (the member's ``rebalance_timeout_ms``): a member that entered
  UNREVOKED_PARTITIONS and has not left that epoch when it passes is fenced (removed). Every response carries
  ``group.consumer.heartbeat.interval.ms`` (5000).
- **Leaving**: epoch -1 removes the member (static or not); a static member's -2 keeps it in the group with its
  partitions (no rebalance) until its session expires or a member with the same ``instance_id`` joins with epoch 0 and
  takes its place, assignment and all. A second live member with an instance id in use gets UNRELEASED_INSTANCE_ID;
  a request naming an instance id under another member id gets FENCED_INSTANCE_ID.
- **Request checks** as Kafka's, answered INVALID_REQUEST: a missing member id (from v1 on, KIP-1082; before, on any
  epoch but 0 and -2); empty group id, instance id or rack id; a join without rebalance timeout, with owned partitions
  or with neither topic names nor a regex; an epoch below -2. A ``server_assignor`` not configured gets
  UNSUPPORTED_ASSIGNOR.
- **Regex subscriptions** (``subscribed_topic_regex``; ``""`` is none, as librdkafka sends it): a member subscribes to
  its topic names and to every topic whose whole name the regex matches. Kafka resolves regexes asynchronously (RE2J,
  at most every 10 s); here they are resolved against the edge's topic view on every heartbeat, with Python's ``re``
  (RE2 refuses backreferences and lookaround, which ``re`` accepts). A new regex that does not compile gets
  INVALID_REGULAR_EXPRESSION; changing it bumps the group epoch; a topic created later that it matches does at the
  next heartbeat. The group is homogeneous for the assignor when every member subscribes to the same names, or all to
  one and the same regex and none to names, as Kafka decides it.
- **The online upgrade** (``group.consumer.migration.policy``, bidirectional by default): a live classic group a new
  member's heartbeat converts (:meth:`ConsumerGroupCoordinator.upgrade`) keeps its members as classic members, at
  the classic generation as their epoch with their assignments; they, and any classic member joining later, speak
  JoinGroup/SyncGroup/Heartbeat/LeaveGroup (``classic_join``...), each answered from the member's reconciliation:
  REBALANCE_IN_PROGRESS on a Heartbeat while it must move (once every partition it waits for is free, where it
  waits), and on a SyncGroup behind the group epoch, its assigned partitions in SyncGroup as ConsumerProtocol's
  assignment, its generation its member epoch (and what its commits are checked against); one told to rejoin, or
  answered its JoinGroup, is fenced unless it rejoins, or syncs, within its rebalance timeout. An upgrade is refused
  (Kafka's words) by the policy, ``group.consumer.max.size``, another protocol type, bytes that are not
  ConsumerProtocol's, or an assignor's user data in an assignment. The **downgrade**: once the last consumer-protocol
  member left, or a classic static member took its place, a group of classic members only is handed back as a
  classic group's record (:meth:`ConsumerGroupCoordinator.downgrade`).
- Group states Empty, Assigning (group epoch ahead of the target), Reconciling (a member not yet at the target),
  Stable; Dead once deleted. ``group.consumer.max.size`` (default unlimited) answers GROUP_MAX_SIZE_REACHED.

Events: :class:`GroupEvent` (``name``, ``fields``, and ``group_id`` and ``at_ms`` on every one); the
``front.consumer_group.*`` events are declared once in :mod:`zkconsumer.events.front` and listed on the events page
(``docs/events.md``). Partitions in events are :func:`~zkconsumer.events.fields.partition_list` rows, by topic
name where the metadata knows the id.

It is driven through the group coordinator's facade (:mod:`.coordinator`), which routes each request to it or
to the other machine; how the edge drives the facade: ``docs/front.md``.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Protocol

from zkconsumer.assignors.consumer_range import range_assign
from zkconsumer.assignors.consumer_uniform import uniform_assign
from zkconsumer.assignors.group_spec import (
    GroupSpec,
    SpecMember,
    TargetAssignment,
    is_homogeneous,
    members_map_order,
    subscribed_ids_order,
    target_from_record,
)
from zkconsumer.assignors.java_hash_map import string_set_order
from zkconsumer.assignors.model import AssignmentError
from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import partition_rows
from zkconsumer.front.groups import classic_group_messages as classic
from zkconsumer.front.groups.classic_group import REQUIRE_KNOWN_MEMBER_ID_VERSION
from zkconsumer.front.groups.classic_group_messages import GroupEvent, ListedGroup
from zkconsumer.front.groups.consumer_group_messages import (
    CONSUMER_GROUP_TYPE,
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    ConsumerGroupDescribe,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupState,
    DescribedConsumerGroup,
    DescribedConsumerMember,
    DescribedTopicPartitions,
    ErrorCode,
    HeartbeatOutcome,
    MemberState,
    Partitions,
    TopicMetadata,
)
from zkconsumer.front.groups.consumer_group_reconcile import FREE, Reconciliation, reconcile
from zkconsumer.front.groups.coordinator_clock import CoordinatorClock
from zkconsumer.front.groups.deadline_timers import Due
from zkconsumer.front.groups.group_records import (
    ClassicGroupRecord,
    ClassicMemberRecord,
    ClassicProtocolRecord,
    ConsumerGroupRecord,
    ConsumerMemberRecord,
    PartitionsRecord,
    TopicRecord,
)
from zkconsumer.kafka.consumer_protocol import (
    ProtocolInvalid,
    assignment_user_data,
    decode_assignment,
    decode_subscription,
    encode_assignment,
)
from zkconsumer.types import TopicPartition

#: the first ConsumerGroupHeartbeat version whose members generate their own member id (KIP-1082)
CLIENT_MEMBER_ID_VERSION = 1
#: the first OffsetCommit version a member of a consumer group must use
CONSUMER_OFFSET_COMMIT_VERSION = 9
#: the group and assignment epochs of a new consumer group (Kafka 4.3 on, KAFKA-20268): epoch 1 is an empty
#: assignment, so the first member's join makes epoch 2 and every member's epoch is above 0, which means "joining"
NEW_GROUP_EPOCH = 1


#: ConsumerGroupDescribe's ``member_type`` of a member by the protocol it speaks
CLASSIC_MEMBER_TYPE, CONSUMER_MEMBER_TYPE = 0, 1
#: ``group.consumer.migration.policy``'s values, as Kafka spells them
MIGRATION_POLICIES = ("bidirectional", "upgrade", "downgrade", "disabled")


class ServerAssignor(Protocol):
    """A server-side assignor: the new target assignment of every member of the spec (may raise
    :class:`~zkconsumer.assignors.model.AssignmentError`)."""

    def __call__(self, spec: GroupSpec, /) -> TargetAssignment: ...


#: the server-side assignors by the names clients and ``group.consumer.assignors`` give them
SERVER_ASSIGNORS: Mapping[str, ServerAssignor] = {"uniform": uniform_assign, "range": range_assign}


@dataclass(frozen=True)
class ConsumerGroupConfig:
    """The broker settings of Kafka's consumer groups, with Kafka 4.x's defaults. :meth:`check` is Kafka's check of
    them at a broker's start (``GroupCoordinatorConfig``): a session or heartbeat interval outside its bounds is
    refused, so a shorter one needs its minimum lowered too, as on Kafka; the state machine itself takes any."""

    #: ``group.consumer.session.timeout.ms``
    session_timeout_ms: int = 45_000
    #: ``group.consumer.heartbeat.interval.ms``
    heartbeat_interval_ms: int = 5_000
    #: ``group.consumer.assignors``: the server assignors members may name; the first is the default
    assignors: tuple[str, ...] = ("uniform", "range")
    #: ``group.consumer.max.size``; ``None``: unlimited
    max_size: int | None = None
    #: ``group.consumer.min.session.timeout.ms`` / ``group.consumer.max.session.timeout.ms``
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    #: ``group.consumer.min.heartbeat.interval.ms`` / ``group.consumer.max.heartbeat.interval.ms``
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000
    #: ``group.consumer.migration.policy``: which online conversions between classic and consumer groups happen
    migration_policy: str = "bidirectional"

    def __post_init__(self) -> None:
        if not self.assignors:
            raise ValueError("group.consumer.assignors must name at least one assignor")
        if self.migration_policy not in MIGRATION_POLICIES:
            raise ValueError(f"group.consumer.migration.policy is {self.migration_policy!r}; one of "
                             f"{', '.join(MIGRATION_POLICIES)}")

    def upgrade_enabled(self) -> bool:
        """Whether a classic group converts to a consumer group when a member sends a ConsumerGroupHeartbeat."""
        return self.migration_policy in ("bidirectional", "upgrade")

    def downgrade_enabled(self) -> bool:
        """Whether a consumer group whose last consumer-protocol member left converts back to a classic group."""
        return self.migration_policy in ("bidirectional", "downgrade")

    def check(self) -> ConsumerGroupConfig:
        """This config, once Kafka's bounds hold.

        :raises ValueError: one that does not, in Kafka's words.
        """
        session = ("group.consumer.session.timeout.ms", self.session_timeout_ms)
        heartbeat = ("group.consumer.heartbeat.interval.ms", self.heartbeat_interval_ms)
        _require_at_least(("group.consumer.max.heartbeat.interval.ms", self.max_heartbeat_interval_ms),
                          ("group.consumer.min.heartbeat.interval.ms", self.min_heartbeat_interval_ms))
        _require_at_least(heartbeat, ("group.consumer.min.heartbeat.interval.ms", self.min_heartbeat_interval_ms))
        _require_at_least(("group.consumer.max.heartbeat.interval.ms", self.max_heartbeat_interval_ms), heartbeat)
        _require_at_least(("group.consumer.max.session.timeout.ms", self.max_session_timeout_ms),
                          ("group.consumer.min.session.timeout.ms", self.min_session_timeout_ms))
        _require_at_least(session, ("group.consumer.min.session.timeout.ms", self.min_session_timeout_ms))
        _require_at_least(("group.consumer.max.session.timeout.ms", self.max_session_timeout_ms), session)
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ValueError("group.consumer.heartbeat.interval.ms must be less than group.consumer.session.timeout.ms")
        return self


def _require_at_least(setting: tuple[str, int], bound: tuple[str, int]) -> None:
    """Kafka's ``require`` of one setting against another, with its words."""
    if setting[1] < bound[1]:
        raise ValueError(f"{setting[0]} ({setting[1]}) must be greater than or equal to {bound[0]} ({bound[1]})")


class _TimerKind(Enum):
    SESSION = "session"
    REBALANCE = "rebalance"
    #: a classic member told to rejoin must send its JoinGroup, and one answered its SyncGroup, within its rebalance
    #: timeout, or it is fenced (Kafka's join and sync timeouts of a consumer group's classic members)
    JOIN = "join"
    SYNC = "sync"


_TimerKey = tuple[_TimerKind, str, str]
"""A timer's key: its kind, group id and member id (Kafka's timer keys), so arming one again replaces it."""


@dataclass(frozen=True)
class ClassicProtocol:
    """What a member speaking the classic protocol in a consumer group keeps of its JoinGroup (Kafka's
    ``ClassicMemberMetadata``): its session timeout, which its heartbeats restart, and its protocols."""

    session_timeout_ms: int
    #: (name, metadata) in the member's order; the first names the protocol its answers carry
    protocols: tuple[tuple[str, bytes], ...]

    def protocol_name(self) -> str:
        return self.protocols[0][0] if self.protocols else ""


@dataclass(frozen=True)
class _Member:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    client_id: str = ""
    client_host: str = ""
    #: subscribed topic names in the order the member last sent them (compared as a set)
    subscribed: tuple[str, ...] = ()
    server_assignor: str | None = None
    #: the subscribed topic regex as last sent (``""``: none, as librdkafka says it)
    regex: str | None = None
    rec: Reconciliation = Reconciliation()
    #: set for a member using the classic protocol (JoinGroup, SyncGroup, Heartbeat)
    classic: ClassicProtocol | None = None


@dataclass
class _Group:
    group_id: str
    group_epoch: int = 0
    assignment_epoch: int = 0
    state: ConsumerGroupState = ConsumerGroupState.EMPTY
    #: members in the order they joined
    members: dict[str, _Member] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)
    target: dict[str, Partitions] = field(default_factory=dict)
    #: every held partition (assigned or pending revocation) -> (member id, that member's epoch)
    holders: dict[tuple[Uuid, int], tuple[str, int]] = field(default_factory=dict)
    #: the subscribed topics that exist, as last seen: the group epoch moves when this changes
    subscription_metadata: dict[str, TopicMetadata] = field(default_factory=dict)

    def partition_epoch(self, topic_id: Uuid, partition: int) -> int:
        holder = self.holders.get((topic_id, partition))
        return FREE if holder is None else holder[1]


class _Rejected(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _check_regex(regex: str) -> None:
    """A new regex must compile (``throwIfRegularExpressionIsInvalid``)."""
    try:
        re.compile(regex)
    except re.error as error:
        raise _Rejected(ErrorCode.invalid_regular_expression,
                        f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {error}.") from None


def _homogeneous(members: Iterable[_Member]) -> bool:
    """``ConsumerGroup.subscriptionType``: without regexes, every member subscribes to the same topic names; with
    them, every member subscribes to one and the same regex and none to names."""
    members = list(members)
    regexes = {m.regex for m in members if m.regex}
    if not regexes:
        return is_homogeneous(m.subscribed for m in members)
    return len(regexes) == 1 and all(m.regex and not m.subscribed for m in members)


def heartbeat_rejected(group_id: str, at_ms: int, member_id: str, member_epoch: int, code: ErrorCode,
                       message: str) -> GroupEvent:
    """``front.consumer_group.heartbeat_rejected``: a heartbeat (or a classic member's join into a consumer group)
    answered ``code``; several of those codes are fatal to librdkafka's consumer, so each one is said."""
    return GroupEvent(ev.FRONT_CONSUMER_GROUP_HEARTBEAT_REJECTED, group_id, at_ms,
                      {"member_id": member_id, "member_epoch": member_epoch, "error": code.name.upper(),
                       "message": message})


def _random_member_id() -> str:
    """A member id as Kafka's ``Uuid.randomUuid().toString()`` prints one: 22 URL-safe base64 characters."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


class ConsumerGroupCoordinator(CoordinatorClock[_TimerKind, int]):
    """Every consumer group of one coordinator. See the module docstring for how to drive it."""

    def __init__(self, config: ConsumerGroupConfig | None = None, *,
                 new_member_id: Callable[[], str] = _random_member_id,
                 assignors: Mapping[str, ServerAssignor] = SERVER_ASSIGNORS) -> None:
        """``assignors``: the server assignors by name, of which ``config.assignors`` picks the ones members may use."""
        super().__init__()
        self.config = config or ConsumerGroupConfig()
        unknown = [name for name in self.config.assignors if name not in assignors]
        if unknown:
            raise ValueError(f"group.consumer.assignors names {', '.join(unknown)}; known: {', '.join(assignors)}")
        self._assignors = assignors
        self._new_member_id = new_member_id
        self._groups: dict[str, _Group] = {}
        self._topics: dict[str, TopicMetadata] = {}
        self._topic_names: dict[Uuid, str] = {}
        #: a REBALANCE timer's value is the epoch its member must have left by the deadline
        self._events: list[GroupEvent] = []

    # --- inputs -------------------------------------------------------------------------------------------------

    def set_topics(self, topics: Iterable[TopicMetadata], now_ms: int) -> tuple[GroupEvent, ...]:
        """The cluster's topics as the edge now sees them; groups notice a change at their next heartbeat."""
        self.advance(now_ms)
        self._topics = {t.name: t for t in topics}
        self._topic_names = {t.topic_id: t.name for t in self._topics.values()}
        return self._drain()

    def heartbeat(self, request: ConsumerGroupHeartbeat, now_ms: int) -> HeartbeatOutcome:
        """Fire the timers due by ``now_ms``, then answer ``request``."""
        self.advance(now_ms)
        try:
            response = self._heartbeat(request)
        except _Rejected as rejected:
            response = ConsumerGroupHeartbeatResponse(rejected.code, rejected.message)
            self._events.append(heartbeat_rejected(request.group_id, self._now, request.member_id,
                                                   request.member_epoch, rejected.code, rejected.message))
        return HeartbeatOutcome(response, self._drain())

    def tick(self, now_ms: int) -> tuple[GroupEvent, ...]:
        """Fire every timer whose deadline is at or before ``now_ms``, each at its deadline, in order."""
        self.advance(now_ms)
        return self._drain()

    def describe(self, request: ConsumerGroupDescribe) -> ConsumerGroupDescribeResponse:
        """ConsumerGroupDescribe, as of the last input."""
        return ConsumerGroupDescribeResponse(tuple(self._describe(group_id) for group_id in request.group_ids))

    def list_groups(self) -> tuple[ListedGroup, ...]:
        """ListGroups' rows for the consumer groups, to add to the classic coordinator's (filters as there)."""
        return tuple(ListedGroup(g.group_id, CONSUMER_GROUP_TYPE, g.state.value, CONSUMER_GROUP_TYPE)
                     for g in self._groups.values())

    def delete_group(self, group_id: str, now_ms: int) -> tuple[ErrorCode, tuple[GroupEvent, ...]]:
        """DeleteGroups for one consumer group: only an empty group may go (NON_EMPTY_GROUP otherwise)."""
        self.advance(now_ms)
        group = self._groups.get(group_id)
        if group is None:
            return ErrorCode.group_id_not_found, self._drain()
        if group.members:
            return ErrorCode.non_empty_group, self._drain()
        del self._groups[group_id]
        self._set_state(group, ConsumerGroupState.DEAD)
        self._event(ev.FRONT_CONSUMER_GROUP_DELETED, group_id)
        return ErrorCode.none, self._drain()

    def offset_commit_error(self, group_id: str, member_id: str, member_epoch: int, api_version: int,
                            transactional: bool = False, instance_id: str | None = None) -> ErrorCode:
        """Whether an OffsetCommit to consumer group ``group_id`` may be stored
        (``ConsumerGroup.validateOffsetCommit``): a commit with a negative epoch to an empty group is an admin's, and
        so is a transactional one naming no member, no epoch and no instance to any group (Kafka 4.0 on,
        KAFKA-18060: TxnOffsetCommit does not require them); otherwise the member must exist, commit with v9+ (unless
        transactional) and name its current epoch."""
        group = self._groups.get(group_id)
        if group is None:
            return ErrorCode.group_id_not_found
        if member_epoch < 0 and not group.members:
            return ErrorCode.none
        if transactional and member_epoch == -1 and not member_id and instance_id is None:
            return ErrorCode.none
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.unknown_member_id
        if member.classic is not None:  # a classic member commits with its generation, at any version
            return ErrorCode.none if member_epoch == member.rec.member_epoch else ErrorCode.illegal_generation
        if not transactional and api_version < CONSUMER_OFFSET_COMMIT_VERSION:
            return ErrorCode.unsupported_version
        return ErrorCode.none if member_epoch == member.rec.member_epoch else ErrorCode.stale_member_epoch

    def subscribed_topics(self, group_id: str) -> frozenset[str]:
        """The topics the group's members subscribe to, by name or by regex (``ConsumerGroup.isSubscribedToTopic``)."""
        group = self._groups.get(group_id)
        if group is None:
            return frozenset()
        return frozenset(name for member in group.members.values() for name in self._topic_names_of(member))

    def offset_fetch_error(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """Whether an OffsetFetch naming a member may read (``ConsumerGroup.validateOffsetFetch``)."""
        group = self._groups.get(group_id)
        if group is None or (member_id is None and member_epoch < 0):
            return ErrorCode.none
        member = group.members.get(member_id or "")
        if member is None:
            return ErrorCode.unknown_member_id
        return ErrorCode.none if member_epoch == member.rec.member_epoch else ErrorCode.stale_member_epoch

    # --- the online upgrade, and the classic protocol inside a consumer group ------------------------------------

    def upgrade_refused(self, group_id: str, record: ClassicGroupRecord,
                        now_ms: int) -> tuple[str | None, tuple[GroupEvent, ...]]:
        """Why the live classic group of ``record`` cannot become a consumer group (``validateOnlineUpgrade``, and the
        decoding ``fromClassicGroup`` does), in Kafka's words, or ``None``: the migration policy,
        ``group.consumer.max.size``, a protocol type other than ``consumer``, a member's subscription or assignment
        that is not ConsumerProtocol's, or an assignment carrying an assignor's user data, which a consumer group would
        lose (Kafka 4.0 on, KAFKA-18134: a custom assignor)."""
        self.advance(now_ms)
        refused = reason = None
        if not self.config.upgrade_enabled():
            refused, reason = "online upgrade is disabled", (
                f"group.consumer.migration.policy is {self.config.migration_policy}")
        elif self.config.max_size is not None and len(record.members) >= self.config.max_size:
            refused, reason = "the group size exceeds the consumer group maximum size", (
                f"its {len(record.members)} members reach group.consumer.max.size {self.config.max_size}")
        elif record.protocol_type != CONSUMER_GROUP_TYPE:
            refused, reason = "the group does not use the consumer embedded protocol", (
                f"its protocol type {record.protocol_type!r} is not {CONSUMER_GROUP_TYPE!r}")
        else:
            try:
                held = [tp for m in record.members for tp in _classic_assignment(m)]
                if len(held) != len(set(held)):
                    refused, reason = "the embedded consumer protocol is malformed", "two members' assignments overlap"
                elif any(assignment_user_data(m.assignment) for m in record.members):
                    refused = ("an unsupported custom assignor is in use. Please refer to the documentation or switch "
                               "to a default assignor before re-attempting the upgrade")
                    reason = "a member's assignment carries an assignor's user data"
            except ProtocolInvalid as exc:
                refused, reason = "the embedded consumer protocol is malformed", (
                    f"a member's metadata is not ConsumerProtocol's: {exc}")
        if refused is None:
            return None, self._drain()
        self._event(ev.FRONT_CONSUMER_GROUP_UPGRADE_REFUSED, group_id, reason=reason)
        return f"Cannot upgrade classic group {group_id} to consumer group because {refused}.", self._drain()

    def upgrade(self, group_id: str, record: ClassicGroupRecord, classic_state: str,
                now_ms: int) -> tuple[GroupEvent, ...]:
        """Take over a live classic group that :meth:`upgrade_refused` passed (``convertToConsumerGroup``,
        ``ConsumerGroup.fromClassicGroup``): every member stays, speaking the classic protocol, at the classic
        generation as its member epoch (and as the group and assignment epochs) with its current assignment as its
        assigned partitions and its target, so that nothing moves until the group epoch does."""
        self.advance(now_ms)
        generation = record.generation
        group = _Group(group_id, group_epoch=generation, assignment_epoch=generation)
        for m in record.members:
            assigned = self._partitions_by_id(_classic_assignment(m))
            member = _Member(m.member_id, m.group_instance_id, None, m.rebalance_timeout_ms, m.client_id,
                             m.client_host, decode_subscription(m.subscription).topics,
                             rec=Reconciliation(MemberState.STABLE, generation, generation, assigned),
                             classic=ClassicProtocol(m.session_timeout_ms, ((record.protocol or "", m.subscription),)))
            self._put(group, None, member)
            group.target[m.member_id] = assigned
            self._schedule(_TimerKind.SESSION, group_id, m.member_id, m.session_timeout_ms)
        group.subscription_metadata = self._subscription_metadata(group.members.values())
        group.state = _state_of(group)
        self._groups[group_id] = group
        self._event(ev.FRONT_CONSUMER_GROUP_UPGRADED, group_id, generation=generation, classic_state=classic_state,
                    members=list(group.members))
        return self._drain()

    def downgrade(self, group_id: str, now_ms: int,
                  classic_max_size: int | None = None) -> tuple[ClassicGroupRecord | None, tuple[GroupEvent, ...]]:
        """Give up a consumer group whose members all speak the classic protocol, once a member left it by any means
        (``validateOnlineDowngradeWithFencedMembers``, ``convertToClassicGroup``), when
        ``group.consumer.migration.policy`` allows it and its members fit the classic ``group.max.size``
        (``classic_max_size``): the classic group's record, at the assignment epoch as its generation (the epoch the
        members reconciled to: the leave moved only the group epoch), each member with its assigned partitions as a
        ConsumerProtocol assignment and the metadata of its first protocol, the first member the
        leader; ``None`` (and the group kept) otherwise. The classic coordinator takes it in and rebalances it."""
        self.advance(now_ms)
        group = self._groups.get(group_id)
        if (group is None or not group.members or not self.config.downgrade_enabled()
                or any(m.classic is None for m in group.members.values())
                or (classic_max_size is not None and len(group.members) > classic_max_size)):
            return None, self._drain()
        members = list(group.members.values())
        protocol = members[0].classic.protocol_name() if members[0].classic else ""
        record = ClassicGroupRecord(CONSUMER_GROUP_TYPE, group.assignment_epoch, protocol, members[0].member_id, tuple(
            ClassicMemberRecord(m.member_id, m.instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                                self._session_ms(m), _metadata_of(m, protocol), encode_assignment(
                                    {self._topic_names[t]: ps for t, ps in m.rec.assigned.items()
                                     if t in self._topic_names and ps}))
            for m in members))
        del self._groups[group_id]
        self._timers.cancel_where(lambda key: key[1] == group_id)
        self._event(ev.FRONT_CONSUMER_GROUP_DOWNGRADED, group_id, generation=group.assignment_epoch,
                    members=[m.member_id for m in members])
        return record, self._drain()

    def classic_join(self, request: classic.JoinGroup, now_ms: int) -> tuple[classic.JoinGroupResponse,
                                                                                tuple[GroupEvent, ...]]:
        """A classic member's JoinGroup to a consumer group (``classicGroupJoinToConsumerGroup``): its subscription
        and owned partitions (ConsumerProtocol's, of its first protocol) go through the heartbeat's steps, and it is
        answered at once with its member epoch as the generation, as a follower (no members to assign: the
        coordinator assigns), its assignment to come in SyncGroup."""
        self.advance(now_ms)
        group = self._groups.get(request.group_id)
        if group is None or request.protocol_type != CONSUMER_GROUP_TYPE or not request.protocols:
            return classic.JoinGroupResponse(ErrorCode.inconsistent_group_protocol, request.member_id), self._drain()
        try:
            subscription = decode_subscription(request.protocols[0].metadata)
        except ProtocolInvalid:
            return classic.JoinGroupResponse(ErrorCode.inconsistent_group_protocol, request.member_id), self._drain()
        known = group.members.get(request.member_id)
        if known is not None and known.classic is None:
            return classic.JoinGroupResponse(ErrorCode.unknown_member_id, request.member_id), self._drain()
        member_id = request.member_id
        if not member_id:
            member_id = self._new_member_id()
            if request.api_version >= REQUIRE_KNOWN_MEMBER_ID_VERSION and request.group_instance_id is None:
                return classic.JoinGroupResponse(ErrorCode.member_id_required, member_id), self._drain()
        protocol = ClassicProtocol(request.session_timeout_ms, tuple((p.name, p.metadata) for p in request.protocols))
        heartbeat = ConsumerGroupHeartbeat(
            request.group_id, member_id, known.rec.member_epoch if known else JOIN_GROUP_MEMBER_EPOCH,
            request.group_instance_id, None, request.rebalance_timeout_ms, subscription.topics,
            owned=self._partitions_by_id(subscription.owned), client_id=request.client_id,
            client_host=request.client_host, api_version=CLIENT_MEMBER_ID_VERSION)
        try:
            self._update_member(heartbeat, protocol)
        except _Rejected as rejected:
            self._events.append(heartbeat_rejected(request.group_id, self._now, member_id, heartbeat.member_epoch,
                                                   rejected.code, rejected.message))
            return classic.JoinGroupResponse(rejected.code, member_id), self._drain()
        member = group.members[member_id]
        self._timers.cancel((_TimerKind.JOIN, request.group_id, member_id))
        self._schedule(_TimerKind.SYNC, request.group_id, member_id, request.rebalance_timeout_ms)
        return classic.JoinGroupResponse(
            ErrorCode.none, member_id, member.rec.member_epoch, CONSUMER_GROUP_TYPE, protocol.protocol_name(),
            leader=""), self._drain()

    def classic_sync(self, request: classic.SyncGroup, now_ms: int) -> tuple[classic.SyncGroupResponse,
                                                                                tuple[GroupEvent, ...]]:
        """A classic member's SyncGroup (``classicGroupSyncToConsumerGroup``): REBALANCE_IN_PROGRESS where the group
        epoch moved on since its JoinGroup (unless it is still revoking: it rejoins once it has), else its assigned
        partitions as a ConsumerProtocol assignment; any assignment a client sends is ignored."""
        self.advance(now_ms)
        member, code = self._classic_member(request)
        if member is None or member.classic is None:
            return classic.SyncGroupResponse(code), self._drain()
        name = member.classic.protocol_name()
        if ((request.protocol_type is not None and request.protocol_type != CONSUMER_GROUP_TYPE)
                or (request.protocol_name is not None and request.protocol_name != name)):
            return classic.SyncGroupResponse(ErrorCode.inconsistent_group_protocol), self._drain()
        group = self._groups[request.group_id]
        if group.group_epoch > member.rec.member_epoch and member.rec.state is not MemberState.UNREVOKED_PARTITIONS:
            self._rejoin_within_rebalance_timeout(group, member)
            return classic.SyncGroupResponse(ErrorCode.rebalance_in_progress), self._drain()
        self._timers.cancel((_TimerKind.SYNC, request.group_id, member.member_id))
        self._schedule(_TimerKind.SESSION, request.group_id, member.member_id, self._session_ms(member))
        by_name: dict[str, frozenset[int]] = {}
        for topic_id, numbers in member.rec.assigned.items():
            if topic_id in self._topic_names and numbers:
                by_name[self._topic_names[topic_id]] = numbers
        return classic.SyncGroupResponse(ErrorCode.none, encode_assignment(by_name), CONSUMER_GROUP_TYPE,
                                         name), self._drain()

    def classic_heartbeat(self, request: classic.Heartbeat, now_ms: int) -> tuple[classic.HeartbeatResponse,
                                                                                    tuple[GroupEvent, ...]]:
        """A classic member's Heartbeat (``classicGroupHeartbeatToConsumerGroup``): REBALANCE_IN_PROGRESS, so that it
        rejoins, while the group epoch is ahead of the member's, while it must revoke partitions, or once every
        partition it waits for is free (``waitingOnUnreleasedPartition``: an eager member revokes all it owns at each
        rejoin, so it is not asked to while one is still held). It must then rejoin within its rebalance timeout."""
        self.advance(now_ms)
        member, code = self._classic_member(request)
        if member is None:
            return classic.HeartbeatResponse(code), self._drain()
        group = self._groups[request.group_id]
        self._schedule(_TimerKind.SESSION, request.group_id, member.member_id, self._session_ms(member))
        rec = member.rec
        waiting = {t: ps - rec.assigned.get(t, frozenset()) for t, ps in group.target.get(member.member_id, {}).items()}
        released = all(group.partition_epoch(t, p) == FREE for t, ps in waiting.items() for p in ps)
        rejoin = (rec.member_epoch < group.group_epoch or rec.state is MemberState.UNREVOKED_PARTITIONS
                  or (rec.state is MemberState.UNRELEASED_PARTITIONS and released))
        if not rejoin:
            return classic.HeartbeatResponse(ErrorCode.none), self._drain()
        self._rejoin_within_rebalance_timeout(group, member)
        return classic.HeartbeatResponse(ErrorCode.rebalance_in_progress), self._drain()

    def _rejoin_within_rebalance_timeout(self, group: _Group, member: _Member) -> None:
        """``scheduleConsumerGroupJoinTimeoutIfAbsent``: a classic member told to rejoin is fenced unless its JoinGroup
        comes within its rebalance timeout, counted from the first time it was told."""
        key = (_TimerKind.JOIN, group.group_id, member.member_id)
        if not self._timers.armed(key):
            self._schedule(_TimerKind.JOIN, group.group_id, member.member_id, member.rebalance_timeout_ms)

    def classic_leave(self, request: classic.LeaveGroup, now_ms: int) -> tuple[classic.LeaveGroupResponse,
                                                                                 tuple[GroupEvent, ...]]:
        """A LeaveGroup to a consumer group (``classicGroupLeaveToConsumerGroup``): each member named, by member id
        or instance id, leaves as a heartbeat's -1 would make it."""
        self.advance(now_ms)
        group = self._groups[request.group_id]
        rows = []
        for leaving in request.members:
            member_id = leaving.member_id or group.static_members.get(leaving.group_instance_id or "", "")
            member = group.members.get(member_id)
            if member is None:
                rows.append(classic.LeaveMemberResponse(leaving.member_id, leaving.group_instance_id,
                                                        ErrorCode.unknown_member_id))
                continue
            if leaving.group_instance_id is not None and member.instance_id != leaving.group_instance_id:
                rows.append(classic.LeaveMemberResponse(leaving.member_id, leaving.group_instance_id,
                                                        ErrorCode.fenced_instance_id))
                continue
            self._event(ev.FRONT_CONSUMER_GROUP_MEMBER_LEFT, group.group_id, member_id=member.member_id,
                        instance_id=member.instance_id, temporary=False)
            self._fence(group, member, "member_left")
            rows.append(classic.LeaveMemberResponse(leaving.member_id, leaving.group_instance_id))
        return classic.LeaveGroupResponse(ErrorCode.none, tuple(rows)), self._drain()

    def _classic_member(self, request: classic.GenerationRequest) -> tuple[_Member | None, ErrorCode]:
        """``validateClassicGroupHeartbeat``: a classic member of the group, at the generation its member epoch."""
        group = self._groups.get(request.group_id)
        member = group.members.get(request.member_id) if group else None
        if group is None or member is None or member.classic is None:
            return None, ErrorCode.unknown_member_id
        if request.group_instance_id is not None and member.instance_id != request.group_instance_id:
            return None, ErrorCode.fenced_instance_id
        if request.generation_id != member.rec.member_epoch:
            return None, ErrorCode.illegal_generation
        return member, ErrorCode.none

    def _partitions_by_id(self, partitions: Iterable[TopicPartition]) -> Partitions:
        """Named partitions by topic id, those of topics the metadata does not know left out."""
        by_id: dict[Uuid, set[int]] = {}
        for tp in partitions:
            topic = self._topics.get(tp.topic)
            if topic is not None and 0 <= tp.partition < topic.partitions:
                by_id.setdefault(topic.topic_id, set()).add(tp.partition)
        return {topic_id: frozenset(numbers) for topic_id, numbers in by_id.items()}

    # --- read-only views (tests, the edge's status) ---------------------------------------------------------------

    def has_group(self, group_id: str) -> bool:
        return group_id in self._groups

    def group_ids(self) -> list[str]:
        return list(self._groups)

    def state_of(self, group_id: str) -> ConsumerGroupState:
        group = self._groups.get(group_id)
        return group.state if group else ConsumerGroupState.DEAD

    def group_epoch_of(self, group_id: str) -> int:
        group = self._groups.get(group_id)
        return group.group_epoch if group else -1

    def assignment_epoch_of(self, group_id: str) -> int:
        group = self._groups.get(group_id)
        return group.assignment_epoch if group else -1

    def members_of(self, group_id: str) -> list[str]:
        group = self._groups.get(group_id)
        return list(group.members) if group else []

    def member_reconciliation(self, group_id: str, member_id: str) -> Reconciliation | None:
        """A member's epoch, state, assigned partitions and partitions pending revocation."""
        group = self._groups.get(group_id)
        member = group.members.get(member_id) if group else None
        return member.rec if member else None

    def target_of(self, group_id: str, member_id: str) -> Partitions:
        group = self._groups.get(group_id)
        return group.target.get(member_id, {}) if group else {}

    # --- durable state (:mod:`.group_records`) ---------------------------------------------------------------------

    def record_of(self, group_id: str) -> ConsumerGroupRecord | None:
        """The group as Kafka's records of a consumer group hold it; ``None`` for a group that is not there."""
        group = self._groups.get(group_id)
        if group is None:
            return None
        return ConsumerGroupRecord(
            group_epoch=group.group_epoch, assignment_epoch=group.assignment_epoch,
            topics=tuple(TopicRecord(t.name, str(t.topic_id), t.partitions)
                         for t in group.subscription_metadata.values()),
            members=tuple(ConsumerMemberRecord(
                m.member_id, m.instance_id, m.rack_id, m.rebalance_timeout_ms, m.client_id, m.client_host,
                m.subscribed, m.server_assignor, m.regex, m.rec.state.value, m.rec.member_epoch,
                m.rec.previous_member_epoch, _partitions_record(m.rec.assigned),
                _partitions_record(m.rec.pending_revocation), _partitions_record(group.target.get(m.member_id, {})),
                None if m.classic is None else m.classic.session_timeout_ms,
                () if m.classic is None else tuple(ClassicProtocolRecord(n, md) for n, md in m.classic.protocols))
                for m in group.members.values()))

    def load(self, group_id: str, record: ConsumerGroupRecord, now_ms: int) -> tuple[GroupEvent, ...]:
        """Take in a group replayed from its record, as Kafka replays a consumer group's records and ``onLoaded``
        re-arms its timers: every member, classic ones included, a whole ``group.consumer.session.timeout.ms`` from
        ``now_ms``, and a member still revoking partitions its rebalance timeout."""
        self.advance(now_ms)
        self._timers.cancel_where(lambda key: key[1] == group_id)
        group = _Group(group_id, group_epoch=record.group_epoch, assignment_epoch=record.assignment_epoch,
                       subscription_metadata={t.name: TopicMetadata(t.name, Uuid.parse(t.topic_id), t.partitions)
                                              for t in record.topics})
        self._groups[group_id] = group
        for t in record.topics:
            self._topic_names.setdefault(Uuid.parse(t.topic_id), t.name)
        for m in record.members:
            rec = Reconciliation(MemberState(m.state), m.member_epoch, m.previous_member_epoch,
                                 _partitions_of(m.assigned), _partitions_of(m.pending_revocation))
            classic_protocol = None if m.classic_session_timeout_ms is None else ClassicProtocol(
                m.classic_session_timeout_ms, tuple((p.name, p.metadata) for p in m.classic_protocols))
            self._put(group, None, _Member(m.member_id, m.instance_id, m.rack_id, m.rebalance_timeout_ms,
                                           m.client_id, m.client_host, m.subscribed, m.server_assignor, m.regex, rec,
                                           classic_protocol))
            group.target[m.member_id] = _partitions_of(m.target)
            # Kafka's onLoaded: group.consumer.session.timeout.ms for every member, a classic one's too (its next
            # heartbeat restarts its own session)
            self._schedule(_TimerKind.SESSION, group_id, m.member_id, self.config.session_timeout_ms)
            if rec.state is MemberState.UNREVOKED_PARTITIONS:
                self._schedule(_TimerKind.REBALANCE, group_id, m.member_id, m.rebalance_timeout_ms, m.member_epoch)
        group.state = _state_of(group)
        self._event(ev.FRONT_CONSUMER_GROUP_LOADED, group_id, state=group.state.value, group_epoch=group.group_epoch,
                    assignment_epoch=group.assignment_epoch, members=list(group.members))
        return self._drain()

    # --- plumbing -------------------------------------------------------------------------------------------------

    def _drain(self) -> tuple[GroupEvent, ...]:
        events = tuple(self._events)
        self._events = []
        return events

    def _event(self, name: str, group_id: str, **fields: object) -> None:
        self._events.append(GroupEvent(name, group_id, self._now, fields))

    def _partitions_field(self, partitions: Partitions) -> list[dict[str, object]]:
        # the topic's name looked up once a topic: an id's str() is a base64 encoding, most of the cost per partition
        return partition_rows((self._topic_names.get(topic_id) or str(topic_id), numbers)
                              for topic_id, numbers in partitions.items())

    def _schedule(self, kind: _TimerKind, group_id: str, member_id: str, after_ms: int, member_epoch: int = 0) -> None:
        self._timers.arm((kind, group_id, member_id), self._now + after_ms, member_epoch)

    def _session_ms(self, member: _Member) -> int:
        """The member's session: a classic member's own, else the group's (``group.consumer.session.timeout.ms``)."""
        return member.classic.session_timeout_ms if member.classic is not None else self.config.session_timeout_ms

    def _cancel_timers(self, group_id: str, member_id: str) -> None:
        for kind in _TimerKind:
            self._timers.cancel((kind, group_id, member_id))

    def _fire(self, due: Due[_TimerKey, int]) -> None:
        """A due timer, at its deadline: a member expired or fenced as it would have been on time."""
        kind, group_id, member_id = due.key
        group = self._groups.get(group_id)
        member = group.members.get(member_id) if group else None
        if group is None or member is None:
            return
        if kind is _TimerKind.SESSION:
            self._event(ev.FRONT_CONSUMER_GROUP_MEMBER_EXPIRED, group.group_id, member_id=member.member_id,
                        instance_id=member.instance_id, session_timeout_ms=self._session_ms(member))
            self._fence(group, member, "member_expired")
        elif kind is not _TimerKind.REBALANCE or member.rec.member_epoch == due.value:
            self._event(ev.FRONT_CONSUMER_GROUP_MEMBER_FENCED, group.group_id, member_id=member.member_id,
                        instance_id=member.instance_id, member_epoch=member.rec.member_epoch,
                        rebalance_timeout_ms=member.rebalance_timeout_ms)
            self._fence(group, member, "member_fenced")

    # --- the heartbeat --------------------------------------------------------------------------------------------

    def _validate(self, request: ConsumerGroupHeartbeat) -> None:
        def invalid(message: str) -> _Rejected:
            return _Rejected(ErrorCode.invalid_request, message)

        epoch = request.member_epoch
        must_name_member = (request.api_version >= CLIENT_MEMBER_ID_VERSION or epoch > 0
                            or epoch == LEAVE_GROUP_MEMBER_EPOCH)
        if must_name_member and not request.member_id.strip():
            raise invalid("MemberId can't be empty.")
        for value, what in ((request.group_id, "GroupId"), (request.instance_id, "InstanceId"),
                            (request.rack_id, "RackId")):
            if value is not None and not value.strip():
                raise invalid(f"{what} can't be empty.")
        if epoch == JOIN_GROUP_MEMBER_EPOCH:
            if request.rebalance_timeout_ms == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            if request.owned is None or any(request.owned.values()):
                raise invalid("TopicPartitions must be empty when (re-)joining.")
            # Kafka 4.0 on: an empty list of names or an empty regex joins subscribed to nothing, a member all the same
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if request.instance_id is None:
                raise invalid("InstanceId can't be null.")
        elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise invalid("MemberEpoch is invalid.")
        if request.server_assignor is not None and request.server_assignor not in self.config.assignors:
            raise _Rejected(ErrorCode.unsupported_assignor,
                            f"ServerAssignor {request.server_assignor} is not supported. Supported assignors: "
                            f"{', '.join(self.config.assignors)}.")

    def _heartbeat(self, request: ConsumerGroupHeartbeat) -> ConsumerGroupHeartbeatResponse:
        self._validate(request)
        if request.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return self._leave(request)
        return self._update_member(request)

    def _update_member(self, request: ConsumerGroupHeartbeat,
                       classic_protocol: ClassicProtocol | None = None) -> ConsumerGroupHeartbeatResponse:
        """A member's heartbeat once checked (a classic member's JoinGroup too, ``classic_protocol`` set): the
        member updated, the group epoch and target assignment moved, the member reconciled."""
        joining = request.member_epoch == JOIN_GROUP_MEMBER_EPOCH
        group = self._groups.get(request.group_id)
        if group is None:
            if not joining:
                raise _Rejected(ErrorCode.group_id_not_found, f"Consumer group {request.group_id} not found.")
            group = _Group(request.group_id, group_epoch=NEW_GROUP_EPOCH, assignment_epoch=NEW_GROUP_EPOCH)
        if (self.config.max_size is not None and len(group.members) >= self.config.max_size
                and request.member_id not in group.members):
            raise _Rejected(ErrorCode.group_max_size_reached, "The consumer group has reached its maximum capacity "
                            f"of {self.config.max_size} members.")

        member_id = request.member_id or self._new_member_id()
        member, replaced = self._member_for(group, request, member_id, classic_protocol is not None)
        updated = replace(
            member,
            instance_id=request.instance_id if request.instance_id is not None else member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=(request.rebalance_timeout_ms if request.rebalance_timeout_ms != -1
                                  else member.rebalance_timeout_ms),
            server_assignor=request.server_assignor if request.server_assignor is not None else member.server_assignor,
            subscribed=(request.subscribed_topic_names if request.subscribed_topic_names is not None
                        else member.subscribed),
            regex=request.subscribed_topic_regex if request.subscribed_topic_regex is not None else member.regex,
            client_id=request.client_id,
            client_host=request.client_host,
            classic=classic_protocol,  # a ConsumerGroupHeartbeat makes its member a consumer-protocol one
        )

        if updated.regex and updated.regex != member.regex and not any(
                m.regex == updated.regex for m in group.members.values() if m.member_id != member.member_id):
            _check_regex(updated.regex)

        # 1. the group epoch, bumped on a new or changed subscription or changed metadata of the subscribed topics
        members = dict(group.members)
        if replaced is not None:
            del members[replaced.member_id]
        members[member_id] = updated
        new_member = member_id not in group.members and replaced is None
        reason = None
        if new_member:
            reason = "member_joined"
        elif (frozenset(updated.subscribed) != frozenset(member.subscribed)
              or (updated.regex or None) != (member.regex or None)):
            reason = "subscription_changed"
        metadata = self._subscription_metadata(members.values())
        if reason is None and metadata != group.subscription_metadata:
            reason = "metadata_changed"
        group_epoch = group.group_epoch + 1 if reason else group.group_epoch

        # 2. a new target assignment when the group epoch is ahead of it (computed before any change is made, so an
        #    assignor failure leaves the group as it was, as Kafka's failed write does)
        targets = dict(group.target)
        if replaced is not None:
            targets[member_id] = targets.pop(replaced.member_id, {})
        assignor = None
        if group_epoch > group.assignment_epoch:
            assignor = self._preferred_assignor(members.values())
            try:
                computed = self._assignors[assignor](self._spec(members, metadata, targets))
            except AssignmentError as error:
                raise _Rejected(ErrorCode.unknown_server_error, f"Failed to compute a new target assignment for "
                                f"epoch {group_epoch}: {error}") from None
            targets = {mid: {t: frozenset(ps) for t, ps in computed.get(mid, {}).items() if ps} for mid in members}

        # commit: the group, the member, its reconciliation
        if request.group_id not in self._groups:
            self._groups[request.group_id] = group
            self._event(ev.FRONT_CONSUMER_GROUP_CREATED, group.group_id)
        if replaced is not None:
            self._remove(group, replaced)
            self._event(ev.FRONT_CONSUMER_GROUP_STATIC_MEMBER_REPLACED, group.group_id,
                        instance_id=updated.instance_id, old_member_id=replaced.member_id, new_member_id=member_id)
        if new_member:
            self._event(ev.FRONT_CONSUMER_GROUP_MEMBER_JOINED, group.group_id, member_id=member_id,
                        instance_id=updated.instance_id, client_id=updated.client_id,
                        subscribed_topic_names=list(updated.subscribed), server_assignor=updated.server_assignor,
                        rebalance_timeout_ms=updated.rebalance_timeout_ms)
        group.target = targets
        group.subscription_metadata = metadata
        if reason:
            self._bump(group, group_epoch, reason)
        if assignor is not None:
            group.assignment_epoch = group_epoch
            self._event(ev.FRONT_CONSUMER_GROUP_TARGET_ASSIGNMENT_COMPUTED, group.group_id, epoch=group_epoch,
                        assignor=assignor, members=[{"member_id": mid, "partitions": self._partitions_field(t)}
                                                    for mid, t in targets.items()])
        previous = group.members.get(member_id, member)
        self._put(group, previous, updated)

        # 3. reconciliation towards the target
        current = group.members[member_id]
        subscription_changed = reason == "subscription_changed"
        if subscription_changed or not current.rec.is_reconciled_to(group.assignment_epoch):
            subscribed = {self._topics[name].topic_id for name in self._topic_names_of(current) if name in self._topics}
            rec = reconcile(current.rec, group.assignment_epoch, group.target.get(member_id, {}),
                            group.partition_epoch, request.owned, subscribed, subscription_changed)
            if rec != current.rec:
                self._put(group, current, replace(current, rec=rec))
                if rec.state is MemberState.UNREVOKED_PARTITIONS:
                    self._schedule(_TimerKind.REBALANCE, group.group_id, member_id, current.rebalance_timeout_ms,
                                   rec.member_epoch)
                else:
                    self._timers.cancel((_TimerKind.REBALANCE, group.group_id, member_id))
        self._update_state(group)
        self._schedule(_TimerKind.SESSION, group.group_id, member_id, self._session_ms(group.members[member_id]))

        final = group.members[member_id]
        full = joining or (request.rebalance_timeout_ms != -1 and request.subscribed_topic_names is not None
                           and request.owned is not None)
        changed = final.rec.assigned != member.rec.assigned
        return ConsumerGroupHeartbeatResponse(
            ErrorCode.none, member_id=member_id, member_epoch=final.rec.member_epoch,
            heartbeat_interval_ms=self.config.heartbeat_interval_ms,
            assignment=dict(final.rec.assigned) if full or changed else None)

    def _member_for(self, group: _Group, request: ConsumerGroupHeartbeat, member_id: str,
                    classic_protocol: bool = False) -> tuple[_Member, _Member | None]:
        """The member the heartbeat is about (a new one on a join), and the static member it replaces, if any
        (``getOrMaybeSubscribeStaticConsumerGroupMember``; ``classic_protocol``: a classic member's JoinGroup)."""
        joining = request.member_epoch == JOIN_GROUP_MEMBER_EPOCH
        if request.instance_id is None:
            known = group.members.get(member_id)
            if known is None:
                if not joining:
                    raise _Rejected(ErrorCode.unknown_member_id,
                                    f"Member {member_id} is not a member of group {group.group_id}.")
                return _Member(member_id), None
            self._check_epoch(known, request)
            return known, None
        static_id = group.static_members.get(request.instance_id)
        static = group.members[static_id] if static_id is not None else None
        if joining:
            if static is None:
                return group.members.get(member_id) or _Member(member_id), None
            # Kafka checks the instance, not the member id: even the same member id may only rejoin after its -2; but
            # where either side speaks the classic protocol, whose static members never say they leave, the new one
            # takes the instance at once
            if (not classic_protocol and static.classic is None
                    and static.rec.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                raise _Rejected(ErrorCode.unreleased_instance_id,
                                f"Static member {member_id} with instance id {request.instance_id} cannot join the "
                                f"group because the instance id is owned by {static.member_id} member.")
            taking_over = replace(static, member_id=member_id,
                                  rec=replace(static.rec, member_epoch=0, previous_member_epoch=0))
            return taking_over, static
        if static is None:
            raise _Rejected(ErrorCode.unknown_member_id, f"Instance id {request.instance_id} is unknown.")
        if static.member_id != member_id:
            raise _Rejected(ErrorCode.fenced_instance_id, f"Static member {member_id} with instance id "
                            f"{request.instance_id} was fenced by member {static.member_id}.")
        self._check_epoch(static, request)
        return static, None

    @staticmethod
    def _check_epoch(member: _Member, request: ConsumerGroupHeartbeat) -> None:
        """``throwIfConsumerGroupMemberEpochIsInvalid``, with epoch 0 (a rejoin) always accepted."""
        received, known = request.member_epoch, member.rec.member_epoch
        if received in (JOIN_GROUP_MEMBER_EPOCH, known):
            return
        assigned = member.rec.assigned
        if received < known and received == member.rec.previous_member_epoch and request.owned is not None and all(
                topic_id in assigned and numbers <= assigned[topic_id] for topic_id, numbers in request.owned.items()):
            return
        relation = "greater" if received > known else "smaller"
        raise _Rejected(ErrorCode.fenced_member_epoch,
                        f"The consumer group member has a {relation} member epoch ({received}) than the one known by "
                        f"the group coordinator ({known}). The member must abandon all its partitions and rejoin.")

    def _topic_names_of(self, member: _Member) -> tuple[str, ...]:
        """What the member subscribes to: its topic names, then the topics its regex matches (as a whole name, as
        RE2J's ``matches``) among those the metadata knows."""
        if not member.regex:
            return member.subscribed
        pattern = re.compile(member.regex)
        matched = [name for name in sorted(self._topics) if pattern.fullmatch(name) and name not in member.subscribed]
        return (*member.subscribed, *matched)

    def _subscription_metadata(self, members: Iterable[_Member]) -> dict[str, TopicMetadata]:
        names = sorted({name for m in members for name in self._topic_names_of(m)})
        return {name: self._topics[name] for name in names if name in self._topics}

    def _preferred_assignor(self, members: Iterable[_Member]) -> str:
        """``computePreferredServerAssignor``: the assignor most members name (ties: the first in Java's HashMap order
        of the names, as ``max`` over its entries keeps the first), else the default."""
        counts: dict[str, int] = {}
        for m in members:
            if m.server_assignor is not None:
                counts[m.server_assignor] = counts.get(m.server_assignor, 0) + 1
        if not counts:
            return self.config.assignors[0]
        best = max(counts.values())
        return next(name for name in string_set_order(list(counts), from_collection=False) if counts[name] == best)

    def _spec(self, members: Mapping[str, _Member], metadata: Mapping[str, TopicMetadata],
              targets: Mapping[str, Partitions]) -> GroupSpec:
        """The assignor's view (``TargetAssignmentBuilder.build``): members in a fresh HashMap's order, each with its
        subscribed topic ids and its previous target assignment."""
        ids = {name: topic.topic_id for name, topic in metadata.items()}
        spec_members = []
        subscribed: dict[tuple[str, ...], tuple[Uuid, ...]] = {}  # one order per distinct subscription
        for member_id in members_map_order(list(members)):
            member = members[member_id]
            target = targets.get(member_id, {})
            names = self._topic_names_of(member)
            if names not in subscribed:
                subscribed[names] = subscribed_ids_order(names, ids)
            spec_members.append(SpecMember(
                member_id=member_id,
                subscribed=subscribed[names],
                target=target_from_record([(t, sorted(ps)) for t, ps in target.items()]),
                instance_id=member.instance_id,
                subscription_size=len(set(names)),
            ))
        return GroupSpec(
            members=tuple(spec_members),
            partitions={topic.topic_id: topic.partitions for topic in metadata.values()},
            homogeneous=_homogeneous(members.values()),
        )

    # --- group and member bookkeeping -----------------------------------------------------------------------------

    def _put(self, group: _Group, old: _Member | None, new: _Member) -> None:
        """Store ``new`` in place of ``old`` (or add it), moving the partitions it holds; events for what changed."""
        if old is not None and old.member_id in group.members:
            self._release(group, old)
        for tp in new.rec.held():
            holder = group.holders.get(tp)
            if holder is not None and holder[0] != new.member_id:
                raise AssertionError(f"partition {tp} of group {group.group_id} would be held by {new.member_id} "
                                     f"while {holder[0]} holds it")
            group.holders[tp] = (new.member_id, new.rec.member_epoch)
        group.members[new.member_id] = new
        if new.instance_id is not None:
            group.static_members[new.instance_id] = new.member_id
        if old is not None and old.member_id == new.member_id:
            self._reconciliation_events(group, new.member_id, old.rec, new.rec)

    def _release(self, group: _Group, member: _Member) -> None:
        for tp in member.rec.held():
            if group.holders.get(tp, ("",))[0] == member.member_id:
                del group.holders[tp]

    def _remove(self, group: _Group, member: _Member) -> None:
        self._release(group, member)
        del group.members[member.member_id]
        group.target.pop(member.member_id, None)
        if member.instance_id is not None and group.static_members.get(member.instance_id) == member.member_id:
            del group.static_members[member.instance_id]
        self._cancel_timers(group.group_id, member.member_id)

    def _reconciliation_events(self, group: _Group, member_id: str, old: Reconciliation, new: Reconciliation) -> None:
        if new.member_epoch != old.member_epoch and new.member_epoch >= 0:
            self._event(ev.FRONT_CONSUMER_GROUP_MEMBER_EPOCH_ADVANCED, group.group_id, member_id=member_id,
                        **{"from": old.member_epoch, "to": new.member_epoch}, state=new.state.value)
        if new.state is not old.state:
            self._event(ev.FRONT_CONSUMER_GROUP_MEMBER_STATE_CHANGED, group.group_id, member_id=member_id,
                        **{"from": old.state.value, "to": new.state.value})
        if any(ps - old.pending_revocation.get(t, frozenset()) for t, ps in new.pending_revocation.items()):
            self._event(ev.FRONT_CONSUMER_GROUP_PARTITIONS_REVOKED, group.group_id, member_id=member_id,
                        member_epoch=new.member_epoch, partitions=self._partitions_field(new.pending_revocation))
        given = {t: ps - old.assigned.get(t, frozenset()) for t, ps in new.assigned.items()}
        given = {t: ps for t, ps in given.items() if ps}
        if given:
            self._event(ev.FRONT_CONSUMER_GROUP_PARTITIONS_ASSIGNED, group.group_id, member_id=member_id,
                        member_epoch=new.member_epoch, partitions=self._partitions_field(given))

    def _bump(self, group: _Group, epoch: int, reason: str) -> None:
        self._event(ev.FRONT_CONSUMER_GROUP_EPOCH_BUMPED, group.group_id, **{"from": group.group_epoch, "to": epoch},
                    reason=reason)
        group.group_epoch = epoch

    def _fence(self, group: _Group, member: _Member, reason: str) -> None:
        """``consumerGroupFenceMember``: remove the member, refresh the subscribed topics, bump the group epoch. The
        new target assignment is computed at the next heartbeat of a remaining member."""
        self._remove(group, member)
        group.subscription_metadata = self._subscription_metadata(group.members.values())
        self._bump(group, group.group_epoch + 1, reason)
        self._update_state(group)

    def _update_state(self, group: _Group) -> None:
        """``maybeUpdateGroupState``."""
        self._set_state(group, _state_of(group))

    def _set_state(self, group: _Group, state: ConsumerGroupState) -> None:
        if state is not group.state:
            self._event(ev.FRONT_CONSUMER_GROUP_STATE_CHANGED, group.group_id,
                        **{"from": group.state.value, "to": state.value}, group_epoch=group.group_epoch,
                        assignment_epoch=group.assignment_epoch)
            group.state = state

    def _leave(self, request: ConsumerGroupHeartbeat) -> ConsumerGroupHeartbeatResponse:
        """``consumerGroupLeave``: -1 removes the member; a static member's -2 keeps it, and its partitions, in the
        group until its session expires or its instance rejoins."""
        group = self._groups.get(request.group_id)
        if group is None:
            raise _Rejected(ErrorCode.group_id_not_found, f"Consumer group {request.group_id} not found.")
        if request.instance_id is None:
            member = group.members.get(request.member_id)
            if member is None:
                raise _Rejected(ErrorCode.unknown_member_id,
                                f"Member {request.member_id} is not a member of group {group.group_id}.")
        else:
            static_id = group.static_members.get(request.instance_id)
            if static_id is None:
                raise _Rejected(ErrorCode.unknown_member_id, f"Instance id {request.instance_id} is unknown.")
            if static_id != request.member_id:
                raise _Rejected(ErrorCode.fenced_instance_id, f"Static member {request.member_id} with instance id "
                                f"{request.instance_id} was fenced by member {static_id}.")
            member = group.members[static_id]
        temporary = request.member_epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH and request.instance_id is not None
        self._event(ev.FRONT_CONSUMER_GROUP_MEMBER_LEFT, group.group_id, member_id=member.member_id,
                    instance_id=member.instance_id, temporary=temporary)
        if temporary:
            rec = replace(member.rec, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation={})
            self._put(group, member, replace(member, rec=rec))
            self._update_state(group)
            return ConsumerGroupHeartbeatResponse(ErrorCode.none, member_id=member.member_id,
                                                  member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH)
        self._fence(group, member, "member_left")
        return ConsumerGroupHeartbeatResponse(ErrorCode.none, member_id=request.member_id,
                                              member_epoch=request.member_epoch)

    # --- describe -------------------------------------------------------------------------------------------------

    def _described_partitions(self, partitions: Partitions) -> tuple[DescribedTopicPartitions, ...]:
        """Topics the metadata no longer knows are left out, as Kafka's describe leaves them."""
        known = sorted((self._topic_names[t], t, ps) for t, ps in partitions.items() if t in self._topic_names)
        return tuple(DescribedTopicPartitions(topic_id, name, tuple(sorted(numbers)))
                     for name, topic_id, numbers in known)

    def _describe(self, group_id: str) -> DescribedConsumerGroup:
        group = self._groups.get(group_id)
        if group is None:
            return DescribedConsumerGroup(group_id, ErrorCode.group_id_not_found,
                                          f"Group {group_id} not found.")
        return DescribedConsumerGroup(
            group_id=group_id,
            group_state=group.state.value,
            group_epoch=group.group_epoch,
            assignment_epoch=group.assignment_epoch,
            assignor_name=self._preferred_assignor(group.members.values()),
            members=tuple(DescribedConsumerMember(
                member_id=m.member_id,
                instance_id=m.instance_id,
                rack_id=m.rack_id,
                member_epoch=m.rec.member_epoch,
                client_id=m.client_id,
                client_host=m.client_host,
                subscribed_topic_names=tuple(m.subscribed),
                subscribed_topic_regex=m.regex,
                assignment=self._described_partitions(m.rec.assigned),
                target_assignment=self._described_partitions(group.target.get(m.member_id, {})),
                member_type=CONSUMER_MEMBER_TYPE if m.classic is None else CLASSIC_MEMBER_TYPE,
            ) for m in group.members.values()),
        )


def _metadata_of(member: _Member, protocol: str) -> bytes:
    """A classic member's metadata of ``protocol`` (of its first protocol when it does not list that one)."""
    protocols = member.classic.protocols if member.classic is not None else ()
    return next((metadata for name, metadata in protocols if name == protocol),
                protocols[0][1] if protocols else b"")


def _classic_assignment(member: ClassicMemberRecord) -> tuple[TopicPartition, ...]:
    """What a classic member holds: its assignment, or, in the middle of a round (no assignment yet), the partitions
    its JoinGroup reported owning (a cooperative member keeps them through the round; an eager one reports none).

    :raises ProtocolInvalid:
    """
    return decode_assignment(member.assignment) or decode_subscription(member.subscription).owned


def _partitions_record(partitions: Partitions) -> tuple[PartitionsRecord, ...]:
    return tuple(PartitionsRecord(str(topic_id), tuple(sorted(numbers)))
                 for topic_id, numbers in sorted(partitions.items()) if numbers)


def _partitions_of(records: Iterable[PartitionsRecord]) -> Partitions:
    return {Uuid.parse(r.topic_id): frozenset(r.partitions) for r in records}


def _state_of(group: _Group) -> ConsumerGroupState:
    """The state ``maybeUpdateGroupState`` gives the group."""
    if not group.members:
        return ConsumerGroupState.EMPTY
    if group.group_epoch > group.assignment_epoch:
        return ConsumerGroupState.ASSIGNING
    if any(not m.rec.is_reconciled_to(group.assignment_epoch) for m in group.members.values()):
        return ConsumerGroupState.RECONCILING
    return ConsumerGroupState.STABLE
