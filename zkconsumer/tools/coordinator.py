"""``zkconsumer coordinator``: where Kafka keeps a group, and what the broker-side group looks like.

Since 0.8.2 every group has a home partition of ``__consumer_offsets``, and the broker leading that partition is the
group's coordinator: it stores the group's offsets and, for the Java consumer (0.9+), runs its membership (JoinGroup,
SyncGroup, heartbeats). The partition is a pure function of the group id (Kafka 0.10's
``GroupMetadataManager.partitionFor``: ``Utils.abs(groupId.hashCode) % offsets.topic.num.partitions``), computed here
by :func:`offsets_partition_for`. Note that 0.10's ``Utils.abs`` is ``n == Integer.MIN_VALUE ? 0 : Math.abs(n)``
(KAFKA-1988 replaced the earlier ``n & 0x7fffffff``, which gives another partition for every negative hash).

:func:`describe_coordinator` adds what the cluster answers: the coordinator (FindCoordinator) and, from it, the
group's state, protocol and members with their assignments (DescribeGroups), the broker-side counterpart of
``/consumers/<g>/ids`` and ``/consumers/<g>/owners``. DescribeGroups has no generation id (no version of the
API returns one), so the view has none either. ``view_json`` and ``format_view`` are pure.

A KIP-848 consumer group (``group.protocol=consumer``) is not a classic group: Kafka 4.x's DescribeGroups answers
Dead for it, and ConsumerGroupDescribe describes it. So a Dead answer is asked again with ConsumerGroupDescribe
(kio's entities, from the ``embedded`` extra; without it, or from a broker without that API, Dead stands): its state,
its server assignor as the protocol, and each member's subscribed topics and current assignment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from zkconsumer.assignors.java_hash import java_string_hash
from zkconsumer.errors import UsageError
from zkconsumer.kafka.group_coordinator import (
    Coordinator,
    GroupDescription,
    GroupMember,
    describe_group,
    find_coordinator,
)
from zkconsumer.types import TopicPartition

#: ``offsets.topic.num.partitions``' default in Kafka 0.10.0.1.
DEFAULT_OFFSETS_PARTITIONS = 50
_INT_MIN = -(2**31)


def kafka_abs(n: int) -> int:
    """Kafka 0.10's ``Utils.abs`` of a Java int: its absolute value, except 0 for ``Integer.MIN_VALUE``."""
    return 0 if n == _INT_MIN else abs(n)


def offsets_partition_for(group: str, partitions: int = DEFAULT_OFFSETS_PARTITIONS) -> int:
    """The ``__consumer_offsets`` partition of ``group``, as Kafka 0.10's coordinator computes it."""
    if partitions < 1:
        raise UsageError(f"--offsets-partitions must be at least 1 (got {partitions})")
    return kafka_abs(java_string_hash(group)) % partitions


@dataclass(frozen=True)
class CoordinatorView:
    group: str
    offsets_partition: int
    offsets_partitions: int
    coordinator: Coordinator | None
    #: the broker's answer to DescribeGroups; ``None`` when not asked (no coordinator)
    description: GroupDescription | None = None


def describe_coordinator(bootstrap: str, group: str, partitions: int = DEFAULT_OFFSETS_PARTITIONS,
                         timeout: float = 10.0) -> CoordinatorView:
    """The partition, the coordinator the cluster names, and the group as that coordinator describes it."""
    partition = offsets_partition_for(group, partitions)
    coordinator = find_coordinator(bootstrap, group, timeout)
    description = describe_group(coordinator, group, timeout)
    if description.state == "Dead":
        description = _consumer_group(coordinator, group, timeout) or description
    return CoordinatorView(group, partition, partitions, coordinator, description)


def _consumer_group(coordinator: Coordinator, group: str, timeout: float) -> GroupDescription | None:
    """The KIP-848 group ``group`` as ConsumerGroupDescribe v0 describes it; ``None`` when it is not one (or the
    broker, or this installation, cannot say)."""
    try:
        from kio.schema.consumer_group_describe.v0.request import ConsumerGroupDescribeRequest
        from kio.schema.errors import ErrorCode
        from kio.schema.types import GroupId

        from zkconsumer.front.proxy.client import exchange
        from zkconsumer.front.proxy.wire import MalformedResponse
    except ImportError:
        return None
    try:
        answer = exchange(coordinator.address, ConsumerGroupDescribeRequest(
            group_ids=(GroupId(group),), include_authorized_operations=False), timeout)
    except (OSError, MalformedResponse):
        return None
    found = [g for g in answer.groups if g.group_id == group and g.error_code == ErrorCode.none]
    if not found:
        return None
    described = found[0]
    return GroupDescription(group, described.group_state, "consumer", described.assignor_name, tuple(
        GroupMember(m.member_id, m.client_id, m.client_host, tuple(m.subscribed_topic_names),
                    tuple(TopicPartition(t.topic_name, p) for t in m.assignment.topic_partitions for p in t.partitions))
        for m in described.members))


def view_json(view: CoordinatorView) -> dict[str, Any]:
    description = view.description
    members = []
    for member in description.members if description else ():
        members.append({
            "member_id": member.member_id, "client_id": member.client_id, "client_host": member.client_host,
            "subscription": None if member.subscription is None else list(member.subscription),
            "assignment": None if member.assignment is None else [
                {"topic": tp.topic, "partition": tp.partition} for tp in member.assignment],
        })
    coordinator = view.coordinator
    return {
        "group": view.group,
        "offsets_partition": view.offsets_partition,
        "offsets_partitions": view.offsets_partitions,
        "coordinator": None if coordinator is None else
        {"id": coordinator.id, "host": coordinator.host, "port": coordinator.port},
        "state": description.state if description else None,
        "protocol_type": (description.protocol_type or None) if description else None,
        "protocol": (description.protocol or None) if description else None,
        "members": members,
    }


def _assigned(partitions) -> str:
    if partitions is None:
        return "(not reported by the broker)"
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ", ".join(f"{t}[{','.join(map(str, ps))}]" for t, ps in by_topic.items()) or "(nothing)"


def format_view(view: CoordinatorView) -> list[str]:
    lines = [
        f"group:            {view.group}",
        f"offsets topic:    __consumer_offsets-{view.offsets_partition} "
        f"(abs(hashCode) % {view.offsets_partitions})",
    ]
    c = view.coordinator
    lines.append(f"coordinator:      {'none' if c is None else f'broker {c.id} at {c.address}'}")
    d = view.description
    if d is None:
        return lines
    lines.append(f"state:            {d.state or 'unknown'}")
    lines.append(f"protocol:         {d.protocol or '(none reported)'}"
                 + (f" ({d.protocol_type})" if d.protocol_type else ""))
    lines.append(f"members:          {len(d.members)}")
    for m in d.members:
        who = m.member_id + (f" (client {m.client_id}" + (f" on {m.client_host}" if m.client_host else "") + ")"
                             if m.client_id else "")
        lines.append(f"  {who}: {_assigned(m.assignment)}")
    return lines
