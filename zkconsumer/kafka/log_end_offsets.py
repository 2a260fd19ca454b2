"""The end of each partition's log (its log size, as ConsumerOffsetChecker called it), asked of the brokers, and
checked by reading.

ConsumerOffsetChecker sent an OffsetRequest for LatestTime to each partition's leader and trusted the answer. Not
every Kafka-protocol broker answers it right: the embedded one (Tansu) says "the first offset of the last batch +
1", so 500 messages produced in one batch show a log end of 1, and every lag computed from it is far too small. Its
Fetch responses, on the other hand, carry the true high watermark. So the end is found in two steps, for all the
partitions at once, in one client:

1. **Ask** (ListOffsets latest, through ``get_watermark_offsets(cached=False)``), as the old tool did. One metadata
   request first tells which partitions have a leader at all, so a partition without one costs nothing and a dead
   broker costs one timeout, not one per partition.
2. **Read forward** from that answer until librdkafka reports the end of the partition (``enable.partition.eof``):
   the offset it stops at is the true end. This is also what detects a broker that under-reports (the end read is
   past the end asked), without naming any product: a broker that answers right costs one empty fetch round per
   call (tens of milliseconds, no data), an under-reporting one the reading of at most its last batch per
   partition. When an under-reporting broker is seen, ``log_end.under_reported`` says so, once per broker address
   and process (at debug level: a report's reader needs the right numbers, not the story of how they were found).

A partition whose end could not be found in time (its leader does not answer) is unknown, with the reason, never a
guess: the caller shows the rest of what it knows. A leader that stops answering makes only the partitions it
leads unknown. Answers are kept, and reused by a caller that asks for it with ``max_age_s``, so that a loop polling
many partitions does not read them all again every time.

Its event (``log_end.under_reported``) is declared once in :mod:`zkconsumer.events.library` and listed on the
events page (``docs/events.md``).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from confluent_kafka import Consumer, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from zkconsumer.events import catalogue as ev
from zkconsumer.kafka.client_config import with_client_settings
from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.log import get_logger
from zkconsumer.types import TopicPartition

DEFAULT_TIMEOUT = 5.0
#: how long an answer is reused by default: never, since a report that reads committed offsets first and an end
#: cached before them would show a lag too small; a caller that polls (a streaming source planning its batches) can
#: pass a ``max_age_s`` of its own
DEFAULT_MAX_AGE_S = 0.0
#: never joins the group: the client only asks for offsets and reads, but librdkafka wants a group id for a consumer
CLIENT_GROUP = "zkconsumer-offset-checker"
_GIVE_UP = {KafkaError._TIMED_OUT, KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN}
_PAST_THE_END = {KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET}
#: how long a fetch at the end of a partition may wait for data on the broker: the read-forward wants the end, fast
_FETCH_WAIT_MS = 10
_POLL_S = 0.05

_log = get_logger("zkconsumer.log_end_offsets")


@dataclass(frozen=True)
class LogEndOffsets:
    """What the brokers said: partition -> end of its log, or partition -> why it is not known."""

    offsets: Mapping[TopicPartition, int] = field(default_factory=lambda: MappingProxyType({}))
    unknown: Mapping[TopicPartition, str] = field(default_factory=lambda: MappingProxyType({}))
    #: set when no broker answered at all (then every partition is unknown for this reason)
    unavailable: str | None = None


@dataclass(frozen=True)
class ReadForward:
    """What reading from the reported ends found: the end each partition stopped at, and, for those that did not
    get there, the last error that came (a partition's own, or the client's)."""

    ends: Mapping[TopicPartition, int]
    errors: Mapping[TopicPartition, str]


def true_ends(reported: Mapping[TopicPartition, int], read: ReadForward,
              timeout: float) -> tuple[dict[TopicPartition, int], dict[TopicPartition, str]]:
    """The end of each partition from what was asked and what was read. Pure.

    A partition that reached its end is at the larger of the two (a correct broker's answer is never read past; a
    message produced since the question only moves the end on). One that did not is unknown: the number asked may
    be behind, and the number read may be mid-log.
    """
    ends: dict[TopicPartition, int] = {}
    unknown: dict[TopicPartition, str] = {}
    for tp, asked in reported.items():
        if tp in read.ends:
            ends[tp] = max(asked, read.ends[tp])
        else:
            why = read.errors.get(tp) or "no fetch answered"
            unknown[tp] = f"the end of the log was not reached within {timeout:g} s ({why})"
    return ends, unknown


def under_reported(reported: Mapping[TopicPartition, int], ends: Mapping[TopicPartition, int]) -> dict[str, str]:
    """``topic-partition`` -> ``asked -> read`` where the broker's answer was behind its log. Pure."""
    return {str(tp): f"{reported[tp]} -> {end}" for tp, end in sorted(ends.items()) if end > reported[tp]}


class _AnswerCache:
    """Ends found recently, per broker address and partition, each with the moment it was found."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._ends: dict[tuple[str, TopicPartition], tuple[float, int]] = {}
        self._under_reporting: set[str] = set()

    def get(self, bootstrap: str, partitions: list[TopicPartition], max_age_s: float) -> dict[TopicPartition, int]:
        now = time.monotonic()
        with self._lock:
            hits = {tp: self._ends.get((bootstrap, tp)) for tp in partitions}
        return {tp: hit[1] for tp, hit in hits.items() if hit is not None and now - hit[0] <= max_age_s}

    def put(self, bootstrap: str, ends: Mapping[TopicPartition, int]) -> None:
        now = time.monotonic()
        with self._lock:
            self._ends.update({(bootstrap, tp): (now, end) for tp, end in ends.items()})

    def first_time_under_reporting(self, bootstrap: str) -> bool:
        with self._lock:
            first = bootstrap not in self._under_reporting
            self._under_reporting.add(bootstrap)
            return first


_CACHE = _AnswerCache()


def fetch_log_end_offsets(bootstrap: str, partitions: Iterable[TopicPartition], timeout: float = DEFAULT_TIMEOUT,
                          max_age_s: float = DEFAULT_MAX_AGE_S) -> LogEndOffsets:
    """The end of each partition's log, asked and then read (see the module's docstring); every partition comes
    back either in ``offsets`` or, with the reason, in ``unknown``."""
    wanted = sorted(set(partitions))
    if not wanted:
        return LogEndOffsets()
    cached = _CACHE.get(bootstrap, wanted, max_age_s) if max_age_s > 0 else {}
    missing = [tp for tp in wanted if tp not in cached]
    if not missing:
        return LogEndOffsets(MappingProxyType(cached))
    try:
        consumer = Consumer(with_client_settings({
            "bootstrap.servers": bootstrap,
            "group.id": CLIENT_GROUP,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            # An asked end past the log (a topic recreated, a log truncated since) is an error here, not a silent
            # jump back to the real end that max(asked, read) would then hide.
            "auto.offset.reset": "error",
            "fetch.wait.max.ms": _FETCH_WAIT_MS,
            "socket.connection.setup.timeout.ms": max(1000, int(timeout * 1000)),  # librdkafka's minimum
            "reconnect.backoff.max.ms": 1000,
            "logger": LIBRDKAFKA_LOGGER,
        }))
    except KafkaException as exc:
        return _nothing_known(wanted, f"cannot ask {bootstrap}: {_text(exc)}")
    try:
        try:
            metadata = consumer.list_topics(timeout=timeout)
        except KafkaException as exc:
            return _nothing_known(wanted, f"no broker answered at {bootstrap} within {timeout:g} s ({_text(exc)})")
        reported, unknown = _ask(consumer, metadata, missing, timeout)
        read = _read_forward(consumer, reported, timeout)
    finally:
        consumer.close()
    ends, unreached = true_ends(reported, read, timeout)
    behind = under_reported(reported, ends)
    if behind and _CACHE.first_time_under_reporting(bootstrap):
        first = next(iter(behind))
        _log.emit(ev.LOG_END_UNDER_REPORTED, bootstrap=bootstrap, partitions_behind=len(behind),
                  example=f"{first}: {behind[first]}")
    _CACHE.put(bootstrap, ends)
    return LogEndOffsets(MappingProxyType({**cached, **ends}), MappingProxyType({**unknown, **unreached}))


def _nothing_known(wanted: list[TopicPartition], reason: str) -> LogEndOffsets:
    return LogEndOffsets(unknown=MappingProxyType(dict.fromkeys(wanted, reason)), unavailable=reason)


def _ask(consumer: Consumer, metadata: Any, wanted: list[TopicPartition],
         timeout: float) -> tuple[dict[TopicPartition, int], dict[TopicPartition, str]]:
    """Step 1: the latest offset each leader reports (ListOffsets), or why there is none."""
    reported: dict[TopicPartition, int] = {}
    unknown: dict[TopicPartition, str] = {}
    given_up: dict[int, str] = {}  # leader -> why it is not asked again: one dead broker costs one timeout
    for tp in wanted:
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
        if meta.leader in given_up:
            unknown[tp] = given_up[meta.leader]
            continue
        try:
            marks = consumer.get_watermark_offsets(
                KafkaTopicPartition(tp.topic, tp.partition), timeout=timeout, cached=False
            )
        except KafkaException as exc:
            unknown[tp] = _text(exc)
            if exc.args and isinstance(exc.args[0], KafkaError) and exc.args[0].code() in _GIVE_UP:
                given_up[meta.leader] = f"not asked after broker {meta.leader} stopped answering ({_text(exc)})"
            continue
        if marks is None:
            unknown[tp] = f"no answer within {timeout:g} s"
            continue
        reported[tp] = marks[1]
    return reported, unknown


def _read_forward(consumer: Consumer, reported: Mapping[TopicPartition, int], timeout: float) -> ReadForward:
    """Step 2: read every partition from its reported end until librdkafka says it reached the end."""
    if not reported:
        return ReadForward({}, {})
    consumer.assign([KafkaTopicPartition(tp.topic, tp.partition, offset) for tp, offset in reported.items()])
    pending = set(reported)
    ends: dict[TopicPartition, int] = {}
    last_seen: dict[TopicPartition, int] = {}
    errors: dict[TopicPartition, str] = {}
    client_error: str | None = None  # one not about a partition: the broker went away
    deadline = time.monotonic() + timeout
    while pending and time.monotonic() < deadline:
        for message in consumer.consume(10_000, min(_POLL_S, max(0.0, deadline - time.monotonic()))):
            error, topic, partition, offset = message.error(), message.topic(), message.partition(), message.offset()
            if topic is None or partition is None:
                client_error = error.str() if error is not None else client_error
                continue
            tp = TopicPartition(topic, partition)
            if tp not in pending:
                continue
            if error is not None and error.code() in _PAST_THE_END:
                errors[tp] = "the log ends before the offset its leader gave (truncated or recreated meanwhile)"
                pending.discard(tp)
            elif error is not None and error.code() != KafkaError._PARTITION_EOF:
                errors[tp] = error.str()
            elif offset is None:
                continue
            elif error is None:
                last_seen[tp] = offset
            else:  # the end of the partition: where the next message will be
                ends[tp] = max(offset, last_seen.get(tp, -1) + 1)
                pending.discard(tp)
    if client_error is not None:
        errors = {tp: errors.get(tp, client_error) for tp in pending}
    return ReadForward(MappingProxyType(ends), MappingProxyType(errors))


def _text(exc: KafkaException) -> str:
    error = exc.args[0] if exc.args else None
    return error.str() if isinstance(error, KafkaError) else str(exc)
