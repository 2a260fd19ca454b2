"""The front's events: the group coordinators' (classic and KIP-848), which the trace draws, and the front server's own.

Declared in :mod:`zkconsumer.events.spec`'s terms; :mod:`zkconsumer.events.catalogue` gathers every area's events and
the events page (``docs/events.md``) is made from them.
"""

from __future__ import annotations

from zkconsumer.events.spec import BOOL, INT, LIST, NULL, NUMBER, OBJECT, STR, declare, section
from zkconsumer.events.spec import Field as F

section("front.classic_group", columns=("event", "fields", "when", "drawn"), context=("group", "at_ms"))
section("front.consumer_group", columns=("event", "fields", "when", "drawn"), context=("group", "at_ms"))
_SERVER = section("front.server", columns=("event", "level", "fields", "when"),
                  context=("upstream", "connection", "client"))
_SERVER_LOGGER = "zkconsumer.front.server"

FRONT_GROUP_CREATED = declare(
    "front.group.created", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("protocol_type", STR, '`""` for a group created by an offset commit'),
    ),
    drawn="the state band starts Empty",
    when="a group was created (by a JoinGroup, or an offset commit)",
)

FRONT_GROUP_LOADED = declare(
    "front.group.loaded", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("state", STR, "Stable with members, else Empty"),
        F("generation", INT),
        F("protocol", STR | NULL),
        F("leader", STR | NULL),
        F("members", LIST, "member ids, in join order"),
    ),
    drawn="text only",
    when="a restarted front replayed the group from its record (Kafka's GroupMetadataValue) and gave each member a "
         "whole session timeout from then, as Kafka's onLoaded does",
)

FRONT_GROUP_STATE_CHANGED = declare(
    "front.group.state_changed", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("from", STR),
        F("to", STR, "Empty, PreparingRebalance, CompletingRebalance, Stable, Dead"),
        F("generation", INT),
    ),
    drawn="a stretch of the state band; Empty or Dead ends a round in progress",
    when="the group moved along Kafka's valid transitions",
)

FRONT_GROUP_MEMBER_ID_REQUIRED = declare(
    "front.group.member_id_required", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("client_id", STR),
        F("session_timeout_ms", INT),
    ),
    drawn="text only (KIP-394's first JoinGroup)",
    when="JoinGroup v4+ from an unknown dynamic member: answered MEMBER_ID_REQUIRED with a new member id; the member "
         "is pending until it rejoins with it (KIP-394)",
)

FRONT_GROUP_MEMBER_JOINED = declare(
    "front.group.member_joined", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("client_id", STR, "the name the member is shown under"),
        F("client_host", STR),
        F("group_instance_id", STR | NULL),
        F("protocols", LIST, "names, in the member's order"),
        F("rebalance_timeout_ms", INT),
        F("session_timeout_ms", INT),
    ),
    drawn="a \"joined\" mark",
    when="a member joined the group",
)

FRONT_GROUP_MEMBER_REJOINED = declare(
    "front.group.member_rejoined", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("protocols_changed", BOOL),
    ),
    drawn="text only",
    when="a known member's JoinGroup that takes part in a round",
)

FRONT_GROUP_STATIC_MEMBER_REPLACED = declare(
    "front.group.static_member_replaced", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("group_instance_id", STR),
        F("old_member_id", STR),
        F("new_member_id", STR),
    ),
    drawn="a \"fenced\" mark for the old member",
    when="an unknown-member-id join with a known instance id took over that member",
)

FRONT_GROUP_MEMBER_LEFT = declare(
    "front.group.member_left", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("reason", STR | NULL, "the client's, or `group_max_size`"),
        F("group_instance_id", STR | NULL),
    ),
    drawn="a \"left\" mark",
    when="a member left (LeaveGroup), or was refused at `group.max.size`",
)

FRONT_GROUP_MEMBER_EXPIRED = declare(
    "front.group.member_expired", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("cause", STR, "`session_timeout`, `new_member_join_timeout`, `pending_member_timeout` (a "
                        "MEMBER_ID_REQUIRED member that never rejoined), `not_rejoined` (at the rebalance timeout), "
                        "`sync_timeout` (no SyncGroup in time after a round)"),
        F("group_instance_id", STR | NULL),
    ),
    drawn="an \"expired\" mark",
    when="a member was removed for a timeout",
)

FRONT_GROUP_ROUND_STARTED = declare(
    "front.group.round_started", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("generation", INT, "the one ending"),
        F("reason", STR),
        F("initial_delay_ms", INT, "an empty group's first wait"),
        F("members", LIST),
        F("rebalance_timeout_ms", INT, "the round's limit, when not the first wait"),
    ),
    drawn="the start of a round's block",
    when="a rebalance round began",
)

FRONT_GROUP_INITIAL_DELAY_EXTENDED = declare(
    "front.group.initial_delay_extended", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("delay_ms", NUMBER),
        F("remaining_ms", NUMBER),
    ),
    drawn="counted on the round",
    when="a member joined during an empty group's first wait: the wait is extended, never past the rebalance timeout",
)

FRONT_GROUP_ROUND_COMPLETED = declare(
    "front.group.round_completed", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("generation", INT, "the new one"),
        F("protocol", STR),
        F("leader", STR),
        F("members", LIST, "ids, in join order"),
    ),
    drawn="the end of the round's block, labelled with the generation and its members",
    when="every member rejoined (or the rebalance timeout passed): a new generation",
)

FRONT_GROUP_ROUND_POSTPONED = declare(
    "front.group.round_postponed", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("rebalance_timeout_ms", NUMBER),
    ),
    drawn="counted on the round",
    when="no member rejoined: the round waits once more",
)

FRONT_GROUP_ASSIGNMENT_SENT = declare(
    "front.group.assignment_sent", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("generation", INT),
        F("leader", STR),
        F("members", LIST, "`{\"member_id\", \"bytes\"}`"),
    ),
    drawn="an \"assignment\" mark",
    when="the leader's SyncGroup carried the assignment, answered to every member",
)

FRONT_GROUP_DELETED = declare(
    "front.group.deleted", "info",
    section="front.classic_group",
    logger="zkconsumer.front.coordinator",
    drawn="the band turns Dead",
    when="DeleteGroups removed an empty group",
)

FRONT_CONSUMER_GROUP_CREATED = declare(
    "front.consumer_group.created", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    drawn="the state band starts Empty",
    when="a group was created",
)

FRONT_CONSUMER_GROUP_LOADED = declare(
    "front.consumer_group.loaded", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("state", STR, "Empty, Assigning, Reconciling, Stable"),
        F("group_epoch", INT),
        F("assignment_epoch", INT),
        F("members", LIST, "member ids, in join order"),
    ),
    drawn="text only",
    when="a restarted front replayed the group from its record and gave each member a whole session timeout from "
         "then (and one revoking partitions its rebalance timeout), as Kafka's onLoaded does",
)

FRONT_CONSUMER_GROUP_STATE_CHANGED = declare(
    "front.consumer_group.state_changed", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("from", STR),
        F("to", STR, "Empty, Assigning, Reconciling, Stable, Dead"),
        F("group_epoch", INT),
        F("assignment_epoch", INT),
    ),
    drawn="a stretch of the state band; Stable at the round's epoch or later completes the round",
    when="the group's state changed",
)

FRONT_CONSUMER_GROUP_MEMBER_JOINED = declare(
    "front.consumer_group.member_joined", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("client_id", STR, "the name the member is shown under"),
        F("instance_id", STR | NULL),
        F("subscribed_topic_names", LIST),
        F("server_assignor", STR | NULL),
        F("rebalance_timeout_ms", INT),
    ),
    drawn="a \"joined\" mark",
    when="a member's first heartbeat",
)

FRONT_CONSUMER_GROUP_STATIC_MEMBER_REPLACED = declare(
    "front.consumer_group.static_member_replaced", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("instance_id", STR),
        F("old_member_id", STR),
        F("new_member_id", STR),
    ),
    drawn="a \"fenced\" mark for the old member",
    when="a heartbeat with a known instance id under a new member id took over that member",
)

FRONT_CONSUMER_GROUP_MEMBER_LEFT = declare(
    "front.consumer_group.member_left", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("temporary", BOOL, "a static member's -2: it stays in the group"),
        F("instance_id", STR | NULL),
    ),
    drawn="a \"left\" mark",
    when="a member left (epoch -1, or -2 for a static member that stays in the group)",
)

FRONT_CONSUMER_GROUP_MEMBER_EXPIRED = declare(
    "front.consumer_group.member_expired", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("session_timeout_ms", INT),
        F("instance_id", STR | NULL),
    ),
    drawn="an \"expired\" mark",
    when="a member's session timed out",
)

FRONT_CONSUMER_GROUP_MEMBER_FENCED = declare(
    "front.consumer_group.member_fenced", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("rebalance_timeout_ms", INT),
        F("instance_id", STR | NULL),
        F("member_epoch", INT),
    ),
    drawn="a \"fenced\" mark",
    when="a member did not revoke in time (its rebalance timeout)",
)

FRONT_CONSUMER_GROUP_EPOCH_BUMPED = declare(
    "front.consumer_group.epoch_bumped", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("from", INT),
        F("to", INT, "group epochs"),
        F("reason", STR, "`member_joined`, `subscription_changed`, `metadata_changed`, `member_left`, "
                         "`member_expired`, `member_fenced`"),
    ),
    drawn="the start of a round's block, labelled with the group epoch",
    when="the group epoch moved: a round begins",
)

FRONT_CONSUMER_GROUP_TARGET_ASSIGNMENT_COMPUTED = declare(
    "front.consumer_group.target_assignment_computed", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("epoch", INT),
        F("assignor", STR),
        F("members", LIST, "`{\"member_id\", \"partitions\"}`"),
    ),
    drawn="an \"assignment\" mark",
    when="the assignor computed the target assignment of an epoch",
)

FRONT_CONSUMER_GROUP_MEMBER_EPOCH_ADVANCED = declare(
    "front.consumer_group.member_epoch_advanced", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("from", INT),
        F("to", INT),
        F("state", STR),
    ),
    drawn="text; may complete the round",
    when="a member reached a later epoch",
)

FRONT_CONSUMER_GROUP_MEMBER_STATE_CHANGED = declare(
    "front.consumer_group.member_state_changed", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("from", STR),
        F("to", STR, "the member states"),
    ),
    drawn="text only",
    when="a member's reconciliation state changed",
)

FRONT_CONSUMER_GROUP_PARTITIONS_REVOKED = declare(
    "front.consumer_group.partitions_revoked", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("partitions", LIST, "asked to revoke"),
        F("member_epoch", INT),
    ),
    drawn="text only",
    when="a member was asked to revoke partitions",
)

FRONT_CONSUMER_GROUP_PARTITIONS_ASSIGNED = declare(
    "front.consumer_group.partitions_assigned", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("partitions", LIST, "newly given"),
        F("member_epoch", INT),
    ),
    drawn="text only",
    when="a member was given partitions",
)

FRONT_CONSUMER_GROUP_HEARTBEAT_REJECTED = declare(
    "front.consumer_group.heartbeat_rejected", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    fields=(
        F("member_id", STR),
        F("error", STR),
        F("message", STR),
        F("member_epoch", INT),
    ),
    drawn="text only, flagged",
    when="a heartbeat was answered with an error",
)

FRONT_CONSUMER_GROUP_DELETED = declare(
    "front.consumer_group.deleted", "info",
    section="front.consumer_group",
    logger="zkconsumer.front.coordinator",
    drawn="the band turns Dead",
    when="DeleteGroups removed an empty group",
)


FRONT_STARTED = declare(
    "front.started", "info", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("listen", STR), F("advertised", STR), F("local_apis", LIST), F("group_settings", OBJECT)),
    when="the front listens",
)
FRONT_CONNECTION_OPENED = declare(
    "front.connection_opened", "debug", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("broker", STR),),
    when="a client connected and the front connected it to the broker",
)
FRONT_CONNECTION_CLOSED = declare(
    "front.connection_closed", "debug", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(
        F("reason", STR, "`client closed`, `invalid request`, `truncated request`, `client reset`, "
                         "`broker unavailable`, `broker lost`, `invalid answer`, `acks=0 produce failed`, "
                         "`request dropped`, `front stopped`, `error`"),
        F("requests", INT),
        F("duration_ms", NUMBER),
    ),
    when="a client's connection ended",
)
FRONT_REQUEST_INVALID = declare(
    "front.request_invalid", "warning", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("reason", STR),),
    when="a request the front could not read; the connection is closed",
)
FRONT_REQUEST_TRUNCATED = declare(
    "front.request_truncated", "warning", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("reason", STR),),
    when="the client closed in the middle of a request",
)
FRONT_BROKER_UNAVAILABLE = declare(
    "front.broker_unavailable", "warning", section=_SERVER, logger=_SERVER_LOGGER,
    level_note="then debug until the outage ends",
    fields=(F("error", STR),),
    when="no broker accepts a connection when a client connects",
)
FRONT_BROKER_RECOVERED = declare(
    "front.broker_recovered", "info", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("down_ms", NUMBER),),
    when="a connection to the broker succeeds again",
)
FRONT_BROKER_LOST = declare(
    "front.broker_lost", "warning", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("reason", STR),),
    when="the broker closed or failed in the middle of a relayed request",
)
FRONT_ANSWER_INVALID = declare(
    "front.answer_invalid", "warning", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("reason", STR, "naming the API and version"),),
    when="a broker answer the front must parse does not parse",
)
FRONT_SEVERAL_BROKERS = declare(
    "front.several_brokers", "warning", section=_SERVER, logger=_SERVER_LOGGER, level_note="once",
    fields=(F("brokers", LIST, "node ids"),),
    when="a Metadata answer names more than one broker, all given the front's one address (see Limits)",
)
FRONT_CONNECTION_FAILED = declare(
    "front.connection_failed", "error", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("error", STR),),
    when="anything else ended a connection (a bug, a handler's exception); the front goes on",
)
FRONT_STOPPED = declare(
    "front.stopped", "info", section=_SERVER, logger=_SERVER_LOGGER,
    fields=(F("connections", INT),),
    when="the front stopped",
)
FRONT_GROUPS_LOADED = declare(
    "front.groups_loaded", "info", section=_SERVER, logger="zkconsumer.front.coordinator",
    fields=(F("topic", STR), F("coordinator", STR, "the front's advertised address, whose records are its own"),
            F("records", INT, "records read (every front's)"), F("classic", INT, "classic groups loaded"),
            F("consumer", INT, "KIP-848 groups loaded"), F("duration_ms", INT)),
    when="the front read its groups' records from the broker at start, before it listened",
)
FRONT_GROUPS_STORE_FAILED = declare(
    "front.groups_store_failed", "error", section=_SERVER, logger="zkconsumer.front.coordinator",
    fields=(F("operation", STR, "`load`, `write` or `read`"), F("error", STR),
            F("groups", LIST, "the group ids whose records were not written (write)")),
    when="the groups topic could not be read or written: at start the front serves with the groups it read; a "
         "write that failed is answered all the same and tried again with the group's next change",
)
FRONT_COORDINATOR_ERROR = declare(
    "front.coordinator_error", "error", section=_SERVER, logger="zkconsumer.front.coordinator",
    fields=(F("coordinator", STR, "`classic` or `consumer`"), F("error", STR, "the exception's type and message")),
    when="a coordinator raised while its timers fired (a bug); the other is ticked all the same, the timer armed "
         "again, requests go on being answered",
)
