"""The connector's events: membership and session, the rebalance and its steps, offsets, the data path and the
fetchers."""

from __future__ import annotations

from zkconsumer.events import shared_fields as shared
from zkconsumer.events.rebalance_steps import BY_NAME as STEP_BY_NAME
from zkconsumer.events.spec import BOOL, INT, LIST, NULL, NUMBER, OBJECT, STR, Event, section
from zkconsumer.events.spec import Field as F

#: what the catalogue gathers from this area: its events, nothing else (its fields and sections stay here)
__all__ = [
    "CONSUMER_CONNECTED", "CONSUMER_REGISTRATION_WAITING", "CONSUMER_REGISTERED", "ZOOKEEPER_SUSPENDED",
    "ZOOKEEPER_SESSION_LOST", "ZOOKEEPER_CONNECTED", "ZOOKEEPER_SUSPENDED_TOO_LONG", "SESSION_EXPIRED",
    "CONSUMER_UNFENCED", "CONSUMER_SHUTTING_DOWN", "CONSUMER_SHUTDOWN", "CONSUMER_SHUTDOWN_ERROR",
    "REBALANCE_TRIGGERED", "REBALANCE_STARTED", "REBALANCE_READ_CLUSTER", "REBALANCE_STOP_FETCHERS",
    "REBALANCE_COMMIT_OFFSETS", "REBALANCE_LISTENER_BEFORE_RELEASE", "REBALANCE_RELEASE", "REBALANCE_ASSIGN",
    "REBALANCE_FETCH_OFFSETS", "REBALANCE_BUILD_REGISTRY", "REBALANCE_CLAIM", "REBALANCE_LISTENER_BEFORE_START",
    "REBALANCE_START_FETCHERS", "REBALANCE_NO_BROKERS", "REBALANCE_ATTEMPT_FAILED", "REBALANCE_COMPLETED",
    "REBALANCE_FAILED", "REBALANCE_RETRYING_AFTER_FAILURE", "REBALANCE_ERROR", "OFFSETS_COMMITTED",
    "OFFSETS_COMMIT_SKIPPED", "OFFSETS_COMMIT_FAILED", "OFFSETS_MALFORMED", "ZNODE_MALFORMED", "STREAM_OFFSET_GAP",
    "STREAM_END", "STREAM_CHUNK_FENCED", "STREAM_FENCE_WAITED", "FETCHER_MANAGER_CONNECTIONS_STARTED",
    "FETCHER_MANAGER_CONNECTIONS_STOPPED", "FETCHER_MANAGER_PARTITIONS_WITH_ERROR", "FETCHER_MANAGER_RESTARTED",
    "FETCHER_MANAGER_IDLE_FETCHERS_STOPPED", "LEADER_FINDER_STARTED", "LEADER_FINDER_STOPPED",
    "LEADER_FINDER_NO_BROKERS", "LEADER_FINDER_LEADERS_FOUND", "LEADER_FINDER_NO_LEADER", "LEADER_FINDER_ERROR",
    "LEADER_FINDER_STOP_TIMED_OUT", "FETCHER_STARTED", "FETCHER_STOPPED", "FETCHER_PARTITIONS_ADDED",
    "FETCHER_PARTITIONS_REMOVED", "FETCHER_OFFSET_RESET", "FETCHER_PARTITION_ERROR", "FETCHER_MESSAGE_TOO_LARGE",
    "FETCHER_CORRUPT_MESSAGE", "FETCHER_ERROR", "FETCHER_CHUNK_ENQUEUED", "FETCHER_STOP_TIMED_OUT",
]

_MEMBERSHIP = section("connector.membership", "zkconsumer.connector")
_REBALANCE = section("connector.rebalance", "zkconsumer.connector")
_STEPS = section("connector.rebalance_steps", "zkconsumer.connector",
    columns=("step", "event", "level", "fields", "when"))
_OFFSETS = section("connector.offsets", "zkconsumer.connector")
_DATA_PATH = section("connector.data_path", "zkconsumer.stream", columns=("event", "logger", "level", "fields", "when"))
_FETCHER_MANAGER = section("connector.fetchers", "zkconsumer.fetcher_manager", context=("fetcher_id", "broker_id"))
_LEADER_FINDER = _FETCHER_MANAGER.logged_by("zkconsumer.leader_finder")
_FETCHER = _FETCHER_MANAGER.logged_by("zkconsumer.fetcher")

CONSUMER_CONNECTED = _MEMBERSHIP.event("consumer.connected", "info",
    "the connector's ZooKeeper session is up (nothing registered yet)", shared.ZOOKEEPER, shared.SESSION_ID,
    F("metrics", STR | NULL, "the Prometheus URL when `metrics.http.port` is set, else null"))
CONSUMER_REGISTRATION_WAITING = _MEMBERSHIP.event("consumer.registration_waiting", "warning",
    "our registration znode is still held by another session (a previous run with the same `consumer.id`); we wait for "
    "it to go", shared.PATH, F("owner_session", STR), F("max_wait_ms", NUMBER))
CONSUMER_REGISTERED = _MEMBERSHIP.event("consumer.registered", "info",
    "registered in `/consumers/<g>/ids`; `reregistered` after a session expiry", shared.PATH,
    F("registration", STR, "the znode's JSON"), F("pattern", STR), shared.SESSION_ID, F("reregistered", BOOL),
    F("already_ours", BOOL))
ZOOKEEPER_SUSPENDED = _MEMBERSHIP.event("zookeeper.suspended", "warning",
    "connection lost, session maybe still alive: nothing is rebalanced")
ZOOKEEPER_SESSION_LOST = _MEMBERSHIP.event("zookeeper.session_lost", "warning",
    "the session expired: our ephemeral znodes are gone")
ZOOKEEPER_CONNECTED = _MEMBERSHIP.event("zookeeper.connected", "info",
    "(re)connected", shared.SESSION_ID, F("new_session", BOOL))
ZOOKEEPER_SUSPENDED_TOO_LONG = _MEMBERSHIP.event("zookeeper.suspended_too_long", "warning",
    "still disconnected a third of `zookeeper.session.timeout.ms` after `zookeeper.suspended`: the server may have "
    "expired the session and another member may own our partitions, so fetching stops (queues dropped); ownership is "
    "kept. Back on the same session, a rebalance (cause `session_resumed`) fetches again; an expired one re-registers",
    F("suspended_ms", NUMBER), F("chunks_dropped", INT), F("owned", LIST, "partitions, with `thread`"))
SESSION_EXPIRED = _MEMBERSHIP.event("session.expired", "warning",
    "fetching stopped and ownership forgotten (not committed, not released: the znodes are already gone); "
    "re-registration follows", F("dropped", LIST, "partitions, with `thread`"))
CONSUMER_UNFENCED = _MEMBERSHIP.event("consumer.unfenced", "warning",
    "the installed kazoo's connection cannot be watched, so streams hand out chunks without checking the session (see "
    "`stream.chunk_fenced`)", shared.REASON)
CONSUMER_SHUTTING_DOWN = _MEMBERSHIP.event("consumer.shutting_down", "info", "`shutdown()` begins")
CONSUMER_SHUTDOWN = _MEMBERSHIP.event("consumer.shutdown", "info",
    "`shutdown()` ended", shared.DURATION_SINCE_SHUTTING_DOWN)
CONSUMER_SHUTDOWN_ERROR = _MEMBERSHIP.event("consumer.shutdown_error", "error",
    "a step of shutdown failed; shutdown went on", shared.ERROR)
REBALANCE_TRIGGERED = _REBALANCE.event("rebalance.triggered", "info",
    "a watch fired (kazoo's thread); the rebalance thread runs it, coalescing triggers",
    F("cause", STR, "`members_changed`, `topic_changed`, `topics_changed` or `brokers_appeared`"),
    F("members", LIST, "with `members_changed`: the consumer ids"), F("topic", STR, "with `topic_changed`"),
    F("added", LIST, "with `topics_changed`: topics matching the filter that appeared"),
    F("deleted", LIST, "with `topics_changed`: those that went"),
    F("brokers", LIST, "with `brokers_appeared`: the broker ids"))
REBALANCE_STARTED = _REBALANCE.event("rebalance.started", "info",
    "one `syncedRebalance` begins",
    F("cause", STR, "comma-separated causes: `initial`, `members_changed`, `topic_changed`, `topics_changed`, "
        "`session_expired`, `session_resumed`, `brokers_appeared`, `retry_after_failure`, `retry_after_error`"),
    shared.STRATEGY)


# The steps of an attempt (``rebalance.<step>``), one per row of :data:`~zkconsumer.events.rebalance_steps.STEPS`:
# the fields every step carries, then each step's own.
STEP_COMMON_FIELDS = (F("step", INT, "the step's number in the legacy flow"), shared.ATTEMPT, shared.DURATION_MS,
    F("error", STR, "the exception's type and message, e.g. `RuntimeError: boom`, only when the step raised"))
#: when any step's event is emitted (the steps' table gives each step's meaning)
STEP_WHEN = ("each step of an attempt, in order, when it ends; a step that raised ends its attempt, whose "
             "`rebalance.attempt_failed` gives the same error as `reason`")
STEP_FIELDS: dict[str, tuple[F, ...]] = {
    "read_cluster": (F("brokers", LIST, "ids registered in ZooKeeper"),),
    "stop_fetchers": (F("chunks_dropped", INT, "fetched chunks thrown away, to be fetched again by the next owner"),),
    "commit_offsets": (
        shared.AUTO_COMMIT,
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
        shared.STRATEGY,
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
    return _STEPS.event(step.event, "info", step.meaning, *STEP_COMMON_FIELDS, *STEP_FIELDS[name],
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


REBALANCE_NO_BROKERS = _REBALANCE.event("rebalance.no_brokers", "warning",
    "step 1 found no broker: the attempt succeeds owning nothing and `/brokers/ids` is watched", shared.ATTEMPT)
REBALANCE_ATTEMPT_FAILED = _REBALANCE.event("rebalance.attempt_failed", "warning",
    "fetchers were stopped and queues cleared; the next attempt follows after `backoff_ms`", shared.ATTEMPT,
    F("reason", STR, "`ownership conflict` when step 8 found partitions still claimed, `shutdown` when shutdown() cut "
        "the attempt short, or the error that failed a step, as in its `error`; when our registration was gone, the "
        "error's message alone"), F("backoff_ms", INT))
REBALANCE_COMPLETED = _REBALANCE.event("rebalance.completed", "info",
    "the consumer owns and fetches its share", shared.ATTEMPTS, shared.DURATION_MS,
    F("owned", LIST, "partitions with `thread`"))
REBALANCE_FAILED = _REBALANCE.event("rebalance.failed", "error",
    "`rebalance.max.retries` attempts failed; in `create_message_streams` this raises ConsumerRebalanceFailedException",
    shared.ATTEMPTS, F("background", BOOL), shared.DURATION_MS, shared.FAILURES_IN_A_ROW)
REBALANCE_RETRYING_AFTER_FAILURE = _REBALANCE.event("rebalance.retrying_after_failure", "error",
    "a background rebalance failed all its attempts; unlike Kafka (KAFKA-4228) the member keeps trying",
    shared.FAILURES_IN_A_ROW)
REBALANCE_ERROR = _REBALANCE.event("rebalance.error", "error",
    "something unexpected outside an attempt (e.g. re-registration failed); retried after `rebalance.backoff.ms`",
    shared.ERROR)
OFFSETS_COMMITTED = _OFFSETS.event("offsets.committed", "info",
    "offsets written to that store (ZooKeeper: only changed ones; Kafka: every valid one, as the legacy consumer did); "
    "`initial` = the starting offsets of partitions the group never committed, written as soon as they are known "
    "(those the fetchers found meanwhile go together). With dual commit, one event per store, Kafka's first",
    F("reason", STR, "`auto`, `rebalance`, `shutdown`, `explicit`, `initial`"),
    F("store", STR, "`zookeeper` or `kafka`"), shared.OFFSETS_WITH_OFFSET,
    F("batches", INT, "write requests, for `kafka`, OffsetCommit attempts"))
OFFSETS_COMMIT_SKIPPED = _OFFSETS.event("offsets.commit_skipped", "warning",
    "not written: the store holds a higher offset someone else wrote meanwhile", shared.REASON, F("store", STR),
    shared.OFFSETS_WITH_THEIRS)
OFFSETS_COMMIT_FAILED = _OFFSETS.event("offsets.commit_failed", "warning",
    "the commit (or the write of `initial` offsets) failed: nothing of those partitions was written anywhere (with "
    "dual commit ZooKeeper gets only what Kafka took); the next commit retries; an explicit commit also raises "
    "`OffsetsCommitFailedError`", shared.REASON, shared.ERROR,
    F("store", STR, "and `offsets` (with `error`) when Kafka answered for some partitions and refused them"),
    F("offsets", LIST))
OFFSETS_MALFORMED = _OFFSETS.event("offsets.malformed", "warning",
    "the offset Kafka holds for the partition cannot be one (negative, not -1): the partition is left out, as for a "
    "malformed offset znode", shared.STORE_KAFKA, shared.TOPIC, shared.PARTITION, shared.PROBLEM)
ZNODE_MALFORMED = _OFFSETS.event("znode.malformed", "warning",
    "a registration, topic or offset znode some other tool wrote is not in Kafka's format: that member, topic or "
    "partition is skipped and the znode left alone", shared.PATH, shared.PROBLEM)
STREAM_OFFSET_GAP = _DATA_PATH.event("stream.offset_gap", "warning",
    'a chunk starts after the consumed offset ("Consumer may lose data")', shared.TOPIC, shared.PARTITION,
    F("consumed_offset", INT), shared.FETCH_OFFSET)
STREAM_END = _DATA_PATH.event("stream.end", "info", "the shutdown sentinel reached a stream", shared.STREAM)
STREAM_CHUNK_FENCED = _DATA_PATH.event("stream.chunk_fenced", "warning",
    "a chunk dropped, none of it handed out, or the rest of the chunk being handed out (from `fetch_offset` on): the "
    "server had not confirmed the member's session within half its timeout (a pause, a cut network) and then it was "
    "lost. Its messages are fetched again by the partition's owner. The count of these events is the count of fenced "
    "chunks", shared.STREAM, shared.TOPIC, shared.PARTITION, shared.FETCH_OFFSET,
    shared.MESSAGES,
    F("reason", STR, "`session_lost`, or `cancelled`: a rebalance cleared the stream or the connector shut down "
        "meanwhile"), F("confirmed_age_ms", NUMBER, "since the server last confirmed the session, null if never"),
    shared.WAITED_MS)
STREAM_FENCE_WAITED = _DATA_PATH.event("stream.fence_waited", "info",
    "the session's confirmation was too old before a chunk, or in the middle of one; a fresh one came, and the chunk "
    "was handed out",
    shared.STREAM, shared.TOPIC, shared.PARTITION, F("confirmed_age_ms", NUMBER), shared.WAITED_MS)
FETCHER_MANAGER_CONNECTIONS_STARTED = _FETCHER_MANAGER.event("fetcher_manager.connections_started", "info",
    "step 9 of a rebalance hands over the new registry",
    F("partitions", LIST, '"topic-partition" strings, all without leader for now'))
FETCHER_MANAGER_CONNECTIONS_STOPPED = _FETCHER_MANAGER.event("fetcher_manager.connections_stopped", "info",
    "step 2 (or shutdown) stopped the leader finder and every fetcher thread", F("fetchers", INT), shared.DURATION_MS)
FETCHER_MANAGER_PARTITIONS_WITH_ERROR = _FETCHER_MANAGER.event("fetcher_manager.partitions_with_error", "warning",
    "partitions handed back for a new leader lookup", shared.PARTITIONS)
FETCHER_MANAGER_RESTARTED = _FETCHER_MANAGER.event("fetcher_manager.restarted", "warning",
    "connections were started while already active (stopped first)")
FETCHER_MANAGER_IDLE_FETCHERS_STOPPED = _FETCHER_MANAGER.event("fetcher_manager.idle_fetchers_stopped", "info",
    "fetcher threads left without partitions were shut down", F("fetchers", LIST, "thread names"))
LEADER_FINDER_STARTED = _LEADER_FINDER.event("leader_finder.started", "info",
    "the leader finder thread started (step 9 of a rebalance)", shared.THREAD_ON_START)
LEADER_FINDER_STOPPED = _LEADER_FINDER.event("leader_finder.stopped", "info",
    "the leader finder thread stopped (step 2, or shutdown)", shared.THREAD_ON_START)
LEADER_FINDER_NO_BROKERS = _LEADER_FINDER.event("leader_finder.no_brokers", "warning",
    "no broker registered in `/brokers/ids`; retried after `refresh.leader.backoff.ms`", shared.PARTITIONS)
LEADER_FINDER_LEADERS_FOUND = _LEADER_FINDER.event("leader_finder.leaders_found", "info",
    "leaders found through a Metadata request to the registered brokers", shared.PARTITIONS,
    F("leaders", OBJECT, "partition -> leader broker id"))
LEADER_FINDER_NO_LEADER = _LEADER_FINDER.event("leader_finder.no_leader", "debug",
    "the metadata has no leader for these yet", shared.PARTITIONS)
LEADER_FINDER_ERROR = _LEADER_FINDER.event("leader_finder.error", "warning",
    "retried", F("stage", STR, "`zookeeper`, `metadata`, `add_fetcher`, `loop`"), shared.ERROR, shared.PARTITIONS)
LEADER_FINDER_STOP_TIMED_OUT = _LEADER_FINDER.event("leader_finder.stop_timed_out", "warning",
    "stopped and waited for (at shutdown), the thread did not end within `zookeeper.session.timeout.ms` + "
    "`socket.timeout.ms` (+1 s); left running, it starts no fetcher any more (a rebalance does not wait for the "
    "thread)", shared.WAITED_MS)
FETCHER_STARTED = _FETCHER.event("fetcher.started", "info",
    "one thread per (leader broker, fetcher id)", shared.THREAD,
    F("broker", STR, "on start: the address the client bootstraps from"))
FETCHER_STOPPED = _FETCHER.event("fetcher.stopped", "info",
    "one thread per (leader broker, fetcher id)", shared.THREAD, F("broker", STR, "on start"))
FETCHER_PARTITIONS_ADDED = _FETCHER.event("fetcher.partitions_added", "info",
    "partitions handed to a fetcher thread, with the offsets it fetches them from", shared.PARTITIONS,
    F("offsets", OBJECT, "on add: partition -> initial fetch offset, -1 when `auto.offset.reset` decides"))
FETCHER_PARTITIONS_REMOVED = _FETCHER.event("fetcher.partitions_removed", "info",
    "partitions taken from a fetcher thread", shared.PARTITIONS, F("offsets", OBJECT, "on add"))
FETCHER_OFFSET_RESET = _FETCHER.event("fetcher.offset_reset", "info",
    "`auto.offset.reset` applied; `past_log_end`: the fetch position was beyond the true end of the log (a broker that "
    "answers such a fetch with nothing instead of OFFSET_OUT_OF_RANGE, as the embedded one), found once the partition "
    "got no message for 0.5 s, once per partition and position", shared.TOPIC, shared.PARTITION,
    F("reason", STR, "`no_offset`, `out_of_range`, `past_log_end`"), shared.POLICY, shared.OLD_OFFSET,
    shared.NEW_OFFSET, level_note="warning for `out_of_range` and `past_log_end`")
FETCHER_PARTITION_ERROR = _FETCHER.event("fetcher.partition_error", "warning",
    "the partition goes back to the leader finder", shared.TOPIC, shared.PARTITION, F("code", INT), shared.ERROR)
FETCHER_MESSAGE_TOO_LARGE = _FETCHER.event("fetcher.message_too_large", "warning",
    "the stream will raise MessageSizeTooLargeException at this offset", shared.TOPIC, shared.PARTITION,
    F("offset", INT), F("size", INT), F("fetch_message_max_bytes", INT))
FETCHER_CORRUPT_MESSAGE = _FETCHER.event("fetcher.corrupt_message", "warning",
    "skipped, as Kafka did", shared.TOPIC, shared.PARTITION, shared.ERROR)
FETCHER_ERROR = _FETCHER.event("fetcher.error", "warning",
    "a fetch or a callback failed; retried after `refresh.leader.backoff.ms`",
    F("stage", STR, "`fetch`, `on_offset_reset`"), F("code", INT | STR, "librdkafka's, or the Python exception's name"),
    shared.ERROR)
FETCHER_CHUNK_ENQUEUED = _FETCHER.event("fetcher.chunk_enqueued", "debug",
    "a chunk went into a stream's queue (blocking while it is full)", shared.TOPIC, shared.PARTITION,
    shared.FETCH_OFFSET, shared.MESSAGES)
FETCHER_STOP_TIMED_OUT = _FETCHER.event("fetcher.stop_timed_out", "warning",
    "stopped, the thread did not end within `socket.timeout.ms` (+1 s); left running, it closes its client when it "
    "ends", shared.THREAD, shared.WAITED_MS)
