"""``spark.readStream.format("zkconsumer")``: a Structured Streaming source that is a member of a legacy ZooKeeper
consumer group.

Spark's own ZooKeeper-era integration (``KafkaUtils.createStream``) went with Spark 3.0, and with it the group: lag
tools stopped seeing Spark jobs, and a fleet of legacy consumers could not hand partitions over to one. This source
gives both back. Options: :mod:`zkconsumer.spark.options`. Rows: the layout of Spark's Kafka source (``key``,
``value``, ``topic``, ``partition``, ``offset``, ``timestamp``, ``timestampType``), so downstream code moves over
unchanged.

**Where things run.** PySpark runs a Python stream source in three places, each a Python process that Spark starts,
with its own copy of the source's objects (nothing one sets is seen by another):

* ``schema()`` runs when the DataFrame is defined (``load()``): the options are parsed and ZooKeeper asked there, so
  a bad option, an unreachable ensemble or a missing topic fails ``load()`` on the driver with one line naming the
  cause (the last line of Spark's ``AnalysisException``).
* ``initialOffset``, ``latestOffset``, ``partitions``, ``commit`` and ``stop`` run in one long-lived Python process
  Spark starts on the driver for the query: :class:`StreamPlanner` lives there, created at the first of these
  calls. With ``membership=member`` it is a member of the group: a
  :class:`~zkconsumer.consumer.zookeeper_consumer_connector.ZookeeperConsumerConnector` made with ``fetch=False``,
  registered in ``/consumers/<group>/ids`` exactly like a legacy member, rebalancing on the same triggers with the
  same assignor, claiming owner znodes; it owns partitions and fetches nothing. Burrow, kafka-manager and
  ``groups describe`` see one more member.
* ``read()`` runs on the executors, from a pickled copy of the reader that never saw the planner: each task reads
  one offset range (:mod:`zkconsumer.spark.partition_reader`).

The stream reader's constructor never fails (Spark 4.2's runner would hide the error behind its own
``UnboundLocalError``): an error is raised by the first call that needs the planner.

**A micro-batch.** ``latestOffset`` reads what the member owns at that moment (with ``membership=none``: every
partition of the subscription), finds the true end of each partition's log (read forward,
:mod:`zkconsumer.kafka.log_end_offsets`: the embedded broker's high watermark is wrong), and plans the batch's end:
each owned partition up to its log end, ``maxOffsetsPerTrigger`` shared out in proportion. Partitions it does not
own keep their position. A partition seen for the first time starts at the group's committed offset, else at
``auto.offset.reset`` (``startingOffsets`` applies to the partitions owned when a new query starts); a committed
offset or a position beyond the true end of the log is reset by ``auto.offset.reset`` too, with a warning
(``spark.offset_reset``: the broker may answer such a fetch with nothing rather than OFFSET_OUT_OF_RANGE), once a
second look 3 s later finds it beyond the end again, as the connector's fetchers decide it
(:mod:`zkconsumer.kafka.past_end`). The second look is taken within the same planning, which waits for it: Spark
may plan once a run (``Trigger.AvailableNow``), and a query's next run starts with a new source. A partition
regained after a rebalance starts at the group's committed offset when that is ahead of the source's position: the
legacy member that had it consumed that far (:mod:`zkconsumer.spark.offsets` has the reasoning). ``partitions``
turns the batch into one task per partition range, large ranges split.

**Offsets in ZooKeeper, and lag.** Spark calls ``commit(end)`` one batch late: right after it has written the *next*
batch's offsets, so the end of the last batch reaches ``commit`` only once another batch is planned, never while the
stream is idle, and not when the query stops. Committing there alone would leave the group's lag (as Burrow and
``groups describe`` compute it) one whole batch too high, for as long as no new data comes. So the source also
commits at planning: Spark 4.2 passes ``latestOffset`` the end of the previous batch as ``start``, and it does so
only once that batch has been processed and recorded in the checkpoint's commit log (micro-batches run one after
another); the query's initial offset is the exception (nothing is processed up to it, and Spark also plans from it
out of turn, for ``Trigger.AvailableNow``), so it is never committed. The group's offsets therefore trail the sink
by at most the batch in flight plus one trigger interval; an idle query's lag drops to zero at its next trigger.
``commit(end)`` still commits (a no-op when planning already did). Both commit only partitions the source owns at
that moment (another owner commits the rest), and only forward: never at or below what the group holds (a regained
partition's stale position, a higher offset another member wrote). The ZooKeeper offsets are at least once (a batch
in flight when its partition moves is read again by the new owner); the sink's exactly-once comes from Spark's
checkpoint and the deterministic replay of ranges. On PySpark 4.0/4.1 ``latestOffset`` gets no ``start``: the source
then commits in ``commit`` only, one batch late.

When the query stops, ``stop`` leaves the group: the member's ephemeral znodes go with its session and the others
rebalance. Nothing is committed then (whether the last batch reached the sink is not known there); a restarted query
resumes from its checkpoint anyway.

**Bad input.** A missing or invalid option: ``load()`` fails naming it. ``topics`` naming a topic that does not exist
in ``/brokers/topics``: an error (at ``load()`` and when the query starts); with ``whitelist``/``blacklist`` the
source waits for a matching topic (``spark.waiting_for_topics``). ZooKeeper unreachable: ``load()``, or the query's
start, fails with one line. A malformed offset znode: the partition is skipped and ``znode.malformed`` reported, as
the connector does (a member never owns such a partition; with ``membership=none`` the source skips it). While the
ZooKeeper connection is down in mid-run, no batch is planned and nothing committed (``spark.zookeeper_unavailable``);
planning resumes with the connection.

Its events (``spark.*``, logger ``zkconsumer.spark``) are declared once in :mod:`zkconsumer.events.spark` and
listed on the events page (``docs/events.md``). They are emitted in Spark's Python workers: the planner's in the
driver's, beside the member's own ``consumer.*`` and ``rebalance.*``, the tasks' on the executors. A library there
too, the source configures no logging: with none, the warnings reach the worker's stderr (the executor's log, the
console in local mode) and the rest is silent.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from confluent_kafka import Consumer, KafkaException
from confluent_kafka import TopicPartition as KafkaTopicPartition
from kazoo.client import KazooClient
from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.errors import ServerUnavailableError, UsageError
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms, partition_list
from zkconsumer.group.offset_store import ZooKeeperOffsetStore
from zkconsumer.group.snapshot import MalformedZnode, read_partitions
from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.kafka.log_end_offsets import fetch_log_end_offsets
from zkconsumer.kafka.past_end import CONFIRM_S, still_past_end
from zkconsumer.log import get_logger
from zkconsumer.spark.offsets import (
    DEFAULT_MAX_RANGE,
    SourceOffset,
    batch_ranges,
    plan_batch,
    plan_commit,
    split_ranges,
)
from zkconsumer.spark.options import (
    EARLIEST,
    EARLIEST_OFFSET,
    GROUP,
    LATEST,
    LATEST_OFFSET,
    MEMBER,
    SPECIFIC,
    SourceOptions,
    StartingOffsets,
    parse_options,
)
from zkconsumer.spark.partition_reader import READER_GROUP, SCHEMA_DDL, RangeTask, ReadSettings, read_range
from zkconsumer.types import TopicPartition
from zkconsumer.zk import paths
from zkconsumer.zk.client import close_client, open_client, zookeeper
from zkconsumer.zk.cluster import read_brokers
from zkconsumer.zk.reads import children

#: how long the planner waits for the brokers' answers (log ends, earliest offsets)
BROKER_TIMEOUT_S = 10.0

_log = get_logger("zkconsumer.spark")


class UnknownTopicError(UsageError):
    """A topic named in ``topics`` does not exist."""


class ZkConsumerDataSource(DataSource):
    """The ``zkconsumer`` format: a streaming source only."""

    @classmethod
    def name(cls) -> str:
        return "zkconsumer"

    def schema(self) -> str:
        options = parse_options(self.options)
        check_source(options)
        return SCHEMA_DDL

    def streamReader(self, schema: Any) -> ZkConsumerStreamReader:
        return ZkConsumerStreamReader(dict(self.options))


class RangePartition(InputPartition):
    """One Spark task: a range of one partition, and where to read it."""

    def __init__(self, task: RangeTask) -> None:
        super().__init__(task)
        self.task = task

    def __repr__(self) -> str:
        r = self.task.range
        return f"RangePartition({r.topic}-{r.partition} [{r.begin}, {r.end}))"


class ZkConsumerStreamReader(DataSourceStreamReader):
    """Spark's handle on the source. The driver's copy delegates to a :class:`StreamPlanner` made on first use;
    the executors' copies only ``read``."""

    def __init__(self, options: Mapping[str, str]) -> None:
        self._raw = dict(options)
        self._planner: StreamPlanner | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"_raw": self._raw, "_planner": None}  # the member stays on the driver

    def _driver(self) -> StreamPlanner:
        if self._planner is None:
            self._planner = StreamPlanner(parse_options(self._raw))
        return self._planner

    def initialOffset(self) -> dict:
        return self._driver().initial_offset()

    def getDefaultReadLimit(self) -> Any:
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows  # PySpark 4.2+

        limit = parse_options(self._raw).max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def latestOffset(self, start: dict | None = None, limit: Any = None) -> dict:
        return self._driver().latest_offset(start, limit)

    def partitions(self, start: dict, end: dict) -> Sequence[InputPartition]:
        return self._driver().partitions(start, end)

    def commit(self, end: dict) -> None:
        self._driver().commit(end)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        assert isinstance(partition, RangePartition)
        return read_range(partition.task)

    def stop(self) -> None:
        if self._planner is not None:
            self._planner.stop()


def check_source(options: SourceOptions) -> None:
    """What ``load()`` checks beyond the options: ZooKeeper answers, and every topic of ``topics`` exists."""
    config = options.consumer_config()
    with zookeeper(options.zookeeper_connect, timeout=config.zookeeper_connection_timeout_ms / 1000, quiet=True) as zk:
        check_topics(zk, options)


def check_topics(zk: KazooClient, options: SourceOptions) -> None:
    existing = set(children(zk, paths.BROKER_TOPICS_PATH))
    for topic in options.subscription.topics:
        if topic not in existing:
            raise UnknownTopicError(
                f"option topics: topic {topic!r} does not exist (no {paths.topic_path(topic)} in ZooKeeper at "
                f"{options.zookeeper_connect}); create it, or subscribe with whitelist to wait for it"
            )


class StreamPlanner:
    """The driver's side of the source, in Spark's long-lived Python process for it: the group member (or a plain
    ZooKeeper session), the planning of micro-batches, and the commits."""

    def __init__(self, options: SourceOptions) -> None:
        started = time.monotonic()
        self.options = options
        self.config = options.consumer_config()
        self._connector: ZookeeperConsumerConnector | None = None
        self.consumer_id: str | None = None
        if options.membership == MEMBER:
            self._connector = ZookeeperConsumerConnector(self.config, fetch=False)
            self.zk = self._connector.zk
            self.consumer_id = self._connector.consumer_id
        else:
            self.zk = open_client(options.zookeeper_connect, timeout=self.config.zookeeper_connection_timeout_ms / 1000,
                                  session_timeout=self.config.zookeeper_session_timeout_ms / 1000, retry_forever=True)
        self._log = _log.bind(group=options.group_id, consumer_id=self.consumer_id or "none")
        self._bootstrap = ""
        try:
            check_topics(self.zk, options)
            self._bootstrap = self._resolve_bootstrap(required=True)
            if self._connector is not None:
                self._join(self._connector)
        except BaseException:
            self._close()
            raise
        self._offsets = ZooKeeperOffsetStore(self.zk, options.group_id, self.config.zookeeper_multi_max_bytes)
        self._owned_last: frozenset[TopicPartition] | None = None  # at the last planning; None before the first
        self._last_end: SourceOffset | None = None  # for PySpark 4.0/4.1, which give latestOffset no start
        self._initial: SourceOffset | None = None
        self._reported_paths: set[str] = set()
        self._warned: dict[str, object] = {}
        #: partitions reset from beyond the log's end -> the offset reset from: the group may still hold it, and
        #: the next commit takes it back (commits otherwise only go forward)
        self._reset_from: dict[TopicPartition, int] = {}
        self._started = started
        self._log.emit(ev.SPARK_SOURCE_STARTED, membership=options.membership,
                       subscription=options.subscription.describe(),
                       bootstrap=options.bootstrap_servers or f"registered: {self._bootstrap}",
                       starting=options.starting.kind, max_offsets_per_trigger=options.max_offsets_per_trigger,
                       duration_ms=elapsed_ms(started))

    def _join(self, connector: ZookeeperConsumerConnector) -> None:
        subscription = self.options.subscription
        if subscription.filter is None:
            connector.create_message_streams({t: self.options.streams for t in subscription.topics})
        else:
            connector.create_message_streams_by_filter(subscription.filter, self.options.streams)

    # --- Spark's calls ---------------------------------------------------------------------------------

    def initial_offset(self) -> dict:
        owned = self.owned()
        positions = self._first_positions(owned, self.options.starting)
        offset = SourceOffset(dict(sorted(positions.items())))
        self._last_end = self._initial = offset
        self._log.emit(ev.SPARK_INITIAL_OFFSET, starting=self.options.starting.kind,
                       offsets=partition_list(positions, offset=positions))
        return offset.to_json()

    def latest_offset(self, start_json: dict | None, limit: Any) -> dict:
        started = time.monotonic()
        # PySpark 4.0/4.1 give no start: the source's own last end stands in for it
        start = SourceOffset.from_json(start_json) if start_json is not None else self._last_end or SourceOffset()
        unchanged = start_json if start_json is not None else start.to_json()
        if not self.zk.connected:
            self._warn_once("zk", True, ev.SPARK_ZOOKEEPER_UNAVAILABLE, action="plan")
            return unchanged
        self._warned.pop("zk", None)
        if start_json is not None and start != self._initial:
            # Spark passes a start only once the batch ending there is done. Not the initial offset: nothing was
            # processed up to it, and Spark also asks from it out of turn (Trigger.AvailableNow's target, on restart).
            self._commit(start.positions, "processed")

        owned = self.owned()
        gained = owned - (self._owned_last or frozenset())
        self._owned_last = owned
        if not owned:
            self._note_no_topics()
            return unchanged
        ends = self._log_ends(owned)
        new = sorted(tp for tp in owned if tp in ends and tp not in start.positions)
        first = self._first_positions(new, StartingOffsets(GROUP), ends)
        regained = sorted(tp for tp in gained if tp in ends and tp in start.positions)
        committed = self._committed(regained)
        readable = {tp: end for tp, end in ends.items() if tp in start.positions or tp in first}
        suspects = {tp: start.positions[tp] for tp in readable if tp in start.positions
                    and start.positions[tp] > readable[tp]}
        past_end = sorted(self._second_look(suspects, ends))
        for tp in suspects:  # the second look's end; one it could not read: not read in this batch
            if tp in ends:
                readable[tp] = ends[tp]
            else:
                del readable[tp]
        resets = self._reset_positions(past_end, ends)
        plan = plan_batch(start, readable, first, committed, self._max_offsets(limit), resets)
        for tp, (position, begin) in plan.reset.items():
            self._log_reset(tp, position, begin)
        if plan.behind:
            self._log.emit(ev.SPARK_LOG_BEHIND, partitions=partition_list(
                plan.behind, position={tp: p for tp, (p, _) in plan.behind.items()},
                log_end={tp: e for tp, (_, e) in plan.behind.items()}))
        if plan.end.same_positions(start):
            return unchanged
        self._last_end = plan.end
        if plan.resumed:
            self._log.emit(ev.SPARK_PARTITION_RESUMED, partitions=partition_list(
                plan.resumed, position={tp: p for tp, (p, _) in plan.resumed.items()},
                committed={tp: c for tp, (_, c) in plan.resumed.items()}))
        ranges = batch_ranges(start, plan.end)
        self._log.emit(ev.SPARK_BATCH_PLANNED, ranges=[_range(r) for r in ranges], offsets=plan.planned,
                       available=plan.available, limited=plan.limited, owned=len(owned),
                       duration_ms=elapsed_ms(started))
        return plan.end.to_json()

    def partitions(self, start_json: dict, end_json: dict) -> list[InputPartition]:
        start, end = SourceOffset.from_json(start_json), SourceOffset.from_json(end_json)
        if dict(start.positions) == dict(end.positions):
            return []  # Spark asks for (x, x) when it restarts from x
        pieces = split_ranges(batch_ranges(start, end), DEFAULT_MAX_RANGE, self.options.min_partitions)
        bootstrap = self._resolve_bootstrap(required=False)
        settings = ReadSettings(bootstrap, self.config.client_id, self.config.fetch_message_max_bytes,
                                self.config.socket_timeout_ms, self.config.socket_receive_buffer_bytes)
        self._log.emit(ev.SPARK_PARTITIONS_PLANNED, tasks=len(pieces), offsets=sum(p.size for p in pieces))
        return [RangePartition(RangeTask(piece, settings)) for piece in pieces]

    def commit(self, end_json: dict) -> None:
        if not self.zk.connected:
            self._log.emit(ev.SPARK_ZOOKEEPER_UNAVAILABLE, action="commit")
            return
        self._commit(SourceOffset.from_json(end_json).positions, "commit")

    def stop(self) -> None:
        self._close()
        self._log.emit(ev.SPARK_SOURCE_STOPPED, duration_ms=elapsed_ms(self._started))

    # --- ownership, offsets, log ends ------------------------------------------------------------------

    def owned(self) -> frozenset[TopicPartition]:
        """A member's partitions at this moment; without membership, every partition of the subscription."""
        if self._connector is not None:
            return frozenset(TopicPartition(t, p) for t, ps in self._connector.topic_registry.items() for p in ps)
        partitions, malformed = read_partitions(self.zk, self._subscribed_topics())
        self._report(malformed)
        return frozenset(TopicPartition(t, p) for t, ps in partitions.items() for p in ps)

    def _subscribed_topics(self) -> list[str]:
        subscription = self.options.subscription
        if subscription.filter is None:
            return list(subscription.topics)
        exclude = self.config.exclude_internal_topics
        return [t for t in children(self.zk, paths.BROKER_TOPICS_PATH) if subscription.allows(t, exclude)]

    def _note_no_topics(self) -> None:
        if self.options.subscription.filter is None:
            return
        matching = bool(self._subscribed_topics())
        self._warn_once("topics", not matching, ev.SPARK_WAITING_FOR_TOPICS,
                        subscription=self.options.subscription.describe())

    def _first_positions(self, partitions: Iterable[TopicPartition], starting: StartingOffsets,
                         ends: dict[TopicPartition, int] | None = None) -> dict[TopicPartition, int]:
        """Where partitions without a position begin: ``startingOffsets``, or the group's offset, or the reset.
        ``ends`` (read if not given) takes what a second look at a group's offset past the end reads."""
        wanted = sorted(partitions)
        if not wanted:
            return {}
        if ends is None:
            ends = self._log_ends(wanted)
        wanted = [tp for tp in wanted if tp in ends]
        fetched = self._offsets.fetch(wanted)
        self._report(tuple(fetched.malformed.values()))
        reset = EARLIEST if self.options.auto_offset_reset == "smallest" else LATEST
        choices: dict[TopicPartition, int | str] = {}
        past_end: dict[TopicPartition, int] = {}  # the group's offset, beyond the log's end
        for tp in wanted:
            if tp in fetched.malformed:
                continue
            given = starting.positions.get(tp) if starting.kind == SPECIFIC else None
            if given is not None:
                choices[tp] = EARLIEST if given == EARLIEST_OFFSET else LATEST if given == LATEST_OFFSET else given
            elif starting.kind in (EARLIEST, LATEST):
                choices[tp] = starting.kind
            else:
                theirs = fetched.offsets.get(tp, -1)
                if theirs > ends[tp]:
                    past_end[tp] = theirs  # at a first look
                choices[tp] = theirs if 0 <= theirs <= ends[tp] else reset
        if past_end:
            confirmed = self._second_look(past_end, ends)  # the caller's ends take the second look's too
            for tp in [tp for tp in past_end if tp not in confirmed]:
                del past_end[tp]
                if tp in ends:  # within the log at the second look: the group's offset stands
                    choices[tp] = fetched.offsets[tp]
                else:  # the second look could not read its end: positioned at a later planning
                    del choices[tp]
        need_earliest = [tp for tp, c in choices.items() if c == EARLIEST]
        earliest = self._earliest(need_earliest) if need_earliest else {}
        positions: dict[TopicPartition, int] = {}
        for tp, choice in choices.items():
            if choice == LATEST:
                positions[tp] = ends[tp]
            elif choice == EARLIEST:
                if tp in earliest:
                    positions[tp] = earliest[tp]
            else:
                assert isinstance(choice, int)
                positions[tp] = choice
        for tp, theirs in past_end.items():
            if tp in positions:
                self._log_reset(tp, theirs, positions[tp])
        return positions

    def _second_look(self, first_look: Mapping[TopicPartition, int],
                     ends: dict[TopicPartition, int]) -> frozenset[TopicPartition]:
        """The positions a look just found past their log's end that a second look :data:`CONFIRM_S` later finds
        there again (:mod:`zkconsumer.kafka.past_end`). ``ends`` takes the second look's ends (one it could not
        read is dropped). Nothing to confirm: no wait."""
        if not first_look:
            return frozenset()
        self._log.emit(ev.SPARK_PAST_END_SEEN, partitions=partition_list(
            first_look, position=first_look, log_end={tp: ends[tp] for tp in first_look if tp in ends}),
            confirm_ms=int(CONFIRM_S * 1000))
        time.sleep(CONFIRM_S)
        again = self._log_ends(first_look)
        for tp in first_look:
            ends.pop(tp, None)
        ends.update(again)
        return still_past_end(first_look, again)

    def _reset_positions(self, partitions: list[TopicPartition], ends: Mapping[TopicPartition, int],
                         ) -> dict[TopicPartition, int]:
        """Where ``auto.offset.reset`` puts these partitions: their log's start (``smallest``; left out where it is
        not known) or end (``largest``)."""
        if not partitions:
            return {}
        if self.options.auto_offset_reset == "smallest":
            return self._earliest(partitions)
        return {tp: ends[tp] for tp in partitions}

    def _log_reset(self, tp: TopicPartition, old: int, new: int) -> None:
        """A position beyond the true end of the log, reset: the connector's fetchers say the same
        (``fetcher.offset_reset``, reason ``past_log_end``). Once per partition and position: the position moves."""
        self._reset_from[tp] = old
        self._log.emit(ev.SPARK_OFFSET_RESET, topic=tp.topic, partition=tp.partition, reason="past_log_end",
                       policy=self.options.auto_offset_reset, old_offset=old, new_offset=new)

    def _committed(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """The group's committed offsets of these partitions (those it has)."""
        if not partitions:
            return {}
        fetched = self._offsets.fetch(partitions)
        self._report(tuple(fetched.malformed.values()))
        return {tp: offset for tp, offset in fetched.offsets.items() if offset >= 0}

    def _commit(self, positions: Mapping[TopicPartition, int], reason: str) -> None:
        if not positions:
            return
        owned = self.owned()
        mine = sorted(tp for tp in positions if tp in owned)
        fetched = self._offsets.fetch(mine)
        self._report(tuple(fetched.malformed.values()))
        # the offset a reset left behind, still the group's: written over, as the connector's next commit does
        stale = {tp for tp, old in self._reset_from.items() if fetched.offsets.get(tp) == old}
        held = {tp: -1 if tp in stale else offset for tp, offset in fetched.offsets.items()}
        plan = plan_commit({tp: positions[tp] for tp in mine if tp not in fetched.malformed}, owned, held)
        if not plan.write:
            return
        result = self._offsets.commit(plan.write)
        for tp in result.written:
            self._reset_from.pop(tp, None)
        self._report(tuple(result.malformed.values()))
        if result.written:
            not_owned = [tp for tp in positions if tp not in owned]
            self._log.emit(ev.SPARK_OFFSETS_COMMITTED, reason=reason,
                           offsets=partition_list(result.written, offset=result.written),
                           not_owned=partition_list(not_owned))
        if result.kept_higher:
            self._log.emit(ev.SPARK_COMMIT_SKIPPED, offsets=partition_list(result.kept_higher,
                                                                          theirs=result.kept_higher))

    def _log_ends(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        wanted = sorted(partitions)
        found = fetch_log_end_offsets(self._resolve_bootstrap(required=False), wanted, timeout=BROKER_TIMEOUT_S)
        unknown = dict(found.unknown)
        self._warn_once("log_end", frozenset(unknown) or None, ev.SPARK_LOG_END_UNKNOWN,
                        partitions=partition_list(unknown, reason=unknown))
        return dict(found.offsets)

    def _earliest(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]:
        """The first offset of each partition's log (its low watermark); a partition whose leader does not answer
        is left out, and positioned at a later planning."""
        consumer = Consumer({"bootstrap.servers": self._resolve_bootstrap(required=False), "group.id": READER_GROUP,
                             "enable.auto.commit": False, "logger": LIBRDKAFKA_LOGGER})
        found: dict[TopicPartition, int] = {}
        unknown: dict[TopicPartition, str] = {}
        try:
            for tp in partitions:
                try:
                    low, _high = consumer.get_watermark_offsets(KafkaTopicPartition(tp.topic, tp.partition),
                                                                timeout=BROKER_TIMEOUT_S, cached=False)
                    found[tp] = low
                except KafkaException as exc:
                    unknown[tp] = str(exc.args[0]) if exc.args else str(exc)
        finally:
            consumer.close()
        if unknown:
            self._log.emit(ev.SPARK_LOG_END_UNKNOWN, partitions=partition_list(unknown, reason=unknown))
        return found

    def _max_offsets(self, limit: Any) -> int | None:
        if limit is None:  # PySpark 4.0/4.1 pass no limit: the source applies its option itself
            return self.options.max_offsets_per_trigger
        max_rows = getattr(limit, "max_rows", None)
        return max_rows if isinstance(max_rows, int) else None

    def _resolve_bootstrap(self, required: bool) -> str:
        """``bootstrap.servers``, else the brokers registered in ZooKeeper now (the last ones known if none are)."""
        if self.options.bootstrap_servers:
            return self.options.bootstrap_servers
        brokers = sorted(b.address for b in read_brokers(self.zk)) if self.zk.connected else []
        if brokers:
            self._bootstrap = ",".join(brokers)
        elif required:
            raise ServerUnavailableError(
                f"no broker is registered in {paths.BROKER_IDS_PATH} of ZooKeeper at {self.options.zookeeper_connect}; "
                f"set the option bootstrap.servers"
            )
        return self._bootstrap

    # --- helpers ----------------------------------------------------------------------------------------

    def _report(self, malformed: tuple[MalformedZnode, ...] | list[MalformedZnode]) -> None:
        for bad in malformed:
            if bad.path not in self._reported_paths:
                self._reported_paths.add(bad.path)
                self._log.emit(ev.ZNODE_MALFORMED, path=bad.path, problem=bad.problem)

    def _warn_once(self, key: str, state: object, event: str, **fields: Any) -> None:
        """A warning when ``state`` becomes set (or changes), not at every trigger while it lasts."""
        if not state:
            self._warned.pop(key, None)
            return
        if self._warned.get(key) != state:
            self._warned[key] = state
            self._log.warning(event, **fields)

    def _close(self) -> None:
        if self._connector is not None:
            self._connector.shutdown()
        else:
            close_client(self.zk)


def _range(r: Any) -> dict[str, Any]:
    return {"topic": r.topic, "partition": r.partition, "from": r.begin, "to": r.end}
