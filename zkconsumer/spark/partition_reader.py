"""What a Spark task runs on an executor: read exactly ``[begin, end)`` of one partition, as Arrow record batches
with the row layout of Spark's Kafka source.

It is the only part of the streaming source that runs on executors, from a pickled copy of the source: it sees
nothing of the driver's state, so everything it needs comes in the input partition (:class:`RangeTask`). It joins
no group and commits nothing: the partition is ``assign()``-ed at ``begin`` and read until the message before
``end``, so that running the same task again (after a failure, or when Spark replays the batch from the checkpoint)
yields the same rows.

Where it stops, and why it never waits past the log:

* at the first message at or past ``end`` (``end`` was below the true end of the log when the batch was planned, so
  the message before it exists unless compaction removed it);
* at the end of the partition (librdkafka's partition EOF), when the last offsets of the range were compacted
  away, or when the log is shorter than planned (a topic recreated): the task then yields what there was and
  reports ``stopped="log_end"``;
* never on the broker's high watermark: Tansu's answers "the first offset of the last batch + 1" (see
  :mod:`zkconsumer.kafka.log_end_offsets`, where the driver finds the true ends), and the reader does not need it.

A range whose first offsets are gone (deleted by retention) fails the task naming the range, as Spark's Kafka
source does with its default ``failOnDataLoss``; so does a range that makes no progress within
``socket.timeout.ms``.

Events (logger ``zkconsumer.spark``, in the executor's log):

* ``spark.range_read``: ``topic``, ``partition``, ``from``, ``to``, ``rows``, ``last_offset`` (-1 if none),
  ``stopped`` (``end`` or ``log_end``), ``duration_ms``.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from confluent_kafka import Consumer, KafkaError
from confluent_kafka import TopicPartition as KafkaTopicPartition

from zkconsumer.errors import ZkConsumerError
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms
from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.log import get_logger
from zkconsumer.spark.offsets import OffsetRange

#: the row layout of Spark's Kafka source (without ``headers``)
SCHEMA_DDL = ("key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
              "timestampType int")
ARROW_SCHEMA = pa.schema([
    ("key", pa.binary()),
    ("value", pa.binary()),
    ("topic", pa.string()),
    ("partition", pa.int32()),
    ("offset", pa.int64()),
    ("timestamp", pa.timestamp("us", tz="UTC")),
    ("timestampType", pa.int32()),
])
#: never joins the group: librdkafka wants a group id for a consumer, even one that only assigns
READER_GROUP = "zkconsumer-spark-reader"
BATCH_ROWS = 10_000  # rows of a record batch handed to Spark: fewer, larger batches cost the JVM less a row
#: messages taken from librdkafka at a time, and turned into Arrow at once while they are fresh in the CPU's caches:
#: the reader spent 1.3-1.7 CPU-us a row asking for 1,000 or 2,000, 2.2 asking for 10,000 (benchmarks/spark_source.py)
CONSUME_MESSAGES = 1_000
_POLL_S = 0.2

_log = get_logger("zkconsumer.spark")


class RangeReadError(ZkConsumerError):
    """A range could not be read as planned (data deleted, broker gone): the task fails naming the range."""


@dataclass(frozen=True)
class ReadSettings:
    """How executors reach the brokers: from the source's options, resolved on the driver."""

    bootstrap: str
    client_id: str
    fetch_max_bytes: int = 1_048_576
    socket_timeout_ms: int = 30_000
    receive_buffer_bytes: int = 65_536

    def librdkafka(self) -> dict[str, Any]:
        return {
            "bootstrap.servers": self.bootstrap,
            "group.id": READER_GROUP,
            "client.id": self.client_id,
            "enable.auto.commit": False,
            "enable.auto.offset.store": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "error",
            "max.partition.fetch.bytes": max(1, min(self.fetch_max_bytes, 1_000_000_000)),
            "socket.timeout.ms": max(10, min(self.socket_timeout_ms, 300_000)),
            "socket.receive.buffer.bytes": max(0, min(self.receive_buffer_bytes, 100_000_000)),
            "fetch.wait.max.ms": 50,
            "logger": LIBRDKAFKA_LOGGER,
        }


@dataclass(frozen=True)
class RangeTask:
    """One Spark task's work: a range and where to read it."""

    range: OffsetRange
    settings: ReadSettings


def read_range(task: RangeTask, batch_rows: int = BATCH_ROWS) -> Iterator[pa.RecordBatch]:
    """The rows of ``[begin, end)``, in offset order, ``batch_rows`` at most per record batch.

    Each answer of ``consume()`` (:data:`CONSUME_MESSAGES` at most) is taken apart column by column at once (a
    comprehension per field, no per-message branch): that, not the broker, is what the Python side of a task spends
    its time on. Those small batches are joined (a copy of their buffers, in C) into batches of ``batch_rows``."""
    r, settings = task.range, task.settings
    started = time.monotonic()
    consumer = Consumer(settings.librdkafka())
    rows = 0
    last = -1
    stopped = "end"
    try:
        consumer.assign([KafkaTopicPartition(r.topic, r.partition, r.begin)])
        next_offset = r.begin
        patience = settings.socket_timeout_ms / 1000
        deadline = time.monotonic() + patience
        pending: list[pa.RecordBatch] = []  # taken, not yet handed over
        pending_rows = 0
        done = next_offset >= r.end
        while not done:
            wanted = min(CONSUME_MESSAGES, batch_rows - pending_rows, r.end - next_offset)
            messages: list[Any] = consumer.consume(wanted, _POLL_S)
            if not messages:
                if time.monotonic() > deadline:
                    raise RangeReadError(f"{r.topic}-{r.partition}: nothing at offset {next_offset} within "
                                         f"{patience:g} s (reading [{r.begin}, {r.end}) from {settings.bootstrap})")
                continue
            deadline = time.monotonic() + patience
            failed = [i for i, message in enumerate(messages) if message.error() is not None]
            if failed:
                error = messages[failed[0]].error()
                if error.code() != KafkaError._PARTITION_EOF:
                    raise RangeReadError(f"{r.topic}-{r.partition}: {error.str()} (reading [{r.begin}, {r.end}) "
                                         f"at offset {next_offset} from {settings.bootstrap})")
                messages = messages[:failed[0]]  # the end of the log came first: compacted away, or shorter
                stopped, done = "log_end", True
            if messages:
                offsets = [message.offset() for message in messages]
                if offsets[-1] >= r.end:  # past the range: offsets ascend, cut where the range ends
                    messages = messages[:bisect.bisect_left(offsets, r.end)]
                    done = True
                if messages:
                    pending.append(record_batch(r.topic, r.partition, messages))
                    pending_rows += len(messages)
                    last = messages[-1].offset()
                    next_offset = last + 1
            if next_offset >= r.end:
                done = True
            if pending_rows >= batch_rows or (done and pending):
                rows += pending_rows
                yield pending[0] if len(pending) == 1 else pa.concat_batches(pending)
                pending, pending_rows = [], 0
    finally:
        consumer.close()
    _log.emit(ev.SPARK_RANGE_READ, topic=r.topic, partition=r.partition, **{"from": r.begin}, to=r.end, rows=rows,
              last_offset=last, stopped=stopped, duration_ms=elapsed_ms(started))


def record_batch(topic: str, partition: int, messages: list[Any]) -> pa.RecordBatch:
    """Rows as Spark's Kafka source has them. librdkafka's timestamp types are Kafka's ids + 1 (0 = none, 1 =
    CreateTime, 2 = LogAppendTime); the column holds Kafka's (-1, 0, 1), and a missing timestamp is null.

    The ``(type, millis)`` pairs are split by two comprehensions, not ``zip(*pairs)``: unpacking a batch's pairs as
    the arguments of one call cost five times the rest of the batch's Python work."""
    count = len(messages)
    pairs = [message.timestamp() for message in messages]
    kinds = pc.subtract(pa.array([kind for kind, _ in pairs], pa.int32()), 1)
    stamps = pc.if_else(pc.equal(kinds, -1), None,
                        pc.multiply(pa.array([millis for _, millis in pairs], pa.int64()), 1000)
                        .cast(pa.timestamp("us", tz="UTC")))
    return pa.RecordBatch.from_arrays([
        pa.array([message.key() for message in messages], pa.binary()),
        pa.array([message.value() for message in messages], pa.binary()),
        pa.repeat(pa.scalar(topic, pa.string()), count),
        pa.repeat(pa.scalar(partition, pa.int32()), count),
        pa.array([message.offset() for message in messages], pa.int64()),
        stamps,
        kinds,
    ], schema=ARROW_SCHEMA)
