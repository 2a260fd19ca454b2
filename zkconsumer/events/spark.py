"""The Spark sources' events: the streaming source (driver and executors) and the groups table.

Declared in :mod:`zkconsumer.events.spec`'s terms; :mod:`zkconsumer.events.catalogue` gathers every area's events and
the events page (``docs/events.md``) is made from them.
"""

from __future__ import annotations

from zkconsumer.events.connector import ZNODE_MALFORMED
from zkconsumer.events.spec import BOOL, INT, LIST, NUMBER, STR, also, declare, section
from zkconsumer.events.spec import Field as F

section("spark.stream")
section("spark.groups")

SPARK_SOURCE_STARTED = declare(
    "spark.source_started", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("membership", STR),
        F("subscription", STR),
        F("bootstrap", STR),
        F("starting", STR),
        F("max_offsets_per_trigger", INT),
        F("duration_ms", NUMBER),
    ),
    when="the driver's side is up (with `member`: registered and through its first rebalance)",
)

SPARK_INITIAL_OFFSET = declare(
    "spark.initial_offset", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("starting", STR),
        F("offsets", LIST, "with `offset`"),
    ),
    when="a new query's first positions (`startingOffsets`, else the group's offsets, else `auto.offset.reset`)",
)

SPARK_BATCH_PLANNED = declare(
    "spark.batch_planned", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("ranges", LIST),
        F("offsets", INT, "planned"),
        F("available", INT, "waiting in the partitions read"),
        F("limited", BOOL, "`maxOffsetsPerTrigger` cut it"),
        F("owned", INT, "partitions owned"),
        F("duration_ms", NUMBER),
    ),
    when="`latestOffset` planned a micro-batch (nothing is emitted while there is nothing new)",
)

SPARK_PARTITION_RESUMED = declare(
    "spark.partition_resumed", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("partitions", LIST, "with `position`, `committed`"),
    ),
    when="regained partitions begin at the group's committed offset, ahead of the source's position",
)

SPARK_PAST_END_SEEN = declare(
    "spark.past_end_seen", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("partitions", LIST, "with `position`, `log_end`"),
        F("confirm_ms", NUMBER),
    ),
    when="positions found beyond the true end of their log at a first look: the planning waits `confirm_ms` (3000) "
         "and looks again, within the same planning (Spark may plan once a run); `spark.offset_reset` follows for "
         "those still beyond it",
)

SPARK_OFFSET_RESET = declare(
    "spark.offset_reset", "warning",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("topic", STR),
        F("partition", INT),
        F("reason", STR, "`past_log_end`"),
        F("policy", STR, "`smallest`, `largest`"),
        F("old_offset", INT),
        F("new_offset", INT),
    ),
    when="a position, or the group's committed offset of a partition seen for the first time, beyond the true end of "
         "the log (the broker lost it, a topic recreated) at two looks 3 s apart: reset by `auto.offset.reset` as "
         "`fetcher.offset_reset` does; once per partition and position; the next commit writes the new offset",
)

SPARK_LOG_BEHIND = declare(
    "spark.log_behind", "warning",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("partitions", LIST, "with `position`, `log_end`"),
    ),
    when="a log ends before the source's position and its start is not known yet (`smallest`, the leader not "
         "answering): nothing read there, the position kept until it is",
)

SPARK_LOG_END_UNKNOWN = declare(
    "spark.log_end_unknown", "warning",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("partitions", LIST, "with `reason`"),
    ),
    when="the end (or the start) of these logs is not known: not read in this batch",
)

SPARK_WAITING_FOR_TOPICS = declare(
    "spark.waiting_for_topics", "warning",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("subscription", STR),
    ),
    when="no topic matches the filter yet (once, until one does)",
)

SPARK_PARTITIONS_PLANNED = declare(
    "spark.partitions_planned", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("tasks", INT),
        F("offsets", INT),
    ),
    when="a batch turned into Spark tasks, one per range (large ranges split)",
)

SPARK_OFFSETS_COMMITTED = declare(
    "spark.offsets_committed", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("reason", STR, "`processed`: at planning, the previous batch being done, `commit`: Spark's `commit`"),
        F("offsets", LIST, "with `offset`"),
        F("not_owned", LIST, "positions left to their owner"),
    ),
    when="offsets written to `/consumers/<g>/offsets`, only owned partitions and only forward",
)

SPARK_COMMIT_SKIPPED = declare(
    "spark.commit_skipped", "warning",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("offsets", LIST, "with `theirs`"),
    ),
    when="the group holds a higher offset someone else wrote: kept",
)

SPARK_ZOOKEEPER_UNAVAILABLE = declare(
    "spark.zookeeper_unavailable", "warning",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("action", STR, "`plan`, `commit`"),
    ),
    when="the ZooKeeper connection is down: no batch planned, nothing committed, until it is back",
)

also(
    ZNODE_MALFORMED, "warning",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("path", STR),
        F("problem", STR),
    ),
    when="an offset znode is not an offset: the partition is skipped (as a member, the connector never owns it)",
)

SPARK_SOURCE_STOPPED = declare(
    "spark.source_stopped", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("duration_ms", NUMBER),
    ),
    when="the query stopped: the member left its group",
)

SPARK_RANGE_READ = declare(
    "spark.range_read", "info",
    section="spark.stream",
    logger="zkconsumer.spark",
    fields=(
        F("topic", STR),
        F("partition", INT),
        F("from", STR),
        F("to", STR),
        F("rows", INT),
        F("last_offset", INT),
        F("stopped", STR, "`end`, or `log_end` when the log ended first"),
        F("duration_ms", NUMBER),
    ),
    when="an executor task read its range",
)

SPARK_GROUPS_PLANNED = declare(
    "spark.groups_planned", "info",
    section="spark.groups",
    logger="zkconsumer.spark.groups",
    fields=(
        F("zookeeper", STR),
        F("listed", INT, "groups under `/consumers`"),
        F("groups", INT, "matched by the `groups` regex"),
        F("input_partitions", INT),
        F("duration_ms", NUMBER),
    ),
    when="the driver listed the groups and split them over tasks",
)

also(
    ZNODE_MALFORMED, "warning",
    section="spark.groups",
    logger="zkconsumer.spark.groups",
    fields=(
        F("group", STR),
        F("path", STR),
        F("problem", STR),
    ),
    when="a registration, topic or offset znode of a group is not in Kafka's format: its value is null in the table "
         "(a malformed registration still counts in `members`)",
)

SPARK_LOG_SIZES_UNKNOWN = declare(
    "spark.log_sizes_unknown", "warning",
    section="spark.groups",
    logger="zkconsumer.spark.groups",
    fields=(
        F("partitions", INT, "how many"),
        F("reason", STR, "the first"),
    ),
    when="no broker told a task the log end of these partitions: their `log_size` and `lag` are null",
)

SPARK_GROUPS_READ = declare(
    "spark.groups_read", "info",
    section="spark.groups",
    logger="zkconsumer.spark.groups",
    fields=(
        F("groups", INT, "asked"),
        F("vanished", INT, "deleted since planning"),
        F("rows", INT),
        F("partitions", INT, "distinct topic-partitions asked of the brokers, once each"),
        F("malformed", INT),
        F("log_sizes_unknown", INT),
        F("duration_ms", NUMBER),
    ),
    when="a task read its groups",
)
