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

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError
from confluent_kafka import TopicPartition as KafkaTopicPartition

from zkconsumer.errors import ZkConsumerError
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
BATCH_ROWS = 10_000
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
    """The rows of ``[begin, end)``, in offset order, ``batch_rows`` at most per record batch."""
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
        keys: list[bytes | None] = []
        values: list[bytes | None] = []
        offsets: list[int] = []
        stamps: list[tuple[int, int]] = []
        done = next_offset >= r.end
        while not done:
            messages = consumer.consume(min(batch_rows, r.end - next_offset), _POLL_S)
            if not messages and time.monotonic() > deadline:
                raise RangeReadError(f"{r.topic}-{r.partition}: nothing at offset {next_offset} within {patience:g} s "
                                     f"(reading [{r.begin}, {r.end}) from {settings.bootstrap})")
            for message in messages:
                error = message.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        stopped, done = "log_end", True
                        break
                    raise RangeReadError(f"{r.topic}-{r.partition}: {error.str()} (reading [{r.begin}, {r.end}) "
                                         f"at offset {next_offset} from {settings.bootstrap})")
                offset = message.offset()
                if offset is None:
                    continue
                if offset >= r.end:
                    done = True
                    break
                keys.append(message.key())
                values.append(message.value())
                offsets.append(offset)
                stamps.append(message.timestamp())
                next_offset = offset + 1
            if messages:
                deadline = time.monotonic() + patience
            if next_offset >= r.end:
                done = True
            if len(offsets) >= batch_rows or (done and offsets):
                rows += len(offsets)
                last = offsets[-1]
                yield record_batch(r.topic, r.partition, keys, values, offsets, stamps)
                keys, values, offsets, stamps = [], [], [], []
    finally:
        consumer.close()
    _log.info("spark.range_read", topic=r.topic, partition=r.partition, **{"from": r.begin}, to=r.end, rows=rows,
              last_offset=last, stopped=stopped, duration_ms=round((time.monotonic() - started) * 1000, 3))


def record_batch(topic: str, partition: int, keys: list[bytes | None], values: list[bytes | None],
                 offsets: list[int], stamps: list[tuple[int, int]]) -> pa.RecordBatch:
    """Rows as Spark's Kafka source has them. librdkafka's timestamp types are Kafka's ids + 1 (0 = none, 1 =
    CreateTime, 2 = LogAppendTime); the column holds Kafka's (-1, 0, 1), and a missing timestamp is null."""
    count = len(offsets)
    types = [t for t, _ in stamps]
    micros = [ms * 1000 if t else None for t, ms in stamps]
    return pa.RecordBatch.from_arrays([
        pa.array(keys, pa.binary()),
        pa.array(values, pa.binary()),
        pa.array([topic] * count, pa.string()),
        pa.array([partition] * count, pa.int32()),
        pa.array(offsets, pa.int64()),
        pa.array(micros, pa.timestamp("us", tz="UTC")),
        pa.array([t - 1 for t in types], pa.int32()),
    ], schema=ARROW_SCHEMA)
