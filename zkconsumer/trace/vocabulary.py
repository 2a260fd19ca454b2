"""The vocabulary of the trace tools: which events they read, and the title, symbol and colour each is shown with.

One table for every renderer (the terminal timeline, the live narration, the HTML page and its SVG), so that a
step or a mark is named and drawn the same way everywhere. The steps themselves (number, event, title, meaning)
stay in :mod:`zkconsumer.events.rebalance_steps`, which the connector emits from; this module adds what only a
reader needs: a colour per step, the kinds of marks, how a member's life, a stop-the-world gap and an ownership
can end, and the group coordinator's lane (its events, the colours of the group states, its marks).
``tests/trace/test_vocabulary.py`` holds it to that: every step and every mark has a colour, every event
name here is documented in ``docs/events.md``, every step documented there is known here, and every event name
the trace code compares against is listed here.

Pure data; imports nothing of the trace tools, so that every one of them can import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zkconsumer.events import catalogue as ev
from zkconsumer.events.rebalance_steps import BY_EVENT, BY_NAME, STEPS, RebalanceStep

__all__ = [
    "BY_EVENT", "BY_NAME", "CLASSIC_PREFIX", "COLOUR", "CONFLICT", "CONSUMER_PREFIX", "COORDINATOR_EVENTS",
    "COORDINATOR_MARKS", "COORDINATOR_MARK_EVENTS", "COORDINATOR_MARK_KINDS", "COORDINATOR_PROTOCOLS", "EVENTS",
    "GAP_ENDS", "GROUP_STATES", "GROUP_STATE_KINDS", "LIFE_ENDS", "MARKER_EVENTS", "MARKS", "MARK_EVENTS",
    "MARK_KINDS", "OWNERSHIP_ENDS", "ROUND_FILL", "ROUND_STROKE", "SHAPES", "STEPS", "STEP_COLOURS",
    "UNKNOWN_MARK_SYMBOL", "UNKNOWN_STATE_COLOUR", "UNKNOWN_STEP_COLOUR", "CoordinatorMarkKind", "GroupStateKind",
    "LifeEnd", "MarkKind", "RebalanceStep", "Symbol", "coordinator_protocol", "mark_symbol", "mark_title",
    "state_colour", "state_key", "state_name", "step_colour",
]

COLOUR = re.compile(r"#[0-9a-f]{6}")  # the one spelling, so that colours compare as strings

# --- the steps --------------------------------------------------------------------------------------------------

STEP_COLOURS: dict[str, str] = {
    "read_cluster": "#4e79a7",
    "stop_fetchers": "#f28e2b",
    "commit_offsets": "#edc948",
    "listener_before_release": "#b07aa1",
    "release": "#e15759",
    "assign": "#76b7b2",
    "fetch_offsets": "#59a14f",
    "build_registry": "#9c755f",
    "claim": "#ff9da7",
    "listener_before_start": "#bab0ac",
    "start_fetchers": "#2f4b7c",
}
UNKNOWN_STEP_COLOUR = "#cccccc"  # a step of a later connector version, not in the step table


def step_colour(name: str, known: bool = True) -> str:
    """The colour of a step's block; grey for a step this version does not know, so a new step is still drawn."""
    return STEP_COLOURS.get(name, UNKNOWN_STEP_COLOUR) if known else UNKNOWN_STEP_COLOUR


# --- marks: something on a lane that went wrong or was retried ---------------------------------------------------


SHAPES = ("triangle", "circle", "ring", "square", "diamond", "cross", "bar")


@dataclass(frozen=True, slots=True)
class Symbol:
    """How a mark is drawn: one of ``SHAPES`` (shapes rather than glyphs, so that no font has to have them) in a
    colour. Checked when made, so a symbol the page cannot draw fails at import, not in a reader's browser."""

    shape: str
    colour: str

    def __post_init__(self) -> None:
        if self.shape not in SHAPES or not COLOUR.fullmatch(self.colour):
            raise ValueError(f"not a drawable symbol: {self.shape} {self.colour}")


@dataclass(frozen=True, slots=True)
class MarkKind:
    """``event`` is the event a mark of this kind comes from; ``None`` for a conflict, which is a
    ``rebalance.claim`` with a non-empty ``conflicts`` rather than an event of its own."""

    kind: str
    event: str | None
    title: str
    symbol: Symbol


CONFLICT = "conflict"

# In the legend's order.
MARK_KINDS: tuple[MarkKind, ...] = (
    MarkKind(CONFLICT, None, "ownership conflict", Symbol("triangle", "#e6550d")),
    MarkKind("attempt_failed", ev.REBALANCE_ATTEMPT_FAILED, "attempt failed, retried", Symbol("circle", "#e6550d")),
    MarkKind("rebalance_failed", ev.REBALANCE_FAILED, "rebalance failed", Symbol("square", "#b10026")),
    MarkKind("retrying", ev.REBALANCE_RETRYING_AFTER_FAILURE, "retrying after a failed rebalance",
             Symbol("diamond", "#b10026")),
    MarkKind("rebalance_error", ev.REBALANCE_ERROR, "rebalance error", Symbol("square", "#7a0177")),
    MarkKind("no_brokers", ev.REBALANCE_NO_BROKERS, "no broker", Symbol("ring", "#636363")),
    MarkKind("session_expired", ev.SESSION_EXPIRED, "session expired", Symbol("cross", "#b10026")),
    MarkKind("session_lost", ev.ZOOKEEPER_SESSION_LOST, "ZooKeeper session lost", Symbol("cross", "#7a0177")),
    MarkKind("suspended", ev.ZOOKEEPER_SUSPENDED, "ZooKeeper connection suspended", Symbol("bar", "#7a0177")),
    MarkKind("suspended_too_long", ev.ZOOKEEPER_SUSPENDED_TOO_LONG, "cut off too long: stopped fetching",
             Symbol("bar", "#b10026")),
    MarkKind("chunk_fenced", ev.STREAM_CHUNK_FENCED, "chunk dropped: session lost during a pause",
             Symbol("diamond", "#08519c")),
    # A demo event about one member rather than the whole run: a mark on its lane (a crash's traceback would
    # otherwise draw a line across the page for every line it printed).
    MarkKind("member_output", ev.DEMO_MEMBER_OUTPUT, "member printed a non-event line", Symbol("square", "#000000")),
)
MARKS: dict[str, MarkKind] = {mark.kind: mark for mark in MARK_KINDS}
MARK_EVENTS: dict[str, str] = {mark.event: mark.kind for mark in MARK_KINDS if mark.event is not None}
UNKNOWN_MARK_SYMBOL = Symbol("circle", "#636363")


def mark_title(kind: str) -> str:
    mark = MARKS.get(kind)
    return mark.title if mark is not None else kind


def mark_symbol(kind: str) -> Symbol:
    mark = MARKS.get(kind)
    return mark.symbol if mark is not None else UNKNOWN_MARK_SYMBOL


# --- how things end ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LifeEnd:
    """How a member's life on its lane ends, and the symbol drawn there. ``in_legend`` is false for an end drawn
    with another's symbol (a demo member that left cleanly looks like any shutdown)."""

    kind: str
    event: str
    title: str
    symbol: Symbol
    in_legend: bool = True


LIFE_ENDS: dict[str, LifeEnd] = {end.kind: end for end in (
    LifeEnd("killed", ev.DEMO_MEMBER_KILLED, "member killed", Symbol("cross", "#000000")),
    LifeEnd("shutdown", ev.CONSUMER_SHUTDOWN, "member shut down", Symbol("bar", "#555555")),
    LifeEnd("stopped", ev.DEMO_MEMBER_STOPPED, "member stopped", Symbol("bar", "#555555"), in_legend=False),
)}

# How a stop-the-world gap that this rebalance did not close ends (``Gap.ended_by``), as the end of a sentence.
GAP_ENDS: dict[str, str] = {
    "later_restart": "until a later rebalance restarted the fetchers",
    "shutdown": "until the shutdown",
    "stopped": "until the member stopped",
    "killed": "until the member was killed",
    "trace_end": "until the end of the trace",
}

# How a thread's ownership of a partition ends (``Ownership.ended_by``); ``taken_over`` names its successor and
# is worded where it is described.
OWNERSHIP_ENDS: dict[str, str] = {
    "released": "released",
    "session_expired": "dropped when its session expired",
    "shutdown": "ended by the shutdown",
    "moved": "moved to another thread",
    "not_owned": "not owned after the rebalance",
}

# --- the group coordinator's lane -------------------------------------------------------------------------------
# The front's group coordinator (:mod:`zkconsumer.front`) logs what it does as ``front.group.*`` (the classic
# protocol) and ``front.consumer_group.*`` (KIP-848's); each event names its group in ``group``. The trace draws one
# lane per group: the group's state as a band, each round as a block, and marks for the members coming and going.

CLASSIC_PREFIX = "front.group."
CONSUMER_PREFIX = "front.consumer_group."
COORDINATOR_PROTOCOLS: dict[str, str] = {CLASSIC_PREFIX: "classic", CONSUMER_PREFIX: "consumer"}


@dataclass(frozen=True, slots=True)
class GroupStateKind:
    """A group state as Kafka's DescribeGroups and ConsumerGroupDescribe name it, what it means to a member, and the
    colour of its stretch of the band. The events may spell a state in either case or with underscores
    (KIP-848's ``ASSIGNING``), so a state is looked up by :func:`state_key`."""

    state: str
    meaning: str
    colour: str


# In the legend's order: the classic states, then KIP-848's own, then the end.
GROUP_STATES: tuple[GroupStateKind, ...] = (
    GroupStateKind("Empty", "no member", "#e9e9e9"),
    GroupStateKind("PreparingRebalance", "a join round: the coordinator waits for the members to (re)join",
                   "#fdae6b"),
    GroupStateKind("CompletingRebalance", "the round is done: the members wait for the leader's assignment",
                   "#fdd9a8"),
    GroupStateKind("Stable", "every member has its assignment", "#b5dea8"),
    GroupStateKind("Assigning", "KIP-848: the group epoch is ahead of the target assignment's", "#9ecae1"),
    GroupStateKind("Reconciling", "KIP-848: members are moving to the target assignment", "#cfe1f2"),
    GroupStateKind("Dead", "the group was removed", "#8c8c8c"),
)
UNKNOWN_STATE_COLOUR = "#cccccc"


def state_key(state: str) -> str:
    return state.replace("_", "").replace(" ", "").lower()


GROUP_STATE_KINDS: dict[str, GroupStateKind] = {state_key(kind.state): kind for kind in GROUP_STATES}


def state_colour(state: str) -> str:
    kind = GROUP_STATE_KINDS.get(state_key(state))
    return kind.colour if kind is not None else UNKNOWN_STATE_COLOUR


def state_name(state: str) -> str:
    """Kafka's spelling of a state the events spell their own way; an unknown one as it came."""
    kind = GROUP_STATE_KINDS.get(state_key(state))
    return kind.state if kind is not None else state


@dataclass(frozen=True, slots=True)
class CoordinatorMarkKind:
    """A mark on a coordinator's lane and the events (of either protocol) it comes from."""

    kind: str
    events: tuple[str, ...]
    title: str
    symbol: Symbol


# In the legend's order.
COORDINATOR_MARK_KINDS: tuple[CoordinatorMarkKind, ...] = (
    CoordinatorMarkKind("joined", (ev.FRONT_GROUP_MEMBER_JOINED, ev.FRONT_CONSUMER_GROUP_MEMBER_JOINED),
                        "member joined the group", Symbol("circle", "#31a354")),
    CoordinatorMarkKind("left", (ev.FRONT_GROUP_MEMBER_LEFT, ev.FRONT_CONSUMER_GROUP_MEMBER_LEFT),
                        "member left the group", Symbol("ring", "#31a354")),  # hollow: the join's colour
    CoordinatorMarkKind("expired", (ev.FRONT_GROUP_MEMBER_EXPIRED, ev.FRONT_CONSUMER_GROUP_MEMBER_EXPIRED),
                        "member expired (removed by a timeout)", Symbol("cross", "#d94801")),
    # A static member replaced by a new instance is fenced: the old member id gets FENCED_INSTANCE_ID.
    CoordinatorMarkKind("fenced", (ev.FRONT_GROUP_STATIC_MEMBER_REPLACED, ev.FRONT_CONSUMER_GROUP_MEMBER_FENCED,
                                   ev.FRONT_CONSUMER_GROUP_STATIC_MEMBER_REPLACED),
                        "member fenced", Symbol("square", "#dd3497")),
    CoordinatorMarkKind("assignment", (ev.FRONT_GROUP_ASSIGNMENT_SENT,
                                       ev.FRONT_CONSUMER_GROUP_TARGET_ASSIGNMENT_COMPUTED),
                        "assignment sent (classic) or target assignment computed (KIP-848)",
                        Symbol("diamond", "#2171b5")),
)
COORDINATOR_MARKS: dict[str, CoordinatorMarkKind] = {mark.kind: mark for mark in COORDINATOR_MARK_KINDS}
COORDINATOR_MARK_EVENTS: dict[str, str] = {event: mark.kind for mark in COORDINATOR_MARK_KINDS
                                           for event in mark.events}
ROUND_FILL = "#dadaeb"  # a coordinator's round: from its start to the new generation (or group epoch)
ROUND_STROKE = "#6a51a3"

# Every coordinator event the trace reads; any other ``front.*`` event (the front's connections, for one) is
# ignored as other components' are.
COORDINATOR_EVENTS: frozenset[str] = frozenset(CLASSIC_PREFIX + name for name in (
    "created", "state_changed", "member_id_required", "member_joined", "member_rejoined", "static_member_replaced",
    "member_left", "member_expired", "round_started", "initial_delay_extended", "round_completed",
    "round_postponed", "assignment_sent", "deleted",
)) | frozenset(CONSUMER_PREFIX + name for name in (
    "created", "state_changed", "member_joined", "static_member_replaced", "member_left", "member_fenced",
    "member_expired", "epoch_bumped", "target_assignment_computed", "member_epoch_advanced", "member_state_changed",
    "partitions_revoked", "partitions_assigned", "heartbeat_rejected", "deleted",
))


def coordinator_protocol(name: str) -> str | None:
    """``classic`` or ``consumer`` for a coordinator event the trace reads, else ``None``."""
    if name not in COORDINATOR_EVENTS:
        return None
    return COORDINATOR_PROTOCOLS[CLASSIC_PREFIX if name.startswith(CLASSIC_PREFIX) else CONSUMER_PREFIX]


# --- the event names --------------------------------------------------------------------------------------------

# The demo's markers: drawn across every lane and shown as headings (``demo.member_output`` is a mark instead).
MARKER_EVENTS: tuple[str, ...] = (
    ev.DEMO_SCENE, ev.DEMO_MEMBER_STARTED, ev.DEMO_MEMBER_KILLED, ev.DEMO_MEMBER_STOPPED, ev.DEMO_SETTLED,
    ev.DEMO_PARTITIONS_ADDED,
)

# The rest of what the timeline, its text and the narration read and put in words.
_OTHER_EVENTS: tuple[str, ...] = (
    ev.REBALANCE_TRIGGERED, ev.REBALANCE_STARTED, ev.REBALANCE_COMPLETED,
    ev.CONSUMER_CONNECTED, ev.CONSUMER_REGISTRATION_WAITING, ev.CONSUMER_REGISTERED, ev.ZOOKEEPER_CONNECTED,
    ev.CONSUMER_SHUTTING_DOWN, ev.CONSUMER_SHUTDOWN_ERROR,
    ev.OFFSETS_COMMITTED, ev.OFFSETS_COMMIT_SKIPPED, ev.OFFSETS_COMMIT_FAILED, ev.ZNODE_MALFORMED,
    ev.STREAM_OFFSET_GAP, ev.STREAM_END,
)

EVENTS: frozenset[str] = frozenset(
    [step.event for step in STEPS] + list(MARK_EVENTS) + [end.event for end in LIFE_ENDS.values()]
    + list(MARKER_EVENTS) + list(_OTHER_EVENTS) + list(COORDINATOR_EVENTS)
)
