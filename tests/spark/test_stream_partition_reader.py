"""What an executor task does, against the real broker without Spark: exactly ``[begin, end)`` of a partition as
Arrow batches in the Kafka source's layout, the same rows every time, inside one producer batch (where Tansu's high
watermark is wrong), stopping at the end of the log instead of waiting past it, and failing in one line, naming the
range, when the log does not have it."""

from __future__ import annotations

import pytest
from support import produce, produce_batched

from zkconsumer.kafka.topics import create_topic
from zkconsumer.spark.offsets import OffsetRange
from zkconsumer.spark.partition_reader import (
    ARROW_SCHEMA,
    CONSUME_MESSAGES,
    RangeReadError,
    RangeTask,
    ReadSettings,
    read_range,
)


def read(bootstrap: str, topic: str, begin: int, end: int, batch_rows: int = 10_000) -> list:
    task = RangeTask(OffsetRange(topic, 0, begin, end), ReadSettings(bootstrap, "reader-test", socket_timeout_ms=3000))
    batches = list(read_range(task, batch_rows))
    for batch in batches:
        assert batch.schema == ARROW_SCHEMA and batch.num_rows <= batch_rows
    return [row for batch in batches for row in batch.to_pylist()]


def test_exactly_the_range_inside_one_producer_batch_the_same_every_time(bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    produce_batched(bootstrap_servers, topic_name, 0, 500, linger_ms=200)  # one batch: Tansu's watermark says 1
    rows = read(bootstrap_servers, topic_name, 100, 400, batch_rows=128)
    assert [r["offset"] for r in rows] == list(range(100, 400))
    assert [r["value"] for r in rows] == [f"m{i}".encode() for i in range(100, 400)]
    assert {(r["topic"], r["partition"], r["key"], r["timestampType"]) for r in rows} == {(topic_name, 0, None, 0)}
    assert all(r["timestamp"] is not None for r in rows)  # CreateTime, from the producer
    assert read(bootstrap_servers, topic_name, 100, 400, batch_rows=128) == rows  # a task run again: the same rows


def test_a_range_to_the_end_of_the_log_or_past_it_stops_there(bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic_name, [b"a", b"b", b"c"], partition=0, batch_each=True)
    # to the last offset: no waiting for a message after it (the socket timeout would fail the read)
    assert [r["value"] for r in read(bootstrap_servers, topic_name, 1, 3)] == [b"b", b"c"]
    # past the end of the log (shorter than planned): what there is, then stop at the end
    assert [r["value"] for r in read(bootstrap_servers, topic_name, 0, 10)] == [b"a", b"b", b"c"]
    assert read(bootstrap_servers, topic_name, 3, 5) == []
    assert read(bootstrap_servers, topic_name, 2, 2) == []


def test_a_range_the_log_does_not_have_fails_naming_it(bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic_name, [b"a"], partition=0)
    # Kafka answers "out of range" (a fetch error); Tansu answers nothing: after socket.timeout.ms, the same failure
    with pytest.raises(RangeReadError, match=rf"^{topic_name}-0: .*reading \[50, 60\).* from {bootstrap_servers}"):
        read(bootstrap_servers, topic_name, 50, 60)


def test_batches_of_the_size_asked_joined_from_smaller_consumes(bootstrap_servers, topic_name):
    """The reader takes at most CONSUME_MESSAGES from librdkafka at a time and joins them: the batches Spark gets
    are still ``batch_rows`` long (the last one shorter), in offset order."""
    create_topic(bootstrap_servers, topic_name, 1)
    produce_batched(bootstrap_servers, topic_name, 0, 2 * CONSUME_MESSAGES + 700)
    task = RangeTask(OffsetRange(topic_name, 0, 100, 2 * CONSUME_MESSAGES + 700),
                     ReadSettings(bootstrap_servers, "reader-test", socket_timeout_ms=3000))
    batch_rows = CONSUME_MESSAGES + CONSUME_MESSAGES // 2
    batches = list(read_range(task, batch_rows))
    assert [b.num_rows for b in batches] == [batch_rows, 2 * CONSUME_MESSAGES + 600 - batch_rows]
    offsets = [o for b in batches for o in b.column("offset").to_pylist()]
    assert offsets == list(range(100, 2 * CONSUME_MESSAGES + 700))
    assert all(b.schema == ARROW_SCHEMA for b in batches)
