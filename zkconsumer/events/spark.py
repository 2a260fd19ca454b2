"""The Spark sources' events: the streaming source (driver and executors) and the groups table."""

from __future__ import annotations

from zkconsumer.events import shared_fields as shared
from zkconsumer.events.connector import ZNODE_MALFORMED
from zkconsumer.events.spec import BOOL, INT, LIST, NUMBER, STR, section
from zkconsumer.events.spec import Field as F

#: what the catalogue gathers from this area: its events, nothing else (its fields and sections stay here)
__all__ = [
    "SPARK_SOURCE_STARTED", "SPARK_INITIAL_OFFSET", "SPARK_BATCH_PLANNED", "SPARK_PARTITION_RESUMED",
    "SPARK_PAST_END_SEEN", "SPARK_OFFSET_RESET", "SPARK_LOG_BEHIND", "SPARK_LOG_END_UNKNOWN",
    "SPARK_WAITING_FOR_TOPICS", "SPARK_PARTITIONS_PLANNED", "SPARK_OFFSETS_COMMITTED", "SPARK_COMMIT_SKIPPED",
    "SPARK_ZOOKEEPER_UNAVAILABLE", "SPARK_SOURCE_STOPPED", "SPARK_RANGE_READ", "SPARK_GROUPS_PLANNED",
    "SPARK_LOG_SIZES_UNKNOWN", "SPARK_GROUPS_READ",
]

_STREAM = section("spark.stream", "zkconsumer.spark")
_GROUPS = section("spark.groups", "zkconsumer.spark.groups")

SPARK_SOURCE_STARTED = _STREAM.event("spark.source_started", "info",
    "the driver's side is up (with `member`: registered and through its first rebalance)", F("membership", STR),
    shared.SUBSCRIPTION, shared.BOOTSTRAP, shared.STARTING, F("max_offsets_per_trigger", INT), shared.DURATION_MS)
SPARK_INITIAL_OFFSET = _STREAM.event("spark.initial_offset", "info",
    "a new query's first positions (`startingOffsets`, else the group's offsets, else `auto.offset.reset`)",
    shared.STARTING, shared.OFFSETS_WITH_OFFSET)
SPARK_BATCH_PLANNED = _STREAM.event("spark.batch_planned", "info",
    "`latestOffset` planned a micro-batch (nothing is emitted while there is nothing new)", F("ranges", LIST),
    F("offsets", INT, "planned"), F("available", INT, "waiting in the partitions read"),
    F("limited", BOOL, "`maxOffsetsPerTrigger` cut it"), F("owned", INT, "partitions owned"), shared.DURATION_MS)
SPARK_PARTITION_RESUMED = _STREAM.event("spark.partition_resumed", "info",
    "regained partitions begin at the group's committed offset, ahead of the source's position",
    F("partitions", LIST, "with `position`, `committed`"))
SPARK_PAST_END_SEEN = _STREAM.event("spark.past_end_seen", "info",
    "positions found beyond the true end of their log at a first look: the planning waits `confirm_ms` (3000) and "
    "looks again, within the same planning (Spark may plan once a run); `spark.offset_reset` follows for those still "
    "beyond it", shared.PARTITIONS_PAST_END, F("confirm_ms", NUMBER))
SPARK_OFFSET_RESET = _STREAM.event("spark.offset_reset", "warning",
    "a position, or the group's committed offset of a partition seen for the first time, beyond the true end of the "
    "log (the broker lost it, a topic recreated) at two looks 3 s apart: reset by `auto.offset.reset` as "
    "`fetcher.offset_reset` does; once per partition and position; the next commit writes the new offset", shared.TOPIC,
    shared.PARTITION, F("reason", STR, "`past_log_end`"), shared.POLICY, shared.OLD_OFFSET, shared.NEW_OFFSET)
SPARK_LOG_BEHIND = _STREAM.event("spark.log_behind", "warning",
    "a log ends before the source's position and its start is not known yet (`smallest`, the leader not answering): "
    "nothing read there, the position kept until it is", shared.PARTITIONS_PAST_END)
SPARK_LOG_END_UNKNOWN = _STREAM.event("spark.log_end_unknown", "warning",
    "the end (or the start) of these logs is not known: not read in this batch", F("partitions", LIST, "with `reason`"))
SPARK_WAITING_FOR_TOPICS = _STREAM.event("spark.waiting_for_topics", "warning",
    "no topic matches the filter yet (once, until one does)", shared.SUBSCRIPTION)
SPARK_PARTITIONS_PLANNED = _STREAM.event("spark.partitions_planned", "info",
    "a batch turned into Spark tasks, one per range (large ranges split)", F("tasks", INT), F("offsets", INT))
SPARK_OFFSETS_COMMITTED = _STREAM.event("spark.offsets_committed", "info",
    "offsets written to `/consumers/<g>/offsets`, only owned partitions and only forward",
    F("reason", STR, "`processed`: at planning, the previous batch being done, `commit`: Spark's `commit`"),
    shared.OFFSETS_WITH_OFFSET, F("not_owned", LIST, "positions left to their owner"))
SPARK_COMMIT_SKIPPED = _STREAM.event("spark.commit_skipped", "warning",
    "the group holds a higher offset someone else wrote: kept", shared.OFFSETS_WITH_THEIRS)
SPARK_ZOOKEEPER_UNAVAILABLE = _STREAM.event("spark.zookeeper_unavailable", "warning",
    "the ZooKeeper connection is down: no batch planned, nothing committed, until it is back",
    F("action", STR, "`plan`, `commit`"))
_STREAM.also(ZNODE_MALFORMED,
    "an offset znode is not an offset: the partition is skipped (as a member, the connector never owns it)",
    shared.PATH, shared.PROBLEM)
SPARK_SOURCE_STOPPED = _STREAM.event("spark.source_stopped", "info",
    "the query stopped: the member left its group", shared.DURATION_MS)
SPARK_RANGE_READ = _STREAM.event("spark.range_read", "info",
    "an executor task read its range", shared.TOPIC, shared.PARTITION, shared.FROM, F("to", STR), shared.ROWS,
    F("last_offset", INT), F("stopped", STR, "`end`, or `log_end` when the log ended first"), shared.DURATION_MS)
SPARK_GROUPS_PLANNED = _GROUPS.event("spark.groups_planned", "info",
    "the driver listed the groups and split them over tasks", shared.ZOOKEEPER,
    F("listed", INT, "groups under `/consumers`"), F("groups", INT, "matched by the `groups` regex"),
    F("input_partitions", INT), shared.DURATION_MS)
_GROUPS.also(ZNODE_MALFORMED,
    "a registration, topic or offset znode of a group is not in Kafka's format: its value is null in the table (a "
    "malformed registration still counts in `members`)", shared.GROUP, shared.PATH, shared.PROBLEM)
SPARK_LOG_SIZES_UNKNOWN = _GROUPS.event("spark.log_sizes_unknown", "warning",
    "no broker told a task the log end of these partitions: their `log_size` and `lag` are null",
    F("partitions", INT, "how many"), F("reason", STR, "the first"))
SPARK_GROUPS_READ = _GROUPS.event("spark.groups_read", "info",
    "a task read its groups", F("groups", INT, "asked"), F("vanished", INT, "deleted since planning"), shared.ROWS,
    F("partitions", INT, "distinct topic-partitions asked of the brokers, once each"), F("malformed", INT),
    F("log_sizes_unknown", INT), shared.DURATION_MS)
