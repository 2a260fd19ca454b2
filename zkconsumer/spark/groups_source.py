"""``spark.read.format("zkconsumer_groups")``: every consumer group of a ZooKeeper ensemble as a table of offsets and
lag, for lag analytics over a fleet with Spark SQL.

One row per group, topic and partition (``group``, ``topic``, ``partition``, ``offset``, ``log_size``, ``lag``,
``owner``, ``owner_alive``, ``members``, ``read_at``), the same numbers ``zkconsumer groups describe`` prints for each
group: the rows come from the offset checker (:mod:`zkconsumer.tools.offset_checker`) and
:mod:`zkconsumer.spark.group_rows` only adds the owner's liveness, the member count and the time of reading.

Options (names case-insensitive, values strings, as Spark passes them):

* ``zookeeper.connect`` (required): the ensemble, with its chroot if any.
* ``groups``: a regex the whole group name must match (Java's ``String.matches``, as the legacy topic filters);
  every group without it.
* ``bootstrap.servers``: a broker to ask for log sizes; otherwise the brokers registered in ZooKeeper.
* ``groupsPerPartition`` (default 250): how many groups one Spark task reads.
* ``zookeeper.connection.timeout.ms`` (default 6000) and ``socket.timeout.ms`` (default 5000, the log ends): the
  legacy keys, so that an unreachable server fails the query in seconds.

Where the work happens: planning, on the driver, lists ``/consumers`` (one ZooKeeper
call), keeps the groups the regex matches and splits them, in name order, into runs of ``groupsPerPartition`` (an
``InputPartition`` each). Each task opens its own ZooKeeper session, reads its groups with
``read_group_offsets`` (kazoo's async calls within a group, up to :data:`READS_IN_FLIGHT` groups at a time on the
one session, so their requests are pipelined rather than waited for one by one), then asks the brokers for the log
end of each distinct topic-partition of all its groups once (``read_log_sizes``: read forward, since the embedded
broker's high watermark is not the log end) and yields one Arrow record batch.

Bad input fails the query on the driver with one line naming the option: a missing ``zookeeper.connect``, an
invalid ``groups`` regex or a non-number where a number goes fail ``load()``; an unreachable ZooKeeper fails the
planning (the last line of Spark's error is ``ServerUnavailableError: ZooKeeper at ... did not answer ...``). A
malformed znode (an offset, an owner, a registration) never fails a task: its value is null and the znode reported.

Its events (``spark.groups_*``, ``spark.log_sizes_unknown``, ``znode.malformed``; logger
``zkconsumer.spark.groups``) are declared once in :mod:`zkconsumer.events.spark` and listed on the events page
(``docs/events.md``). They are emitted in Spark's Python worker processes: the planner's on the driver, the tasks'
on the executors. Being a library there too, the source configures no logging: with none, the warnings reach the
worker's stderr (Spark's executor log, the console in local mode) and the rest is silent.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from zkconsumer.errors import ServerUnavailableError, UsageError
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms
from zkconsumer.group.registry import GroupNotFoundError, list_groups
from zkconsumer.kafka.log_end_offsets import DEFAULT_TIMEOUT
from zkconsumer.log import get_logger
from zkconsumer.spark.group_rows import (
    COLUMNS,
    SCHEMA_DDL,
    GroupTableRow,
    columns,
    distinct_partitions,
    select_groups,
    split_groups,
    table_rows,
)
from zkconsumer.tools.offset_checker import GroupOffsets, read_group_offsets, read_log_sizes
from zkconsumer.zk.client import DEFAULT_CONNECT_TIMEOUT, close_client, open_client

NAME = "zkconsumer_groups"
DEFAULT_GROUPS_PER_PARTITION = 250
#: groups read at the same time on a task's one ZooKeeper session: enough to keep requests pipelined, few enough
#: that a task holds a bounded number of replies at once
READS_IN_FLIGHT = 16
_ROWS_PER_BATCH = 10_000

_log = get_logger("zkconsumer.spark.groups")

_KNOWN_OPTIONS = ("zookeeper.connect", "groups", "bootstrap.servers", "groupsperpartition",
                  "zookeeper.connection.timeout.ms", "socket.timeout.ms")


@dataclass(frozen=True)
class GroupsOptions:
    """The source's options, checked once on the driver; pickled to the executors with the reader."""

    zookeeper_connect: str
    groups: re.Pattern[str] | None
    bootstrap_servers: str | None
    groups_per_partition: int
    zookeeper_timeout_s: float
    socket_timeout_s: float


def parse_options(options: Mapping[str, str]) -> GroupsOptions:
    """The options as Spark hands them over (keys in any case, values strings); a bad one raises UsageError naming
    it. Pure."""
    given = {key.lower(): value for key, value in options.items()}
    unknown = sorted(set(given) - set(_KNOWN_OPTIONS))
    if unknown:
        raise UsageError(f"{NAME}: unknown option {unknown[0]!r} (known: zookeeper.connect, groups, "
                         "bootstrap.servers, groupsPerPartition, zookeeper.connection.timeout.ms, socket.timeout.ms)")
    connect = given.get("zookeeper.connect", "").strip()
    if not connect:
        raise UsageError(f"{NAME}: option 'zookeeper.connect' is required (host:port[,host:port...][/chroot])")
    pattern = None
    if given.get("groups") is not None:
        try:
            pattern = re.compile(given["groups"])
        except re.error as exc:
            raise UsageError(f"{NAME}: option 'groups' is not a valid regex ({exc})") from None
    return GroupsOptions(
        zookeeper_connect=connect,
        groups=pattern,
        bootstrap_servers=given.get("bootstrap.servers", "").strip() or None,
        groups_per_partition=_positive_int(given, "groupsperpartition", "groupsPerPartition",
                                           DEFAULT_GROUPS_PER_PARTITION),
        zookeeper_timeout_s=_positive_int(given, "zookeeper.connection.timeout.ms", "zookeeper.connection.timeout.ms",
                                          int(DEFAULT_CONNECT_TIMEOUT * 1000)) / 1000,
        socket_timeout_s=_positive_int(given, "socket.timeout.ms", "socket.timeout.ms",
                                       int(DEFAULT_TIMEOUT * 1000)) / 1000,
    )


def _positive_int(given: Mapping[str, str], key: str, shown: str, default: int) -> int:
    if key not in given:
        return default
    text = given[key].strip()
    if not text.isdigit() or int(text) < 1:
        raise UsageError(f"{NAME}: option {shown!r} must be a positive integer, not {given[key]!r}")
    return int(text)


class GroupsDataSource(DataSource):
    """The format ``zkconsumer_groups`` (registered by :func:`zkconsumer.spark.register`)."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        # Checked here, in load(): a bad option fails before any query is built on the table.
        parse_options(self.options)
        return SCHEMA_DDL

    def reader(self, schema: StructType) -> GroupsReader:
        return GroupsReader(parse_options(self.options))


class GroupsReader(DataSourceReader):
    def __init__(self, options: GroupsOptions) -> None:
        self.options = options

    def partitions(self) -> list[InputPartition]:
        """On the driver: one ZooKeeper call lists the groups; an unreachable ensemble fails the query here."""
        started = time.monotonic()
        connect = self.options.zookeeper_connect
        try:
            zk = open_client(connect, self.options.zookeeper_timeout_s, quiet=True)
        except ServerUnavailableError as exc:
            raise ServerUnavailableError(str(exc)) from None  # the cause alone: no stack of ours under it
        try:
            listed = list_groups(zk)
        except Exception as exc:  # the session dropped between connecting and listing
            raise ServerUnavailableError(f"ZooKeeper at {connect}: listing /consumers failed "
                                         f"({type(exc).__name__}: {exc})") from None
        finally:
            close_client(zk)
        groups = select_groups(listed, self.options.groups)
        chunks = split_groups(groups, self.options.groups_per_partition)
        _log.emit(ev.SPARK_GROUPS_PLANNED, zookeeper=connect, listed=len(listed), groups=len(groups),
                  input_partitions=len(chunks), duration_ms=elapsed_ms(started))
        return [InputPartition(chunk) for chunk in chunks]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """On an executor: this task's groups, read with a ZooKeeper session of its own."""
        import pyarrow as pa

        groups: tuple[str, ...] = tuple(partition.value) if partition is not None and partition.value else ()
        if not groups:  # no group matched: Spark still runs one task, with no partition
            return
        rows = read_groups_table(self.options, groups)
        schema = _arrow_schema(pa)
        for start in range(0, len(rows), _ROWS_PER_BATCH):
            chunk = columns(rows[start:start + _ROWS_PER_BATCH])
            yield pa.RecordBatch.from_arrays([pa.array(chunk[name], schema.field(name).type) for name in COLUMNS],
                                             schema=schema)


def read_groups_table(options: GroupsOptions, groups: tuple[str, ...]) -> list[GroupTableRow]:
    """The rows of ``groups`` (I/O: ZooKeeper, then the brokers), every malformed znode reported."""
    started = time.monotonic()
    zk = open_client(options.zookeeper_connect, options.zookeeper_timeout_s, quiet=True)
    try:
        with ThreadPoolExecutor(min(READS_IN_FLIGHT, len(groups)), thread_name_prefix="zkconsumer-groups") as pool:
            read = [got for got in pool.map(lambda group: _read_group(zk, group), groups) if got is not None]
        log_ends = read_log_sizes(zk, distinct_partitions(offsets for offsets, _ in read), options.bootstrap_servers,
                                  options.socket_timeout_s)
    finally:
        close_client(zk)
    malformed = 0
    for offsets, _ in read:
        for problem in offsets.warnings:
            malformed += 1
            _log.emit(ev.ZNODE_MALFORMED, group=offsets.group, path=problem.path, problem=problem.problem)
    if log_ends.unknown:
        _log.emit(ev.SPARK_LOG_SIZES_UNKNOWN, partitions=len(log_ends.unknown),
                  reason=log_ends.unavailable or next(iter(sorted(log_ends.unknown.items())))[1])
    rows = [row for offsets, read_at in read for row in table_rows(offsets, log_ends.offsets, read_at)]
    _log.emit(ev.SPARK_GROUPS_READ, groups=len(groups), vanished=len(groups) - len(read), rows=len(rows),
              partitions=len(log_ends.offsets) + len(log_ends.unknown), malformed=malformed,
              log_sizes_unknown=len(log_ends.unknown), duration_ms=elapsed_ms(started))
    return rows


def _read_group(zk: Any, group: str) -> tuple[GroupOffsets, datetime] | None:
    read_at = datetime.now(UTC)
    try:
        return read_group_offsets(zk, group), read_at
    except GroupNotFoundError:
        return None  # deleted since planning listed it


def _arrow_schema(pa: Any) -> Any:
    return pa.schema([
        ("group", pa.string()), ("topic", pa.string()), ("partition", pa.int32()), ("offset", pa.int64()),
        ("log_size", pa.int64()), ("lag", pa.int64()), ("owner", pa.string()), ("owner_alive", pa.bool_()),
        ("members", pa.int32()), ("read_at", pa.timestamp("us", tz="UTC")),
    ])
