"""The demo's events: the markers it records among its members' events, and the step mode's."""

from __future__ import annotations

from zkconsumer.events import shared_fields as shared
from zkconsumer.events.spec import BOOL, INT, LIST, NUMBER, STR, section
from zkconsumer.events.spec import Field as F

#: what the catalogue gathers from this area: its events, nothing else (its fields and sections stay here)
__all__ = [
    "DEMO_SCENE", "DEMO_MEMBER_STARTED", "DEMO_MEMBER_KILLED", "DEMO_MEMBER_STOPPED", "DEMO_MEMBER_PAUSED",
    "DEMO_MEMBER_RESUMED", "DEMO_SESSION_EXPIRED", "DEMO_PARTITIONS_ADDED", "DEMO_SETTLED", "DEMO_MEMBER_OUTPUT",
    "MEMBER_STEP_WAITING",
]

_MARKERS = section("demo.markers", "zkconsumer.demo", columns=("event", "fields", "when"), context=("protocol",))
_STEP_MODE = section("demo.step_mode", "zkconsumer.members.step_control", columns=("event", "fields", "when"))

DEMO_SCENE = _MARKERS.event("demo.scene", "info",
    "a scene begins (before its actions)", F("scene", INT, "1, 2, ... as the scenario numbers them"), shared.TITLE,
    shared.NOTE)
DEMO_MEMBER_STARTED = _MARKERS.event("demo.member_started", "info",
    "a member process was started", shared.CONSUMER_ID, shared.PID, F("streams", INT))
DEMO_MEMBER_KILLED = _MARKERS.event("demo.member_killed", "info",
    "a member was killed; its znodes stay until its session expires", shared.CONSUMER_ID, shared.PID,
    F("signal", STR, "`SIGKILL`"))
DEMO_MEMBER_STOPPED = _MARKERS.event("demo.member_stopped", "info",
    "a member left cleanly (SIGTERM), in a scene or at the end", shared.CONSUMER_ID)
DEMO_MEMBER_PAUSED = _MARKERS.event("demo.member_paused", "info",
    "a scene's `pause`: the member was stopped (SIGSTOP) for `seconds`", shared.CONSUMER_ID, shared.PID,
    F("seconds", NUMBER))
DEMO_MEMBER_RESUMED = _MARKERS.event("demo.member_resumed", "info",
    "the paused member was continued (SIGCONT)", shared.CONSUMER_ID, shared.PID)
DEMO_SESSION_EXPIRED = _MARKERS.event("demo.session_expired", "info",
    "a scene's `expire`: a second client on the member's ZooKeeper session, closed", shared.CONSUMER_ID,
    F("forced", BOOL, "false: the member had not written its session yet, nothing done"))
DEMO_PARTITIONS_ADDED = _MARKERS.event("demo.partitions_added", "info",
    "the topic grew (CreatePartitions, or the demo's bridge raised its hold)", shared.TOPIC, F("before", INT),
    F("after", INT))
DEMO_SETTLED = _MARKERS.event("demo.settled", "info",
    "every live member finished rebalancing and the group verified", shared.SCENE,
    F("valid", BOOL, "VerifyConsumerRebalance"), F("owners", LIST, "partitions with `thread`"))
DEMO_MEMBER_OUTPUT = _MARKERS.event("demo.member_output", "warning",
    "a member printed something that is not a JSON event (a crash)", shared.CONSUMER_ID, F("line", STR))
MEMBER_STEP_WAITING = _STEP_MODE.event("member.step_waiting", "info",
    "the member's rebalance attempt waits before this step until the demo lets it go on", shared.CONSUMER_ID,
    F("rebalance_id", INT), shared.ATTEMPT, F("step", INT, "its number"), F("name", STR, "as in `rebalance.<name>`"),
    shared.TITLE, F("control", STR, "the FIFO the member reads `go` or `off` from"))
