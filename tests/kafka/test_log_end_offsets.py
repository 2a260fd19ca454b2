"""The end of each partition's log on the real embedded broker, whatever the producer's batching: Tansu answers
ListOffsets with the first offset of the last batch + 1, and the read-forward finds the true end."""

from __future__ import annotations

import pytest
from support import produce_batched

from zkconsumer.kafka.log_end_offsets import ReadForward, fetch_log_end_offsets, true_ends, under_reported
from zkconsumer.kafka.topics import create_topic
from zkconsumer.types import TopicPartition

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


def test_the_end_read_wins_over_the_end_asked_and_an_unreached_end_is_unknown():
    read = ReadForward(ends={T0: 500}, errors={T1: "Broker: Leader not available"})
    ends, unknown = true_ends({T0: 1, T1: 7}, read, timeout=2.0)
    assert ends == {T0: 500}
    assert unknown == {T1: "the end of the log was not reached within 2 s (Broker: Leader not available)"}
    assert under_reported({T0: 1}, ends) == {"t-0": "1 -> 500"}


def test_a_correct_answer_is_kept_and_is_not_under_reporting():
    ends, unknown = true_ends({T0: 42, T1: 0}, ReadForward(ends={T0: 42, T1: 0}, errors={}), timeout=1.0)
    assert (ends, unknown) == ({T0: 42, T1: 0}, {})
    assert under_reported({T0: 42, T1: 0}, ends) == {}
    silent = true_ends({T0: 3}, ReadForward(ends={}, errors={}), timeout=1.0)[1]
    assert silent == {T0: "the end of the log was not reached within 1 s (no fetch answered)"}


@pytest.mark.parametrize(("count", "linger_ms", "batch_messages"), [
    (1, 5, 10_000),        # one message
    (37, 5, 10_000),       # a few batches or one, as linger decides
    (500, 200, 10_000),    # one batch of many: ListOffsets says 1
    (1_200, 5, 250),       # many batches, the last one partly full
])
def test_the_end_is_the_number_of_messages_produced(bootstrap_servers, topic_name, count, linger_ms, batch_messages):
    create_topic(bootstrap_servers, topic_name, 1)
    produce_batched(bootstrap_servers, topic_name, 0, count, linger_ms, batch_messages)
    found = fetch_log_end_offsets(bootstrap_servers, [TopicPartition(topic_name, 0)], max_age_s=0)
    assert dict(found.offsets) == {TopicPartition(topic_name, 0): count}
    assert not found.unknown and found.unavailable is None


def test_partitions_the_broker_does_not_know_leave_the_others_described(bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 2)
    produce_batched(bootstrap_servers, topic_name, 1, 300, 200)
    asked = [TopicPartition(topic_name, 0), TopicPartition(topic_name, 1), TopicPartition(topic_name, 9),
             TopicPartition(f"{topic_name}-missing", 0)]
    found = fetch_log_end_offsets(bootstrap_servers, asked, max_age_s=0)
    assert dict(found.offsets) == {asked[0]: 0, asked[1]: 300}
    assert set(found.unknown) == {asked[2], asked[3]}


def test_answers_are_reused_for_a_short_while_only(bootstrap_servers, topic_name):
    create_topic(bootstrap_servers, topic_name, 1)
    tp = TopicPartition(topic_name, 0)
    produce_batched(bootstrap_servers, topic_name, 0, 10, 50)
    assert fetch_log_end_offsets(bootstrap_servers, [tp]).offsets[tp] == 10
    produce_batched(bootstrap_servers, topic_name, 0, 5, 50)
    assert fetch_log_end_offsets(bootstrap_servers, [tp], max_age_s=60).offsets[tp] == 10  # the answer kept
    assert fetch_log_end_offsets(bootstrap_servers, [tp], max_age_s=0).offsets[tp] == 15  # asked again


def test_no_broker_makes_every_end_unknown_with_the_reason():
    found = fetch_log_end_offsets("127.0.0.1:1", [T0, T1], timeout=1.0, max_age_s=0)
    assert not found.offsets and set(found.unknown) == {T0, T1}
    assert found.unavailable is not None and found.unavailable.startswith("no broker answered at 127.0.0.1:1")
