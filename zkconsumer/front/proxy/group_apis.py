"""The group APIs the front answers itself: kio's requests mapped onto the coordinators' dataclasses
(:mod:`.classic_group_messages`, :mod:`.consumer_group_messages`) and their answers back onto kio's responses, for
every version advertised (:data:`VERSIONS`).

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

A response is built by :func:`build` from the fields its version has, so one mapping serves every version.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime
import sys
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
    ConsumerGroupState,
    TopicMetadata,
    topic_id_of,
    wire_topic_id,
)
from zkconsumer.front.groups.coordinator_runtime import CoordinatorRuntime
from zkconsumer.front.groups.offset_order import OffsetOrder
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
from zkconsumer.kafka.consumer_protocol import ProtocolInvalid, decode_subscription

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
#: the protocol type of Kafka's consumers (an OffsetDelete's deletion is relayed as an OffsetCommit v8 of offset -1)
CONSUMER_PROTOCOL_TYPE = "consumer"


# --- building kio's entities ------------------------------------------------------------------------------------


def response_type(request: Any) -> Any:
    """kio's response class of the request's API and version."""
    module = type(request).__module__.rsplit(".", 1)[0] + ".response"
    return next(getattr(sys.modules[module], name) for name in dir(sys.modules[module])
                if name.endswith("Response") and getattr(getattr(sys.modules[module], name), "__api_key__", None)
                is not None)


def nested(entity_type: Any, name: str) -> Any:
    """A nested entity class of the module ``entity_type`` lives in (``JoinGroupResponseMember``...)."""
    return getattr(sys.modules[entity_type.__module__], name)


def build(entity_type: Any, **values: Any) -> Any:
    """``entity_type`` from those of ``values`` its version has: a missing field keeps its default, ``None`` for a
    non-nullable string is ``""``, a timedelta field takes milliseconds, an error code Kafka's number."""
    kwargs: dict[str, Any] = {}
    for spec in dataclasses.fields(entity_type):
        if spec.name not in values:
            if spec.name == "throttle_time":
                kwargs[spec.name] = datetime.timedelta(0)
            continue
        value = values[spec.name]
        if value is None and spec.type is str:
            value = ""
        elif spec.name == "error_code":
            value = KioErrorCode(int(value))
        elif isinstance(spec.type, type) and issubclass(spec.type, datetime.timedelta) and isinstance(value, int):
            value = datetime.timedelta(milliseconds=value)
        kwargs[spec.name] = value
    return entity_type(**kwargs)


def _ms(value: datetime.timedelta) -> int:
    return round(value.total_seconds() * 1000)


def _host(context: RequestContext) -> str:
    """The client's host as Kafka's ``RequestContext`` names it (``/`` and the address)."""
    return "/" + context.client.rsplit(":", 1)[0].strip("[]")


class GroupApis:
    """The handlers of every group API, over one :class:`CoordinatorRuntime`."""

    def __init__(self, runtime: CoordinatorRuntime, topics_max_age_s: float = TOPICS_MAX_AGE_S,
                 holds: TopicHolds | None = None, commit_timeout_s: float = COMMIT_TIMEOUT_S) -> None:
        self.runtime = runtime
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
        answer = response_type(request)
        consumers = self.runtime.consumer
        if (consumers.has_group(request.group_id) and not request.member_id
                and consumers.state_of(request.group_id) is ConsumerGroupState.EMPTY):
            # An empty consumer group gives way to a new member's classic group, as in Kafka 3.7 on (its offsets stay
            # with the group id): one left behind by a KIP-848 group, or read back from the store at start.
            _, events = consumers.delete_group(request.group_id, self.runtime.now())
            self.runtime.consumer_events(events, touched=(request.group_id,))
        session_ms = _ms(request.session_timeout)
        rebalance = getattr(request, "rebalance_timeout", None)

        def join(request_id: int) -> classic.JoinGroup:
            return classic.JoinGroup(
                request_id, request.group_id, request.member_id, request.protocol_type,
                tuple(classic.Protocol(p.name, p.metadata) for p in request.protocols), session_ms,
                session_ms if rebalance is None else _ms(rebalance), context.head.api_version,
                getattr(request, "group_instance_id", None), context.client_id or "", _host(context),
                getattr(request, "reason", None))

        if consumers.has_group(request.group_id):  # a classic member of a consumer group, answered by it
            await self._refresh_topics(context)
            if consumers.has_group(request.group_id):
                response, events = consumers.classic_join(join(0), self.runtime.now())
                self.runtime.consumer_events(events, touched=(request.group_id,))
                await self.runtime.stored()
            else:
                response = cast(classic.JoinGroupResponse, await self.runtime.classic_request(join))
        else:
            response = cast(classic.JoinGroupResponse, await self.runtime.classic_request(join))
        member_type = nested(answer, "JoinGroupResponseMember")
        return build(answer, error_code=response.error_code, generation_id=response.generation_id,
                     protocol_type=response.protocol_type, protocol_name=response.protocol_name,
                     leader=response.leader, skip_assignment=response.skip_assignment, member_id=response.member_id,
                     members=tuple(build(member_type, member_id=m.member_id, group_instance_id=m.group_instance_id,
                                         metadata=m.metadata) for m in response.members))

    async def sync_group(self, context: RequestContext, request: Any) -> Any:
        def sync(request_id: int) -> classic.SyncGroup:
            return classic.SyncGroup(
                request_id, request.group_id, request.generation_id, request.member_id,
                getattr(request, "group_instance_id", None), protocol_type=getattr(request, "protocol_type", None),
                protocol_name=getattr(request, "protocol_name", None),
                assignments=tuple((a.member_id, a.assignment) for a in request.assignments))

        if self.runtime.consumer.has_group(request.group_id):
            response, events = self.runtime.consumer.classic_sync(sync(0), self.runtime.now())
            self.runtime.consumer_events(events, touched=(request.group_id,))
            await self.runtime.stored()  # as every other answer: once what it depends on is stored
        else:
            response = cast(classic.SyncGroupResponse, await self.runtime.classic_request(sync))
        return build(response_type(request), error_code=response.error_code, assignment=response.assignment,
                     protocol_type=response.protocol_type, protocol_name=response.protocol_name)

    async def heartbeat(self, context: RequestContext, request: Any) -> Any:
        def beat(request_id: int) -> classic.Heartbeat:
            return classic.Heartbeat(request_id, request.group_id, request.generation_id, request.member_id,
                                     getattr(request, "group_instance_id", None))

        if self.runtime.consumer.has_group(request.group_id):
            await self._refresh_topics(context)  # a topic's growth reaches the classic members' groups too
            response, events = self.runtime.consumer.classic_heartbeat(beat(0), self.runtime.now())
            self.runtime.consumer_events(events, touched=(request.group_id,))
            await self.runtime.stored()
        else:
            response = cast(classic.HeartbeatResponse, await self.runtime.classic_request(beat))
        return build(response_type(request), error_code=response.error_code)

    async def leave_group(self, context: RequestContext, request: Any) -> Any:
        if hasattr(request, "members"):
            members = tuple(classic.LeavingMember(m.member_id, m.group_instance_id, getattr(m, "reason", None))
                            for m in request.members)
        else:
            members = (classic.LeavingMember(request.member_id),)
        if self.runtime.consumer.has_group(request.group_id):
            response, events = self.runtime.consumer.classic_leave(
                classic.LeaveGroup(0, request.group_id, members), self.runtime.now())
            self.runtime.consumer_events(events, touched=(request.group_id,))
            await self.runtime.stored()
        else:
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
        response = cast(classic.DescribeGroupsResponse, await self.runtime.classic_request(
            lambda request_id: classic.DescribeGroups(request_id, tuple(request.groups))))
        dead = [g.group_id for g in response.groups if g.state == classic.GroupState.DEAD.value
                and not self.runtime.consumer.has_group(g.group_id)]
        if dead and context.relay is not None:  # a group with offsets only is Empty, as Kafka loads it
            relayed = await context.relay(ListGroupsRequest(states_filter=(), types_filter=()))
            in_broker = {g.group_id for g in relayed.groups} if relayed.error_code == KioErrorCode.none else set()
            response = classic.DescribeGroupsResponse(tuple(
                dataclasses.replace(g, state=classic.GroupState.EMPTY.value, protocol_type="")
                if g.group_id in dead and g.group_id in in_broker else g for g in response.groups))
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
        response = cast(classic.ListGroupsResponse, await self.runtime.classic_request(
            lambda request_id: classic.ListGroups(request_id, states, types)))
        rows = list(response.groups) + [g for g in self.runtime.consumer.list_groups() if _listed(g, states, types)]
        rows += await self._offsets_only_groups(context, request, {g.group_id for g in rows}, states, types)
        answer = response_type(request)
        group_type = nested(answer, "ListedGroup")
        return build(answer, error_code=response.error_code, groups=tuple(
            build(group_type, group_id=g.group_id, protocol_type=g.protocol_type, group_state=g.state,
                  group_type=g.group_type) for g in rows))

    async def _offsets_only_groups(self, context: RequestContext, request: Any, known: set[str],
                                   states: tuple[str, ...], types: tuple[str, ...]) -> list[classic.ListedGroup]:
        """The groups the broker keeps offsets for and the coordinators do not run (committed before the front
        started, or by an administrator): Empty classic groups with no protocol type, as Kafka lists a group it
        loaded from ``__consumer_offsets`` with offsets only."""
        if context.relay is None:
            return []
        unfiltered = {name: () for name in ("states_filter", "types_filter") if hasattr(request, name)}
        relayed = await context.relay(dataclasses.replace(request, **unfiltered))
        if relayed.error_code != KioErrorCode.none:
            return []
        coordinators = set(self.runtime.classic.group_ids()) | set(self.runtime.consumer.group_ids())
        rows = [classic.ListedGroup(g.group_id, "", classic.GroupState.EMPTY.value) for g in relayed.groups
                if g.group_id not in known and g.group_id not in coordinators]
        return [row for row in rows if _listed(row, states, types)]

    async def delete_groups(self, context: RequestContext, request: Any) -> Any:
        results: dict[str, int] = {}
        classic_ids = []
        for group_id in request.groups_names:
            if self.runtime.consumer.has_group(group_id):
                code, events = self.runtime.consumer.delete_group(group_id, self.runtime.now())
                self.runtime.consumer_events(events, touched=(group_id,))
                results[group_id] = int(code)
            else:
                classic_ids.append(group_id)
        await self.runtime.stored()
        if classic_ids:
            response = cast(classic.DeleteGroupsResponse, await self.runtime.classic_request(
                lambda request_id: classic.DeleteGroups(request_id, tuple(classic_ids))))
            results.update((group_id, int(code)) for group_id, code in response.results)
        # The broker keeps the offsets: deleted groups and groups the coordinator does not know (offsets only) are
        # deleted there too, and its answer stands for the latter.
        to_broker = [g for g, code in results.items()
                     if code in (classic.ErrorCode.none, classic.ErrorCode.group_id_not_found)]
        if to_broker and context.relay is not None:
            relayed = await context.relay(dataclasses.replace(request, groups_names=tuple(to_broker)))
            for row in relayed.results:
                if results.get(row.group_id) == classic.ErrorCode.group_id_not_found:
                    results[row.group_id] = int(row.error_code)
        answer = response_type(request)
        row_type = nested(answer, "DeletableGroupResult")
        return build(answer, results=tuple(build(row_type, group_id=g, error_code=code) for g, code in
                                           results.items()))

    # --- offsets ----------------------------------------------------------------------------------------------

    async def offset_commit(self, context: RequestContext, request: Any) -> Any:
        """Checked by the group's coordinator, then stored in the broker: one step for the group
        (:mod:`.offset_order`)."""
        async with self.offset_order.held((request.group_id,)):
            return await self._offset_commit(context, request)

    async def _offset_commit(self, context: RequestContext, request: Any) -> Any:
        group_id, member_id = request.group_id, request.member_id
        epoch = request.generation_id_or_member_epoch
        if self.runtime.consumer.has_group(group_id):
            code = int(self.runtime.consumer.offset_commit_error(group_id, member_id, epoch,
                                                                  context.head.api_version))
        else:
            verdict = cast(classic.OffsetCommitVerdict, await self.runtime.classic_request(
                lambda request_id: classic.OffsetCommit(
                    request_id, group_id, epoch, member_id, getattr(request, "group_instance_id", None),
                    api_version=context.head.api_version)))
            code = int(verdict.error_code)
        return await self._checked_commit(context, request, code, "OffsetCommit")

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
            if self.runtime.consumer.has_group(group.group_id):
                code = self.runtime.consumer.offset_fetch_error(group.group_id, getattr(group, "member_id", None),
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
        """A transactional commit checked as Kafka checks it (KIP-447): a classic group's generation and member, a
        KIP-848 group's member epoch (a stale epoch answered ILLEGAL_GENERATION, as Kafka answers it here), a commit
        naming no member (versions 0-2, or a producer outside any group) taken in any state; then relayed to the
        broker as an administrator's, under the group's offset lock as an OffsetCommit."""
        group_id, version = request.group_id, context.head.api_version
        member_id = getattr(request, "member_id", "")
        generation = getattr(request, "generation_id", -1)
        instance_id = getattr(request, "group_instance_id", None)
        async with self.offset_order.held((group_id,)):
            if self.runtime.consumer.has_group(group_id):
                code = int(self.runtime.consumer.offset_commit_error(group_id, member_id, generation, version,
                                                                      transactional=True))
                if code == classic.ErrorCode.stale_member_epoch:
                    code = int(classic.ErrorCode.illegal_generation)
            else:
                verdict = cast(classic.OffsetCommitVerdict, await self.runtime.classic_request(
                    lambda request_id: classic.OffsetCommit(request_id, group_id, generation, member_id, instance_id,
                                                            api_version=version, transactional=True)))
                code = int(verdict.error_code)
            return await self._checked_commit(context, request, code, "TxnOffsetCommit")

    async def offset_delete(self, context: RequestContext, request: Any) -> Any:
        """OffsetDelete as Kafka's ``deleteOffsets``: the group must exist (GROUP_ID_NOT_FOUND) and, a classic group
        that is not Empty, use the consumer protocol (NON_EMPTY_GROUP); a partition of a topic the group subscribes to
        keeps its offset (GROUP_SUBSCRIBED_TO_TOPIC), the others' offsets are deleted in the broker. The broker behind
        has no OffsetDelete: a deleted offset is stored as -1, which OffsetFetch answers as Kafka answers a partition
        with no committed offset (offset -1, no metadata)."""
        answer = response_type(request)
        topic_type, partition_type = nested(answer, "OffsetDeleteResponseTopic"), nested(
            answer, "OffsetDeleteResponsePartition")
        async with self.offset_order.held((request.group_id,)):
            code, subscribed = await self._offset_delete_check(context, request.group_id)
            if code != classic.ErrorCode.none:
                return build(answer, error_code=code, topics=())
            kept = int(classic.ErrorCode.group_subscribed_to_topic)
            codes = {(t.name, p.partition_index): kept if t.name in subscribed else 0
                     for t in request.topics for p in t.partitions}
            doomed = [t for t in request.topics if t.name not in subscribed]
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

    async def _offset_delete_check(self, context: RequestContext, group_id: str) -> tuple[int, frozenset[str]]:
        """``Group.validateOffsetDelete`` and the topics ``isSubscribedToTopic`` names, of whichever coordinator has
        the group; a group whose offsets only the broker keeps is Kafka's simple group, Empty."""
        consumers, classics = self.runtime.consumer, self.runtime.classic
        if consumers.has_group(group_id):
            return classic.ErrorCode.none, consumers.subscribed_topics(group_id)
        state = classics.state_of(group_id) if group_id in classics.group_ids() else classic.GroupState.DEAD
        if state is classic.GroupState.EMPTY:
            return classic.ErrorCode.none, frozenset()
        if state is not classic.GroupState.DEAD:
            record = classics.record_of(group_id)
            if record is None or record.protocol_type != CONSUMER_PROTOCOL_TYPE:
                return classic.ErrorCode.non_empty_group, frozenset()
            try:
                return classic.ErrorCode.none, frozenset(
                    name for m in record.members for name in decode_subscription(m.subscription).topics)
            except ProtocolInvalid:  # Kafka's subscribed topics of a group it cannot read: none
                return classic.ErrorCode.none, frozenset()
        if context.relay is not None:
            listed = await self._bounded(context, ListGroupsRequest(states_filter=(), types_filter=()))
            if listed.error_code == KioErrorCode.none and group_id in {g.group_id for g in listed.groups}:
                return classic.ErrorCode.none, frozenset()
        return classic.ErrorCode.group_id_not_found, frozenset()

    # --- KIP-848 ----------------------------------------------------------------------------------------------

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
        self.runtime.consumer_events(self.runtime.consumer.set_topics(topics, self.runtime.now()))

    async def consumer_group_heartbeat(self, context: RequestContext, request: Any) -> Any:
        answer = response_type(request)
        group_id = request.group_id
        # The topics first: from the classic coordinator's check to the KIP-848 group's creation nothing awaits, so a
        # JoinGroup of the same group id on another connection sees either the classic group or the KIP-848 one, and
        # one group id never lives in both coordinators (JoinGroup's own check and creation do not await either).
        await self._refresh_topics(context)
        classic_groups = self.runtime.classic
        if group_id in classic_groups.group_ids() and classic_groups.state_of(group_id) is not classic.GroupState.DEAD:
            if classic_groups.state_of(group_id) is not classic.GroupState.EMPTY:
                refused = self._upgrade(group_id) if request.member_epoch == 0 else "the member is not new"
                if refused is not None:
                    return build(answer, error_code=classic.ErrorCode.group_id_not_found, member_epoch=0,
                                 error_message=f"Group {group_id} is not a consumer group ({refused}).",
                                 heartbeat_interval=0)
            elif request.member_epoch == 0:  # an empty classic group gives way; its offsets stay with the group id
                self.runtime.classic_events(classic_groups.handle(classic.DeleteGroups(0, (group_id,)),
                                                                  self.runtime.now()))
        owned = request.topic_partitions
        outcome = self.runtime.consumer.heartbeat(ConsumerGroupHeartbeat(
            group_id, request.member_id, request.member_epoch, request.instance_id, request.rack_id,
            _ms(request.rebalance_timeout) if request.rebalance_timeout is not None else -1,
            None if request.subscribed_topic_names is None else tuple(request.subscribed_topic_names),
            getattr(request, "subscribed_topic_regex", None), request.server_assignor,  # v0 has no regex
            None if owned is None else {topic_id_of(t.topic_id): frozenset(t.partitions) for t in owned
                                        if t.topic_id is not None},
            context.client_id or "", _host(context), context.head.api_version), self.runtime.now())
        self.runtime.consumer_events(outcome.events, touched=(group_id,))  # the group maybe classic again
        await self.runtime.stored()  # the answer goes out once what it says is stored, as Kafka answers
        response = outcome.response
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

    def _upgrade(self, group_id: str) -> str | None:
        """Kafka's online upgrade of a live classic group to a consumer group on a new member's heartbeat
        (``validateOnlineUpgrade``, ``convertToConsumerGroup``): why it cannot happen, or ``None`` once it did. The
        classic coordinator hands the group over (its waiting requests answered REBALANCE_IN_PROGRESS) and the
        consumer coordinator takes it in, with nothing awaited in between."""
        consumers, classic_groups, now = self.runtime.consumer, self.runtime.classic, self.runtime.now()
        record = classic_groups.record_of(group_id)
        if record is None:
            return "it holds nothing to convert"
        refused, events = consumers.upgrade_refused(group_id, record, now)
        self.runtime.consumer_events(events)
        if refused is not None:
            return refused
        handed, state, step = classic_groups.hand_over(group_id, now)
        assert handed is not None
        events = consumers.upgrade(group_id, handed, state, now)
        self.runtime.classic_events(step)
        self.runtime.consumer_events(events, touched=(group_id,))
        return None

    async def consumer_group_describe(self, context: RequestContext, request: Any) -> Any:
        response = self.runtime.consumer.describe(ConsumerGroupDescribe(tuple(request.group_ids)))
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


def _listed(group: classic.ListedGroup, states: tuple[str, ...], types: tuple[str, ...]) -> bool:
    """ListGroups' v4 state and v5 type filters, case-insensitive, empty meaning all (as the classic rows)."""
    return ((not states or group.state.lower() in {s.lower() for s in states})
            and (not types or group.group_type.lower() in {t.lower() for t in types}))


__all__ = ["VERSIONS", "GroupApis", "build", "nested"]
