"""The records of the front's coordinators' durable state, and their replay: what Kafka keeps of a group in
``__consumer_offsets`` so that a coordinator taking over (or restarting) goes on without a rebalance.

One record per group, keyed by the coordinator (the front's advertised address: what its clients know it by, and
find again after a restart) and the group id, holding what the group's next answer depends on; a later record of the
same key replaces it, a tombstone (no value) deletes the group. So the topic is read last-value-wins, as Kafka reads
its compacted ``__consumer_offsets``, each front taking only its own records (several fronts before one broker, each a
coordinator of its own groups, share the topic as Kafka's coordinators share ``__consumer_offsets``):

- :class:`ClassicGroupRecord` is Kafka's ``GroupMetadataValue``: the generation, protocol type and chosen protocol,
  the leader, and every member with its timeouts, its subscription (its metadata of the chosen protocol) and its
  assignment. Written, as Kafka writes it, when a round ends in an assignment (the leader's SyncGroup), when a group
  is left empty (a new generation of no members), and when a static member is replaced in a stable group.
- :class:`ConsumerGroupRecord` holds in one record what KIP-848 spreads over several (``ConsumerGroupMetadata``,
  ``ConsumerGroupPartitionMetadata``, ``ConsumerGroupMemberMetadata``, ``ConsumerGroupTargetAssignmentMetadata`` and
  ``...TargetAssignmentMember``, ``ConsumerGroupCurrentMemberAssignment``): the group and assignment epochs, the
  subscribed topics' metadata as last seen, and every member's subscription, epochs, reconciliation state, owned and
  pending partitions and target. Written whenever any of it changes.

Encoded with msgspec's MessagePack: the front reads only what it wrote, and a record of a newer form with fields this
one lacks still reads (msgspec skips unknown fields; a new field is given a default). Pure: bytes in, records out.
"""

from __future__ import annotations

from collections.abc import MutableMapping

import msgspec

#: the topic the front keeps its groups in, in the broker behind it (one partition: one order for every record)
GROUPS_TOPIC = "__zkconsumer_groups"


class ClassicMemberRecord(msgspec.Struct, frozen=True):
    """Kafka's ``GroupMetadataValue.MemberMetadata``."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    #: the member's metadata of the group's chosen protocol
    subscription: bytes
    assignment: bytes


class ClassicGroupRecord(msgspec.Struct, frozen=True, tag="classic"):
    """Kafka's ``GroupMetadataValue``: a classic group as of its last assignment or its last empty generation."""

    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    #: in join order
    members: tuple[ClassicMemberRecord, ...] = ()


class TopicRecord(msgspec.Struct, frozen=True):
    """A subscribed topic as the group last saw it (``ConsumerGroupPartitionMetadataValue``)."""

    name: str
    #: the topic id as Kafka prints it
    topic_id: str
    partitions: int


class PartitionsRecord(msgspec.Struct, frozen=True):
    """A topic's partitions of an assignment."""

    topic_id: str
    partitions: tuple[int, ...]


class ClassicProtocolRecord(msgspec.Struct, frozen=True):
    """One protocol of a classic member of a consumer group (``ClassicMemberMetadata.SupportedProtocols``)."""

    name: str
    metadata: bytes


class ConsumerMemberRecord(msgspec.Struct, frozen=True):
    """``ConsumerGroupMemberMetadataValue``, ``ConsumerGroupCurrentMemberAssignmentValue`` and the member's
    ``ConsumerGroupTargetAssignmentMemberValue``."""

    member_id: str
    instance_id: str | None
    rack_id: str | None
    rebalance_timeout_ms: int
    client_id: str
    client_host: str
    subscribed: tuple[str, ...]
    server_assignor: str | None
    regex: str | None
    state: str
    member_epoch: int
    previous_member_epoch: int
    assigned: tuple[PartitionsRecord, ...]
    pending_revocation: tuple[PartitionsRecord, ...]
    target: tuple[PartitionsRecord, ...]
    #: a member using the classic protocol: its session timeout (``None``: a consumer-protocol member) and protocols
    classic_session_timeout_ms: int | None = None
    classic_protocols: tuple[ClassicProtocolRecord, ...] = ()


class ConsumerGroupRecord(msgspec.Struct, frozen=True, tag="consumer"):
    """A KIP-848 group: ``ConsumerGroupMetadataValue`` (the group epoch), ``ConsumerGroupTargetAssignmentMetadataValue``
    (the assignment epoch), the subscription metadata and its members, in the order they joined."""

    group_epoch: int
    assignment_epoch: int
    topics: tuple[TopicRecord, ...] = ()
    members: tuple[ConsumerMemberRecord, ...] = ()


GroupRecord = ClassicGroupRecord | ConsumerGroupRecord


class GroupKey(msgspec.Struct, frozen=True, array_like=True):
    """A record's key: whose group, and which."""

    coordinator: str
    group_id: str


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(GroupRecord)
_key_decoder = msgspec.msgpack.Decoder(GroupKey)


class RecordInvalid(ValueError):
    """A record of the groups topic that is not one the front writes."""


def encode_key(coordinator: str, group_id: str) -> bytes:
    return _encoder.encode(GroupKey(coordinator, group_id))


def encode_value(record: GroupRecord) -> bytes:
    return _encoder.encode(record)


def decode(key: bytes | None, value: bytes | None) -> tuple[GroupKey, GroupRecord | None]:
    """The key and record (``None``: a tombstone) of one stored record.

    :raises RecordInvalid: naming what does not read.
    """
    if key is None:
        raise RecordInvalid("a record without a key")
    try:
        group = _key_decoder.decode(key)
    except msgspec.DecodeError as exc:
        raise RecordInvalid(f"a key that is not a coordinator and a group id ({exc}): {key[:40]!r}") from None
    if value is None:
        return group, None
    try:
        return group, _decoder.decode(value)
    except msgspec.DecodeError as exc:
        raise RecordInvalid(f"group {group.group_id!r} of {group.coordinator}: {exc}") from None


def replay(groups: MutableMapping[str, GroupRecord], coordinator: str, key: bytes | None, value: bytes | None) -> None:
    """Apply one stored record, in the topic's order, to ``groups`` (group id -> its last record), if it is
    ``coordinator``'s: a record replaces the group's, a tombstone deletes it.

    :raises RecordInvalid:
    """
    group, record = decode(key, value)
    if group.coordinator != coordinator:
        return
    if record is None:
        groups.pop(group.group_id, None)
    else:
        groups[group.group_id] = record
