"""The console producer (``kafka-console-producer.sh``): lines in, one message each, every delivery report checked.

A line becomes a message's value, or with a key separator its key and value (split at the first separator, as
Kafka's ``parse.key``/``key.separator`` did; a line without the separator is refused, not sent keyless). Unlike the
original, which logged a failed send and went on, a message the broker did not take is reported by its line number
and what librdkafka said (a partition the topic does not have, a topic that does not exist, a broker gone), and the
command fails: a newcomer's first message must not vanish silently.

The topic must exist before anything is sent (a broker that creates topics on first use would otherwise make a
mistyped name a new topic).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.errors import UsageError, ZkConsumerError
from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.kafka.metadata import admin_client, fetch_metadata

#: how long librdkafka may try to deliver one message before its delivery report says it failed
DEFAULT_DELIVERY_TIMEOUT_MS = 30_000


class ProduceError(ZkConsumerError):
    """Messages the broker did not take (or a topic that is not there): nothing silently lost."""


@dataclass(frozen=True)
class Record:
    """One message to send, and the input line it came from (1-based) so a failure can name it."""

    line: int
    value: bytes
    key: bytes | None = None


@dataclass
class Delivery:
    """What the delivery reports said: messages delivered, and one text per message that was not."""

    delivered: int = 0
    failures: list[str] = field(default_factory=list)


def parse_lines(lines: Iterable[str], key_separator: str | None = None) -> list[Record]:
    """One record per line (its end of line removed); with ``key_separator``, ``KEY<sep>VALUE``. Pure."""
    if key_separator == "":
        raise UsageError("--key-separator must not be empty")
    records: list[Record] = []
    for number, raw in enumerate(lines, start=1):
        text = raw.rstrip("\r\n")
        if key_separator is None:
            records.append(Record(number, text.encode()))
            continue
        key, sep, value = text.partition(key_separator)
        if not sep:
            raise UsageError(f"line {number}: no key separator {key_separator!r} (expected KEY{key_separator}VALUE)")
        records.append(Record(number, value.encode(), key.encode()))
    return records


def produce_records(bootstrap: str, topic: str, records: list[Record], partition: int | None = None,
                    delivery_timeout_ms: int = DEFAULT_DELIVERY_TIMEOUT_MS) -> Delivery:
    """Send ``records`` to ``topic`` (to ``partition``, or where the key or librdkafka's partitioner puts them) and
    wait for every delivery report. Raises :class:`ProduceError` when the topic does not exist; a message that is
    not delivered is a failure in the returned :class:`Delivery`, named by its line."""
    from confluent_kafka import KafkaException, Producer

    if partition is not None and partition < 0:
        raise UsageError(f"--partition {partition}: must be 0 or more")
    snapshot = fetch_metadata(admin_client(bootstrap), bootstrap)
    if topic not in snapshot.topics:
        raise ProduceError(f"topic {topic!r} does not exist at {bootstrap}; create it first "
                           f"(zkconsumer topics create {topic} --partitions N)")
    producer = Producer({"bootstrap.servers": bootstrap, "logger": LIBRDKAFKA_LOGGER, "linger.ms": 5,
                         "message.timeout.ms": delivery_timeout_ms})
    delivery = Delivery()
    # the partition asked for is named whichever way it fails: refused at once (the producer already knows the topic
    # has fewer partitions) or by its delivery report (it learnt it later)
    where = f"partition {partition}" if partition is not None else "its partition"

    def report(line: int) -> Callable[[Any, Any], None]:
        def on_delivery(err: Any, msg: Any) -> None:
            if err is None:
                delivery.delivered += 1
            else:
                delivery.failures.append(f"line {line}: not delivered to {topic} {where}: {_reason(err)}")
        return on_delivery

    for record in records:
        extra: dict[str, Any] = {} if partition is None else {"partition": partition}
        send = functools.partial(producer.produce, topic, value=record.value, key=record.key,
                                 on_delivery=report(record.line), **extra)
        try:
            try:
                send()
            except BufferError:  # librdkafka's queue is full: let it drain, then send again
                producer.flush(delivery_timeout_ms / 1000)
                send()
        except KafkaException as exc:
            delivery.failures.append(f"line {record.line}: not sent to {topic} {where}: {_reason(exc.args[0])}")
        producer.poll(0)
    left = producer.flush(delivery_timeout_ms / 1000 + 5)
    if left:
        delivery.failures.append(f"{left} message(s) still unacknowledged after {delivery_timeout_ms} ms")
    return delivery


def _reason(err: object) -> str:
    text = getattr(err, "str", None)
    return text() if callable(text) else str(err)
