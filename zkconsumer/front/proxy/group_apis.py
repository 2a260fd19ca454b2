"""The group APIs the front answers itself: the wire adapter of its group coordinator. kio's requests are mapped onto
the coordinator's dataclasses (:mod:`~zkconsumer.front.groups.classic_group_messages`,
:mod:`~zkconsumer.front.groups.consumer_group_messages`), handed to the coordinator through its runtime, and its answers
mapped back onto kio's responses, for every version advertised (:data:`VERSIONS`). Nothing here decides anything about
a group: which coordinator answers, the upgrade and downgrade, and whether an offset may be stored are the
coordinator's (:mod:`zkconsumer.front.groups.coordinator`); what is here is the mapping and the exchanges with the
broker the coordinator's answers call for (the offsets are kept there).

Which versions: the ones kio parses, narrowed to what the broker behind keeps offsets with (Tansu 0.6 answers
OffsetCommit up to v9 and OffsetFetch up to v9; v10 of both name topics by id). librdkafka 2.16 asks at most for
JoinGroup v5, SyncGroup v3, Heartbeat v3, LeaveGroup v1, OffsetCommit v9, OffsetFetch v9, DescribeGroups v4,
ListGroups v5, ConsumerGroupHeartbeat v1 and ConsumerGroupDescribe v1; kafka-python 2.x and 3.x at most JoinGroup v5
to v9 and the others alike; every client takes the highest version both sides know, so each API is advertised from
its oldest version kio knows to its newest the front can answer.

Where offsets live (:func:`offset_commit`, :func:`offset_fetch`): in the broker, as Kafka keeps them in
``__consumer_offsets``. The coordinator checks a commit (generation and member for a classic group, member epoch for
a KIP-848 one) and, when it may be stored, the front relays it to the broker on the client's own connection as an
administrator's commit (generation -1, no member id, which a broker stores for a group its own coordinator does not
run); OffsetFetch is relayed as it came. TxnOffsetCommit is checked the same way, as Kafka checks a transactional
commit (KIP-447), and relayed likewise; OffsetDelete deletes offsets in the broker by storing -1, the broker behind
having no OffsetDelete. So committed offsets survive a restart of the front, and every tool that
reads or writes a group's offsets in the broker (``groups describe --offsets-storage kafka``, ``offsets migrate``,
dual commit) sees the same offsets through the front or directly.

A response is built by :func:`~.entities.build` from the fields its version has, so one mapping serves every
version.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import Any, cast

from kio.schema.errors import ErrorCode as KioErrorCode
from kio.schema.list_groups.v5.request import ListGroupsRequest
from kio.schema.metadata.v12.request import MetadataRequest
from kio.schema.offset_commit.v8.request import OffsetCommitRequest as DeletingCommit
from kio.schema.offset_commit.v8.request import OffsetCommitRequestPartition as DeletingPartition
from kio.schema.offset_commit.v8.request import OffsetCommitRequestTopic as DeletingTopic
from kio.static.primitive import i32, i64

from zkconsumer.front.groups import classic_group_messages as classic
from zkconsumer.front.groups.consumer_group_messages import (
    ConsumerGroupDescribe,
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    TopicMetadata,
    topic_id_of,
    wire_topic_id,
)
from zkconsumer.front.groups.coordinator import deleted_in_broker, with_broker_deletions
from zkconsumer.front.groups.coordinator_runtime import CoordinatorRuntime
from zkconsumer.front.groups.offset_order import OffsetOrder
from zkconsumer.front.proxy.entities import build, nested, response_type
from zkconsumer.front.proxy.handlers import BrokerTimedOut, LocalApi, RequestContext
from zkconsumer.front.proxy.topic_holds import TopicHolds
from zkconsumer.kafka.api_keys import (
    CONSUMER_GROUP_DESCRIBE,
    CONSUMER_GROUP_HEARTBEAT,
    DELETE_GROUPS,
    DESCRIBE_GROUPS,
    HEARTBEAT,
    JOIN_GROUP,
    LEAVE_GROUP,
    LIST_GROUPS,
    OFFSET_COMMIT,
    OFFSET_DELETE,
    OFFSET_FETCH,
    SYNC_GROUP,
    TXN_OFFSET_COMMIT,
)
from zkconsumer.kafka.durations import milliseconds

#: the versions the front answers, by API key (see the module's docstring)
VERSIONS: dict[int, tuple[int, int]] = {
    OFFSET_COMMIT: (2, 9), OFFSET_FETCH: (1, 9), JOIN_GROUP: (0, 9), HEARTBEAT: (0, 4), LEAVE_GROUP: (0, 5),
    SYNC_GROUP: (0, 5), DESCRIBE_GROUPS: (0, 5), LIST_GROUPS: (0, 5), DELETE_GROUPS: (0, 2),
    TXN_OFFSET_COMMIT: (0, 4), OFFSET_DELETE: (0, 0),
    CONSUMER_GROUP_HEARTBEAT: (0, 1), CONSUMER_GROUP_DESCRIBE: (0, 1),
}
#: how old the front's view of the cluster's topics may be when a KIP-848 heartbeat is answered
TOPICS_MAX_AGE_S = 1.0
#: how long the broker may take over a checked commit, Kafka's ``offsets.commit.timeout.ms``
COMMIT_TIMEOUT_S = 5.0
#: how a checked commit is relayed: as an administrator's, which the broker stores for a group it does not run
_ADMIN_COMMIT = {"generation_id_or_member_epoch": -1, "generation_id": -1, "member_id": "", "group_instance_id": None}


def _host(context: RequestContext) -> str:
    """The client's host as Kafka's ``RequestContext`` names it (``/`` and the address)."""
    return "/" + context.client.rsplit(":", 1)[0].strip("[]")


class GroupApis:
    """The handlers of every group API, over one :class:`CoordinatorRuntime`."""

    def __init__(self, runtime: CoordinatorRuntime, topics_max_age_s: float = TOPICS_MAX_AGE_S,
                 holds: TopicHolds | None = None, commit_timeout_s: float = COMMIT_TIMEOUT_S) -> None:
        self.runtime = runtime
        self.coordinator = runtime.coordinator
        #: the bound of every broker exchange made under a group's offset lock (:mod:`.offset_order`)
        self.commit_timeout_s = commit_timeout_s
        self.topics_max_age_s = topics_max_age_s
        #: the topics shown smaller than the broker has them, in the KIP-848 coordinator's view as in Metadata
        self.holds = holds or TopicHolds()
        self.offset_order = OffsetOrder()
        self._topics_at: float | None = None

    def table(self) -> list[LocalApi]:
        handlers: dict[int, Callable[[RequestContext, Any], Any]] = {
            OFFSET_COMMIT: self.offset_commit, OFFSET_FETCH: self.offset_fetch, JOIN_GROUP: self.join_group,
            HEARTBEAT: self.heartbeat, LEAVE_GROUP: self.leave_group, SYNC_GROUP: self.sync_group,
            DESCRIBE_GROUPS: self.describe_groups, LIST_GROUPS: self.list_groups, DELETE_GROUPS: self.delete_groups,
            TXN_OFFSET_COMMIT: self.txn_offset_commit, OFFSET_DELETE: self.offset_delete,
            CONSUMER_GROUP_HEARTBEAT: self.consumer_group_heartbeat,
            CONSUMER_GROUP_DESCRIBE: self.consumer_group_describe,
        }
        return [LocalApi(key, *VERSIONS[key], handle) for key, handle in handlers.items()]

    # --- classic ----------------------------------------------------------------------------------------------

    async def join_group(self, context: RequestContext, request: Any) -> Any:
        session_ms = milliseconds(request.session_timeout)
        rebalance = getattr(request, "rebalance_timeout", None)

        def join(request_id: int) -> classic.JoinGroup:
            return classic.JoinGroup(
                request_id, request.group_id, request.member_id, request.protocol_type,
                tuple(classic.Protocol(p.name, p.metadata) for p in request.protocols), session_ms,
                session_ms if rebalance is None else milliseconds(rebalance), context.head.api_version,
                getattr(request, "group_instance_id", None), context.client_id or "", _host(context),
                getattr(request, "reason", None))

        await self._topics_for(context, request.group_id)
        response = cast(classic.JoinGroupResponse, await self.runtime.classic_request(join))
        answer = response_type(request)
        member_type = nested(answer, "JoinGroupResponseMember")
        return build(answer, error_code=response.error_code, generation_id=response.generation_id,
                     protocol_type=response.protocol_type, protocol_name=response.protocol_name,
                     leader=response.leader, skip_assignment=response.skip_assignment, member_id=response.member_id,
                     members=tuple(build(member_type, member_id=m.member_id, group_instance_id=m.group_instance_id,
                                         metadata=m.metadata) for m in response.members))

    async def sync_group(self, context: RequestContext, request: Any) -> Any:
        response = cast(classic.SyncGroupResponse, await self.runtime.classic_request(
            lambda request_id: classic.SyncGroup(
                request_id, request.group_id, request.generation_id, request.member_id,
                getattr(request, "group_instance_id", None), protocol_type=getattr(request, "protocol_type", None),
                protocol_name=getattr(request, "protocol_name", None),
                assignments=tuple((a.member_id, a.assignment) for a in request.assignments))))
        return build(response_type(request), error_code=response.error_code, assignment=response.assignment,
                     protocol_type=response.protocol_type, protocol_name=response.protocol_name)

    async def heartbeat(self, context: RequestContext, request: Any) -> Any:
        await self._topics_for(context, request.group_id)  # a topic's growth reaches the classic members' groups too
        response = cast(classic.HeartbeatResponse, await self.runtime.classic_request(
            lambda request_id: classic.Heartbeat(request_id, request.group_id, request.generation_id,
                                                 request.member_id, getattr(request, "group_instance_id", None))))
        return build(response_type(request), error_code=response.error_code)

    async def leave_group(self, context: RequestContext, request: Any) -> Any:
        if hasattr(request, "members"):
            members = tuple(classic.LeavingMember(m.member_id, m.group_instance_id, getattr(m, "reason", None))
                            for m in request.members)
        else:
            members = (classic.LeavingMember(request.member_id),)
        response = cast(classic.LeaveGroupResponse, await self.runtime.classic_request(
            lambda request_id: classic.LeaveGroup(request_id, request.group_id, members)))
        answer = response_type(request)
        if not hasattr(request, "members"):
            return build(answer, error_code=response.single_member_error_code)
        member_type = nested(answer, "MemberResponse")
        return build(answer, error_code=response.error_code, members=tuple(
            build(member_type, member_id=m.member_id, group_instance_id=m.group_instance_id, error_code=m.error_code)
            for m in response.members))

    async def describe_groups(self, context: RequestContext, request: Any) -> Any:
        kept = await self._offsets_kept(context)
        response = cast(classic.DescribeGroupsResponse, await self.runtime.ask(
            lambda request_id, now: self.coordinator.describe_groups(
                classic.DescribeGroups(request_id, tuple(request.groups)), now, kept)))
        answer = response_type(request)
        group_type, member_type = nested(answer, "DescribedGroup"), nested(answer, "DescribedGroupMember")
        return build(answer, groups=tuple(
            build(group_type, error_code=g.error_code, group_id=g.group_id, group_state=g.state,
                  protocol_type=g.protocol_type, protocol_data=g.protocol_data, authorized_operations=-2147483648,
                  members=tuple(build(member_type, member_id=m.member_id, group_instance_id=m.group_instance_id,
                                      client_id=m.client_id, client_host=m.client_host, member_metadata=m.metadata,
                                      member_assignment=m.assignment) for m in g.members))
            for g in response.groups))

    async def list_groups(self, context: RequestContext, request: Any) -> Any:
        states = tuple(getattr(request, "states_filter", ()))
        types = tuple(getattr(request, "types_filter", ()))
        kept = await self._offsets_kept(context, request)
        response = cast(classic.ListGroupsResponse, await self.runtime.ask(
            lambda request_id, now: self.coordinator.list_groups(classic.ListGroups(request_id, states, types), now,
                                                                 kept)))
        answer = response_type(request)
        group_type = nested(answer, "ListedGroup")
        return build(answer, error_code=response.error_code, groups=tuple(
            build(group_type, group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state,
                  group_type=g.group_type) for g in response.groups))

    async def _offsets_kept(self, context: RequestContext, request: Any = None,
                            bounded: bool = False) -> tuple[str, ...]:
        """The groups the broker keeps offsets for (its ListGroups, unfiltered; ``request``: the client's own, its
        filters dropped); none where no broker is behind or it refuses. ``bounded``: within the commit timeout, as an
        exchange under a group's offset lock."""
        if context.relay is None:
            return ()
        if request is None:
            ask: Any = ListGroupsRequest(states_filter=(), types_filter=())
        else:
            ask = dataclasses.replace(request, **{name: () for name in ("states_filter", "types_filter")
                                                  if hasattr(request, name)})
        relayed = await (self._bounded(context, ask) if bounded else context.relay(ask))
        if relayed.error_code != KioErrorCode.none:
            return ()
        return tuple(g.group_id for g in relayed.groups)

    async def delete_groups(self, context: RequestContext, request: Any) -> Any:
        response = cast(classic.DeleteGroupsResponse, await self.runtime.ask(
            lambda request_id, now: self.coordinator.delete_groups(
                classic.DeleteGroups(request_id, tuple(request.groups_names)), now)))
        broker: list[tuple[str, int]] = []
        to_broker = deleted_in_broker(response)
        if to_broker and context.relay is not None:
            relayed = await context.relay(dataclasses.replace(request, groups_names=to_broker))
            broker = [(row.group_id, int(row.error_code)) for row in relayed.results]
        answer = response_type(request)
        row_type = nested(answer, "DeletableGroupResult")
        return build(answer, results=tuple(build(row_type, group_id=g, error_code=code)
                                           for g, code in with_broker_deletions(response, broker)))

    # --- offsets ----------------------------------------------------------------------------------------------

    async def offset_commit(self, context: RequestContext, request: Any) -> Any:
        """Checked by the coordinator, then stored in the broker: one step for the group (:mod:`.offset_order`)."""
        async with self.offset_order.held((request.group_id,)):
            verdict = cast(classic.OffsetCommitVerdict, await self.runtime.classic_request(
                lambda request_id: classic.OffsetCommit(
                    request_id, request.group_id, request.generation_id_or_member_epoch, request.member_id,
                    getattr(request, "group_instance_id", None), api_version=context.head.api_version)))
            return await self._checked_commit(context, request, int(verdict.error_code), "OffsetCommit")

    async def _checked_commit(self, context: RequestContext, request: Any, code: int, api: str) -> Any:
        """A commit the coordinator checked (``code``), under its group's offset lock: relayed to the broker as an
        administrator's when it may be stored, within the commit timeout (else COORDINATOR_NOT_AVAILABLE, as Kafka
        answers a commit its log did not take in time: the client retries); otherwise ``code`` for each of its
        partitions. ``api``: the response's name (``OffsetCommit``, ``TxnOffsetCommit``)."""
        if code == classic.ErrorCode.none and context.relay is not None:
            stored = {name: value for name, value in _ADMIN_COMMIT.items() if hasattr(request, name)}
            try:
                return await asyncio.wait_for(context.relay(dataclasses.replace(request, **stored)),
                                              self.commit_timeout_s)
            except TimeoutError:
                code = classic.ErrorCode.coordinator_not_available
        answer = response_type(request)
        topic_type, partition_type = nested(answer, f"{api}ResponseTopic"), nested(answer, f"{api}ResponsePartition")
        return build(answer, topics=tuple(
            build(topic_type, name=t.name, partitions=tuple(
                build(partition_type, partition_index=p.partition_index, error_code=code) for p in t.partitions))
            for t in request.topics))

    async def offset_fetch(self, context: RequestContext, request: Any) -> Any:
        """Relayed to the broker, which keeps the offsets; a KIP-848 member reading with a stale epoch or an unknown
        member id gets its group's error instead (v9's member fields)."""
        assert context.relay is not None
        refused: dict[str, int] = {}
        for group in getattr(request, "groups", ()):
            code = self.coordinator.offset_fetch_error(group.group_id, getattr(group, "member_id", None),
                                                       getattr(group, "member_epoch", -1))
            if code:
                refused[group.group_id] = int(code)
        groups = [g.group_id for g in request.groups] if hasattr(request, "groups") else [request.group_id]
        async with self.offset_order.held(groups):  # the commits checked before it written first
            answer = await self._bounded(context, request)
        if not refused:
            return answer
        return dataclasses.replace(answer, groups=tuple(
            build(type(g), group_id=g.group_id, topics=(), error_code=refused[g.group_id])
            if g.group_id in refused else g for g in answer.groups))

    async def _bounded(self, context: RequestContext, request: Any) -> Any:
        """The broker's answer to ``request``, relayed under a group's offset lock: within the commit timeout, or
        :class:`BrokerTimedOut` (the client's connection closes)."""
        assert context.relay is not None
        try:
            return await asyncio.wait_for(context.relay(request), self.commit_timeout_s)
        except TimeoutError:
            raise BrokerTimedOut(f"no answer from the broker to {type(request).__name__} within "
                                 f"{self.commit_timeout_s} s") from None

    async def txn_offset_commit(self, context: RequestContext, request: Any) -> Any:
        """A transactional commit, checked by the coordinator as Kafka checks it (KIP-447), then relayed to the broker
        as an administrator's, under the group's offset lock as an OffsetCommit."""
        async with self.offset_order.held((request.group_id,)):
            verdict = cast(classic.OffsetCommitVerdict, await self.runtime.classic_request(
                lambda request_id: classic.OffsetCommit(
                    request_id, request.group_id, getattr(request, "generation_id", -1),
                    getattr(request, "member_id", ""), getattr(request, "group_instance_id", None),
                    api_version=context.head.api_version, transactional=True)))
            return await self._checked_commit(context, request, int(verdict.error_code), "TxnOffsetCommit")

    async def offset_delete(self, context: RequestContext, request: Any) -> Any:
        """OffsetDelete as Kafka's ``deleteOffsets``, checked by the coordinator; the broker behind has no
        OffsetDelete: a deleted offset is stored as -1, which OffsetFetch answers as Kafka answers a partition with
        no committed offset (offset -1, no metadata)."""
        answer = response_type(request)
        topic_type, partition_type = nested(answer, "OffsetDeleteResponseTopic"), nested(
            answer, "OffsetDeleteResponsePartition")
        async with self.offset_order.held((request.group_id,)):
            kept = request.group_id in await self._offsets_kept(context, bounded=True)
            check = self.coordinator.offset_delete(request.group_id, kept)
            if check.error_code != classic.ErrorCode.none:
                return build(answer, error_code=check.error_code, topics=())
            subscribed = int(classic.ErrorCode.group_subscribed_to_topic)
            codes = {(t.name, p.partition_index): subscribed if check.is_subscribed(t.name) else 0
                     for t in request.topics for p in t.partitions}
            doomed = [t for t in request.topics if not check.is_subscribed(t.name)]
            if doomed and context.relay is not None:
                try:
                    stored = await asyncio.wait_for(context.relay(DeletingCommit(
                        group_id=request.group_id, generation_id_or_member_epoch=i32(-1), member_id="",
                        group_instance_id=None, topics=tuple(DeletingTopic(name=t.name, partitions=tuple(
                            DeletingPartition(partition_index=p.partition_index, committed_offset=i64(-1),
                                              committed_leader_epoch=i32(-1), committed_metadata="")
                            for p in t.partitions)) for t in doomed))), self.commit_timeout_s)
                except TimeoutError:  # Kafka's answer to an append not made in time
                    return build(answer, error_code=classic.ErrorCode.coordinator_not_available, topics=())
                codes.update(((t.name, p.partition_index), int(p.error_code)) for t in stored.topics
                             for p in t.partitions if p.error_code != KioErrorCode.none)
        return build(answer, error_code=classic.ErrorCode.none, topics=tuple(
            build(topic_type, name=t.name, partitions=tuple(
                build(partition_type, partition_index=p.partition_index, error_code=codes[(t.name, p.partition_index)])
                for p in t.partitions)) for t in request.topics))

    # --- KIP-848 ----------------------------------------------------------------------------------------------

    async def _topics_for(self, context: RequestContext, group_id: str) -> None:
        """The cluster's topics refreshed where the coordinator answers ``group_id`` from its view of them."""
        if self.coordinator.consumer.has_group(group_id):
            await self._refresh_topics(context)

    async def _refresh_topics(self, context: RequestContext) -> None:
        if context.relay is None:
            return
        if self._topics_at is not None and time.monotonic() - self._topics_at < self.topics_max_age_s:
            return
        metadata = await context.relay(MetadataRequest(topics=None, allow_auto_topic_creation=False,
                                                       include_topic_authorized_operations=False))
        self._topics_at = time.monotonic()
        topics = [TopicMetadata(t.name, topic_id_of(t.topic_id), len(self.holds.partitions(t.name, t.partitions)))
                  for t in metadata.topics
                  if t.error_code == KioErrorCode.none and t.name is not None and t.topic_id is not None
                  and t.name not in self.holds.hidden]  # the front's own topics, as in every Metadata answer
        self.runtime.apply(self.coordinator.set_topics(topics, self.runtime.now()))

    async def consumer_group_heartbeat(self, context: RequestContext, request: Any) -> Any:
        answer = response_type(request)
        # The topics first: from the coordinator's routing to the KIP-848 group's creation nothing awaits, so a
        # JoinGroup of the same group id on another connection sees either the classic group or the KIP-848 one, and
        # one group id never lives in both machines.
        await self._refresh_topics(context)
        owned = request.topic_partitions
        heartbeat = ConsumerGroupHeartbeat(
            request.group_id, request.member_id, request.member_epoch, request.instance_id, request.rack_id,
            milliseconds(request.rebalance_timeout) if request.rebalance_timeout is not None else -1,
            None if request.subscribed_topic_names is None else tuple(request.subscribed_topic_names),
            getattr(request, "subscribed_topic_regex", None), request.server_assignor,  # v0 has no regex
            None if owned is None else {topic_id_of(t.topic_id): frozenset(t.partitions) for t in owned
                                        if t.topic_id is not None},
            context.client_id or "", _host(context), context.head.api_version)
        response = cast(ConsumerGroupHeartbeatResponse, await self.runtime.ask(
            lambda request_id, now: self.coordinator.consumer_group_heartbeat(request_id, heartbeat, now)))
        assignment = None
        if response.assignment is not None:
            assignment_type = nested(answer, "Assignment")
            partitions_type = nested(answer, "TopicPartitions")
            assignment = assignment_type(topic_partitions=tuple(
                build(partitions_type, topic_id=wire_topic_id(topic_id), partitions=tuple(sorted(partitions)))
                for topic_id, partitions in response.assignment.items()))
        return build(answer, error_code=response.error_code, error_message=response.error_message,
                     member_id=response.member_id, member_epoch=response.member_epoch,
                     heartbeat_interval=response.heartbeat_interval_ms, assignment=assignment)

    async def consumer_group_describe(self, context: RequestContext, request: Any) -> Any:
        response = self.coordinator.consumer_group_describe(ConsumerGroupDescribe(tuple(request.group_ids)))
        answer = response_type(request)
        group_type, member_type = nested(answer, "DescribedGroup"), nested(answer, "Member")
        assignment_type, partitions_type = nested(answer, "Assignment"), nested(answer, "TopicPartitions")

        def assignment(rows: Iterable[Any]) -> Any:
            return assignment_type(topic_partitions=tuple(
                build(partitions_type, topic_id=wire_topic_id(r.topic_id), topic_name=r.topic_name,
                      partitions=tuple(r.partitions)) for r in rows))

        return build(answer, groups=tuple(
            build(group_type, error_code=g.error_code, error_message=g.error_message, group_id=g.group_id,
                  group_state=g.group_state, group_epoch=g.group_epoch, assignment_epoch=g.assignment_epoch,
                  assignor_name=g.assignor_name, authorized_operations=-2147483648, members=tuple(
                      build(member_type, member_id=m.member_id, instance_id=m.instance_id, rack_id=m.rack_id,
                            member_epoch=m.member_epoch, client_id=m.client_id, client_host=m.client_host,
                            subscribed_topic_names=tuple(m.subscribed_topic_names),
                            subscribed_topic_regex=m.subscribed_topic_regex, assignment=assignment(m.assignment),
                            target_assignment=assignment(m.target_assignment), member_type=m.member_type)
                      for m in g.members))
            for g in response.groups))


__all__ = ["VERSIONS", "GroupApis"]
