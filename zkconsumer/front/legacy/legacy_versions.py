"""The old versions Kafka 0.8-0.10 clients speak, answered by the front as a Kafka 0.10 broker answered them: Produce
v0-v2, Fetch v0-v3, ListOffsets v0, OffsetCommit v0 and v1, and OffsetFetch v0.

Kafka 4 dropped these versions from its message schemas, so kio (generated from them) cannot read them, and the broker
behind (Tansu) answers some of them wrong: Fetch v0-v3 with record batches of magic 2, which these clients cannot
parse, ListOffsets v0 without its offsets array, Produce v0-v2 by closing the connection. The front reads them with
kafka-python's structs of the old versions (``kafka.protocol.old``, the schemas as Kafka 0.10 laid them out), asks the
broker with versions it answers well (kio's entities, on the client connection's own broker connection), and writes
the old version's answer:

* **Produce v0-v2**: each partition's message set up-converted to one record batch (:mod:`.message_formats`) and
  relayed as Produce v3; a message set that cannot be read is answered ``CORRUPT_MESSAGE`` for its partition and not
  relayed. ``acks=0`` is relayed as ``acks=1`` and the answer dropped, as the server relays a newer Produce (the
  client gets none; a failure closes the connection, as in Kafka).
* **Fetch v0-v3**: relayed as Fetch v4 (the same fields, read uncommitted, a wait of at least 1 ms); every
  partition's records down-converted to the message set the version reads (:mod:`.message_formats`: magic 0 for v0 and
  v1, magic 1 for v2 and v3). A partition answered empty at offset 0 is looked up in the broker's Metadata, since the
  broker answers a partition it does not have so, where Kafka said ``UNKNOWN_TOPIC_OR_PARTITION``. A
  partition whose records cannot be converted (a codec whose library is not installed) is answered with
  ``UNSUPPORTED_COMPRESSION_TYPE`` and no records, as Kafka answers an old Fetch of zstd-compressed records; a corrupt
  one with ``CORRUPT_MESSAGE``.
* **ListOffsets v0**: relayed as v1, answered as Kafka 0.10 answered for a log of one segment: the latest offset
  (-1) is ``[log end, log start]`` (``[log end]`` for an empty log or ``max_num_offsets`` 1), the earliest (-2)
  ``[log start]``; a timestamp after every message is answered as the latest, any other ``[]`` (Kafka 0.10 compared
  it with the segments' last-modified times, and the one segment was modified at its last message). Never more
  than ``max_num_offsets``.
* **OffsetCommit v0, OffsetFetch v0**: kept in ZooKeeper at the legacy paths (:mod:`.zookeeper_offsets`), the topics'
  existence read from the broker's Metadata; answered only by a front given a ZooKeeper (``--zookeeper``).
* **OffsetCommit v1**: kept in the broker as every later version, through the front's group coordinator (its
  OffsetCommit, given version 2: the same fields but the commit timestamp, which the broker sets itself). A front
  whose group APIs the broker answers relays it as it came.

Errors the broker gives a partition are passed on as they are. A body that does not parse as its version, or leaves
bytes after it, is a malformed request, as for every other API (the connection is closed).
"""

from __future__ import annotations

import asyncio
import dataclasses
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from io import BytesIO
from typing import Any, TypeVar

from kafka.protocol.old.commit import (
    OffsetCommitRequest_v0,
    OffsetCommitRequest_v1,
    OffsetCommitResponse_v0,
    OffsetCommitResponse_v1,
    OffsetFetchRequest_v0,
    OffsetFetchResponse_v0,
)
from kafka.protocol.old.fetch import (
    FetchRequest_v0,
    FetchRequest_v1,
    FetchRequest_v2,
    FetchRequest_v3,
    FetchResponse_v0,
    FetchResponse_v1,
    FetchResponse_v2,
    FetchResponse_v3,
)
from kafka.protocol.old.list_offsets import ListOffsetsRequest_v0, ListOffsetsResponse_v0
from kafka.protocol.old.produce import (
    ProduceRequest_v0,
    ProduceRequest_v1,
    ProduceRequest_v2,
    ProduceResponse_v0,
    ProduceResponse_v1,
    ProduceResponse_v2,
)
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v4.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.list_offsets.v1.request import ListOffsetsPartition, ListOffsetsRequest, ListOffsetsTopic
from kio.schema.metadata.v4.request import MetadataRequest, MetadataRequestTopic
from kio.schema.offset_commit.v2.request import (
    OffsetCommitRequest,
    OffsetCommitRequestPartition,
    OffsetCommitRequestTopic,
)
from kio.schema.produce.v3.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.types import BrokerId, GroupId, TopicName
from kio.static.primitive import Records, i8, i16, i32, i64

from zkconsumer.front.legacy.message_formats import (
    CannotConvert,
    CorruptRecords,
    UnsupportedCodec,
    down_convert,
    magic_of_fetch,
    up_convert,
)
from zkconsumer.front.legacy.zookeeper_offsets import ZooKeeperOffsets
from zkconsumer.front.proxy.config import FrontConfig
from zkconsumer.front.proxy.handlers import LocalApi, LocalApis, RequestContext
from zkconsumer.front.proxy.wire import AcksZeroFailed, MalformedRequest, RequestHead, framed, header_size
from zkconsumer.kafka.api_keys import FETCH, LIST_OFFSETS, OFFSET_COMMIT, OFFSET_FETCH, PRODUCE
from zkconsumer.kafka.durations import i32_duration, milliseconds
from zkconsumer.types import TopicPartition

LATEST, EARLIEST = -1, -2
#: the shortest wait a Fetch is relayed with: the broker behind answers a Fetch with ``max_wait`` 0 with no topics at
#: all, where Kafka answers every partition asked at once
MIN_WAIT_MS = 1
#: the most records converted on the event loop itself; more are converted on a worker thread (:func:`_off_the_loop`)
INLINE_BYTES = 64 * 1024
#: the largest Fetch answer: a v0-v2 Fetch has no limit of its own
MAX_FETCH_BYTES = 2**31 - 1
#: the errors the front gives a partition itself, by Kafka's numbers
UNSUPPORTED_COMPRESSION_TYPE, CORRUPT_MESSAGE, UNKNOWN_TOPIC_OR_PARTITION = 76, 2, 3

_PRODUCE_REQUESTS = (ProduceRequest_v0, ProduceRequest_v1, ProduceRequest_v2)
_PRODUCE_RESPONSES = (ProduceResponse_v0, ProduceResponse_v1, ProduceResponse_v2)
_FETCH_REQUESTS = (FetchRequest_v0, FetchRequest_v1, FetchRequest_v2, FetchRequest_v3)
_FETCH_RESPONSES = (FetchResponse_v0, FetchResponse_v1, FetchResponse_v2, FetchResponse_v3)

T = TypeVar("T")
#: sends kio's request entity to the broker and returns the answer's entity
Relay = Callable[[Any], Awaitable[Any]]


@dataclass(frozen=True)
class PartitionAnswer:
    """A partition's down-converted answer."""

    error_code: int
    records: bytes


class LegacyVersions:
    """The old versions the front answers; ``zookeeper`` keeps version-0 offsets (without it, OffsetCommit and
    OffsetFetch v0 are not answered), ``offset_commit`` is the front's own OffsetCommit (its group coordinator's),
    which answers version 1 (without it, version 1 is relayed as it came)."""

    def __init__(self, zookeeper: ZooKeeperOffsets | None = None, offset_commit: LocalApi | None = None) -> None:
        self.zookeeper = zookeeper
        self.offset_commit = offset_commit
        self.versions: dict[int, range] = {PRODUCE: range(0, 3), FETCH: range(0, 4), LIST_OFFSETS: range(0, 1)}
        if zookeeper is not None:
            self.versions[OFFSET_FETCH] = range(0, 1)
        commits = [version for version, answered in ((0, zookeeper), (1, offset_commit)) if answered is not None]
        if commits:
            self.versions[OFFSET_COMMIT] = range(min(commits), max(commits) + 1)

    def answers(self, head: RequestHead) -> bool:
        return head.api_version in self.versions.get(head.api_key, range(0))

    async def answer(self, context: RequestContext, frame: bytes) -> bytes | None:
        """The framed answer to ``frame``, a request :meth:`answers` (``context.relay`` reaches the broker); none to
        a Produce with ``acks=0``.

        :raises MalformedRequest:
        :raises AcksZeroFailed: a Produce with ``acks=0`` failed (Kafka closes the connection).
        """
        head, relay = context.head, context.relay
        assert relay is not None  # a client connection's requests always have their broker connection
        if head.api_key == PRODUCE:
            produce = _decode(_PRODUCE_REQUESTS[head.api_version], head, frame, topics="topic_data")
            response = await self._produce(head.api_version, produce, relay)
            if produce.acks == 0:
                if _produce_failed(response):
                    raise AcksZeroFailed(f"a Produce v{head.api_version} with acks=0 (correlation id "
                                         f"{head.correlation_id}) failed")
                return None
        elif head.api_key == FETCH:
            request = _decode(_FETCH_REQUESTS[head.api_version], head, frame)
            response = await self._fetch(head.api_version, request, relay)
        elif head.api_key == LIST_OFFSETS:
            response = await self._list_offsets(_decode(ListOffsetsRequest_v0, head, frame), relay)
        elif head.api_key == OFFSET_COMMIT and head.api_version == 1:
            response = await self._offset_commit_v1(context, _decode(OffsetCommitRequest_v1, head, frame))
        elif head.api_key == OFFSET_COMMIT:
            response = await self._offset_commit(_decode(OffsetCommitRequest_v0, head, frame), relay)
        else:
            response = await self._offset_fetch(_decode(OffsetFetchRequest_v0, head, frame), relay)
        return framed(struct.pack(">i", head.correlation_id) + response.encode())

    def close(self) -> None:
        if self.zookeeper is not None:
            self.zookeeper.close()

    # --- Produce --------------------------------------------------------------------------------------------------

    async def _produce(self, version: int, request: Any, relay: Relay) -> Any:
        size = sum(len(message_set or b"") for _, partitions in request.topic_data for _, message_set in partitions)
        errors, batches = await _off_the_loop(size, _up_converted, request.topic_data)
        results: dict[tuple[str, int], tuple[int, int, int]] = {}
        if batches:
            by_topic: dict[str, list[PartitionProduceData]] = {}
            for (topic, index), batch in batches.items():
                by_topic.setdefault(topic, []).append(PartitionProduceData(index=i32(index), records=Records(batch)))
            # acks=0 is relayed as acks=1, as the server relays a newer Produce: the client gets no answer, the
            # connection stays in step whatever the broker does
            answer = await relay(ProduceRequest(
                acks=i16(request.acks or 1), timeout=i32_duration(request.timeout_ms),
                topic_data=tuple(TopicProduceData(name=TopicName(t), partition_data=tuple(ps))
                                 for t, ps in by_topic.items())))
            for topic in answer.responses:
                for p in topic.partition_responses:
                    appended = -1 if p.log_append_time is None else int(p.log_append_time.timestamp() * 1000)
                    results[topic.name, p.index] = (int(p.error_code), int(p.base_offset), appended)
        topics = []
        for topic, partitions in request.topic_data:
            answered = []
            for index, _ in partitions:
                error, base_offset, appended = results.get((topic, index), (errors.get((topic, index), 0), -1, -1))
                answered.append((index, error, base_offset, appended) if version == 2 else (index, error, base_offset))
            topics.append((topic, answered))
        if version == 0:
            return ProduceResponse_v0(responses=topics)
        return _PRODUCE_RESPONSES[version](responses=topics, throttle_time_ms=0)

    # --- Fetch ----------------------------------------------------------------------------------------------------

    async def _fetch(self, version: int, request: Any, relay: Relay) -> Any:
        limits = {(topic, p[0]): (p[1], p[2]) for topic, partitions in request.topics for p in partitions}
        answer = await relay(FetchRequest(
            replica_id=BrokerId(request.replica_id), max_wait=i32_duration(max(request.max_wait_ms, MIN_WAIT_MS)),
            min_bytes=i32(request.min_bytes), max_bytes=i32(request.max_bytes if version == 3 else MAX_FETCH_BYTES),
            isolation_level=i8(0),
            topics=tuple(FetchTopic(topic=TopicName(topic), partitions=tuple(
                FetchPartition(partition=i32(p[0]), fetch_offset=i64(p[1]), partition_max_bytes=i32(p[2]))
                for p in partitions)) for topic, partitions in request.topics)))
        magic = magic_of_fetch(version)
        # The broker answers a partition it does not have as an empty one (no error, no records, a high watermark of
        # 0), where Kafka 0.10 said UNKNOWN_TOPIC_OR_PARTITION: such an answer is checked against its Metadata.
        unsure = {(topic.topic, p.partition_index) for topic in answer.responses for p in topic.partitions
                  if p.error_code == ErrorCode.none and not p.records and p.high_watermark <= 0}
        missing = unsure - await _existing_partitions(relay, {topic for topic, _ in unsure}) if unsure else set()
        size = sum(len(p.records or b"") for topic in answer.responses for p in topic.partitions)
        topics = await _off_the_loop(size, _down_converted, answer, magic, limits, missing)
        if version == 0:
            return FetchResponse_v0(responses=topics)
        return _FETCH_RESPONSES[version](throttle_time_ms=milliseconds(answer.throttle_time), responses=topics)

    # --- ListOffsets ----------------------------------------------------------------------------------------------

    async def _list_offsets(self, request: Any, relay: Relay) -> Any:
        asked = [(topic, p[0], p[1], p[2]) for topic, partitions in request.topics for p in partitions]
        # The broker closes the connection on a ListOffsets for a topic it does not have: they are never asked.
        existing = await _existing_partitions(relay, {topic for topic, *_ in asked})
        partitions = [(topic, partition) for topic, partition, _, _ in asked if (topic, partition) in existing]
        timed = [(t, p, ts) for t, p, ts, _ in asked if ts >= 0 and (t, p) in existing]
        ends, starts, found = {}, {}, {}
        if partitions:
            ends = await _log_ends(relay, await _offsets(relay, request.replica_id,
                                                         [(t, p, LATEST) for t, p in partitions]))
            starts = await _offsets(relay, request.replica_id, [(t, p, EARLIEST) for t, p in partitions])
        if timed:
            found = await _offsets(relay, request.replica_id, timed)
        topics: dict[str, list[tuple[int, int, list[int]]]] = {}
        for topic, partition, timestamp, max_num in asked:
            key = (topic, partition)
            if key not in existing:
                topics.setdefault(topic, []).append((partition, UNKNOWN_TOPIC_OR_PARTITION, []))
                continue
            lookups = [ends[key], starts[key], found.get(key, (ErrorCode.none, -1))]
            error = next((code for code, _ in lookups if code != ErrorCode.none), ErrorCode.none)
            offsets = [] if error else old_style_offsets(timestamp, max_num, start=lookups[1][1],
                                                         end=lookups[0][1], at_or_after=lookups[2][1])
            topics.setdefault(topic, []).append((partition, int(error), offsets))
        return ListOffsetsResponse_v0(topics=list(topics.items()))

    # --- OffsetCommit and OffsetFetch v0 --------------------------------------------------------------------------

    async def _offset_commit(self, request: Any, relay: Relay) -> Any:
        assert self.zookeeper is not None  # answers() takes version 0 only with a ZooKeeper
        offsets = {TopicPartition(topic, p[0]): (p[1], p[2]) for topic, partitions in request.topics
                   for p in partitions}
        existing = await _existing_topics(relay, {tp.topic for tp in offsets})
        errors = await self.zookeeper.commit(request.group_id, offsets, existing)
        return OffsetCommitResponse_v0(topics=[
            (topic, [(p[0], errors[TopicPartition(topic, p[0])]) for p in partitions])
            for topic, partitions in request.topics])

    async def _offset_commit_v1(self, context: RequestContext, request: Any) -> Any:
        """Version 1 (kept in the broker, with the group's generation and member) as version 2, which differs only in
        the retention (the broker's default) and a commit timestamp per partition (which the broker sets itself):
        the front's coordinator checks it and the broker stores it, as for every later version."""
        assert self.offset_commit is not None  # answers() takes version 1 only with it
        asked = OffsetCommitRequest(
            group_id=GroupId(request.group_id), member_id=request.member_id,
            generation_id_or_member_epoch=i32(request.generation_id_or_member_epoch), topics=tuple(
                OffsetCommitRequestTopic(name=TopicName(topic), partitions=tuple(
                    OffsetCommitRequestPartition(partition_index=i32(p[0]), committed_offset=i64(p[1]),
                                                 committed_metadata=p[3]) for p in partitions))
                for topic, partitions in request.topics))
        as_v2 = dataclasses.replace(context, head=dataclasses.replace(context.head, api_version=2))
        answer = await self.offset_commit.handle(as_v2, asked)
        return OffsetCommitResponse_v1(topics=[(topic.name, [(p.partition_index, int(p.error_code))
                                                             for p in topic.partitions]) for topic in answer.topics])

    async def _offset_fetch(self, request: Any, relay: Relay) -> Any:
        assert self.zookeeper is not None
        asked = [TopicPartition(topic, p) for topic, partitions in request.topics for p in partitions]
        existing = await _existing_topics(relay, {tp.topic for tp in asked})
        committed = await self.zookeeper.fetch(request.group_id, asked, existing)
        return OffsetFetchResponse_v0(topics=[
            (topic, [(p, committed[TopicPartition(topic, p)].offset, "", committed[TopicPartition(topic, p)].error_code)
                     for p in partitions])
            for topic, partitions in request.topics])


def _decode(schema: Any, head: RequestHead, frame: bytes, topics: str = "topics") -> Any:
    """The body of ``frame`` as ``schema`` (kafka-python's struct of its version), read to its last byte."""
    body = BytesIO(frame)
    body.seek(header_size(head, frame))
    try:
        request = schema.decode(body)
    except (ValueError, UnicodeDecodeError, struct.error) as exc:
        raise MalformedRequest(f"unreadable body of API key {head.api_key} v{head.api_version}: {exc}") from None
    if body.tell() != len(frame):
        raise MalformedRequest(f"{len(frame) - body.tell()} bytes after the body of API key {head.api_key}")
    listed = getattr(request, topics)
    if listed is None or any(partitions is None for _topic, partitions in listed):
        raise MalformedRequest(f"a null array in API key {head.api_key} v{head.api_version}")
    return request


def old_style_offsets(timestamp: int, max_num: int, start: int, end: int, at_or_after: int) -> list[int]:
    """ListOffsets v0's offsets, as Kafka 0.10 gave them for a log of one segment from ``start`` to ``end``:
    ``at_or_after`` is the first offset whose timestamp is ``timestamp`` or later (-1: none is)."""
    if timestamp == EARLIEST:
        offsets = [start]
    elif timestamp == LATEST or (timestamp >= 0 and at_or_after < 0):
        offsets = [end, start] if start < end else [end]
    else:
        offsets = []
    return offsets[:max(max_num, 0)]


async def _off_the_loop(size: int, convert: Callable[..., T], *args: Any) -> T:
    """``convert(*args)``, on a worker thread when it has more than :data:`INLINE_BYTES` to convert: the event loop
    also answers every other connection and runs the group coordinators' timers, which a conversion of megabytes
    message by message would hold up."""
    if size <= INLINE_BYTES:
        return convert(*args)
    return await asyncio.to_thread(convert, *args)


def _up_converted(topic_data: Any) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], bytes]]:
    """A Produce's message sets as record batches, by topic and partition, and the errors of those that cannot be."""
    errors: dict[tuple[str, int], int] = {}
    batches: dict[tuple[str, int], bytes] = {}
    for topic, partitions in topic_data:
        for index, message_set in partitions:
            try:
                converted = up_convert(message_set)
            except CannotConvert as exc:
                errors[topic, index] = UNSUPPORTED_COMPRESSION_TYPE if isinstance(exc, UnsupportedCodec) \
                    else CORRUPT_MESSAGE
                continue
            if converted.messages:
                batches[topic, index] = converted.records
    return errors, batches


def _down_converted(answer: Any, magic: int, limits: dict[tuple[str, int], tuple[int, int]],
                    missing: set[tuple[str, int]]) -> list[tuple[str, list[tuple[int, int, int, bytes]]]]:
    """A Fetch v4 answer's topics as an old version's: each partition's records as message sets of ``magic``."""
    topics = []
    for topic in answer.responses:
        partitions = []
        for partition in topic.partitions:
            fetch_offset, max_bytes = limits.get((topic.topic, partition.partition_index), (0, MAX_FETCH_BYTES))
            if (topic.topic, partition.partition_index) in missing:
                partitions.append((partition.partition_index, UNKNOWN_TOPIC_OR_PARTITION, -1, b""))
                continue
            converted = _converted(partition, magic, fetch_offset, max_bytes)
            partitions.append((partition.partition_index, converted.error_code, int(partition.high_watermark),
                               converted.records))
        topics.append((topic.topic, partitions))
    return topics


def _produce_failed(response: Any) -> bool:
    return any(p[1] != 0 for _topic, partitions in response.responses for p in partitions)


def _converted(partition: Any, magic: int, fetch_offset: int, max_bytes: int) -> PartitionAnswer:
    if partition.error_code != ErrorCode.none:
        return PartitionAnswer(int(partition.error_code), b"")
    try:
        return PartitionAnswer(0, down_convert(partition.records, magic, fetch_offset, max_bytes).records)
    except UnsupportedCodec:
        return PartitionAnswer(UNSUPPORTED_COMPRESSION_TYPE, b"")
    except CorruptRecords:
        return PartitionAnswer(CORRUPT_MESSAGE, b"")


async def _offsets(relay: Relay, replica_id: int,
                   asked: list[tuple[str, int, int]]) -> dict[tuple[str, int], tuple[ErrorCode, int]]:
    """ListOffsets v1 for ``(topic, partition, timestamp)`` each: its error and offset, by topic and partition; -1
    for a timestamp after every message (the broker behind says so with the timestamp -1 and the offset 0, Kafka with
    -1 for both)."""
    by_topic: dict[str, list[ListOffsetsPartition]] = {}
    for topic, partition, timestamp in asked:
        by_topic.setdefault(topic, []).append(ListOffsetsPartition(partition_index=i32(partition),
                                                                   timestamp=i64(timestamp)))
    answer = await relay(ListOffsetsRequest(replica_id=BrokerId(replica_id), topics=tuple(
        ListOffsetsTopic(name=TopicName(topic), partitions=tuple(partitions))
        for topic, partitions in by_topic.items())))
    timestamps = {(t, p): ts for t, p, ts in asked}
    found = {}
    for topic in answer.topics:
        for p in topic.partitions:
            key = (topic.name, p.partition_index)
            none_at_or_after = timestamps.get(key, -1) >= 0 and p.timestamp < 0
            found[key] = (p.error_code, -1 if none_at_or_after else int(p.offset))
    return {(t, p): found.get((t, p), (ErrorCode.unknown_topic_or_partition, -1)) for t, p, _ in asked}


async def _log_ends(relay: Relay, latest: dict[tuple[str, int], tuple[ErrorCode, int]]
                    ) -> dict[tuple[str, int], tuple[ErrorCode, int]]:
    """The true end of each partition's log, from the broker's ListOffsets ``latest`` answers: the high watermark of
    a Fetch from there. The broker behind answers "latest" with the first offset of its last batch + 1 (see
    docs/broker-limits.md), its Fetch answers carry the true end; against a broker that answers right, this Fetch
    is an empty one at the end of the log."""
    asked = {key: offset for key, (error, offset) in latest.items() if error == ErrorCode.none and offset >= 0}
    if not asked:
        return latest
    by_topic: dict[str, list[FetchPartition]] = {}
    for (topic, partition), offset in asked.items():
        by_topic.setdefault(topic, []).append(FetchPartition(partition=i32(partition), fetch_offset=i64(offset),
                                                             partition_max_bytes=i32(1)))
    answer = await relay(FetchRequest(
        max_wait=i32_duration(MIN_WAIT_MS), min_bytes=i32(0), max_bytes=i32(1), isolation_level=i8(0),
        topics=tuple(FetchTopic(topic=TopicName(t), partitions=tuple(ps)) for t, ps in by_topic.items())))
    ends = dict(latest)
    for topic in answer.responses:
        for p in topic.partitions:
            key = (topic.topic, p.partition_index)
            if key in asked and p.error_code == ErrorCode.none:
                ends[key] = (ErrorCode.none, max(asked[key], int(p.high_watermark)))
    return ends


async def _existing_partitions(relay: Relay, topics: set[str]) -> set[tuple[str, int]]:
    """The partitions the broker has of ``topics`` (never created by asking)."""
    if not topics:
        return set()
    answer = await relay(MetadataRequest(topics=tuple(MetadataRequestTopic(name=TopicName(t)) for t in sorted(topics)),
                                         allow_auto_topic_creation=False))
    return {(t.name, p.partition_index) for t in answer.topics if t.error_code == ErrorCode.none
            for p in t.partitions}


async def _existing_topics(relay: Relay, topics: set[str]) -> frozenset[str]:
    """Those of ``topics`` the broker has (never created by asking)."""
    return frozenset(topic for topic, _ in await _existing_partitions(relay, topics))





def old_versions(config: FrontConfig, local: LocalApis) -> LegacyVersions:
    """The old versions a front of ``config`` answers: offsets in ZooKeeper where it names a ZooKeeper, OffsetCommit
    v1 through the front's own coordinator where ``local`` has one."""
    return LegacyVersions(ZooKeeperOffsets(config.zookeeper) if config.zookeeper else None, local.get(OFFSET_COMMIT))
