"""What goes into and comes out of the classic group coordinator (``classic_group.py``): plain dataclasses, no wire
format. The edge maps kio's request objects onto the requests here and the responses here back onto kio's, so the
state machine never depends on a protocol version's field layout; the few version-dependent behaviours (KIP-394's
MEMBER_ID_REQUIRED from JoinGroup v4, KIP-814's skip-assignment from v9, GROUP_ID_NOT_FOUND on OffsetCommit v9) take
the request's ``api_version``.

Every request carries ``request_id``, chosen by the edge and unique among its unanswered requests; every request
gets exactly one :class:`Respond` or :class:`Drop` effect carrying that id, at once or later (a JoinGroup waits for
its round, a follower's SyncGroup for the leader's assignment).

Error codes are Kafka's (``org.apache.kafka.common.protocol.Errors``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

# re-exported: both coordinators answer with Kafka's error codes, as kio numbers and names them
from kio.schema.errors import ErrorCode as ErrorCode


class GroupState(StrEnum):
    """A classic group's states, spelled as Kafka's ``ClassicGroupState.toString()`` (what DescribeGroups and
    ListGroups return)."""

    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


#: the states a group may come from into each state (Kafka's ``ClassicGroupState.validPreviousStates``)
VALID_PREVIOUS_STATES: Mapping[GroupState, frozenset[GroupState]] = {
    GroupState.EMPTY: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.PREPARING_REBALANCE: frozenset(
        {GroupState.STABLE, GroupState.COMPLETING_REBALANCE, GroupState.EMPTY}),
    GroupState.COMPLETING_REBALANCE: frozenset({GroupState.PREPARING_REBALANCE}),
    GroupState.STABLE: frozenset({GroupState.COMPLETING_REBALANCE}),
    GroupState.DEAD: frozenset(GroupState),
}

#: the group type ListGroups v5 reports and filters on for every classic group
CLASSIC_GROUP_TYPE = "classic"


# --- requests -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Protocol:
    """One entry of a JoinGroup's protocol list: an assignor's name and the member's metadata for it."""

    name: str
    metadata: bytes = b""


@dataclass(frozen=True)
class JoinGroup:
    """A JoinGroup request. ``member_id`` is ``""`` on a first join; ``rebalance_timeout_ms`` is the session timeout for
    v0 (which has no rebalance timeout), as Kafka reads it."""

    request_id: int
    group_id: str
    member_id: str
    protocol_type: str
    protocols: tuple[Protocol, ...]
    session_timeout_ms: int
    rebalance_timeout_ms: int
    api_version: int
    group_instance_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    reason: str | None = None


@dataclass(frozen=True)
class GenerationRequest:
    """What every request a member sends within a generation names: the group, the generation, the member."""

    request_id: int
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True)
class SyncGroup(GenerationRequest):
    """A SyncGroup request; the leader's carries ``assignments`` (member id, assignment bytes). ``protocol_type`` and
    ``protocol_name`` are v5's fields (``None`` before)."""

    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: tuple[tuple[str, bytes], ...] = ()


@dataclass(frozen=True)
class Heartbeat(GenerationRequest):
    pass


@dataclass(frozen=True)
class MemberIdentity:
    """A member as the protocol names it: its member id, and its ``group.instance.id`` if it is static."""

    member_id: str
    group_instance_id: str | None = None


@dataclass(frozen=True)
class LeavingMember(MemberIdentity):
    """One member of a LeaveGroup: v0-v2 name one ``member_id``; v3+ a batch, each by member id or (an administrator
    removing a static member) by ``group_instance_id`` with ``member_id`` ``""``."""

    reason: str | None = None


@dataclass(frozen=True)
class LeaveGroup:
    request_id: int
    group_id: str
    members: tuple[LeavingMember, ...]


@dataclass(frozen=True)
class OffsetCommit(GenerationRequest):
    """The group part of an OffsetCommit (or its check alone): who commits, in which generation. Where the offsets go
    is the edge's business; the coordinator answers whether they may be stored. ``transactional``: a TxnOffsetCommit's
    check (KIP-447), which takes a commit naming no member in any state and one in the middle of a round."""

    api_version: int = field(kw_only=True)
    transactional: bool = field(default=False, kw_only=True)


@dataclass(frozen=True)
class DescribeGroups:
    request_id: int
    group_ids: tuple[str, ...]


@dataclass(frozen=True)
class ListGroups:
    """ListGroups; ``states_filter`` (v4) and ``types_filter`` (v5) compare case-insensitively, empty means all."""

    request_id: int
    states_filter: tuple[str, ...] = ()
    types_filter: tuple[str, ...] = ()


@dataclass(frozen=True)
class DeleteGroups:
    request_id: int
    group_ids: tuple[str, ...]


Request = JoinGroup | SyncGroup | Heartbeat | LeaveGroup | OffsetCommit | DescribeGroups | ListGroups | DeleteGroups


# --- responses ------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class JoinGroupMember(MemberIdentity):
    """A member as the leader's JoinGroup response lists it, with its metadata for the chosen protocol."""

    metadata: bytes = b""


@dataclass(frozen=True)
class JoinGroupResponse:
    """Defaults are Kafka's for an error response (generation -1, no protocol, no leader)."""

    error_code: ErrorCode
    member_id: str = ""
    generation_id: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    skip_assignment: bool = False
    members: tuple[JoinGroupMember, ...] = ()


@dataclass(frozen=True)
class SyncGroupResponse:
    error_code: ErrorCode
    assignment: bytes = b""
    protocol_type: str | None = None
    protocol_name: str | None = None


@dataclass(frozen=True)
class HeartbeatResponse:
    error_code: ErrorCode


@dataclass(frozen=True)
class LeaveMemberResponse(MemberIdentity):
    error_code: ErrorCode = ErrorCode.none


@dataclass(frozen=True)
class LeaveGroupResponse:
    error_code: ErrorCode
    members: tuple[LeaveMemberResponse, ...] = ()

    @property
    def single_member_error_code(self) -> ErrorCode:
        """The error a v0-v2 response carries (it has no member list): the top-level error, else the first member's
        error, as Kafka's ``LeaveGroupResponse`` folds them."""
        if self.error_code != ErrorCode.none:
            return self.error_code
        return next((m.error_code for m in self.members if m.error_code != ErrorCode.none), ErrorCode.none)


@dataclass(frozen=True)
class OffsetCommitVerdict:
    """Whether the commit may be stored: ``NONE`` means store the offsets; any other code is every partition's error."""

    error_code: ErrorCode


@dataclass(frozen=True)
class DescribedMember(MemberIdentity):
    client_id: str = ""
    client_host: str = ""
    metadata: bytes = b""
    assignment: bytes = b""


@dataclass(frozen=True)
class DescribedGroup:
    group_id: str
    error_code: ErrorCode
    state: str
    protocol_type: str
    protocol_data: str
    members: tuple[DescribedMember, ...] = ()


@dataclass(frozen=True)
class DescribeGroupsResponse:
    groups: tuple[DescribedGroup, ...]


@dataclass(frozen=True)
class ListedGroup:
    group_id: str
    protocol_type: str
    state: str
    group_type: str = CLASSIC_GROUP_TYPE


@dataclass(frozen=True)
class ListGroupsResponse:
    error_code: ErrorCode
    groups: tuple[ListedGroup, ...]


@dataclass(frozen=True)
class DeleteGroupsResponse:
    """Per group id, its error (``NONE``: deleted; the edge then drops its committed offsets too)."""

    results: tuple[tuple[str, ErrorCode], ...]


Response = (JoinGroupResponse | SyncGroupResponse | HeartbeatResponse | LeaveGroupResponse | OffsetCommitVerdict
            | DescribeGroupsResponse | ListGroupsResponse | DeleteGroupsResponse)


# --- effects and events ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Respond:
    """Send ``response`` for the request the edge numbered ``request_id``."""

    request_id: int
    response: Response


@dataclass(frozen=True)
class Drop:
    """The request will never be answered: a newer request of the same member took its place (Kafka abandons the
    older one the same way; its client has given up on it). The edge forgets it."""

    request_id: int


Effect = Respond | Drop


@dataclass(frozen=True)
class GroupEvent:
    """Something the coordinator did, for the edge to log under ``name`` (a ``front.group.*`` event).
    ``at_ms`` is the coordinator's clock when it happened: a timer's deadline for what a timer did."""

    name: str
    group_id: str
    at_ms: int
    fields: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Step:
    """What one input caused: the effects, in order, and the events."""

    effects: tuple[Effect, ...] = ()
    events: tuple[GroupEvent, ...] = ()

    def responses(self) -> dict[int, Response]:
        """The responses by request id (a convenience for tests and the edge)."""
        return {e.request_id: e.response for e in self.effects if isinstance(e, Respond)}
