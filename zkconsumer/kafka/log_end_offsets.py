"""The latest offset of each partition (its log size, as ConsumerOffsetChecker called it), asked of the brokers.

ConsumerOffsetChecker sent an OffsetRequest for LatestTime to each partition's leader; here confluent-kafka's
``get_watermark_offsets(..., cached=False)`` does the same (ListOffsets to the leader, high watermark). A broker
that does not answer is an answer too: every partition comes back as unknown, with the reason, and the caller
shows the rest of what it knows. One metadata request first tells which partitions have a leader at all, so a
partition without one costs nothing and a dead broker costs one timeout, not one per partition.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.types import TopicPartition

DEFAULT_TIMEOUT = 5.0
#: never joins the group: the client only asks for offsets, but librdkafka wants a group id for a consumer
CLIENT_GROUP = "zkconsumer-offset-checker"
_GIVE_UP = {KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN}


@dataclass(frozen=True)
class LogEndOffsets:
    """What the brokers said: partition -> latest offset, or partition -> why it is not known."""

    offsets: Mapping[TopicPartition, int] = field(default_factory=lambda: MappingProxyType({}))
    unknown: Mapping[TopicPartition, str] = field(default_factory=lambda: MappingProxyType({}))
    #: set when no broker answered at all (then every partition is unknown for this reason)
    unavailable: str | None = None


def fetch_log_end_offsets(bootstrap: str, partitions: Iterable[TopicPartition],
                          timeout: float = DEFAULT_TIMEOUT) -> LogEndOffsets:
    wanted = sorted(set(partitions))
    if not wanted:
        return LogEndOffsets()
    try:
        consumer = Consumer({
            "bootstrap.servers": bootstrap,
            "group.id": CLIENT_GROUP,
            "enable.auto.commit": False,
            "socket.connection.setup.timeout.ms": max(1000, int(timeout * 1000)),  # librdkafka's minimum
            "reconnect.backoff.max.ms": 1000,
            "logger": LIBRDKAFKA_LOGGER,
        })
    except KafkaException as exc:
        reason = f"cannot ask {bootstrap}: {_text(exc)}"
        return LogEndOffsets(unknown=MappingProxyType(dict.fromkeys(wanted, reason)), unavailable=reason)
    try:
        try:
            metadata = consumer.list_topics(timeout=timeout)
        except KafkaException as exc:
            reason = f"no broker answered at {bootstrap} within {timeout:g} s ({_text(exc)})"
            return LogEndOffsets(unknown=MappingProxyType(dict.fromkeys(wanted, reason)), unavailable=reason)
        offsets: dict[TopicPartition, int] = {}
        unknown: dict[TopicPartition, str] = {}
        given_up: str | None = None
        for tp in wanted:
            if given_up is not None:
                unknown[tp] = given_up
                continue
            topic = metadata.topics.get(tp.topic)
            if topic is None or topic.error is not None:
                unknown[tp] = f"the broker does not know topic {tp.topic}"
                continue
            meta = topic.partitions.get(tp.partition)
            if meta is None:
                unknown[tp] = f"the broker does not know partition {tp}"
                continue
            if meta.leader < 0:
                unknown[tp] = f"partition {tp} has no leader"
                continue
            try:
                marks = consumer.get_watermark_offsets(
                    KafkaTopicPartition(tp.topic, tp.partition), timeout=timeout, cached=False
                )
            except KafkaException as exc:
                unknown[tp] = _text(exc)
                if exc.args and isinstance(exc.args[0], KafkaError) and exc.args[0].code() in _GIVE_UP:
                    given_up = f"not asked after the broker stopped answering ({_text(exc)})"
                continue
            if marks is None:
                unknown[tp] = f"no answer within {timeout:g} s"
                continue
            offsets[tp] = marks[1]
        return LogEndOffsets(MappingProxyType(offsets), MappingProxyType(unknown))
    finally:
        consumer.close()


def _text(exc: KafkaException) -> str:
    error = exc.args[0] if exc.args else None
    return error.str() if isinstance(error, KafkaError) else str(exc)
