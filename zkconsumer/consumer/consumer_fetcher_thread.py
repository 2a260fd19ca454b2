"""ConsumerFetcherThread: fetches, for one consumer, the partitions one leader broker serves.

The legacy thread sent its own FetchRequests over a SimpleConsumer. Here a confluent-kafka ``Consumer`` with a
manual assignment does the network part, and this thread does what the legacy one did with the answers: cut them
into chunks for the owning streams (blocking on a full stream queue, which is the consumer's back-pressure), apply
``auto.offset.reset`` the legacy way, and hand partitions that fail back to the leader finder. The ``Consumer``
never subscribes and never commits: offsets belong to the connector. librdkafka insists on a ``group.id``, so it
gets the legacy group id, with every commit and offset store switched off.

There is still one thread per (leader broker, fetcher id), so ``num.consumer.fetchers`` spreads partitions over
threads and a full stream queue stalls only the partitions of the thread that fills it, as in Kafka. librdkafka
follows leader moves on its own; the broker address is only where a thread's client bootstraps, so a broker that
re-registers elsewhere needs no new thread.

Assignment changes (``add_partitions``, ``remove_partitions``) come from other threads; they are recorded under a
lock and applied by this thread before its next fetch, so the ``Consumer`` is only ever used from this thread and a
caller never waits for the network (the leader finder would otherwise stall behind an offset lookup). A put blocked
on a full queue holds no lock for the same reason, and gives up when the thread is stopped: Kafka interrupted the
thread instead.

The hot path (every fetched message goes through it) runs no Python code per message: a ``consume()`` batch is cut
into runs of one partition by C loops over the batch (``map`` of confluent-kafka's unbound methods, ``list.count``,
``groupby``), a run within ``fetch.message.max.bytes`` (summed by ``sum(map(len, run))``) becomes a chunk as it is,
and only the rare run above the limit or a batch with an error is walked message by message. Those three passes
(errors, partitions, sizes) are all it makes over every message: offsets are read at a run's edges only, and a chunk
holds librdkafka's messages as they came (the ``consume()`` list itself when the batch is of one partition), their
fields read only when the stream hands them out
(:class:`~zkconsumer.consumer.message_and_metadata.FetchedRecords`).

Deliberate differences from Kafka:

* librdkafka hands out a message bigger than ``fetch.message.max.bytes`` whole (its fetches always return at least
  one message). It is not handed on: the partition gets Kafka's "partial message" chunk once, which the iterator
  turns into MessageSizeTooLargeException, and then stays owned by this thread without being fetched (taken out of
  the librdkafka assignment). Kafka re-fetched and re-enqueued the same partial message until the queue was full.
  Size here means the value's bytes (keys are not counted: that would take a pass over every message's key), so the
  limit is more lenient than Kafka's by the key and a few dozen bytes of framing.
* A chunk holds at most ``fetch.message.max.bytes`` of value bytes of one partition, and at most one ``consume()``
  batch of messages (``_CONSUME_BATCH``), so a stream buffers about ``queued.max.message.chunks`` times that,
  whatever librdkafka batched together. librdkafka's own buffer is tied to the same size (:func:`librdkafka_config`).
* A transport error is retried by librdkafka on the same thread, after ``refresh.leader.backoff.ms``, instead of
  sending every partition of the thread back to the leader finder. Errors of one partition still do that.
* An unexpected error is logged and retried after the backoff; in Kafka it ended the thread, leaving its partitions
  unfetched until the next rebalance.
* A fetch position past the end of the log is found by this thread, not by the broker: a broker that answers such a
  fetch with no records instead of OFFSET_OUT_OF_RANGE (the embedded one) would otherwise leave the partition
  waiting for offsets it will not reach for a long time, silently (a committed offset that survived the broker's
  log). So a position that came from a committed offset, and any position that got no message for
  ``_RECHECK_S``, is compared with the true end of the log (:mod:`zkconsumer.kafka.log_end_offsets`, one read for
  all the partitions due) once it has had no message for ``_VERIFY_AFTER_S``; beyond it, ``auto.offset.reset``
  applies as for OFFSET_OUT_OF_RANGE (reason ``past_log_end``): once per partition and position, since the reset
  moves the position. A partition that receives messages is never checked: a message at the position proves it.
  A position found past the end is reset only when a second look ``CONFIRM_S`` later finds it past the end again
  (:mod:`zkconsumer.kafka.past_end`, which the Spark source follows too):
  on Kafka a new leader's high watermark can trail what consumers already committed for a moment, and a position
  between the high watermark and the log's end is valid there.

Its events (``fetcher.*``) are declared once in :mod:`zkconsumer.events.connector` and listed on the events page
(``docs/events.md``).
"""

from __future__ import annotations

import contextlib
import math
import threading
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import groupby
from time import monotonic, perf_counter
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from zkconsumer.config import ConsumerConfig
from zkconsumer.consumer.data_path_events import emit, partition_names
from zkconsumer.consumer.message_and_metadata import FetchedRecords, offset_of, partition_of, topic_of
from zkconsumer.consumer.metrics import ConnectorMeters
from zkconsumer.consumer.partition_topic_info import PartitionTopicInfo
from zkconsumer.consumer.sliced_deadline import NETWORK_SLICE_S, call_in_slices
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms
from zkconsumer.kafka.client_config import with_client_settings
from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.kafka.log_end_offsets import fetch_log_end_offsets
from zkconsumer.kafka.metadata import BrokerMeta
from zkconsumer.kafka.past_end import CONFIRM_S
from zkconsumer.log import get_logger
from zkconsumer.types import TopicPartition

#: ``on_offset_reset(partition_info, new_offset, reason)``, called on the fetcher thread after both offsets moved.
OffsetResetCallback = Callable[[PartitionTopicInfo, int, str], None]

RESET_NO_OFFSET = "no_offset"
RESET_OUT_OF_RANGE = "out_of_range"
RESET_PAST_LOG_END = "past_log_end"
#: Reasons where offsets were lost, so the reset is a warning; a group's first start is not.
_LOSSY_RESETS = frozenset({RESET_OUT_OF_RANGE, RESET_PAST_LOG_END})

#: How long the fetch loop waits for a message: the longest a stop or an assignment change waits for it.
_CONSUME_TIMEOUT_S = 0.1
#: What a thread's stop may take beyond its bound from the configuration (a loaded machine) before it is reported.
STOP_SLACK_S = 1.0
#: Messages per consume() call, so also the most a chunk holds. Below the garbage collector's default threshold (700
#: new objects) with room for what else is made meanwhile: a batch made while the stream's reader takes its turn on
#: the last (ChunkQueue) then starts no young collection, which would find the batch's messages alive and promote
#: them to an older generation, walked whole later. As large as that allows, since each batch and each hand-over
#: has a cost of its own; measured, 1000 cost three times the collector's CPU, 250 and 350 more per-batch work.
_CONSUME_BATCH = 600
#: librdkafka's prefetch, in legacy stream queues' worth. With exactly one, a busy partition fills it with every fetch,
#: so librdkafka stops fetching and starts again all the time: its threads then spent about 0.02-0.03 us a message
#: more (10-byte messages) than with two, close to what they cost raw confluent-kafka with its 64 MiB default. Four
#: gained little more CPU and cost a consumer of 10,000 partitions far behind 23 MiB more (benchmarks/memory.py).
_PREFETCH_FACTOR = 2
#: Partitions whose reset offsets are looked up in one request (Tansu answers ListOffsets in about 0.6 ms per
#: partition: 500 fit a network slice with room to spare).
_LOOKUP_GROUP = 500
_OUT_OF_RANGE = frozenset({KafkaError.OFFSET_OUT_OF_RANGE, KafkaError._AUTO_OFFSET_RESET})
#: A committed position that got no message this long is compared with the true end of its log.
_VERIFY_AFTER_S = 0.5
#: Any position that got no message this long is compared again (the broker may have lost its log since).
_RECHECK_S = 30.0
#: How often the fetch loop looks for positions due a check (a scan of one dict).
_CHECK_TICK_S = 0.25

_log = get_logger("zkconsumer.fetcher")


@dataclass(slots=True)  # not frozen: one per chunk on the fetch path, where frozen costs
class _Chunk:
    """A chunk the fetcher is about to hand to a partition's stream."""

    tp: TopicPartition
    info: PartitionTopicInfo
    records: FetchedRecords


@dataclass(frozen=True, slots=True)
class _TooLarge:
    """A message larger than ``fetch.message.max.bytes`` alone: Kafka's partial message is due instead."""

    tp: TopicPartition
    info: PartitionTopicInfo
    offset: int
    size: int


@dataclass(frozen=True)
class BrokerAndInitialOffset:
    """Where a partition is to be fetched from, and from which offset (Kafka's BrokerAndInitialOffset)."""

    broker: BrokerMeta
    initial_offset: int


def _clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))


def librdkafka_config(config: ConsumerConfig, bootstrap: str) -> dict[str, Any]:
    """The ``Consumer`` settings that make librdkafka fetch as a legacy fetcher did.

    Legacy values librdkafka does not accept are moved into its range (``socket.timeout.ms`` must be at least 10,
    ``fetch.min.bytes`` at least 1).
    """
    max_bytes = _clamp(config.fetch_message_max_bytes, 1, 1_000_000_000)
    settings: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "group.id": config.group_id,
        "client.id": config.client_id,
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "max.partition.fetch.bytes": max_bytes,
        "fetch.wait.max.ms": _clamp(config.fetch_wait_max_ms, 0, 300_000),
        "fetch.min.bytes": _clamp(config.fetch_min_bytes, 1, 100_000_000),
        "socket.timeout.ms": _clamp(config.socket_timeout_ms, 10, 300_000),
        "socket.receive.buffer.bytes": _clamp(config.socket_receive_buffer_bytes, 0, 100_000_000),
        "check.crcs": True,
        "enable.partition.eof": False,
        # Out of range must come back to us: the legacy reset also moves the consumed offset and tells the connector.
        "auto.offset.reset": "error",
        # librdkafka prefetches into its own queue, and sizes its fetch responses by it (fetch.max.bytes follows it
        # unless larger than one message may be): _PREFETCH_FACTOR times what a legacy stream's queue held,
        # queued.max.message.chunks fetches of fetch.message.max.bytes. A consumer far behind then buffers that, plus
        # the stream's own queue, whatever its backlog.
        "queued.max.messages.kbytes": _clamp(
            math.ceil(max_bytes * max(1, config.queued_max_message_chunks) * _PREFETCH_FACTOR / 1024), 1, 2_097_151),
        "logger": LIBRDKAFKA_LOGGER,
    }
    if max_bytes > 52_428_800:  # librdkafka's fetch.max.bytes default; a response must fit one partition's worth
        settings["fetch.max.bytes"] = max_bytes
        settings["receive.message.max.bytes"] = min(max_bytes + 512, 2_147_483_647)
    return settings


def _describe(exc: Exception) -> tuple[str, str]:
    """(code, message) for an event: librdkafka's error name when it is one, else the exception's type."""
    error = exc.args[0] if isinstance(exc, KafkaException) and exc.args else None
    if isinstance(error, KafkaError):
        return error.name(), error.str()
    return type(exc).__name__, str(exc)


# An unbound C method: mapped over a whole batch, it reads a field of every message without a Python call each.
_error_of = Message.error


class ConsumerFetcherThread(threading.Thread):
    def __init__(
        self,
        consumer_id: str,
        fetcher_id: int,
        broker: BrokerMeta,
        config: ConsumerConfig,
        partition_map: Mapping[TopicPartition, PartitionTopicInfo],
        on_partitions_error: Callable[[Iterable[TopicPartition]], None],
        on_offset_reset: OffsetResetCallback | None = None,
        meters: ConnectorMeters | None = None,
    ) -> None:
        super().__init__(name=f"ConsumerFetcherThread-{consumer_id}-{fetcher_id}-{broker.id}", daemon=True)
        self.consumer_id = consumer_id
        self.fetcher_id = fetcher_id
        self.broker = broker
        self._config = config
        self._partition_map = partition_map
        self._on_partitions_error = on_partitions_error
        self._on_offset_reset = on_offset_reset
        self._meters = meters  # when metrics are on: each fetch is timed into them (FetchRequestRateAndTimeMs)
        self._broker_key = (broker.host, broker.port)
        self._backoff_s = config.refresh_leader_backoff_ms / 1000
        self._socket_timeout_s = config.socket_timeout_ms / 1000
        # Not ``_stop``: threading.Thread has a method of that name.
        self._stopping = threading.Event()
        self._wakeup = threading.Event()
        self._lock = threading.Lock()
        # Under _lock: every partition this thread owns -> the next offset to fetch (-1 until reset), the added
        # ones not yet given to librdkafka, and the removed ones librdkafka may still be fetching.
        self._offsets: dict[TopicPartition, int] = {}
        self._pending: dict[TopicPartition, int] = {}
        self._dropped: set[TopicPartition] = set()
        # This thread only: what librdkafka is fetching.
        self._fetching: set[TopicPartition] = set()
        self._single_topic = True  # every partition in _fetching is of one topic: runs are cut by partition alone
        # This thread only: partition -> when its position is due a comparison with the log end, unless a message
        # of it arrives first (which moves it on by _RECHECK_S).
        self._check_due: dict[TopicPartition, float] = {}
        #: positions found past their log's end once, waiting for the second look (partition -> position)
        self._past_once: dict[TopicPartition, int] = {}
        self._next_check = 0.0
        self._consumer = Consumer(with_client_settings(librdkafka_config(config, broker.address)))
        self._closed = False

    # --- called from other threads ---

    def add_partitions(self, offsets: Mapping[TopicPartition, int]) -> list[TopicPartition]:
        """Own these partitions from these offsets; one already owned keeps its own offset. Returns those added."""
        with self._lock:
            added = {tp: offset for tp, offset in offsets.items() if tp not in self._offsets}
            self._offsets.update(added)
            self._pending.update(added)
        if added:
            self._emit("info", ev.FETCHER_PARTITIONS_ADDED, partitions=partition_names(added),
                       offsets={str(tp): added[tp] for tp in sorted(added)})
            self._wakeup.set()
        return sorted(added)

    def remove_partitions(self, partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
        with self._lock:
            removed = [tp for tp in partitions if self._offsets.pop(tp, None) is not None]
            for tp in removed:
                self._pending.pop(tp, None)
                self._dropped.add(tp)
        if removed:
            self._emit("info", ev.FETCHER_PARTITIONS_REMOVED, partitions=partition_names(removed))
            self._wakeup.set()
        return sorted(removed)

    def partitions(self) -> tuple[TopicPartition, ...]:
        with self._lock:
            return tuple(sorted(self._offsets))

    def partition_count(self) -> int:
        with self._lock:
            return len(self._offsets)

    def initiate_shutdown(self) -> None:
        self._stopping.set()
        self._wakeup.set()

    def shutdown(self) -> None:
        """Stop, wait for the thread, close the client. A put blocked on a full queue gives up within 0.1 s and a
        network wait within a slice (:data:`NETWORK_SLICE_S`), so the thread ends within a second or so; the wait is
        bounded by ``socket.timeout.ms`` all the same. Past it, ``fetcher.stop_timed_out`` says so, and the client is
        left for the thread to close when it ends: closing it here would pull it from under the call the thread is
        in."""
        self.initiate_shutdown()
        if self.ident is not None:
            started = monotonic()
            self.join(self._socket_timeout_s + STOP_SLACK_S)
            if self.is_alive():
                self._emit("warning", ev.FETCHER_STOP_TIMED_OUT, thread=self.name, waited_ms=elapsed_ms(started))
                return
        self._close()

    # --- the thread ---

    def run(self) -> None:
        self._emit("info", ev.FETCHER_STARTED, thread=self.name, broker=self.broker.address)
        try:
            while not self._stopping.is_set():
                try:
                    self._do_work()
                except Exception as exc:  # a surprise must not end the thread: its partitions would starve
                    code, error = _describe(exc)
                    self._emit("warning", ev.FETCHER_ERROR, stage="fetch", code=code, error=error, exc_info=True)
                    self._stopping.wait(self._backoff_s)
        finally:
            self._close()
            self._emit("info", ev.FETCHER_STOPPED)

    def _close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        with contextlib.suppress(Exception):
            self._consumer.close()

    def _do_work(self) -> None:
        self._apply_assignment_changes()
        if not self._fetching:
            self._wakeup.wait(self._backoff_s)
            self._wakeup.clear()
            return
        meters = self._meters
        if meters is None:
            messages = self._fetch()
        else:
            started = perf_counter()
            messages = self._fetch()
            meters.fetch_timed(self._broker_key, (perf_counter() - started) * 1000)
        if self._check_due:
            now = monotonic()
            if now >= self._next_check:
                self._next_check = now + _CHECK_TICK_S
                self._check_positions(now)
        if not messages:
            return
        if any(map(_error_of, messages)):
            messages = self._handle_errors(messages)
        plans = [plan for tp, run in self._runs(messages) for plan in self._plan(tp, run)]
        if plans and self._check_due:
            recheck = monotonic() + _RECHECK_S
            due = self._check_due
            for plan in plans:
                if plan.tp in due:
                    due[plan.tp] = recheck
        # The batch's list goes now; its messages live on in the chunks (for their timestamps) until handed out.
        del messages
        given_up: set[TopicPartition] = set()
        for plan in plans:
            if self._stopping.is_set():
                return
            if plan.tp in given_up:
                continue
            if isinstance(plan, _TooLarge):
                self._message_too_large(plan)
            elif not self._enqueue(plan):
                given_up.add(plan.tp)  # the rest of its batch goes too (stopped, or removed or moved meanwhile)

    def _fetch(self) -> list[Message]:
        """What is there now; when nothing is, wait for the first message only, and take what came with it:
        consume() with a timeout waits for a full batch, which added up to that timeout to the latency of every
        message of a quiet partition, and to the last batch of a busy one. This is the thread's fetch request, as
        FetchRequestRateAndTimeMs times it."""
        messages = self._consumer.consume(num_messages=_CONSUME_BATCH, timeout=0)
        if messages:
            return messages
        first = self._consumer.poll(_CONSUME_TIMEOUT_S)
        if first is None:
            return []
        return [first, *self._consumer.consume(num_messages=_CONSUME_BATCH - 1, timeout=0)]

    def _handle_errors(self, messages: list[Message]) -> list[Message]:
        """Act on the errors librdkafka put among the messages; the messages without error, in their order."""
        kept = []
        for message in messages:
            error = message.error()
            if error is None:
                kept.append(message)
            else:
                self._handle_error(message, error)
        return kept

    def _runs(self, messages: list[Message]) -> Iterator[tuple[TopicPartition, list[Message]]]:
        """The messages cut into runs of one partition, in order (librdkafka returns each partition's share of a fetch
        response together). Everything per message is done by C loops (``map``, ``count``, ``groupby``)."""
        if not messages:
            return
        partitions = list(map(partition_of, messages))
        if self._single_topic:
            topic = messages[0].topic()
            assert topic is not None
            first = partitions[0]
            if partitions.count(first) == len(partitions):
                yield TopicPartition(topic, first), messages
                return
            start = 0
            for partition, group in groupby(partitions):
                end = start + len(list(group))
                yield TopicPartition(topic, partition), messages[start:end]
                start = end
            return
        start = 0
        for (name, number), same in groupby(zip(map(topic_of, messages), partitions, strict=True)):
            end = start + len(list(same))
            yield TopicPartition(name, number), messages[start:end]
            start = end

    def _apply_assignment_changes(self) -> None:
        if not self._dropped and not self._pending:
            # Looked at without the lock (before every fetch, so mostly nothing): a change recorded just after it is
            # applied before the next fetch, as one recorded during this fetch would have been anyway.
            return
        with self._lock:
            dropped, self._dropped = self._dropped, set()
            pending, self._pending = self._pending, {}
        gone = [tp for tp in dropped if tp in self._fetching]
        if gone:
            self._unfetch(gone)
        ready = {tp: offset for tp, offset in pending.items() if offset >= 0}
        if ready:
            self._fetch_from(ready, verified=False)
        unresolved = sorted(tp for tp, offset in pending.items() if offset < 0)
        targets = self._reset_targets(unresolved)
        resolved: dict[TopicPartition, int] = {}
        try:
            for tp in unresolved:
                if self._stopping.is_set():
                    return
                new_offset = self._reset_offset(tp, RESET_NO_OFFSET, targets.get(tp), fetch=False)
                if new_offset is not None:
                    resolved[tp] = new_offset
        finally:
            if resolved:
                self._fetch_from(resolved)  # one librdkafka assignment for all of them

    def _fetch_from(self, offsets: Mapping[TopicPartition, int], verified: bool = True) -> None:
        """Fetch these partitions from these offsets; ``verified`` when each offset was just read from the log
        (a reset), else it is compared with the log end unless a message at it arrives soon."""
        self._consumer.incremental_assign(
            [KafkaTopicPartition(tp.topic, tp.partition, offset) for tp, offset in offsets.items()]
        )
        self._fetching.update(offsets)
        self._single_topic = len({tp.topic for tp in self._fetching}) <= 1
        due = monotonic() + (_RECHECK_S if verified else _VERIFY_AFTER_S)
        self._check_due.update(dict.fromkeys(offsets, due))
        self._next_check = min(self._next_check, due)

    def _unfetch(self, partitions: Iterable[TopicPartition]) -> None:
        partitions = [tp for tp in partitions if tp in self._fetching]
        if partitions:
            self._consumer.incremental_unassign([KafkaTopicPartition(tp.topic, tp.partition) for tp in partitions])
            self._fetching.difference_update(partitions)
            self._single_topic = len({tp.topic for tp in self._fetching}) <= 1
            for tp in partitions:
                self._check_due.pop(tp, None)

    def _current_offset(self, tp: TopicPartition) -> int | None:
        with self._lock:
            return self._offsets.get(tp)

    def _plan(self, tp: TopicPartition, run: list[Message]) -> list[_Chunk | _TooLarge]:
        """The chunks a run of one partition becomes: within ``fetch.message.max.bytes`` each, up to a message that
        is larger alone (then Kafka's partial message, and nothing after it)."""
        current = self._current_offset(tp)
        info = self._partition_map.get(tp)
        if current is None or info is None or tp not in self._fetching:
            return []  # removed since librdkafka fetched it
        if offset_of(run[0]) < current:  # fetched before a reset moved the partition; the new position's copy follows
            run = run[bisect_left(run, current, key=offset_of):]
            if not run:
                return []
        limit = self._config.fetch_message_max_bytes
        run_bytes = sum(map(len, run))
        if run_bytes <= limit:
            return [_Chunk(tp, info, FetchedRecords.of(run, tp.topic, tp.partition, run_bytes))]
        plans: list[_Chunk | _TooLarge] = []
        chunk: list[Message] = []
        chunk_bytes = 0
        for message in run:
            size = len(message)
            if size > limit or (chunk and chunk_bytes + size > limit):
                if chunk:
                    plans.append(_Chunk(tp, info, FetchedRecords.of(chunk, tp.topic, tp.partition, chunk_bytes)))
                chunk, chunk_bytes = [], 0
                if size > limit:
                    plans.append(_TooLarge(tp, info, offset_of(message), size))
                    return plans
            chunk.append(message)
            chunk_bytes += size
        plans.append(_Chunk(tp, info, FetchedRecords.of(chunk, tp.topic, tp.partition, chunk_bytes)))
        return plans

    def _enqueue(self, plan: _Chunk) -> bool:
        """Hand a chunk to the stream (blocking while its queue is full); ``False`` when it was not handed on."""
        tp, info, records = plan.tp, plan.info, plan.records
        expected = self._current_offset(tp)
        if expected is None or records.first_offset < expected:
            return False
        fetch_offset = info.fetched_offset
        if not info.enqueue(records, stop=self._stopping):
            return False
        with self._lock:
            if self._offsets.get(tp) != expected:
                return False  # removed, or removed and added again, while the put was blocked
            self._offsets[tp] = info.fetched_offset
        # Once per chunk, so called directly, and a failing sink dropped by try/except rather than emit()'s
        # contextlib.suppress (which costs as much as the call): filtered out, it costs the call and a level check.
        # The data path's busiest event names its (declared) level: a fixed-level method skips the event's lookup.
        try:  # noqa: SIM105
            _log.debug(ev.FETCHER_CHUNK_ENQUEUED, consumer_id=self.consumer_id, fetcher_id=self.fetcher_id,
                       broker_id=self.broker.id, topic=tp.topic, partition=tp.partition, fetch_offset=fetch_offset,
                       messages=len(records))
        except Exception:  # an event must never stop the fetching
            pass
        info.chunk_queue.wait_turn()  # a reader that keeps up hands this chunk out before the next batch is made
        return True

    def _message_too_large(self, plan: _TooLarge) -> None:
        tp = plan.tp
        self._emit("warning", ev.FETCHER_MESSAGE_TOO_LARGE, topic=tp.topic, partition=tp.partition, offset=plan.offset,
                   size=plan.size, fetch_message_max_bytes=self._config.fetch_message_max_bytes)
        # Kafka's partial message: a chunk without messages, which the iterator reports. The partition stays owned
        # (so the leader finder does not hand it out again) but is not fetched until the next rebalance.
        self._unfetch([tp])
        plan.info.enqueue(None, too_large=True, stop=self._stopping)

    def _handle_error(self, message: Message, error: KafkaError) -> None:
        topic, partition = message.topic(), message.partition()
        if not topic or partition is None or partition < 0:
            self._emit("warning", ev.FETCHER_ERROR, stage="fetch", code=error.name(), error=error.str())
            self._stopping.wait(self._backoff_s)
            return
        tp = TopicPartition(topic, partition)
        if tp not in self._fetching:
            return  # about a partition given up since
        if error.code() in _OUT_OF_RANGE:
            # Tansu never reports this (a fetch beyond the end returns nothing), so only Kafka brokers get here.
            self._unfetch([tp])
            self._reset_offset(tp, RESET_OUT_OF_RANGE)
        elif error.code() == KafkaError._BAD_MSG:
            self._emit("warning", ev.FETCHER_CORRUPT_MESSAGE, topic=topic, partition=partition, error=error.str())
        else:
            self._partition_failed(tp, error.name(), error.str())

    def _partition_failed(self, tp: TopicPartition, code: str, error: str) -> None:
        """Give the partition back to the leader finder, which looks its leader up again (Kafka's error set)."""
        self._emit("warning", ev.FETCHER_PARTITION_ERROR, topic=tp.topic, partition=tp.partition, code=code,
                   error=error)
        self._unfetch([tp])
        if self.remove_partitions([tp]):
            self._on_partitions_error([tp])

    def _check_positions(self, now: float) -> None:
        """Compare the positions due a check with the true end of their logs, and reset those beyond it (see the
        module's docstring). A partition whose end could not be read is tried again after the leader backoff."""
        due = sorted(tp for tp, when in self._check_due.items() if when <= now)
        if not due:
            return
        with self._lock:
            positions = {tp: self._offsets[tp] for tp in due if tp in self._offsets}
        ends: dict[TopicPartition, int] = {}
        for start in range(0, len(due), _LOOKUP_GROUP):
            if self._stopping.is_set():
                return
            ends.update(self._true_log_ends(due[start:start + _LOOKUP_GROUP]))
        later = monotonic()
        for tp in due:
            if tp in self._check_due:
                self._check_due[tp] = later + (_RECHECK_S if tp in ends else self._backoff_s)
        found = {tp for tp, position in positions.items() if tp in ends and position > ends[tp]}
        past = sorted(tp for tp in found if self._past_once.get(tp) == positions[tp])
        for tp in due:
            self._past_once.pop(tp, None)
        for tp in found.difference(past):  # the first look: again CONFIRM_S later
            self._past_once[tp] = positions[tp]
            if tp in self._check_due:
                self._check_due[tp] = later + CONFIRM_S
        if not past:
            return
        self._unfetch(past)
        targets = {tp: ends[tp] for tp in past} if self._config.auto_offset_reset == "largest" \
            else self._reset_targets(past)
        for tp in past:
            if self._stopping.is_set():
                return
            self._reset_offset(tp, RESET_PAST_LOG_END, targets.get(tp))

    def _reset_targets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """Where ``auto.offset.reset`` puts these partitions, looked up together, in groups of
        :data:`_LOOKUP_GROUP` (each answered within a network slice even by a slow broker, and a stop request is
        looked at between groups). A partition without an answer is left out: :meth:`_reset_offset` then asks for it
        alone, as Kafka did for every partition."""
        lookup = self._log_starts if self._config.auto_offset_reset == "smallest" else self._true_log_ends
        targets: dict[TopicPartition, int] = {}
        for start in range(0, len(partitions), _LOOKUP_GROUP):
            if self._stopping.is_set():
                break
            targets.update(lookup(partitions[start:start + _LOOKUP_GROUP]))
        return targets

    def _true_log_ends(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """For ``largest``: the true end of these partitions' logs, read in one go (a broker's ListOffsets answer
        can trail the log; :mod:`zkconsumer.kafka.log_end_offsets`)."""
        found = fetch_log_end_offsets(self.broker.address, partitions, timeout=NETWORK_SLICE_S, max_age_s=0)
        return dict(found.offsets)

    def _log_starts(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """For ``smallest``: the first offset of these partitions' logs, in one ListOffsets request per leader
        (``offsets_for_times`` with Kafka's "earliest" timestamp, -2; Kafka sent one request per partition, which
        a fresh group of 10,000 partitions waited a minute for)."""
        asked = [KafkaTopicPartition(tp.topic, tp.partition, OFFSET_BEGINNING) for tp in partitions]
        try:
            answers = self._consumer.offsets_for_times(asked, timeout=NETWORK_SLICE_S)
        except KafkaException:
            return {}
        return {TopicPartition(a.topic, a.partition): a.offset for a in answers if a.error is None and a.offset >= 0}

    def _reset_offset(self, tp: TopicPartition, reason: str, target: int | None = None,
                      fetch: bool = True) -> int | None:
        """Kafka's handleOffsetOutOfRange: ask the leader for the earliest or latest offset, move both offsets of the
        partition there, then fetch from it (or leave that to the caller: ``fetch=False``). Used for a missing
        committed offset too; ``target`` is that offset when :meth:`_log_starts` or :meth:`_true_log_ends` already
        read it. Returns the new offset, ``None`` when the partition was not reset."""
        info = self._partition_map.get(tp)
        if info is None or self._current_offset(tp) is None:
            return None
        policy = self._config.auto_offset_reset
        try:
            new_offset = target if target is not None else self._log_end(tp, earliest=policy == "smallest")
        except (KafkaException, TimeoutError) as exc:
            self._partition_failed(tp, *_describe(exc))
            return None
        if new_offset is None:
            return None  # stopping
        old_offset = info.fetched_offset
        with self._lock:
            if tp not in self._offsets:
                return None  # removed meanwhile
            self._offsets[tp] = new_offset
        info.reset_fetch_offset(new_offset)
        info.reset_consume_offset(new_offset)
        self._emit("warning" if reason in _LOSSY_RESETS else "info", ev.FETCHER_OFFSET_RESET, topic=tp.topic,
                   partition=tp.partition, reason=reason, policy=policy, old_offset=old_offset, new_offset=new_offset)
        if self._on_offset_reset is not None:
            try:
                self._on_offset_reset(info, new_offset, reason)
            except Exception as exc:  # the connector's bookkeeping must not stop the fetching
                code, error = _describe(exc)
                self._emit("warning", ev.FETCHER_ERROR, stage="on_offset_reset", code=code, error=error, exc_info=True)
        if fetch:
            self._fetch_from({tp: new_offset})
        return new_offset

    def _log_end(self, tp: TopicPartition, earliest: bool) -> int | None:
        """The low or high watermark from the leader, within socket.timeout.ms; ``None`` if stopped first."""
        partition = KafkaTopicPartition(tp.topic, tp.partition)

        def ask(timeout_s: float) -> int | None:
            try:
                marks = self._consumer.get_watermark_offsets(partition, timeout=timeout_s, cached=False)
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError._TIMED_OUT:
                    raise
                return None
            if marks is None:
                return None
            return marks[0] if earliest else marks[1]

        return call_in_slices(ask, self._socket_timeout_s, self._stopping, expired=lambda: TimeoutError(
            f"no offsets for {tp} within socket.timeout.ms={self._config.socket_timeout_ms}"))

    def _emit(self, level: str, event: str, **fields: Any) -> None:
        emit(_log, level, event, consumer_id=self.consumer_id, fetcher_id=self.fetcher_id, broker_id=self.broker.id,
             **fields)

    def __repr__(self) -> str:
        return f"ConsumerFetcherThread({self.name!r}, {len(self._offsets)} partitions)"
