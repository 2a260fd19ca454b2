"""The rows of the ``zkconsumer_groups`` table, from what the offset checker read, and the choice of groups.

Pure: no Spark, no server. The group's reading and its lag are the offset checker's (``read_group_offsets``,
``with_log_sizes``, ``PartitionOffsetRow.lag``), so a row of the table and a line of ``groups describe`` for the same
group and moment are the same numbers; this module only adds what a fleet-wide table needs on top: whether each
owner is alive, how many members the group has, and when it was read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from zkconsumer.tools.offset_checker import GroupOffsets, with_log_sizes
from zkconsumer.types import ConsumerThreadId, TopicPartition

#: the table's columns, in order (``group`` is a SQL keyword, hence the backquotes in the DDL)
SCHEMA_DDL = (
    "`group` string, topic string, partition int, offset long, log_size long, lag long, owner string, "
    "owner_alive boolean, members int, read_at timestamp"
)
COLUMNS = ("group", "topic", "partition", "offset", "log_size", "lag", "owner", "owner_alive", "members", "read_at")


@dataclass(frozen=True, slots=True)
class GroupTableRow:
    group: str
    topic: str
    partition: int
    offset: int | None  # None: never committed (or malformed, reported); -1: "no offset" written by a tool
    log_size: int | None  # None: no broker told us
    lag: int | None
    owner: str | None  # the owning thread id; None when nobody owns the partition
    owner_alive: bool | None  # the owner's consumer id is registered in /consumers/<g>/ids; None when unowned
    members: int  # consumer ids registered in the group when it was read
    read_at: datetime  # when the group's znodes were read (UTC)


def owner_consumer(owner: str) -> str:
    """The consumer id of an owner znode's thread id (``<consumer id>-<thread number>``)."""
    return ConsumerThreadId(owner).consumer


def table_rows(offsets: GroupOffsets, log_sizes: Mapping[TopicPartition, int], read_at: datetime,
               ) -> list[GroupTableRow]:
    """One row per partition of the group, lag as ``groups describe`` computes it."""
    registered = set(offsets.members)
    return [
        GroupTableRow(
            r.group, r.topic, r.partition, r.offset, r.log_size, r.lag, r.owner,
            None if r.owner is None else owner_consumer(r.owner) in registered, len(offsets.members), read_at,
        )
        for r in with_log_sizes(offsets, log_sizes).rows
    ]


def columns(rows: Sequence[GroupTableRow]) -> dict[str, list[object]]:
    """The rows column by column, in :data:`COLUMNS` order (what an Arrow record batch is built from)."""
    return {name: [getattr(row, name) for row in rows] for name in COLUMNS}


def distinct_partitions(groups: Iterable[GroupOffsets]) -> list[TopicPartition]:
    """Every topic-partition the groups have rows for, once: the brokers are asked once per partition, however
    many groups consume it."""
    return sorted({row.topic_partition for offsets in groups for row in offsets.rows})


def select_groups(names: Iterable[str], pattern: re.Pattern[str] | None) -> list[str]:
    """The groups whose whole name matches ``pattern`` (as Java's ``String.matches``, like the legacy topic
    filters), sorted; every group without one."""
    return sorted(n for n in names if pattern is None or pattern.fullmatch(n))


def split_groups(groups: Sequence[str], per_partition: int) -> list[tuple[str, ...]]:
    """Consecutive runs of at most ``per_partition`` groups, one per Spark task. Neighbours in name order tend to
    consume the same topics (``orders-eu``, ``orders-us``), so a task asks the brokers about fewer partitions."""
    return [tuple(groups[i:i + per_partition]) for i in range(0, len(groups), per_partition)]
