"""The front's events: the group coordinators' (classic and KIP-848), which the trace draws, and the front
server's own."""

from __future__ import annotations

from zkconsumer.events import shared_fields as shared
from zkconsumer.events.spec import BOOL, INT, LIST, NULL, NUMBER, OBJECT, STR, section
from zkconsumer.events.spec import Field as F

#: what the catalogue gathers from this area: its events, nothing else (its fields and sections stay here)
__all__ = [
    "FRONT_GROUP_CREATED", "FRONT_GROUP_LOADED", "FRONT_GROUP_STATE_CHANGED", "FRONT_GROUP_MEMBER_ID_REQUIRED",
    "FRONT_GROUP_MEMBER_JOINED", "FRONT_GROUP_MEMBER_REJOINED", "FRONT_GROUP_STATIC_MEMBER_REPLACED",
    "FRONT_GROUP_MEMBER_LEFT", "FRONT_GROUP_MEMBER_EXPIRED", "FRONT_GROUP_ROUND_STARTED",
    "FRONT_GROUP_INITIAL_DELAY_EXTENDED", "FRONT_GROUP_ROUND_COMPLETED", "FRONT_GROUP_ROUND_POSTPONED",
    "FRONT_GROUP_ASSIGNMENT_SENT", "FRONT_GROUP_DELETED", "FRONT_CONSUMER_GROUP_CREATED", "FRONT_CONSUMER_GROUP_LOADED",
    "FRONT_CONSUMER_GROUP_STATE_CHANGED", "FRONT_CONSUMER_GROUP_MEMBER_JOINED",
    "FRONT_CONSUMER_GROUP_STATIC_MEMBER_REPLACED", "FRONT_CONSUMER_GROUP_MEMBER_LEFT",
    "FRONT_CONSUMER_GROUP_MEMBER_EXPIRED", "FRONT_CONSUMER_GROUP_MEMBER_FENCED", "FRONT_CONSUMER_GROUP_EPOCH_BUMPED",
    "FRONT_CONSUMER_GROUP_TARGET_ASSIGNMENT_COMPUTED", "FRONT_CONSUMER_GROUP_MEMBER_EPOCH_ADVANCED",
    "FRONT_CONSUMER_GROUP_MEMBER_STATE_CHANGED", "FRONT_CONSUMER_GROUP_PARTITIONS_REVOKED",
    "FRONT_CONSUMER_GROUP_PARTITIONS_ASSIGNED", "FRONT_CONSUMER_GROUP_HEARTBEAT_REJECTED",
    "FRONT_CONSUMER_GROUP_DELETED", "FRONT_CONSUMER_GROUP_UPGRADED", "FRONT_CONSUMER_GROUP_DOWNGRADED",
    "FRONT_CONSUMER_GROUP_UPGRADE_REFUSED", "FRONT_STARTED", "FRONT_CONNECTION_OPENED", "FRONT_CONNECTION_CLOSED",
    "FRONT_REQUEST_INVALID", "FRONT_REQUEST_TRUNCATED", "FRONT_BROKER_UNAVAILABLE", "FRONT_BROKER_RECOVERED",
    "FRONT_BROKER_LOST", "FRONT_ANSWER_INVALID", "FRONT_SEVERAL_BROKERS", "FRONT_CONNECTION_FAILED", "FRONT_STOPPED",
    "FRONT_GROUPS_LOADED", "FRONT_GROUPS_STORE_FAILED", "FRONT_COORDINATOR_ERROR",
]

_CLASSIC = section("front.classic_group", "zkconsumer.front.coordinator", columns=("event", "fields", "when", "drawn"),
    context=("group", "at_ms"))
_CONSUMER = section("front.consumer_group", "zkconsumer.front.coordinator",
    columns=("event", "fields", "when", "drawn"), context=("group", "at_ms"))
_SERVER = section("front.server", "zkconsumer.front.server", columns=("event", "level", "fields", "when"),
    context=("upstream", "connection", "client"))
_GROUPS_RUNTIME = _SERVER.logged_by("zkconsumer.front.coordinator")

FRONT_GROUP_CREATED = _CLASSIC.event("front.group.created", "info",
    "a group was created (by a JoinGroup, or an offset commit)",
    F("protocol_type", STR, '`""` for a group created by an offset commit'), drawn="the state band starts Empty")
FRONT_GROUP_LOADED = _CLASSIC.event("front.group.loaded", "info",
    "a restarted front replayed the group from its record (Kafka's GroupMetadataValue) and gave each member a whole "
    "session timeout from then, as Kafka's onLoaded does", F("state", STR, "Stable with members, else Empty"),
    shared.GENERATION, F("protocol", STR | NULL), F("leader", STR | NULL), shared.MEMBER_IDS, drawn="text only")
FRONT_GROUP_STATE_CHANGED = _CLASSIC.event("front.group.state_changed", "info",
    "the group moved along Kafka's valid transitions", shared.FROM,
    F("to", STR, "Empty, PreparingRebalance, CompletingRebalance, Stable, Dead"), shared.GENERATION, drawn="a stretch "
    "of the state band; Empty or Dead ends a round in progress")
FRONT_GROUP_MEMBER_ID_REQUIRED = _CLASSIC.event("front.group.member_id_required", "info",
    "JoinGroup v4+ from an unknown dynamic member: answered MEMBER_ID_REQUIRED with a new member id; the member is "
    "pending until it rejoins with it (KIP-394)", shared.MEMBER_ID, F("client_id", STR), shared.SESSION_TIMEOUT_MS,
    drawn="text only (KIP-394's first JoinGroup)")
FRONT_GROUP_MEMBER_JOINED = _CLASSIC.event("front.group.member_joined", "info",
    "a member joined the group", shared.MEMBER_ID, shared.CLIENT_ID, F("client_host", STR), shared.GROUP_INSTANCE_ID,
    F("protocols", LIST, "names, in the member's order"), shared.REBALANCE_TIMEOUT_MS, shared.SESSION_TIMEOUT_MS,
    drawn='a "joined" mark')
FRONT_GROUP_MEMBER_REJOINED = _CLASSIC.event("front.group.member_rejoined", "info",
    "a known member's JoinGroup that takes part in a round", shared.MEMBER_ID, F("protocols_changed", BOOL),
    drawn="text only")
FRONT_GROUP_STATIC_MEMBER_REPLACED = _CLASSIC.event("front.group.static_member_replaced", "info",
    "an unknown-member-id join with a known instance id took over that member", F("group_instance_id", STR),
    shared.OLD_MEMBER_ID, shared.NEW_MEMBER_ID, drawn='a "fenced" mark for the old member')
FRONT_GROUP_MEMBER_LEFT = _CLASSIC.event("front.group.member_left", "info",
    "a member left (LeaveGroup), or was refused at `group.max.size`", shared.MEMBER_ID,
    F("reason", STR | NULL, "the client's, or `group_max_size`"), shared.GROUP_INSTANCE_ID, drawn='a "left" mark')
FRONT_GROUP_MEMBER_EXPIRED = _CLASSIC.event("front.group.member_expired", "info",
    "a member was removed for a timeout", shared.MEMBER_ID,
    F("cause", STR, "`session_timeout`, `new_member_join_timeout`, `pending_member_timeout` (a MEMBER_ID_REQUIRED "
        "member that never rejoined), `not_rejoined` (at the rebalance timeout), `sync_timeout` (no SyncGroup in time "
        "after a round)"), shared.GROUP_INSTANCE_ID, drawn='an "expired" mark')
FRONT_GROUP_ROUND_STARTED = _CLASSIC.event("front.group.round_started", "info",
    "a rebalance round began", F("generation", INT, "the one ending"), shared.REASON,
    F("initial_delay_ms", INT, "an empty group's first wait"), F("members", LIST),
    F("rebalance_timeout_ms", INT, "the round's limit, when not the first wait"), drawn="the start of a round's block")
FRONT_GROUP_INITIAL_DELAY_EXTENDED = _CLASSIC.event("front.group.initial_delay_extended", "info",
    "a member joined during an empty group's first wait: the wait is extended, never past the rebalance timeout",
    F("delay_ms", NUMBER), F("remaining_ms", NUMBER), drawn="counted on the round")
FRONT_GROUP_ROUND_COMPLETED = _CLASSIC.event("front.group.round_completed", "info",
    "every member rejoined (or the rebalance timeout passed): a new generation", F("generation", INT, "the new one"),
    shared.PROTOCOL, shared.LEADER_MEMBER, F("members", LIST, "ids, in join order"), drawn="the end of the round's "
    "block, labelled with the generation and its members")
FRONT_GROUP_ROUND_POSTPONED = _CLASSIC.event("front.group.round_postponed", "info",
    "no member rejoined: the round waits once more", F("rebalance_timeout_ms", NUMBER), drawn="counted on the round")
FRONT_GROUP_ASSIGNMENT_SENT = _CLASSIC.event("front.group.assignment_sent", "info",
    "the leader's SyncGroup carried the assignment, answered to every member", shared.GENERATION, shared.LEADER_MEMBER,
    F("members", LIST, '`{"member_id", "bytes"}`'), drawn='an "assignment" mark')
FRONT_GROUP_DELETED = _CLASSIC.event("front.group.deleted", "info",
    "DeleteGroups removed an empty group", drawn="the band turns Dead")
FRONT_CONSUMER_GROUP_CREATED = _CONSUMER.event("front.consumer_group.created", "info",
    "a group was created", drawn="the state band starts Empty")
FRONT_CONSUMER_GROUP_LOADED = _CONSUMER.event("front.consumer_group.loaded", "info",
    "a restarted front replayed the group from its record and gave each member a whole session timeout from then (and "
    "one revoking partitions its rebalance timeout), as Kafka's onLoaded does",
    F("state", STR, "Empty, Assigning, Reconciling, Stable"), shared.GROUP_EPOCH, shared.ASSIGNMENT_EPOCH,
    shared.MEMBER_IDS, drawn="text only")
FRONT_CONSUMER_GROUP_STATE_CHANGED = _CONSUMER.event("front.consumer_group.state_changed", "info",
    "the group's state changed", shared.FROM, F("to", STR, "Empty, Assigning, Reconciling, Stable, Dead"),
    shared.GROUP_EPOCH, shared.ASSIGNMENT_EPOCH, drawn="a stretch of the state band; Stable at the round's epoch or "
    "later completes the round")
FRONT_CONSUMER_GROUP_MEMBER_JOINED = _CONSUMER.event("front.consumer_group.member_joined", "info",
    "a member's first heartbeat", shared.MEMBER_ID, shared.CLIENT_ID, shared.INSTANCE_ID,
    F("subscribed_topic_names", LIST), F("server_assignor", STR | NULL), shared.REBALANCE_TIMEOUT_MS, drawn="a "
    '"joined" mark')
FRONT_CONSUMER_GROUP_STATIC_MEMBER_REPLACED = _CONSUMER.event("front.consumer_group.static_member_replaced", "info",
    "a heartbeat with a known instance id under a new member id took over that member", F("instance_id", STR),
    shared.OLD_MEMBER_ID, shared.NEW_MEMBER_ID, drawn='a "fenced" mark for the old member')
FRONT_CONSUMER_GROUP_MEMBER_LEFT = _CONSUMER.event("front.consumer_group.member_left", "info",
    "a member left (epoch -1, or -2 for a static member that stays in the group)", shared.MEMBER_ID,
    F("temporary", BOOL, "a static member's -2: it stays in the group"), shared.INSTANCE_ID, drawn='a "left" mark')
FRONT_CONSUMER_GROUP_MEMBER_EXPIRED = _CONSUMER.event("front.consumer_group.member_expired", "info",
    "a member's session timed out", shared.MEMBER_ID, shared.SESSION_TIMEOUT_MS, shared.INSTANCE_ID, drawn="an "
    '"expired" mark')
FRONT_CONSUMER_GROUP_MEMBER_FENCED = _CONSUMER.event("front.consumer_group.member_fenced", "info",
    "a member did not revoke in time (its rebalance timeout), or a classic member did not rejoin or sync in time "
    "(the same timeout)", shared.MEMBER_ID, shared.REBALANCE_TIMEOUT_MS,
    shared.INSTANCE_ID, shared.MEMBER_EPOCH, drawn='a "fenced" mark')
FRONT_CONSUMER_GROUP_EPOCH_BUMPED = _CONSUMER.event("front.consumer_group.epoch_bumped", "info",
    "the group epoch moved: a round begins", shared.FROM_EPOCH, F("to", INT, "group epochs"),
    F("reason", STR, "`member_joined`, `subscription_changed`, `metadata_changed`, `member_left`, `member_expired`, "
        "`member_fenced`"), drawn="the start of a round's block, labelled with the group epoch")
FRONT_CONSUMER_GROUP_TARGET_ASSIGNMENT_COMPUTED = _CONSUMER.event("front.consumer_group.target_assignment_computed",
    "info",
    "the assignor computed the target assignment of an epoch", F("epoch", INT), F("assignor", STR),
    F("members", LIST, '`{"member_id", "partitions"}`'), drawn='an "assignment" mark')
FRONT_CONSUMER_GROUP_MEMBER_EPOCH_ADVANCED = _CONSUMER.event("front.consumer_group.member_epoch_advanced", "info",
    "a member reached a later epoch", shared.MEMBER_ID, shared.FROM_EPOCH, F("to", INT), F("state", STR), drawn="text; "
    "may complete the round")
FRONT_CONSUMER_GROUP_MEMBER_STATE_CHANGED = _CONSUMER.event("front.consumer_group.member_state_changed", "info",
    "a member's reconciliation state changed", shared.MEMBER_ID, shared.FROM, F("to", STR, "the member states"),
    drawn="text only")
FRONT_CONSUMER_GROUP_PARTITIONS_REVOKED = _CONSUMER.event("front.consumer_group.partitions_revoked", "info",
    "a member was asked to revoke partitions", shared.MEMBER_ID, F("partitions", LIST, "asked to revoke"),
    shared.MEMBER_EPOCH, drawn="text only")
FRONT_CONSUMER_GROUP_PARTITIONS_ASSIGNED = _CONSUMER.event("front.consumer_group.partitions_assigned", "info",
    "a member was given partitions", shared.MEMBER_ID, F("partitions", LIST, "newly given"), shared.MEMBER_EPOCH,
    drawn="text only")
FRONT_CONSUMER_GROUP_HEARTBEAT_REJECTED = _CONSUMER.event("front.consumer_group.heartbeat_rejected", "info",
    "a heartbeat was answered with an error", shared.MEMBER_ID, shared.ERROR, F("message", STR), shared.MEMBER_EPOCH,
    drawn="text only, flagged")
FRONT_CONSUMER_GROUP_DELETED = _CONSUMER.event("front.consumer_group.deleted", "info",
    "DeleteGroups removed an empty group", drawn="the band turns Dead")
FRONT_CONSUMER_GROUP_UPGRADED = _CONSUMER.event("front.consumer_group.upgraded", "info",
    "a new member's ConsumerGroupHeartbeat converted a live classic group into a consumer group (Kafka's online "
    "upgrade, `group.consumer.migration.policy` upgrade or bidirectional): its members stay, speaking the classic "
    "protocol, each at the classic generation as its member epoch with its current assignment", shared.GENERATION,
    F("classic_state", STR, "the classic group's state when converted"), shared.MEMBER_IDS,
    drawn="text only (the state band goes on as the consumer group's)")
FRONT_CONSUMER_GROUP_DOWNGRADED = _CONSUMER.event("front.consumer_group.downgraded", "info",
    "the last consumer-protocol member left a consumer group whose classic members remain: the group became a classic "
    "group again (Kafka's online downgrade, `group.consumer.migration.policy` downgrade or bidirectional), at the "
    "assignment epoch as its generation, and rebalances; or a classic static member took that member's place: then "
    "without a rebalance", shared.GENERATION, shared.MEMBER_IDS, drawn="text only")
FRONT_CONSUMER_GROUP_UPGRADE_REFUSED = _CONSUMER.event("front.consumer_group.upgrade_refused", "info",
    "a new member's ConsumerGroupHeartbeat to a live classic group that cannot convert, answered GROUP_ID_NOT_FOUND",
    shared.REASON, drawn="text only")
FRONT_STARTED = _SERVER.event("front.started", "info",
    "the front listens", F("listen", STR), F("advertised", STR), F("local_apis", LIST), F("group_settings", OBJECT))
FRONT_CONNECTION_OPENED = _SERVER.event("front.connection_opened", "debug",
    "a client connected and the front connected it to the broker", F("broker", STR))
FRONT_CONNECTION_CLOSED = _SERVER.event("front.connection_closed", "debug",
    "a client's connection ended",
    F("reason", STR, "`client closed`, `invalid request`, `truncated request`, `client reset`, `broker unavailable`, "
        "`broker lost`, `invalid answer`, `acks=0 produce failed`, `request dropped`, `front stopped`, `error`"),
    F("requests", INT), shared.DURATION_MS)
FRONT_REQUEST_INVALID = _SERVER.event("front.request_invalid", "warning",
    "a request the front could not read; the connection is closed", shared.REASON)
FRONT_REQUEST_TRUNCATED = _SERVER.event("front.request_truncated", "warning",
    "the client closed in the middle of a request", shared.REASON)
FRONT_BROKER_UNAVAILABLE = _SERVER.event("front.broker_unavailable", "warning",
    "no broker accepts a connection when a client connects", shared.ERROR, level_note="then debug until the outage "
    "ends")
FRONT_BROKER_RECOVERED = _SERVER.event("front.broker_recovered", "info",
    "a connection to the broker succeeds again", shared.DOWN_MS)
FRONT_BROKER_LOST = _SERVER.event("front.broker_lost", "warning",
    "the broker closed or failed in the middle of a relayed request", shared.REASON)
FRONT_ANSWER_INVALID = _SERVER.event("front.answer_invalid", "warning",
    "a broker answer the front must parse does not parse", F("reason", STR, "naming the API and version"))
FRONT_SEVERAL_BROKERS = _SERVER.event("front.several_brokers", "warning",
    "a Metadata answer names more than one broker, all given the front's one address (see Limits)",
    F("brokers", LIST, "node ids"), level_note="once")
FRONT_CONNECTION_FAILED = _SERVER.event("front.connection_failed", "error",
    "anything else ended a connection (a bug, a handler's exception); the front goes on", shared.ERROR)
FRONT_STOPPED = _SERVER.event("front.stopped", "info", "the front stopped", F("connections", INT))
FRONT_GROUPS_LOADED = _GROUPS_RUNTIME.event("front.groups_loaded", "info",
    "the front read its groups' records from the broker at start, before it listened", shared.TOPIC,
    F("coordinator", STR, "the front's advertised address, whose records are its own"),
    F("records", INT, "records read (every front's)"), F("classic", INT, "classic groups loaded"),
    F("consumer", INT, "KIP-848 groups loaded"), F("duration_ms", INT))
FRONT_GROUPS_STORE_FAILED = _GROUPS_RUNTIME.event("front.groups_store_failed", "error",
    "the groups topic could not be read or written: at start the front serves with the groups it read; a write that "
    "failed is answered all the same and tried again with the group's next change",
    F("operation", STR, "`load`, `write` or `read`"), shared.ERROR,
    F("groups", LIST, "the group ids whose records were not written (write)"))
FRONT_COORDINATOR_ERROR = _GROUPS_RUNTIME.event("front.coordinator_error", "error",
    "a coordinator raised while its timers fired (a bug); the other is ticked all the same, the timer armed again, "
    "requests go on being answered", F("coordinator", STR, "`classic` or `consumer`"), shared.ERROR_TYPE_AND_MESSAGE)
