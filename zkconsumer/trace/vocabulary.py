"""The vocabulary of the trace tools: which events they read, and the title, symbol and colour each is shown with.

One table for every renderer (the terminal timeline, the live narration, the HTML page and its SVG), so that a
step or a mark is named and drawn the same way everywhere. The steps themselves (number, event, title, meaning)
stay in :mod:`zkconsumer.events.rebalance_steps`, which the connector emits from; this module adds what only a
reader needs: a colour per step, the kinds of marks, how a member's life, a stop-the-world gap and an ownership
can end. ``tests/trace/test_vocabulary.py`` holds it to that: every step and every mark has a colour, every event
name here is documented in ``docs/events.md``, every step documented there is known here, and every event name
the trace code compares against is listed here.

Pure data; imports nothing of the trace tools, so that every one of them can import it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zkconsumer.events.rebalance_steps import BY_EVENT, BY_NAME, STEPS, RebalanceStep

__all__ = [
    "BY_EVENT", "BY_NAME", "COLOUR", "CONFLICT", "EVENTS", "GAP_ENDS", "LIFE_ENDS", "MARKER_EVENTS", "MARKS",
    "MARK_EVENTS", "MARK_KINDS", "OWNERSHIP_ENDS", "SHAPES", "STEPS", "STEP_COLOURS", "UNKNOWN_MARK_SYMBOL",
    "UNKNOWN_STEP_COLOUR", "LifeEnd", "MarkKind", "RebalanceStep", "Symbol", "mark_symbol", "mark_title", "step_colour",
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
    MarkKind("attempt_failed", "rebalance.attempt_failed", "attempt failed, retried", Symbol("circle", "#e6550d")),
    MarkKind("rebalance_failed", "rebalance.failed", "rebalance failed", Symbol("square", "#b10026")),
    MarkKind("retrying", "rebalance.retrying_after_failure", "retrying after a failed rebalance",
             Symbol("diamond", "#b10026")),
    MarkKind("rebalance_error", "rebalance.error", "rebalance error", Symbol("square", "#7a0177")),
    MarkKind("no_brokers", "rebalance.no_brokers", "no broker", Symbol("ring", "#636363")),
    MarkKind("session_expired", "session.expired", "session expired", Symbol("cross", "#b10026")),
    MarkKind("session_lost", "zookeeper.session_lost", "ZooKeeper session lost", Symbol("cross", "#7a0177")),
    MarkKind("suspended", "zookeeper.suspended", "ZooKeeper connection suspended", Symbol("bar", "#7a0177")),
    MarkKind("suspended_too_long", "zookeeper.suspended_too_long", "cut off too long: stopped fetching",
             Symbol("bar", "#b10026")),
    # A demo event about one member rather than the whole run: a mark on its lane (a crash's traceback would
    # otherwise draw a line across the page for every line it printed).
    MarkKind("member_output", "demo.member_output", "member printed a non-event line", Symbol("square", "#000000")),
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
    LifeEnd("killed", "demo.member_killed", "member killed", Symbol("cross", "#000000")),
    LifeEnd("shutdown", "consumer.shutdown", "member shut down", Symbol("bar", "#555555")),
    LifeEnd("stopped", "demo.member_stopped", "member stopped", Symbol("bar", "#555555"), in_legend=False),
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

# --- the event names --------------------------------------------------------------------------------------------

# The demo's markers: drawn across every lane and shown as headings (``demo.member_output`` is a mark instead).
MARKER_EVENTS: tuple[str, ...] = (
    "demo.scene", "demo.member_started", "demo.member_killed", "demo.member_stopped", "demo.settled",
    "demo.partitions_added",
)

# The rest of what the timeline, its text and the narration read and put in words.
_OTHER_EVENTS: tuple[str, ...] = (
    "rebalance.triggered", "rebalance.started", "rebalance.completed",
    "consumer.connected", "consumer.registration_waiting", "consumer.registered", "zookeeper.connected",
    "consumer.shutting_down", "consumer.shutdown_error",
    "offsets.committed", "offsets.commit_skipped", "offsets.commit_failed", "znode.malformed",
    "stream.offset_gap", "stream.end",
)

EVENTS: frozenset[str] = frozenset(
    [step.event for step in STEPS] + list(MARK_EVENTS) + [end.event for end in LIFE_ENDS.values()]
    + list(MARKER_EVENTS) + list(_OTHER_EVENTS)
)
