"""A group's offsets in Kafka (``__consumer_offsets``): OffsetCommit and OffsetFetch for a group id, as plain data.

The legacy consumer with ``offsets.storage=kafka`` never joined a broker-side group: it sent OffsetCommit with no
generation and no member id, and the coordinator keeps offsets for such a group as for any other. confluent-kafka's
admin client sends exactly those requests (AlterConsumerGroupOffsets, ListConsumerGroupOffsets) and finds the
group's coordinator itself (FindCoordinator, then again whenever the coordinator answers that it moved), which is
what the old consumer's offsets channel did by hand. A broker refuses such a commit while the group has members
of its own (``UNKNOWN_MEMBER_ID``): the commit is then reported failed for those partitions, which is right, as
two kinds of consumer must never share a group id.

Every request waits at most the client's ``timeout`` (``offsets.channel.socket.timeout.ms`` for the consumer). A
request that gets no answer raises :class:`OffsetsUnavailableError`; one that gets an answer returns the
partitions the broker took and those it refused, each with the broker's reason.

The broker's rule for a group id is only that it is not empty (Kafka 0.10's ``GroupCoordinator``); the legacy
consumer's stricter rule (``[a-zA-Z0-9._-]``) is the config's business.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import ConsumerGroupTopicPartitions, KafkaError, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition

from zkconsumer.errors import ServerUnavailableError, UsageError
from zkconsumer.kafka.metadata import admin_client
from zkconsumer.types import INVALID_OFFSET, TopicPartition

#: The one partition error Kafka's old consumer did not retry: retrying cannot make the metadata shorter.
NOT_RETRIABLE = frozenset({"OFFSET_METADATA_TOO_LARGE"})
#: librdkafka's "no committed offset" (-1001), Kafka's -1 on the wire.
_LIBRDKAFKA_NO_OFFSET = -1001


class OffsetsUnavailableError(ServerUnavailableError):
    """No broker answered an offsets request for the group within the time allowed."""


class InvalidGroupIdError(UsageError):
    """A group id the broker would refuse (``INVALID_GROUP_ID``)."""


@dataclass(frozen=True, slots=True)
class PartitionError:
    """Why the broker refused one partition: its error name (``UNKNOWN_MEMBER_ID``...) and message."""

    name: str
    message: str

    @property
    def retriable(self) -> bool:
        return self.name not in NOT_RETRIABLE

    def __str__(self) -> str:
        return f"{self.name}: {self.message}" if self.message and self.message != self.name else self.name


@dataclass(frozen=True)
class CommitAnswer:
    """The broker's answer to one OffsetCommit: what it took and what it refused."""

    committed: dict[TopicPartition, int] = field(default_factory=dict)
    refused: dict[TopicPartition, PartitionError] = field(default_factory=dict)


@dataclass(frozen=True)
class FetchAnswer:
    """The broker's answer to one OffsetFetch: ``INVALID_OFFSET`` where the group has no offset; ``refused`` where
    the broker answered an error for the partition instead of an offset."""

    offsets: dict[TopicPartition, int] = field(default_factory=dict)
    refused: dict[TopicPartition, PartitionError] = field(default_factory=dict)


def check_group_id(group: str) -> str:
    """The group id, if a broker accepts it (Kafka 0.10: any non-empty string); else a one-line error."""
    if not isinstance(group, str) or not group:
        raise InvalidGroupIdError("group id '' is not valid for the broker (INVALID_GROUP_ID): it must not be empty")
    return group


def _error(err: KafkaError) -> PartitionError:
    return PartitionError(err.name(), err.str())


def _request_error(exc: BaseException) -> str:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return exc.args[0].str()
    return str(exc) or type(exc).__name__


class GroupOffsetsClient:
    """OffsetCommit / OffsetFetch for group ids, through one admin client kept for the client's life."""

    def __init__(self, bootstrap: str, timeout: float, client_id: str | None = None) -> None:
        self.bootstrap = bootstrap
        self.timeout = timeout
        extra: dict[str, Any] = {"socket.timeout.ms": max(int(timeout * 1000), 10)}
        if client_id:
            extra["client.id"] = client_id
        self._admin = admin_client(bootstrap, extra)

    def commit(self, group: str, offsets: Mapping[TopicPartition, int]) -> CommitAnswer:
        """One OffsetCommit of ``offsets`` (next offsets to consume, >= 0) for the group."""
        check_group_id(group)
        if not offsets:
            return CommitAnswer()
        request = ConsumerGroupTopicPartitions(
            group, [KafkaTopicPartition(tp.topic, tp.partition, offset) for tp, offset in sorted(offsets.items())])
        answer = self._result("commit the offsets of", group, lambda: self._admin.alter_consumer_group_offsets(
            [request], request_timeout=self.timeout))
        committed: dict[TopicPartition, int] = {}
        refused: dict[TopicPartition, PartitionError] = {}
        for ktp in answer.topic_partitions or ():
            tp = TopicPartition(ktp.topic, ktp.partition)
            if ktp.error is not None:
                refused[tp] = _error(ktp.error)
            elif tp in offsets:
                committed[tp] = offsets[tp]
        for tp in offsets:  # a partition the answer left out was not taken
            if tp not in committed and tp not in refused:
                refused[tp] = PartitionError("MISSING", "the broker's answer did not mention this partition")
        return CommitAnswer(committed, refused)

    def fetch(self, group: str, partitions: Iterable[TopicPartition] | None = None) -> FetchAnswer:
        """One OffsetFetch: the given partitions, or (``None``) every partition the group has an offset for."""
        check_group_id(group)
        asked = None if partitions is None else sorted(set(partitions))
        if asked is not None and not asked:
            return FetchAnswer()
        request = ConsumerGroupTopicPartitions(
            group, None if asked is None else [KafkaTopicPartition(tp.topic, tp.partition) for tp in asked])
        answer = self._result("fetch the offsets of", group, lambda: self._admin.list_consumer_group_offsets(
            [request], request_timeout=self.timeout))
        offsets: dict[TopicPartition, int] = {}
        refused: dict[TopicPartition, PartitionError] = {}
        for ktp in answer.topic_partitions or ():
            tp = TopicPartition(ktp.topic, ktp.partition)
            if ktp.error is not None:
                refused[tp] = _error(ktp.error)
            else:
                offsets[tp] = INVALID_OFFSET if ktp.offset == _LIBRDKAFKA_NO_OFFSET else ktp.offset
        for tp in asked or ():
            if tp not in offsets and tp not in refused:
                offsets[tp] = INVALID_OFFSET
        return FetchAnswer(dict(sorted(offsets.items())), refused)

    def _result(self, what: str, group: str, send) -> Any:
        try:
            futures = send()
        except (KafkaException, ValueError, TypeError) as exc:
            raise OffsetsUnavailableError(f"cannot {what} group {group}: {_request_error(exc)}") from None
        return self._wait(what, group, futures[group])

    def _wait(self, what: str, group: str, future) -> Any:
        target = f"{what} group {group}"
        try:
            return future.result(timeout=self.timeout + 5)
        except KafkaException as exc:
            raise OffsetsUnavailableError(
                f"cannot {target} at {self.bootstrap} within {self.timeout:g} s: {_request_error(exc)}") from None
        except concurrent.futures.TimeoutError:
            raise OffsetsUnavailableError(
                f"cannot {target} at {self.bootstrap}: no answer within {self.timeout:g} s") from None
