"""The migration comparison's events: the modern member's (in the legacy steps' words), the runner's markers
and its own."""

from __future__ import annotations

from zkconsumer.events import shared_fields as shared
from zkconsumer.events.connector import (
    CONSUMER_SHUTDOWN,
    CONSUMER_SHUTTING_DOWN,
    OFFSETS_COMMIT_FAILED,
    OFFSETS_COMMITTED,
    REBALANCE_ASSIGN,
    REBALANCE_COMMIT_OFFSETS,
    REBALANCE_COMPLETED,
    REBALANCE_LISTENER_BEFORE_RELEASE,
    REBALANCE_RELEASE,
    REBALANCE_START_FETCHERS,
    REBALANCE_STARTED,
    REBALANCE_STOP_FETCHERS,
    SESSION_EXPIRED,
)
from zkconsumer.events.spec import BOOL, INT, LIST, NUMBER, OBJECT, STR, section
from zkconsumer.events.spec import Field as F

#: what the catalogue gathers from this area: its events, nothing else (its fields and sections stay here)
__all__ = [
    "CONSUMER_SUBSCRIBED", "CONSUMER_GROUP_PROTOCOL_UNSUPPORTED", "CONSUMER_FATAL_ERROR", "APPLICATION_FAILED",
    "DEMO_MEMBER_DIED", "DEMO_NOT_SETTLED", "DEMO_DRAINING", "DEMO_MEMBER_STOPPING", "MIGRATION_PROTOCOL_STARTED",
    "MIGRATION_SCENE_SETTLED", "MIGRATION_MEMBER_DIED", "MIGRATION_DRAINED", "DEMO_CUTOVER", "DEMO_OFFSETS_TRANSLATED",
    "DEMO_SERVER_RESTARTED",
]

_MODERN_MEMBER = section("migration.modern_member", "zkconsumer.migration.member")
_MARKERS = section("migration.markers", "zkconsumer.migration", columns=("event", "fields", "when"),
    context=("protocol",))
_RUNNER = section("migration.runner", "zkconsumer.migration")

#: what the modern member and a command member both carry, in the same words
_DROPPED, _STEP_4 = F("dropped", LIST, "partitions"), F("step", INT, "4")
_ONE_ATTEMPT, _REBALANCING = F("attempts", INT, "1"), F("protocol", STR, "`eager` or `cooperative`")
#: the protocol of a modern member that librdkafka or its coordinator stopped
_STOPPED_PROTOCOL = F("group_protocol", STR, "the member's: `consumer` (KIP-848) where this happens")

CONSUMER_SUBSCRIBED = _MODERN_MEMBER.event("consumer.subscribed", "info",
    "`subscribe()` was called", shared.TOPIC,
    F("strategy", STR, "`range`, `roundrobin`, `cooperative-sticky`, under KIP-848 the server assignor, `uniform` or "
        "`range`"), _REBALANCING, F("group_protocol", STR, "`classic` or `consumer`"))
CONSUMER_GROUP_PROTOCOL_UNSUPPORTED = _MODERN_MEMBER.event("consumer.group_protocol_unsupported", "error",
    "the coordinator does not run the member's group protocol (KIP-848 without ConsumerGroupHeartbeat); the member "
    "exits with status 3 and the comparison stops that protocol", _STOPPED_PROTOCOL, shared.BOOTSTRAP,
    F("reason", STR, "librdkafka's log line"))
CONSUMER_FATAL_ERROR = _MODERN_MEMBER.event("consumer.fatal_error", "error",
    "librdkafka raised a fatal error (under KIP-848, the coordinator answered a ConsumerGroupHeartbeat with an error "
    "it cannot recover from: GROUP_ID_NOT_FOUND, an unsupported assignor, a group at its maximum size...); the "
    "consumer can do nothing more, so the member exits with status 4 and the run reports it as a member that died",
    _STOPPED_PROTOCOL, shared.BOOTSTRAP, F("code", STR, "librdkafka's error name"),
    F("reason", STR, "librdkafka's message"))
APPLICATION_FAILED = _MODERN_MEMBER.event("application.failed", "error",
    "the user's application (`--app`, zkconsumer.members.application), run by a legacy or a modern member, raised on a "
    "message or in a hook", F("topic", STR, "a message's"), F("partition", INT, "a message's"),
    F("offset", INT, "a message's"),
    F("attempt", INT, "1 to 3: the member calls the application again with the same message"),
    F("gave_up", BOOL, "the last attempt failed too: the message is not recorded as delivered"),
    F("hook", STR, "`on_revoke` or `on_assign`, when a hook raised (no message fields then)"),
    shared.ERROR_TYPE_AND_MESSAGE)
_MODERN_MEMBER.also(REBALANCE_STARTED,
    "the first callback of a rebalance", F("cause", STR, "`revoke`, `assign` or `lost`: the callback that began it"),
    shared.STRATEGY)
_MODERN_MEMBER.also(REBALANCE_STOP_FETCHERS,
    "eager only, in `on_revoke`: everything the member fetched stops", shared.STEP_2, F("chunks_dropped", INT, "0"),
    shared.DURATION_MS)
_MODERN_MEMBER.also(REBALANCE_COMMIT_OFFSETS,
    "`on_revoke` commits synchronously what was delivered, before giving the partitions up", shared.STEP_2,
    shared.AUTO_COMMIT, shared.STORE_KAFKA, shared.DURATION_MS,
    F("note", STR, "why nothing was committed, when nothing was"))
_MODERN_MEMBER.also(REBALANCE_LISTENER_BEFORE_RELEASE,
    "only with `--revoke-ms` (the application's cost of giving partitions up, `zkconsumer.members.revoke_cost`): in "
    "`on_revoke`, after the commit and before the release; spent only when `revoked` is not empty and the member is "
    "not leaving. The comparison counts every partition the member fetched as paused while it lasts (`poll()` delivers "
    "nothing meanwhile), `kept` resuming at its end. A legacy member with `--revoke-ms` spends it in its rebalance "
    "listener: the connector's step 3 above, whose duration it is", F("step", INT, "3"), F("revoke_ms", NUMBER),
    F("spent", BOOL, "whether the cost was spent"),
    F("revoked", LIST, "and `kept` (partitions, with `thread`: what it gives up, what it goes on fetching afterwards, "
        "`[]` when eager)"), shared.DURATION_MS, F("kept", LIST))
_MODERN_MEMBER.also(REBALANCE_RELEASE,
    "`on_revoke`: `unassign()` (eager: everything) or `incremental_unassign()` (cooperative: only what moves)",
    _STEP_4, F("released", LIST, "partitions, with `thread`"), F("batches", INT), shared.DURATION_MS)
_MODERN_MEMBER.also(SESSION_EXPIRED,
    "`on_lost`: the coordinator gave the partitions away without us", _DROPPED)
_MODERN_MEMBER.also(REBALANCE_ASSIGN,
    "`on_assign`", F("step", INT, "5"), shared.STRATEGY,
    F("assignment", LIST, "the partitions `on_assign` added, with `thread`"),
    F("members", LIST, "`[]`: a modern member does not see the others"), F("partitions", OBJECT, "`{}`"),
    shared.DURATION_MS)
_MODERN_MEMBER.also(REBALANCE_START_FETCHERS,
    "after `assign()` / `incremental_assign()`", F("step", INT, "9"),
    F("partitions", INT, "how many the member now fetches"), F("fetching", BOOL, "true"), shared.DURATION_MS)
_MODERN_MEMBER.also(REBALANCE_COMPLETED,
    "the end of `on_assign`", _ONE_ATTEMPT,
    F("owned", LIST, "everything the member fetches now, with `thread`"), shared.DURATION_MS)
_MODERN_MEMBER.also(CONSUMER_SHUTTING_DOWN,
    "SIGTERM: `close()` revokes (the callbacks run), commits and leaves the group")
_MODERN_MEMBER.also(CONSUMER_SHUTDOWN,
    "SIGTERM: `close()` revokes (the callbacks run), commits and leaves the group", shared.DURATION_SINCE_SHUTTING_DOWN)

# A team's member run as a command (zkconsumer.members.command_member): its reports, the verifiable consumer's JSON
# lines, read as our modern member's events, so that the comparison measures both alike.
_COMMAND_MEMBER = section("migration.command_member", "zkconsumer.migration.member")
_COMMAND_MEMBER.also(CONSUMER_SUBSCRIBED,
    "the member's first report (`startup_complete`, or whatever it reports first)", shared.TOPIC,
    F("strategy", STR, "`ZKCONSUMER_ASSIGNOR`"), _REBALANCING,
    F("group_protocol", STR, "`ZKCONSUMER_GROUP_PROTOCOL`"))
_COMMAND_MEMBER.also(REBALANCE_STARTED,
    "the first report of a rebalance", F("cause", STR, "`revoke`, `assign` or `lost`"), shared.STRATEGY)
_COMMAND_MEMBER.also(REBALANCE_RELEASE,
    "`partitions_revoked`", _STEP_4, F("released", LIST, "the partitions revoked, with `thread`"),
    F("batches", INT, "0"), F("duration_ms", NUMBER, "0"))
_COMMAND_MEMBER.also(SESSION_EXPIRED,
    "`partitions_lost`", _DROPPED)
_COMMAND_MEMBER.also(REBALANCE_COMPLETED,
    "`partitions_assigned` (under KIP-848 every report of a rebalance: each is a rebalance of its own)",
    _ONE_ATTEMPT, F("owned", LIST, "what the member holds since, with `thread`"),
    F("duration_ms", NUMBER, "since the rebalance's first report"))
_COMMAND_MEMBER.also(OFFSETS_COMMITTED,
    "`offsets_committed` with `success` true", F("reason", STR, "`member`: its own commit"), shared.STORE_KAFKA,
    shared.OFFSETS_WITH_OFFSET)
_COMMAND_MEMBER.also(OFFSETS_COMMIT_FAILED,
    "`offsets_committed` with `success` false", F("reason", STR, "`member`"), shared.STORE_KAFKA,
    shared.OFFSETS_WITH_OFFSET, F("error", STR, "the member's `error`"))
_COMMAND_MEMBER.also(CONSUMER_SHUTDOWN, "`shutdown_complete`")
DEMO_MEMBER_DIED = _MARKERS.event("demo.member_died", "info",
    "a member process ended without being told to: reported in the report, its partitions count as paused until "
    "someone takes them", shared.CONSUMER_ID, shared.RETURNCODE)
DEMO_NOT_SETTLED = _MARKERS.event("demo.not_settled", "info",
    "the scene did not settle within the limit (every partition fetched by a live member, no rebalance for a second); "
    "the script goes on", shared.SCENE, shared.NOTE)
DEMO_DRAINING = _MARKERS.event("demo.draining", "info",
    "the script is over: production stops, and the run waits for the members to deliver everything before stopping "
    "them (pauses from here on are not counted)")
DEMO_MEMBER_STOPPING = _MARKERS.event("demo.member_stopping", "info",
    "SIGTERM was sent to the member; `demo.member_stopped` follows when it is gone", shared.CONSUMER_ID)
DEMO_CUTOVER = _MARKERS.event("demo.cutover", "info",
    "a move's `cutover`: every legacy member was stopped; its members start again as modern members of the protocol, "
    "in the same group id", F("offsets", STR, "`kafka` (as the legacy members left them) or `exported` (exported "
    "from ZooKeeper and imported into Kafka, `demo.offsets_translated`)"),
    F("reset", STR, "the modern members' `auto.offset.reset`"), F("members", LIST, "the members cut over, by name"))
DEMO_OFFSETS_TRANSLATED = _MARKERS.event("demo.offsets_translated", "info",
    "a `cutover` with `exported` offsets: the group's offsets were exported from ZooKeeper and committed to Kafka "
    "(`zkconsumer offsets migrate --to kafka`), the group idle", shared.GROUP,
    F("partitions", INT, "offsets found in ZooKeeper"), F("written", INT, "offsets committed to Kafka"),
    shared.DURATION_MS)
DEMO_SERVER_RESTARTED = _MARKERS.event("demo.server_restarted", "info",
    "a scenario's `restart`: a server every protocol shares was stopped (SIGTERM) and started again where its clients "
    "know it, once for all the protocols, each of which records it", F("server", STR, "`zookeeper` or `coordinator`"),
    F("restarted", STR, "which process, in words"), shared.DURATION_MS)
MIGRATION_PROTOCOL_STARTED = _RUNNER.event("migration.protocol_started", "info",
    "a protocol's run begins", shared.PROTOCOL, shared.TOPIC, shared.GROUP)
MIGRATION_SCENE_SETTLED = _RUNNER.event("migration.scene_settled", "info",
    "a scene of a protocol's run settled, or reached its limit (`settled` false)", shared.PROTOCOL, shared.SCENE,
    F("settled", BOOL), shared.DURATION_MS)
MIGRATION_MEMBER_DIED = _RUNNER.event("migration.member_died", "warning",
    "a member process ended without being told to", shared.PROTOCOL, shared.CONSUMER_ID, shared.RETURNCODE)
MIGRATION_DRAINED = _RUNNER.event("migration.drained", "info",
    "the members delivered what was produced (or the wait for it ended)", shared.PROTOCOL, F("produced", INT),
    F("delivered", INT), shared.DURATION_MS)
