"""Committed offsets in Kafka (``offsets.storage=kafka``): the group's offsets in ``__consumer_offsets``, written and
read through the group's coordinator without joining a broker-side group, as the legacy consumer did.

Where the brokers are: those registered in ZooKeeper (``/brokers/ids``, PLAINTEXT endpoints, tried in random order
as Kafka's ``ClientUtils.channelToOffsetManager`` picked one), unless the caller names a bootstrap; the client is
kept while the registered brokers stay the same. The coordinator is then found and followed by the client.

What the legacy settings mean here (Kafka 0.10.0.1's ``ZookeeperConsumerConnector``):

* ``offsets.channel.socket.timeout.ms``: the longest wait for one answer (coordinator lookup included);
* ``offsets.channel.backoff.ms``: the pause before another attempt;
* ``offsets.commit.max.retries``: more attempts for a commit the caller asks to retry (the connector does for
  explicit commits only, as the setting's documentation says: none for auto-commits). A retry sends again only the
  partitions the broker refused; ``OFFSET_METADATA_TOO_LARGE`` is never retried.
* a fetch is retried (every ``offsets.channel.backoff.ms``) while the broker answers a retriable error or does not
  answer, for at most ``offsets.channel.socket.timeout.ms`` in all; Kafka retried it for ever inside the rebalance,
  here the rebalance attempt fails and the rebalance retries it, as for any other step.

What it adds, as :class:`~zkconsumer.group.offset_store.ZooKeeperOffsetStore` does for znodes: Kafka has no
conditional write, so before a commit the store reads the group's offsets again, and a partition whose offset in
Kafka is higher than ours and is not the value this process last read or wrote (someone else committed it since,
e.g. the partition's new owner after we lost it during a long pause) is left alone and reported (``kept_higher``).
It costs one OffsetFetch per commit.

An offset that the broker holds but that cannot be one (negative, other than Kafka's -1 for "none") is reported as
malformed and the partition left out, never used as a starting point.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kazoo.client import KazooClient

from zkconsumer.errors import ZnodeFormatError, ZnodeMissingError
from zkconsumer.kafka.group_offsets import GroupOffsetsClient, OffsetsUnavailableError, PartitionError
from zkconsumer.types import INVALID_OFFSET, TopicPartition
from zkconsumer.zk import paths
from zkconsumer.zk.cluster import read_broker
from zkconsumer.zk.reads import children


@dataclass(frozen=True)
class KafkaFetchResult:
    offsets: dict[TopicPartition, int]  # INVALID_OFFSET where the group never committed
    #: partition -> why its offset in Kafka cannot be used
    malformed: dict[TopicPartition, str] = field(default_factory=dict)


@dataclass(frozen=True)
class KafkaCommitResult:
    written: dict[TopicPartition, int] = field(default_factory=dict)
    #: not written because Kafka already holds a higher offset someone else committed: partition -> theirs
    kept_higher: dict[TopicPartition, int] = field(default_factory=dict)
    #: not taken by Kafka after every attempt: partition -> why
    failed: dict[TopicPartition, str] = field(default_factory=dict)
    attempts: int = 0

    @property
    def error(self) -> str | None:
        """One line naming what failed, or ``None``."""
        if not self.failed:
            return None
        reasons = sorted(set(self.failed.values()))
        shown = ", ".join(str(tp) for tp in sorted(self.failed)[:5]) + (", ..." if len(self.failed) > 5 else "")
        tries = f"{self.attempts} attempt{'s' if self.attempts != 1 else ''}"
        return f"Kafka did not take the offsets of {shown} after {tries}: {'; '.join(reasons)}"


def registered_addresses(zk: KazooClient) -> list[str]:
    """``host:port`` of each broker registered in ZooKeeper (its PLAINTEXT endpoint); unreadable ones skipped."""
    addresses = []
    for child in children(zk, paths.BROKER_IDS_PATH):
        if not child.isdigit():
            continue
        try:
            addresses.append(read_broker(zk, int(child)).address)
        except (ZnodeMissingError, ZnodeFormatError):
            continue
    return addresses


class KafkaOffsetStore:
    def __init__(self, zk: KazooClient, group: str, *, client_id: str | None = None, backoff_ms: int = 1000,
                 socket_timeout_ms: int = 10000, bootstrap: str | None = None,
                 stop: threading.Event | None = None) -> None:
        self.zk = zk
        self.group = group
        self.client_id = client_id
        self.backoff_ms = backoff_ms
        self.socket_timeout_ms = socket_timeout_ms
        self.bootstrap = bootstrap
        self._stop = stop or threading.Event()
        self._client: GroupOffsetsClient | None = None
        self._client_brokers: frozenset[str] = frozenset()
        # partition -> the offset this process last read from or wrote to Kafka
        self._checkpoints: dict[TopicPartition, int] = {}

    # --- the client ----------------------------------------------------------------------------------

    def client(self) -> GroupOffsetsClient:
        """The client for the brokers as registered now (kept while they do not change)."""
        if self.bootstrap is not None:
            brokers = frozenset(self.bootstrap.split(","))
        else:
            brokers = frozenset(registered_addresses(self.zk))
            if not brokers:
                raise OffsetsUnavailableError(
                    f"no broker is registered in ZooKeeper ({paths.BROKER_IDS_PATH}): no coordinator to reach for "
                    f"the offsets of group {self.group}")
        if self._client is None or brokers != self._client_brokers:
            order = sorted(brokers)
            random.shuffle(order)
            self._client = GroupOffsetsClient(",".join(order), self.socket_timeout_ms / 1000, self.client_id)
            self._client_brokers = brokers
        return self._client

    def _pause(self) -> bool:
        """Wait ``offsets.channel.backoff.ms``; False when stopped meanwhile."""
        return not self._stop.wait(self.backoff_ms / 1000)

    # --- fetch ---------------------------------------------------------------------------------------

    def fetch(self, partitions: Iterable[TopicPartition]) -> KafkaFetchResult:
        """The group's offsets in Kafka; they become the checkpoints later commits compare with."""
        asked = sorted(set(partitions))
        if not asked:
            return KafkaFetchResult({})
        deadline = time.monotonic() + self.socket_timeout_ms / 1000
        while True:
            try:
                answer = self.client().fetch(self.group, asked)
            except OffsetsUnavailableError as exc:
                problem = str(exc)
            else:
                if not answer.refused:
                    break
                problem = _refusals(answer.refused)
                if not all(e.retriable for e in answer.refused.values()):
                    raise OffsetsUnavailableError(f"Kafka refused the offsets of group {self.group}: {problem}")
            if time.monotonic() + self.backoff_ms / 1000 >= deadline or not self._pause():
                raise OffsetsUnavailableError(
                    f"cannot read the offsets of group {self.group} from Kafka within "
                    f"{self.socket_timeout_ms} ms (offsets.channel.socket.timeout.ms): {problem}")
        offsets: dict[TopicPartition, int] = {}
        malformed: dict[TopicPartition, str] = {}
        for tp, offset in answer.offsets.items():
            if offset < INVALID_OFFSET:
                malformed[tp] = f"Kafka holds offset {offset} for group {self.group}; not a position in a log"
                continue
            offsets[tp] = offset
            self._checkpoints[tp] = offset
        return KafkaFetchResult(offsets, malformed)

    # --- commit --------------------------------------------------------------------------------------

    def commit(self, offsets: Mapping[TopicPartition, int], retries: int = 0) -> KafkaCommitResult:
        """Commit every valid offset (Kafka keeps a commit's timestamp, so an unchanged one is sent too, as the
        legacy consumer did); ``retries`` more attempts for the partitions Kafka did not take."""
        pending = {tp: o for tp, o in offsets.items() if o >= 0}
        written: dict[TopicPartition, int] = {}
        kept: dict[TopicPartition, int] = {}
        given_up: dict[TopicPartition, str] = {}  # refused with an error no retry cures
        last: dict[TopicPartition, str] = {}  # why the partitions still pending failed in the last attempt
        attempts = 0
        while pending:
            attempts += 1
            try:
                client = self.client()
                current = client.fetch(self.group, pending)
                for tp, theirs in current.offsets.items():
                    if tp in pending and theirs > pending[tp] and theirs != self._checkpoints.get(tp):
                        kept[tp] = theirs
                        self._checkpoints[tp] = theirs
                        del pending[tp]
                answer = client.commit(self.group, pending)
            except OffsetsUnavailableError as exc:
                last = dict.fromkeys(pending, str(exc))
            else:
                for tp, offset in answer.committed.items():
                    written[tp] = offset
                    self._checkpoints[tp] = offset
                    pending.pop(tp, None)
                last = {}
                for tp, error in answer.refused.items():
                    if error.retriable:
                        last[tp] = str(error)
                    else:
                        given_up[tp] = str(error)
                        pending.pop(tp, None)
            if not pending or attempts > retries or not self._pause():
                break
        failed = {**{tp: why for tp, why in last.items() if tp in pending}, **given_up}
        return KafkaCommitResult(written, kept, failed, attempts)


def _refusals(refused: Mapping[TopicPartition, PartitionError]) -> str:
    by_reason: dict[str, list[str]] = {}
    for tp, error in sorted(refused.items()):
        by_reason.setdefault(str(error), []).append(str(tp))
    return "; ".join(f"{reason} ({', '.join(tps)})" for reason, tps in by_reason.items())
