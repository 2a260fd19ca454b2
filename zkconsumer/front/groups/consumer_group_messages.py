"""What goes into and comes out of the KIP-848 consumer group coordinator (``consumer_group.py``): plain dataclasses,
no wire format. The edge maps kio's ConsumerGroupHeartbeat and ConsumerGroupDescribe objects onto the requests here
and the responses back onto kio's, so the state machine never depends on a protocol version's field layout.

Field names and sentinels are the protocol's (``ConsumerGroupHeartbeatRequest.json``): ``None`` means "not sent /
unchanged since the last heartbeat" for the nullable fields, ``-1`` for ``rebalance_timeout_ms``. Topics are named by
Kafka topic id (:class:`~zkconsumer.assignors.topic_ids.Uuid`, the type the server-side assignors key by).

Error codes are Kafka's (``org.apache.kafka.common.protocol.Errors``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from kio.schema.errors import ErrorCode as ErrorCode

from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.front.groups.classic_group_messages import GroupEvent

#: ``memberEpoch`` values with a meaning of their own (``ConsumerGroupHeartbeatRequest``)
JOIN_GROUP_MEMBER_EPOCH = 0
LEAVE_GROUP_MEMBER_EPOCH = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH = -2

#: the group type ListGroups v5 reports for every consumer group, and its protocol type (``ConsumerProtocol``'s)
CONSUMER_GROUP_TYPE = "consumer"

Partitions = Mapping[Uuid, frozenset[int]]
"""Partitions per topic id."""


class ConsumerGroupState(StrEnum):
    """A consumer group's states, spelled as Kafka's ``ConsumerGroupState.toString()`` (what ConsumerGroupDescribe
    and ListGroups return)."""

    EMPTY = "Empty"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"


class MemberState(StrEnum):
    """Where a member is in its reconciliation (Kafka's ``MemberState``)."""

    #: the member owns exactly its assignment at its epoch
    STABLE = "stable"
    #: the member must revoke partitions (``partitions_pending_revocation``) before it moves to the next epoch
    UNREVOKED_PARTITIONS = "unrevoked_partitions"
    #: the member is at the target epoch but waits for partitions other members still hold
    UNRELEASED_PARTITIONS = "unreleased_partitions"


def topic_id_of(value: uuid.UUID) -> Uuid:
    """A topic id as the wire format (kio, ``uuid.UUID``) carries it, as the assignors' :class:`Uuid`."""
    raw = value.bytes
    return Uuid(int.from_bytes(raw[:8], "big", signed=True), int.from_bytes(raw[8:], "big", signed=True))


def wire_topic_id(topic_id: Uuid) -> uuid.UUID:
    """The inverse of :func:`topic_id_of`."""
    raw = topic_id.msb.to_bytes(8, "big", signed=True) + topic_id.lsb.to_bytes(8, "big", signed=True)
    return uuid.UUID(bytes=raw)


# --- inputs ---------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TopicMetadata:
    """One topic as the cluster's metadata shows it: its id and partition count."""

    name: str
    topic_id: Uuid
    partitions: int


@dataclass(frozen=True)
class ConsumerGroupHeartbeat:
    """A ConsumerGroupHeartbeat request, its fields as sent (``None``/``-1``: not sent, i.e. unchanged).

    ``member_id`` is ``""`` from a client that lets the coordinator choose it (before KIP-1082); ``client_id`` and
    ``client_host`` come from the request header and connection, as Kafka's ``RequestContext`` gives them.
    ``owned`` is ``TopicPartitions``: the partitions the member owns, or ``None`` when it did not report them.
    ``api_version``: from v1 (KIP-1082) the member must send its own member id.
    """

    group_id: str
    member_id: str
    member_epoch: int
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Partitions | None = None
    client_id: str = ""
    client_host: str = ""
    api_version: int = 0


@dataclass(frozen=True)
class ConsumerGroupDescribe:
    group_ids: tuple[str, ...]


# --- outputs --------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConsumerGroupHeartbeatResponse:
    """``assignment`` is ``None`` when the response carries none (the member keeps what it was last given), as Kafka
    leaves it out unless the request was a full one or the member's assignment changed."""

    error_code: ErrorCode
    error_message: str | None = None
    member_id: str | None = None
    member_epoch: int = 0
    heartbeat_interval_ms: int = 0
    assignment: Partitions | None = None


@dataclass(frozen=True)
class DescribedTopicPartitions:
    topic_id: Uuid
    topic_name: str
    partitions: tuple[int, ...]


@dataclass(frozen=True)
class DescribedConsumerMember:
    member_id: str
    instance_id: str | None
    rack_id: str | None
    member_epoch: int
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    assignment: tuple[DescribedTopicPartitions, ...]
    target_assignment: tuple[DescribedTopicPartitions, ...]
    #: ConsumerGroupDescribe v1's ``member_type``: 1 for a consumer-protocol member, 0 for a classic one
    member_type: int = 1


@dataclass(frozen=True)
class DescribedConsumerGroup:
    """One group of a ConsumerGroupDescribe response; an unknown group has only ``group_id`` and the error."""

    group_id: str
    error_code: ErrorCode = ErrorCode.none
    error_message: str | None = None
    group_state: str = ""
    group_epoch: int = 0
    assignment_epoch: int = 0
    assignor_name: str = ""
    members: tuple[DescribedConsumerMember, ...] = ()


@dataclass(frozen=True)
class ConsumerGroupDescribeResponse:
    groups: tuple[DescribedConsumerGroup, ...]


@dataclass(frozen=True)
class HeartbeatOutcome:
    """What a heartbeat caused: the response to send at once, and the events (``front.consumer_group.*``, the classic
    coordinator's :class:`GroupEvent` so the edge logs both alike) of it and of any timer that fired before it."""

    response: ConsumerGroupHeartbeatResponse
    events: tuple[GroupEvent, ...] = ()

