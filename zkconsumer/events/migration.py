"""The migration comparison's events: the modern member's (in the legacy steps' words), the runner's markers
and its own.

Declared in :mod:`zkconsumer.events.spec`'s terms; :mod:`zkconsumer.events.catalogue` gathers every area's events and
the events page (``docs/events.md``) is made from them.
"""

from __future__ import annotations

from zkconsumer.events.connector import (
    CONSUMER_SHUTDOWN,
    CONSUMER_SHUTTING_DOWN,
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
from zkconsumer.events.spec import BOOL, INT, LIST, NUMBER, OBJECT, STR, also, declare, section
from zkconsumer.events.spec import Field as F

section("migration.modern_member")
section("migration.markers", columns=("event", "fields", "when"), context=("protocol",))
_RUNNER = section("migration.runner")

CONSUMER_SUBSCRIBED = declare(
    "consumer.subscribed", "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("topic", STR),
        F("strategy", STR, "`range`, `roundrobin`, `cooperative-sticky`, under KIP-848 the server assignor, "
                           "`uniform` or `range`"),
        F("protocol", STR, "`eager` or `cooperative`"),
        F("group_protocol", STR, "`classic` or `consumer`"),
    ),
    when="`subscribe()` was called",
)

CONSUMER_GROUP_PROTOCOL_UNSUPPORTED = declare(
    "consumer.group_protocol_unsupported", "error",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("group_protocol", STR),
        F("bootstrap", STR),
        F("reason", STR, "librdkafka's log line"),
    ),
    when="the coordinator does not run the member's group protocol (KIP-848 without ConsumerGroupHeartbeat); the "
         "member exits with status 3 and the comparison stops that protocol",
)

APPLICATION_FAILED = declare(
    "application.failed", "error",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("topic", STR, "a message's"),
        F("partition", INT, "a message's"),
        F("offset", INT, "a message's"),
        F("attempt", INT, "1 to 3: the member calls the application again with the same message"),
        F("gave_up", BOOL, "the last attempt failed too: the message is not recorded as delivered"),
        F("hook", STR, "`on_revoke` or `on_assign`, when a hook raised (no message fields then)"),
        F("error", STR, "the exception's type and message"),
    ),
    when="the user's application (`--app`, zkconsumer.members.application), run by a legacy or a modern member, "
         "raised on a message or in a hook",
)

also(
    REBALANCE_STARTED, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("cause", STR, "`revoke`, `assign` or `lost`: the callback that began it"),
        F("strategy", STR),
    ),
    when="the first callback of a rebalance",
)

also(
    REBALANCE_STOP_FETCHERS, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("step", INT, "2"),
        F("chunks_dropped", INT, "0"),
        F("duration_ms", NUMBER),
    ),
    when="eager only, in `on_revoke`: everything the member fetched stops",
)

also(
    REBALANCE_COMMIT_OFFSETS, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("step", INT, "2"),
        F("auto_commit", BOOL),
        F("store", STR, "`kafka`"),
        F("duration_ms", NUMBER),
        F("note", STR, "why nothing was committed, when nothing was"),
    ),
    when="`on_revoke` commits synchronously what was delivered, before giving the partitions up",
)

also(
    REBALANCE_LISTENER_BEFORE_RELEASE, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("step", INT, "3"),
        F("revoke_ms", NUMBER),
        F("spent", BOOL, "whether the cost was spent"),
        F("revoked", LIST, "and `kept` (partitions, with `thread`: what it gives up, what it goes on fetching "
                           "afterwards, `[]` when eager)"),
        F("duration_ms", NUMBER),
        F("kept", LIST),
    ),
    when="only with `--revoke-ms` (the application's cost of giving partitions up, "
         "`zkconsumer.members.revoke_cost`): in `on_revoke`, after the commit and before the release; spent only "
         "when `revoked` is not empty and the member is not leaving. The comparison counts every partition the "
         "member fetched as paused while it lasts (`poll()` delivers nothing meanwhile), `kept` resuming at its end. "
         "A legacy member with `--revoke-ms` spends it in its rebalance listener: the connector's step 3 above, "
         "whose duration it is",
)

also(
    REBALANCE_RELEASE, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("step", INT, "4"),
        F("released", LIST, "partitions, with `thread`"),
        F("batches", INT),
        F("duration_ms", NUMBER),
    ),
    when="`on_revoke`: `unassign()` (eager: everything) or `incremental_unassign()` (cooperative: only what moves)",
)

also(
    SESSION_EXPIRED, "warning",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("dropped", LIST, "partitions"),
    ),
    when="`on_lost`: the coordinator gave the partitions away without us",
)

also(
    REBALANCE_ASSIGN, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("step", INT, "5"),
        F("strategy", STR),
        F("assignment", LIST, "the partitions `on_assign` added, with `thread`"),
        F("members", LIST, "`[]`: a modern member does not see the others"),
        F("partitions", OBJECT, "`{}`"),
        F("duration_ms", NUMBER),
    ),
    when="`on_assign`",
)

also(
    REBALANCE_START_FETCHERS, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("step", INT, "9"),
        F("partitions", INT, "how many the member now fetches"),
        F("fetching", BOOL, "true"),
        F("duration_ms", NUMBER),
    ),
    when="after `assign()` / `incremental_assign()`",
)

also(
    REBALANCE_COMPLETED, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("attempts", INT, "1"),
        F("owned", LIST, "everything the member fetches now, with `thread`"),
        F("duration_ms", NUMBER),
    ),
    when="the end of `on_assign`",
)

also(
    CONSUMER_SHUTTING_DOWN, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    when="SIGTERM: `close()` revokes (the callbacks run), commits and leaves the group",
)

also(
    CONSUMER_SHUTDOWN, "info",
    section="migration.modern_member",
    logger="zkconsumer.migration.member",
    fields=(
        F("duration_ms", NUMBER, "since `consumer.shutting_down`"),
    ),
    when="SIGTERM: `close()` revokes (the callbacks run), commits and leaves the group",
)

DEMO_MEMBER_DIED = declare(
    "demo.member_died", "info",
    section="migration.markers",
    logger="zkconsumer.migration",
    fields=(
        F("consumer_id", STR),
        F("returncode", INT),
    ),
    when="a member process ended without being told to: reported in the report, its partitions count as paused until "
         "someone takes them",
)

DEMO_NOT_SETTLED = declare(
    "demo.not_settled", "info",
    section="migration.markers",
    logger="zkconsumer.migration",
    fields=(
        F("scene", INT),
        F("note", STR),
    ),
    when="the scene did not settle within the limit (every partition fetched by a live member, no rebalance for a "
         "second); the script goes on",
)

DEMO_DRAINING = declare(
    "demo.draining", "info",
    section="migration.markers",
    logger="zkconsumer.migration",
    when="the script is over: production stops, and the run waits for the members to deliver everything before "
         "stopping them (pauses from here on are not counted)",
)


DEMO_MEMBER_STOPPING = declare(
    "demo.member_stopping", "info", section="migration.markers", logger="zkconsumer.migration",
    fields=(F("consumer_id", STR),),
    when="SIGTERM was sent to the member; `demo.member_stopped` follows when it is gone",
)
MIGRATION_PROTOCOL_STARTED = declare(
    "migration.protocol_started", "info", section=_RUNNER, logger="zkconsumer.migration",
    fields=(F("protocol", STR), F("topic", STR), F("group", STR)),
    when="a protocol's run begins",
)
MIGRATION_SCENE_SETTLED = declare(
    "migration.scene_settled", "info", section=_RUNNER, logger="zkconsumer.migration",
    fields=(F("protocol", STR), F("scene", INT), F("settled", BOOL), F("duration_ms", NUMBER)),
    when="a scene of a protocol's run settled, or reached its limit (`settled` false)",
)
MIGRATION_MEMBER_DIED = declare(
    "migration.member_died", "warning", section=_RUNNER, logger="zkconsumer.migration",
    fields=(F("protocol", STR), F("consumer_id", STR), F("returncode", INT)),
    when="a member process ended without being told to",
)
MIGRATION_DRAINED = declare(
    "migration.drained", "info", section=_RUNNER, logger="zkconsumer.migration",
    fields=(F("protocol", STR), F("produced", INT), F("delivered", INT), F("duration_ms", NUMBER)),
    when="the members delivered what was produced (or the wait for it ended)",
)
