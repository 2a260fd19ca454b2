"""The demo's events: the markers it records among its members' events, and the step mode's.

Declared in :mod:`zkconsumer.events.spec`'s terms; :mod:`zkconsumer.events.catalogue` gathers every area's events and
the events page (``docs/events.md``) is made from them.
"""

from __future__ import annotations

from zkconsumer.events.spec import BOOL, INT, LIST, NUMBER, STR, declare, section
from zkconsumer.events.spec import Field as F

section("demo.markers", columns=("event", "fields", "when"), context=("protocol",))
section("demo.step_mode", columns=("event", "fields", "when"))

DEMO_SCENE = declare(
    "demo.scene", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("scene", INT, "1, 2, ... as the scenario numbers them"),
        F("title", STR),
        F("note", STR),
    ),
    when="a scene begins (before its actions)",
)

DEMO_MEMBER_STARTED = declare(
    "demo.member_started", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("consumer_id", STR),
        F("pid", INT),
        F("streams", INT),
    ),
    when="a member process was started",
)

DEMO_MEMBER_KILLED = declare(
    "demo.member_killed", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("consumer_id", STR),
        F("pid", INT),
        F("signal", STR, "`SIGKILL`"),
    ),
    when="a member was killed; its znodes stay until its session expires",
)

DEMO_MEMBER_STOPPED = declare(
    "demo.member_stopped", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("consumer_id", STR),
    ),
    when="a member left cleanly (SIGTERM), in a scene or at the end",
)

DEMO_MEMBER_PAUSED = declare(
    "demo.member_paused", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("consumer_id", STR),
        F("pid", INT),
        F("seconds", NUMBER),
    ),
    when="a scene's `pause`: the member was stopped (SIGSTOP) for `seconds`",
)

DEMO_MEMBER_RESUMED = declare(
    "demo.member_resumed", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("consumer_id", STR),
        F("pid", INT),
    ),
    when="the paused member was continued (SIGCONT)",
)

DEMO_SESSION_EXPIRED = declare(
    "demo.session_expired", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("consumer_id", STR),
        F("forced", BOOL, "false: the member had not written its session yet, nothing done"),
    ),
    when="a scene's `expire`: a second client on the member's ZooKeeper session, closed",
)

DEMO_PARTITIONS_ADDED = declare(
    "demo.partitions_added", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("topic", STR),
        F("before", INT),
        F("after", INT),
    ),
    when="the topic grew (CreatePartitions, or the demo's bridge raised its hold)",
)

DEMO_SETTLED = declare(
    "demo.settled", "info",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("scene", INT),
        F("valid", BOOL, "VerifyConsumerRebalance"),
        F("owners", LIST, "partitions with `thread`"),
    ),
    when="every live member finished rebalancing and the group verified",
)

DEMO_MEMBER_OUTPUT = declare(
    "demo.member_output", "warning",
    section="demo.markers",
    logger="zkconsumer.demo",
    fields=(
        F("consumer_id", STR),
        F("line", STR),
    ),
    when="a member printed something that is not a JSON event (a crash)",
)

MEMBER_STEP_WAITING = declare(
    "member.step_waiting", "info",
    section="demo.step_mode",
    logger="zkconsumer.members.step_control",
    fields=(
        F("consumer_id", STR),
        F("rebalance_id", INT),
        F("attempt", INT),
        F("step", INT, "its number"),
        F("name", STR, "as in `rebalance.<name>`"),
        F("title", STR),
        F("control", STR, "the FIFO the member reads `go` or `off` from"),
    ),
    when="the member's rebalance attempt waits before this step until the demo lets it go on",
)
