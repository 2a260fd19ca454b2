"""The connector's events: membership and session, the rebalance and its steps, offsets, the data path and the fetchers.

Declared in :mod:`zkconsumer.events.spec`'s terms; :mod:`zkconsumer.events.catalogue` gathers every area's events and
the events page (``docs/events.md``) is made from them.
"""

from __future__ import annotations

from zkconsumer.events.rebalance_steps import BY_NAME as STEP_BY_NAME
from zkconsumer.events.spec import BOOL, INT, LIST, NULL, NUMBER, OBJECT, STR, Event, declare, section
from zkconsumer.events.spec import Field as F

section("connector.membership")
section("connector.rebalance")
section("connector.rebalance_steps", columns=("step", "event", "level", "fields", "when"))
section("connector.offsets")
section("connector.data_path", columns=("event", "logger", "level", "fields", "when"))
section("connector.fetchers", context=("fetcher_id", "broker_id"))

CONSUMER_CONNECTED = declare(
    "consumer.connected", "info",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("zookeeper", STR),
        F("session_id", STR),
        F("metrics", STR | NULL, "the Prometheus URL when `metrics.http.port` is set, else null"),
    ),
    when="the connector's ZooKeeper session is up (nothing registered yet)",
)

CONSUMER_REGISTRATION_WAITING = declare(
    "consumer.registration_waiting", "warning",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("path", STR),
        F("owner_session", STR),
        F("max_wait_ms", NUMBER),
    ),
    when="our registration znode is still held by another session (a previous run with the same `consumer.id`); we "
         "wait for it to go",
)

CONSUMER_REGISTERED = declare(
    "consumer.registered", "info",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("path", STR),
        F("registration", STR, "the znode's JSON"),
        F("pattern", STR),
        F("session_id", STR),
        F("reregistered", BOOL),
        F("already_ours", BOOL),
    ),
    when="registered in `/consumers/<g>/ids`; `reregistered` after a session expiry",
)

ZOOKEEPER_SUSPENDED = declare(
    "zookeeper.suspended", "warning",
    section="connector.membership",
    logger="zkconsumer.connector",
    when="connection lost, session maybe still alive: nothing is rebalanced",
)

ZOOKEEPER_SESSION_LOST = declare(
    "zookeeper.session_lost", "warning",
    section="connector.membership",
    logger="zkconsumer.connector",
    when="the session expired: our ephemeral znodes are gone",
)

ZOOKEEPER_CONNECTED = declare(
    "zookeeper.connected", "info",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("session_id", STR),
        F("new_session", BOOL),
    ),
    when="(re)connected",
)

ZOOKEEPER_SUSPENDED_TOO_LONG = declare(
    "zookeeper.suspended_too_long", "warning",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("suspended_ms", NUMBER),
        F("chunks_dropped", INT),
        F("owned", LIST, "partitions, with `thread`"),
    ),
    when="still disconnected a third of `zookeeper.session.timeout.ms` after `zookeeper.suspended`: the server may "
         "have expired the session and another member may own our partitions, so fetching stops (queues dropped); "
         "ownership is kept. Back on the same session, a rebalance (cause `session_resumed`) fetches again; an "
         "expired one re-registers",
)

SESSION_EXPIRED = declare(
    "session.expired", "warning",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("dropped", LIST, "partitions, with `thread`"),
    ),
    when="fetching stopped and ownership forgotten (not committed, not released: the znodes are already gone); "
         "re-registration follows",
)

CONSUMER_UNFENCED = declare(
    "consumer.unfenced", "warning",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("reason", STR),
    ),
    when="the installed kazoo's connection cannot be watched, so streams hand out chunks without checking the "
         "session (see `stream.chunk_fenced`)",
)

CONSUMER_SHUTTING_DOWN = declare(
    "consumer.shutting_down", "info",
    section="connector.membership",
    logger="zkconsumer.connector",
    when="`shutdown()` begins",
)

CONSUMER_SHUTDOWN = declare(
    "consumer.shutdown", "info",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("duration_ms", NUMBER, "since `consumer.shutting_down`"),
    ),
    when="`shutdown()` ended",
)

CONSUMER_SHUTDOWN_ERROR = declare(
    "consumer.shutdown_error", "error",
    section="connector.membership",
    logger="zkconsumer.connector",
    fields=(
        F("error", STR),
    ),
    when="a step of shutdown failed; shutdown went on",
)

REBALANCE_TRIGGERED = declare(
    "rebalance.triggered", "info",
    section="connector.rebalance",
    logger="zkconsumer.connector",
    fields=(
        F("cause", STR, "`members_changed`, `topic_changed`, `topics_changed` or `brokers_appeared`"),
        F("members", LIST, "with `members_changed`: the consumer ids"),
        F("topic", STR, "with `topic_changed`"),
        F("added", LIST, "with `topics_changed`: topics matching the filter that appeared"),
        F("deleted", LIST, "with `topics_changed`: those that went"),
        F("brokers", LIST, "with `brokers_appeared`: the broker ids"),
    ),
    when="a watch fired (kazoo's thread); the rebalance thread runs it, coalescing triggers",
)

REBALANCE_STARTED = declare(
    "rebalance.started", "info",
    section="connector.rebalance",
    logger="zkconsumer.connector",
    fields=(
        F("cause", STR, "comma-separated causes: `initial`, `members_changed`, `topic_changed`, `topics_changed`, "
                        "`session_expired`, `session_resumed`, `brokers_appeared`, `retry_after_failure`, "
                        "`retry_after_error`"),
        F("strategy", STR),
    ),
    when="one `syncedRebalance` begins",
)


# The steps of an attempt (``rebalance.<step>``), one per row of :data:`~zkconsumer.events.rebalance_steps.STEPS`:
# the fields every step carries, then each step's own.
STEP_COMMON_FIELDS = (
    F("step", INT, "the step's number in the legacy flow"),
    F("attempt", INT),
    F("duration_ms", NUMBER),
    F("error", STR, "the exception's type and message, e.g. `RuntimeError: boom`, only when the step raised"),
)
#: when any step's event is emitted (the steps' table gives each step's meaning)
STEP_WHEN = ("each step of an attempt, in order, when it ends; a step that raised ends its attempt, whose "
             "`rebalance.attempt_failed` gives the same error as `reason`")
STEP_FIELDS: dict[str, tuple[F, ...]] = {
    "read_cluster": (F("brokers", LIST, "ids registered in ZooKeeper"),),
    "stop_fetchers": (F("chunks_dropped", INT, "fetched chunks thrown away, to be fetched again by the next owner"),),
    "commit_offsets": (
        F("auto_commit", BOOL),
        F("offsets", LIST, "with auto-commit: written to `offsets.storage` (with `offset`)"),
        F("store", STR, "with auto-commit: `zookeeper` or `kafka`; with dual commit the ZooKeeper part is its own "
                        "`offsets.committed` event (`store` `zookeeper`)"),
        F("batches", INT, "with auto-commit: ZooKeeper write requests the commit took"),
    ),
    "listener_before_release": (),
    "release": (
        F("released", LIST, "owner znodes deleted"),
        F("batches", INT, "write requests the release took"),
    ),
    "assign": (
        F("strategy", STR),
        F("members", LIST, "consumer ids"),
        F("assignment", LIST, "this consumer's share, with `thread`"),
        F("partitions", OBJECT, "topic -> partition count"),
    ),
    "fetch_offsets": (
        F("storage", STR, "`zookeeper` or `kafka`"),
        F("offsets", LIST, "where consumption resumes, `-1` = none yet"),
        F("skipped", LIST, "partitions left out: an offset znode or a Kafka offset that is malformed"),
        F("zookeeper_offsets", LIST, "with dual commit: ZooKeeper's answer"),
        F("kafka_offsets", LIST, "with dual commit: Kafka's answer (`offsets` is the larger of the two)"),
    ),
    "build_registry": (F("partitions", INT, "count of PartitionTopicInfo built"),),
    "claim": (
        F("claimed", LIST, "with `thread`"),
        F("already_ours", LIST),
        F("conflicts", LIST, "with `holder`: those found in the batch that met them, not necessarily every one"),
        F("batches", INT, "write requests the claim took, retries and the deletes undoing a failed claim included"),
        F("offsets_moved", LIST, "when the claim took partitions, with `offset`: those whose committed offset moved "
                                 "forward between the read of step 6 and the claim (an old owner committed, then "
                                 "released, in between), read again once ours; consumption resumes from the new "
                                 "offset, so what the old owner consumed is not delivered twice"),
    ),
    "listener_before_start": (),
    "start_fetchers": (
        F("partitions", INT, "count handed to the fetcher manager"),
        F("fetching", BOOL, "false for a member that owns without fetching: the Spark source's"),
    ),
}


def _step(name: str) -> Event:
    step = STEP_BY_NAME[name]
    return declare(step.event, "info", section="connector.rebalance_steps", logger="zkconsumer.connector",
                   fields=STEP_COMMON_FIELDS + STEP_FIELDS[name], when=step.meaning,
                   level_note="warning when the step raised")


REBALANCE_READ_CLUSTER = _step("read_cluster")
REBALANCE_STOP_FETCHERS = _step("stop_fetchers")
REBALANCE_COMMIT_OFFSETS = _step("commit_offsets")
REBALANCE_LISTENER_BEFORE_RELEASE = _step("listener_before_release")
REBALANCE_RELEASE = _step("release")
REBALANCE_ASSIGN = _step("assign")
REBALANCE_FETCH_OFFSETS = _step("fetch_offsets")
REBALANCE_BUILD_REGISTRY = _step("build_registry")
REBALANCE_CLAIM = _step("claim")
REBALANCE_LISTENER_BEFORE_START = _step("listener_before_start")
REBALANCE_START_FETCHERS = _step("start_fetchers")
#: the step events in STEPS' order
STEP_EVENTS: tuple[Event, ...] = (
    REBALANCE_READ_CLUSTER, REBALANCE_STOP_FETCHERS, REBALANCE_COMMIT_OFFSETS, REBALANCE_LISTENER_BEFORE_RELEASE,
    REBALANCE_RELEASE, REBALANCE_ASSIGN, REBALANCE_FETCH_OFFSETS, REBALANCE_BUILD_REGISTRY, REBALANCE_CLAIM,
    REBALANCE_LISTENER_BEFORE_START, REBALANCE_START_FETCHERS,
)


REBALANCE_NO_BROKERS = declare(
    "rebalance.no_brokers", "warning",
    section="connector.rebalance",
    logger="zkconsumer.connector",
    fields=(
        F("attempt", INT),
    ),
    when="step 1 found no broker: the attempt succeeds owning nothing and `/brokers/ids` is watched",
)

REBALANCE_ATTEMPT_FAILED = declare(
    "rebalance.attempt_failed", "warning",
    section="connector.rebalance",
    logger="zkconsumer.connector",
    fields=(
        F("attempt", INT),
        F("reason", STR, "`ownership conflict` when step 8 found partitions still claimed, `shutdown` when "
                         "shutdown() cut the attempt short, or the error that failed a step, as in its `error`; when "
                         "our registration was gone, the error's message alone"),
        F("backoff_ms", INT),
    ),
    when="fetchers were stopped and queues cleared; the next attempt follows after `backoff_ms`",
)

REBALANCE_COMPLETED = declare(
    "rebalance.completed", "info",
    section="connector.rebalance",
    logger="zkconsumer.connector",
    fields=(
        F("attempts", INT),
        F("duration_ms", NUMBER),
        F("owned", LIST, "partitions with `thread`"),
    ),
    when="the consumer owns and fetches its share",
)

REBALANCE_FAILED = declare(
    "rebalance.failed", "error",
    section="connector.rebalance",
    logger="zkconsumer.connector",
    fields=(
        F("attempts", INT),
        F("background", BOOL),
        F("duration_ms", NUMBER),
        F("failures_in_a_row", INT),
    ),
    when="`rebalance.max.retries` attempts failed; in `create_message_streams` this raises "
         "ConsumerRebalanceFailedException",
)

REBALANCE_RETRYING_AFTER_FAILURE = declare(
    "rebalance.retrying_after_failure", "error",
    section="connector.rebalance",
    logger="zkconsumer.connector",
    fields=(
        F("failures_in_a_row", INT),
    ),
    when="a background rebalance failed all its attempts; unlike Kafka (KAFKA-4228) the member keeps trying",
)

REBALANCE_ERROR = declare(
    "rebalance.error", "error",
    section="connector.rebalance",
    logger="zkconsumer.connector",
    fields=(
        F("error", STR),
    ),
    when="something unexpected outside an attempt (e.g. re-registration failed); retried after `rebalance.backoff.ms`",
)

OFFSETS_COMMITTED = declare(
    "offsets.committed", "info",
    section="connector.offsets",
    logger="zkconsumer.connector",
    fields=(
        F("reason", STR, "`auto`, `rebalance`, `shutdown`, `explicit`, `initial`"),
        F("store", STR, "`zookeeper` or `kafka`"),
        F("offsets", LIST, "with `offset`"),
        F("batches", INT, "write requests, for `kafka`, OffsetCommit attempts"),
    ),
    when="offsets written to that store (ZooKeeper: only changed ones; Kafka: every valid one, as the legacy "
         "consumer did); `initial` = the starting offsets of partitions the group never committed, written as soon "
         "as they are known (those the fetchers found meanwhile go together). With dual commit, one event per store, "
         "Kafka's first",
)

OFFSETS_COMMIT_SKIPPED = declare(
    "offsets.commit_skipped", "warning",
    section="connector.offsets",
    logger="zkconsumer.connector",
    fields=(
        F("reason", STR),
        F("store", STR),
        F("offsets", LIST, "with `theirs`"),
    ),
    when="not written: the store holds a higher offset someone else wrote meanwhile",
)

OFFSETS_COMMIT_FAILED = declare(
    "offsets.commit_failed", "warning",
    section="connector.offsets",
    logger="zkconsumer.connector",
    fields=(
        F("reason", STR),
        F("error", STR),
        F("store", STR, "and `offsets` (with `error`) when Kafka answered for some partitions and refused them"),
        # ? did not answer
        F("offsets", LIST),
    ),
    when="the commit (or the write of `initial` offsets) failed: nothing of those partitions was written anywhere "
         "(with dual commit ZooKeeper gets only what Kafka took); the next commit retries; an explicit commit also "
         "raises `OffsetsCommitFailedError`",
)

OFFSETS_MALFORMED = declare(
    "offsets.malformed", "warning",
    section="connector.offsets",
    logger="zkconsumer.connector",
    fields=(
        F("store", STR, "`kafka`"),
        F("topic", STR),
        F("partition", INT),
        F("problem", STR),
    ),
    when="the offset Kafka holds for the partition cannot be one (negative, not -1): the partition is left out, as "
         "for a malformed offset znode",
)

ZNODE_MALFORMED = declare(
    "znode.malformed", "warning",
    section="connector.offsets",
    logger="zkconsumer.connector",
    fields=(
        F("path", STR),
        F("problem", STR),
    ),
    when="a registration, topic or offset znode some other tool wrote is not in Kafka's format: that member, topic "
         "or partition is skipped and the znode left alone",
)

STREAM_OFFSET_GAP = declare(
    "stream.offset_gap", "warning",
    section="connector.data_path",
    logger="zkconsumer.stream",
    fields=(
        F("topic", STR),
        F("partition", INT),
        F("consumed_offset", INT),
        F("fetch_offset", INT),
    ),
    when="a chunk starts after the consumed offset (\"Consumer may lose data\")",
)

STREAM_END = declare(
    "stream.end", "info",
    section="connector.data_path",
    logger="zkconsumer.stream",
    fields=(
        F("stream", STR),
    ),
    when="the shutdown sentinel reached a stream",
)

STREAM_CHUNK_FENCED = declare(
    "stream.chunk_fenced", "warning",
    section="connector.data_path",
    logger="zkconsumer.stream",
    fields=(
        F("stream", STR),
        F("topic", STR),
        F("partition", INT),
        F("fetch_offset", INT),
        F("messages", INT),
        F("reason", STR, "`session_lost`, or `cancelled`: a rebalance cleared the stream or the connector shut down "
                         "meanwhile"),
        F("confirmed_age_ms", NUMBER, "since the server last confirmed the session, null if never"),
        F("waited_ms", NUMBER),
    ),
    when="a chunk dropped, none of it handed out: the server had not confirmed the member's session within half its "
         "timeout (a pause, a cut network) and then it was lost. Its messages are fetched again by the partition's "
         "owner. The count of these events is the count of fenced chunks",
)

STREAM_FENCE_WAITED = declare(
    "stream.fence_waited", "info",
    section="connector.data_path",
    logger="zkconsumer.stream",
    fields=(
        F("stream", STR),
        F("topic", STR),
        F("partition", INT),
        F("confirmed_age_ms", NUMBER),
        F("waited_ms", NUMBER),
    ),
    when="the session's confirmation was too old before a chunk; a fresh one came, and the chunk was handed out",
)

FETCHER_MANAGER_CONNECTIONS_STARTED = declare(
    "fetcher_manager.connections_started", "info",
    section="connector.fetchers",
    logger="zkconsumer.fetcher_manager",
    fields=(
        F("partitions", LIST, "\"topic-partition\" strings, all without leader for now"),
    ),
    when="step 9 of a rebalance hands over the new registry",
)

FETCHER_MANAGER_CONNECTIONS_STOPPED = declare(
    "fetcher_manager.connections_stopped", "info",
    section="connector.fetchers",
    logger="zkconsumer.fetcher_manager",
    fields=(
        F("fetchers", INT),
        F("duration_ms", NUMBER),
    ),
    when="step 2 (or shutdown) stopped the leader finder and every fetcher thread",
)

FETCHER_MANAGER_PARTITIONS_WITH_ERROR = declare(
    "fetcher_manager.partitions_with_error", "warning",
    section="connector.fetchers",
    logger="zkconsumer.fetcher_manager",
    fields=(
        F("partitions", LIST),
    ),
    when="partitions handed back for a new leader lookup",
)

FETCHER_MANAGER_RESTARTED = declare(
    "fetcher_manager.restarted", "warning",
    section="connector.fetchers",
    logger="zkconsumer.fetcher_manager",
    when="connections were started while already active (stopped first)",
)

FETCHER_MANAGER_IDLE_FETCHERS_STOPPED = declare(
    "fetcher_manager.idle_fetchers_stopped", "info",
    section="connector.fetchers",
    logger="zkconsumer.fetcher_manager",
    fields=(
        F("fetchers", LIST, "thread names"),
    ),
    when="fetcher threads left without partitions were shut down",
)

LEADER_FINDER_STARTED = declare(
    "leader_finder.started", "info",
    section="connector.fetchers",
    logger="zkconsumer.leader_finder",
    fields=(
        F("thread", STR, "on start"),
    ),
    when="the leader finder thread started (step 9 of a rebalance)",
)

LEADER_FINDER_STOPPED = declare(
    "leader_finder.stopped", "info",
    section="connector.fetchers",
    logger="zkconsumer.leader_finder",
    fields=(
        F("thread", STR, "on start"),
    ),
    when="the leader finder thread stopped (step 2, or shutdown)",
)

LEADER_FINDER_NO_BROKERS = declare(
    "leader_finder.no_brokers", "warning",
    section="connector.fetchers",
    logger="zkconsumer.leader_finder",
    fields=(
        F("partitions", LIST),
    ),
    when="no broker registered in `/brokers/ids`; retried after `refresh.leader.backoff.ms`",
)

LEADER_FINDER_LEADERS_FOUND = declare(
    "leader_finder.leaders_found", "info",
    section="connector.fetchers",
    logger="zkconsumer.leader_finder",
    fields=(
        F("partitions", LIST),
        F("leaders", OBJECT, "partition -> leader broker id"),
    ),
    when="leaders found through a Metadata request to the registered brokers",
)

LEADER_FINDER_NO_LEADER = declare(
    "leader_finder.no_leader", "debug",
    section="connector.fetchers",
    logger="zkconsumer.leader_finder",
    fields=(
        F("partitions", LIST),
    ),
    when="the metadata has no leader for these yet",
)

LEADER_FINDER_ERROR = declare(
    "leader_finder.error", "warning",
    section="connector.fetchers",
    logger="zkconsumer.leader_finder",
    fields=(
        F("stage", STR, "`zookeeper`, `metadata`, `add_fetcher`, `loop`"),
        F("error", STR),
        F("partitions", LIST),
    ),
    when="retried",
)

LEADER_FINDER_STOP_TIMED_OUT = declare(
    "leader_finder.stop_timed_out", "warning",
    section="connector.fetchers",
    logger="zkconsumer.leader_finder",
    fields=(
        F("waited_ms", NUMBER),
    ),
    when="stopped, the thread did not end within `zookeeper.session.timeout.ms` + `socket.timeout.ms` (+1 s); left "
         "running, it starts no fetcher any more",
)

FETCHER_STARTED = declare(
    "fetcher.started", "info",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("thread", STR),
        F("broker", STR, "on start: the address the client bootstraps from"),
    ),
    when="one thread per (leader broker, fetcher id)",
)

FETCHER_STOPPED = declare(
    "fetcher.stopped", "info",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("thread", STR),
        F("broker", STR, "on start"),
    ),
    when="one thread per (leader broker, fetcher id)",
)

FETCHER_PARTITIONS_ADDED = declare(
    "fetcher.partitions_added", "info",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("partitions", LIST),
        F("offsets", OBJECT, "on add: partition -> initial fetch offset, -1 when `auto.offset.reset` decides"),
    ),
    when="partitions handed to a fetcher thread, with the offsets it fetches them from",
)

FETCHER_PARTITIONS_REMOVED = declare(
    "fetcher.partitions_removed", "info",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("partitions", LIST),
        F("offsets", OBJECT, "on add"),
    ),
    when="partitions taken from a fetcher thread",
)

FETCHER_OFFSET_RESET = declare(
    "fetcher.offset_reset", "info",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("topic", STR),
        F("partition", INT),
        F("reason", STR, "`no_offset`, `out_of_range`, `past_log_end`"),
        F("policy", STR, "`smallest`, `largest`"),
        F("old_offset", INT),
        F("new_offset", INT),
    ),
    when="`auto.offset.reset` applied; `past_log_end`: the fetch position was beyond the true end of the log (a "
         "broker that answers such a fetch with nothing instead of OFFSET_OUT_OF_RANGE, as the embedded one), found "
         "once the partition got no message for 0.5 s, once per partition and position",
    level_note="warning for `out_of_range` and `past_log_end`",
)

FETCHER_PARTITION_ERROR = declare(
    "fetcher.partition_error", "warning",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("topic", STR),
        F("partition", INT),
        F("code", INT),
        F("error", STR),
    ),
    when="the partition goes back to the leader finder",
)

FETCHER_MESSAGE_TOO_LARGE = declare(
    "fetcher.message_too_large", "warning",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("topic", STR),
        F("partition", INT),
        F("offset", INT),
        F("size", INT),
        F("fetch_message_max_bytes", INT),
    ),
    when="the stream will raise MessageSizeTooLargeException at this offset",
)

FETCHER_CORRUPT_MESSAGE = declare(
    "fetcher.corrupt_message", "warning",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("topic", STR),
        F("partition", INT),
        F("error", STR),
    ),
    when="skipped, as Kafka did",
)

FETCHER_ERROR = declare(
    "fetcher.error", "warning",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("stage", STR, "`fetch`, `on_offset_reset`"),
        F("code", INT | STR, "librdkafka's, or the Python exception's name"),
        F("error", STR),
    ),
    when="a fetch or a callback failed; retried after `refresh.leader.backoff.ms`",
)

FETCHER_CHUNK_ENQUEUED = declare(
    "fetcher.chunk_enqueued", "debug",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("topic", STR),
        F("partition", INT),
        F("fetch_offset", INT),
        F("messages", INT),
    ),
    when="a chunk went into a stream's queue (blocking while it is full)",
)

FETCHER_STOP_TIMED_OUT = declare(
    "fetcher.stop_timed_out", "warning",
    section="connector.fetchers",
    logger="zkconsumer.fetcher",
    fields=(
        F("thread", STR),
        F("waited_ms", NUMBER),
    ),
    when="stopped, the thread did not end within `socket.timeout.ms` (+1 s); left running, it closes its client when "
         "it ends",
)
