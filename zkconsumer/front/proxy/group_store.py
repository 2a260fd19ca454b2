"""Where the front keeps its groups' records (:mod:`.group_records`): a topic of the broker behind it, as Kafka keeps
group metadata in ``__consumer_offsets``, so that a restarted front replays its groups and no member notices.

The topic (:data:`~.group_records.GROUPS_TOPIC`, or the one ``--group-store-topic`` names) has one
partition, created by the front at its first start with ``cleanup.policy=compact``, as ``__consumer_offsets`` is: a
broker that compacts keeps each group's last record only, one that does not (Tansu's memory storage keeps every record)
is read to its end all the same, last value wins. Each write is one record batch of the records of one step of the
coordinators, produced with ``acks=-1`` on the front's own connection to the broker and awaited, as Kafka appends
before it answers. At start the front reads the topic from its first offset to its high watermark before it listens.

Fronts sharing a broker share the topic: each record is keyed by its front's advertised address (what the front's
clients know it by, and reconnect to after a restart) and group id, and a front reads back its own records only, so
each front stays the one coordinator of its groups.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from typing import Any

from kafka.errors import CorruptRecordError
from kafka.record.memory_records import MemoryRecords
from kio.schema.create_topics.v4.request import CreatableTopic, CreatableTopicConfig, CreateTopicsRequest
from kio.schema.errors import ErrorCode
from kio.schema.fetch.v4.request import FetchPartition, FetchRequest, FetchTopic
from kio.schema.produce.v3.request import PartitionProduceData, ProduceRequest, TopicProduceData
from kio.schema.types import BrokerId, TopicName
from kio.static.primitive import Records, i8, i16, i32, i64

from zkconsumer.events import catalogue as ev
from zkconsumer.front.groups.coordinator_runtime import CoordinatorRuntime
from zkconsumer.front.groups.group_records import ClassicGroupRecord, GroupRecord, RecordInvalid, encode_key, replay
from zkconsumer.front.proxy.config import FrontConfig
from zkconsumer.front.proxy.upstream import Upstream, connect_upstream
from zkconsumer.kafka.durations import i32_duration
from zkconsumer.kafka.record_batches import batch_builder, record_bytes

CLIENT_ID = "zkconsumer-front-groups"
#: how long the broker may take over one produce or fetch of the topic
REQUEST_TIMEOUT_MS = 10_000
#: how much one Fetch of the topic reads
FETCH_BYTES = 8 << 20
#: how long a Fetch waits for records (the broker behind answers a Fetch with max_wait 0 with nothing)
FETCH_WAIT_MS = 100
#: how many Fetches in a row may answer nothing below the high watermark before the read fails
EMPTY_FETCHES = 20


class StoreFailed(Exception):
    """The broker did not take or give the records."""




def record_batch(coordinator: str, records: Sequence[tuple[str, bytes | None]], timestamp_ms: int) -> bytes:
    """One uncompressed record batch of ``(group id, value or None)``, keyed by ``coordinator`` and group id."""
    builder = batch_builder()
    for offset, (group_id, value) in enumerate(records):
        builder.append(offset, timestamp_ms, encode_key(coordinator, group_id), value, [])
    return bytes(builder.build())


class GroupStore:
    """The groups topic on its own connection to the broker (the runtime's :class:`RecordWriter`): the records of
    the coordinator named ``coordinator`` (the front's advertised address, known once it is bound)."""

    def __init__(self, config: FrontConfig, topic: str, coordinator: str = "") -> None:
        self.config = config
        self.topic = topic
        self.coordinator = coordinator
        self._upstream: Upstream | None = None
        self._lock = asyncio.Lock()
        self._correlation = itertools.count(1)

    async def write(self, records: Sequence[tuple[str, bytes | None]]) -> None:
        """:raises StoreFailed:"""
        answer = await self._exchange(ProduceRequest(
            acks=i16(-1), timeout=i32_duration(REQUEST_TIMEOUT_MS), topic_data=(TopicProduceData(
                name=TopicName(self.topic), partition_data=(PartitionProduceData(
                    index=i32(0), records=Records(record_batch(self.coordinator, records,
                                                               int(time.time() * 1000)))),)),)))
        errors = [p.error_code for t in answer.responses for p in t.partition_responses]
        if errors != [ErrorCode.none]:
            raise StoreFailed(f"the broker answered the produce to {self.topic} with {errors}")

    async def read(self) -> tuple[dict[str, GroupRecord], int, list[str]]:
        """Every group's last record, creating the topic first if the broker has none: the groups, how many records
        were read, and a line for each record that does not read (skipped). Read to the high watermark: a Fetch that
        answers nothing below it is asked again, :data:`EMPTY_FETCHES` times in a row at most.

        :raises StoreFailed: the broker failed, or did not give the records up to its high watermark.
        """
        await self._create_topic()
        groups: dict[str, GroupRecord] = {}
        invalid: list[str] = []
        offset, read, empty = 0, 0, 0
        while True:
            partition = FetchPartition(partition=i32(0), fetch_offset=i64(offset), partition_max_bytes=i32(FETCH_BYTES))
            answer = await self._exchange(FetchRequest(
                replica_id=BrokerId(-1), max_wait=i32_duration(FETCH_WAIT_MS), min_bytes=i32(0),
                max_bytes=i32(FETCH_BYTES), isolation_level=i8(0),
                topics=(FetchTopic(topic=TopicName(self.topic), partitions=(partition,)),)))
            partitions = [p for t in answer.responses for p in t.partitions]
            if len(partitions) != 1 or partitions[0].error_code != ErrorCode.none:
                raise StoreFailed(f"the broker answered the fetch of {self.topic} at offset {offset} with "
                                  f"{[p.error_code for p in partitions] or 'nothing'}")
            partition = partitions[0]
            start = offset
            try:
                for batch in MemoryRecords(partition.records or b""):
                    for record in batch:
                        if record.offset < offset:
                            continue
                        try:
                            replay(groups, self.coordinator, record_bytes(record.key), record_bytes(record.value))
                        except RecordInvalid as exc:
                            invalid.append(f"{self.topic} offset {record.offset}: {exc}")
                        offset, read = record.offset + 1, read + 1
                    offset = max(offset, getattr(batch, "next_offset", offset))  # past records compacted away
            except CorruptRecordError as exc:
                raise StoreFailed(f"{self.topic} at offset {offset}: {exc}") from None
            if offset >= partition.high_watermark:
                return groups, read, invalid
            empty = empty + 1 if offset == start else 0
            if empty >= EMPTY_FETCHES:
                raise StoreFailed(f"the broker answered {empty} fetches of {self.topic} at offset {offset} with "
                                  f"nothing, below its high watermark {partition.high_watermark}")

    async def _create_topic(self) -> None:
        answer = await self._exchange(CreateTopicsRequest(
            topics=(CreatableTopic(name=TopicName(self.topic), num_partitions=i32(1), replication_factor=i16(1),
                                   assignments=(), configs=(CreatableTopicConfig(name="cleanup.policy",
                                                                                 value="compact"),)),),
            timeout=i32_duration(REQUEST_TIMEOUT_MS), validate_only=False))
        for result in answer.topics:
            if result.error_code not in (ErrorCode.none, ErrorCode.topic_already_exists):
                raise StoreFailed(f"the broker answered the creation of {self.topic} with {result.error_code.name}"
                                  f"{': ' + result.error_message if result.error_message else ''}")

    async def _exchange(self, request: Any) -> Any:
        async with self._lock:
            try:
                if self._upstream is None:
                    self._upstream = await self._connect()
                return await asyncio.wait_for(
                    self._upstream.exchange(request, next(self._correlation) & 0x7FFFFFFF, CLIENT_ID),
                    REQUEST_TIMEOUT_MS / 1000 * 2)
            except StoreFailed:
                raise
            except Exception as exc:  # the connection is not to be trusted after any failure: a new one next time
                await self.close()
                raise StoreFailed(f"{type(exc).__name__}: {exc}".rstrip(": ")) from None

    async def _connect(self) -> Upstream:
        upstream, errors = await connect_upstream(self.config)
        if upstream is None:
            raise StoreFailed("no broker accepts a connection: " + "; ".join(errors))
        return upstream

    async def close(self) -> None:
        upstream, self._upstream = self._upstream, None
        if upstream is not None:
            await upstream.close()


async def load_groups(runtime: CoordinatorRuntime, store: GroupStore, coordinator: str) -> None:
    """Read ``coordinator``'s groups from the store into the runtime's coordinators (``front.groups_loaded``); a store
    that cannot be read is logged (``front.groups_store_failed``) and the front starts with the groups it has."""
    started = time.monotonic()
    store.coordinator = coordinator
    try:
        groups, read, invalid = await store.read()
    except StoreFailed as exc:
        runtime.log.emit(ev.FRONT_GROUPS_STORE_FAILED, operation="load", error=str(exc), groups=[])
        return
    for line in invalid:
        runtime.log.emit(ev.FRONT_GROUPS_STORE_FAILED, operation="read", error=line, groups=[])
    runtime.load(groups)
    classic = sum(1 for record in groups.values() if isinstance(record, ClassicGroupRecord))
    runtime.log.emit(ev.FRONT_GROUPS_LOADED, topic=store.topic, coordinator=coordinator, records=read, classic=classic,
                     consumer=len(groups) - classic, duration_ms=round((time.monotonic() - started) * 1000))

