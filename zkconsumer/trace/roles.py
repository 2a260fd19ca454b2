"""What each event of a member means to its rebalances, stated once for the two ways they are read: the timeline
(:mod:`zkconsumer.trace.timeline`, line by line: what ``zkconsumer trace`` draws and
:func:`zkconsumer.fleet.events.member_figures` counts) dispatches on these roles; the columns of ``analyze events``
(:mod:`zkconsumer.fleet.event_columns`) take from them which events they compute, which they may pass over, which
leave a member to the timeline, and the fields their schema reads with the types the timeline accepts.

Pure data; below the timeline, above the catalogue, the steps and the vocabulary it names events from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType

from zkconsumer.events import catalogue as ev
from zkconsumer.events.rebalance_steps import BY_NAME, STEPS
from zkconsumer.trace.values import finite_number, integer
from zkconsumer.trace.vocabulary import MARK_EVENTS

REBALANCE_PREFIX = "rebalance."
MARKER_PREFIX = "demo."


class Role(StrEnum):
    """What an event does to its member's rebalances (and, for the last four, to the member's lane only)."""

    STARTED = "started"  # begins a rebalance: its rebalance_id, its cause
    STEP = "step"  # one step of an attempt, logged when it ended: a block reaching back by its duration_ms
    ATTEMPT_FAILED = "attempt_failed"  # ends an attempt (attempt) with a reason and a backoff_ms: it is retried
    COMPLETED = "completed"  # ends a rebalance: its duration_ms, the attempt that completed (attempts), owned
    FAILED = "failed"  # ends a rebalance that gave up, with its duration_ms
    REBALANCE_MARK = "rebalance_mark"  # a mark of the rebalance and attempt it names
    REQUESTED = "requested"  # asks for a rebalance, which begins with its own STARTED: changes nothing
    LANE_MARK = "lane_mark"  # a mark of the member, naming the rebalance in progress if one is
    SESSION_EXPIRED = "session_expired"  # a lane mark; the member's owner znodes went with its session
    SHUTDOWN = "shutdown"  # ends the member's life and what it owned


#: the roles whose events change none of a member's rebalances: only its lane (marks, lives, what it owns)
LANE_ONLY: frozenset[Role] = frozenset({Role.REQUESTED, Role.LANE_MARK, Role.SESSION_EXPIRED, Role.SHUTDOWN})

ROLES: Mapping[str, Role] = MappingProxyType({
    **{step.event: Role.STEP for step in STEPS},
    **{name: Role.REBALANCE_MARK if name.startswith(REBALANCE_PREFIX) else Role.LANE_MARK for name in MARK_EVENTS},
    # what happens between rebalances: a retry after one failed, an error that ended one
    ev.REBALANCE_RETRYING_AFTER_FAILURE: Role.LANE_MARK,
    ev.REBALANCE_ERROR: Role.LANE_MARK,
    ev.REBALANCE_TRIGGERED: Role.REQUESTED,
    ev.REBALANCE_STARTED: Role.STARTED,
    ev.REBALANCE_ATTEMPT_FAILED: Role.ATTEMPT_FAILED,
    ev.REBALANCE_COMPLETED: Role.COMPLETED,
    ev.REBALANCE_FAILED: Role.FAILED,
    ev.SESSION_EXPIRED: Role.SESSION_EXPIRED,
    ev.CONSUMER_SHUTDOWN: Role.SHUTDOWN,
})

#: An event without a role changes none of its member's rebalances unless its name begins with one of these: a later
#: version's step (``rebalance.*`` with a ``step`` and a ``duration_ms``, :func:`later_step`), or a demo marker,
#: which can begin or end a member's life on the timeline.
UNKNOWN_MAY_MATTER: tuple[str, ...] = (REBALANCE_PREFIX, MARKER_PREFIX)

# The steps whose events say more than their time: stop-the-world runs from the start of a rebalance's first
# PAUSE_BEGINS to the end of the PAUSE_ENDS of the attempt that completed; a CLAIM's conflicts are partitions found
# held by someone else; the last ASSIGN lists the group's members; a RELEASE's released partitions are no longer
# owned.
PAUSE_BEGINS = BY_NAME["stop_fetchers"]
PAUSE_ENDS = BY_NAME["start_fetchers"]
CLAIM = BY_NAME["claim"]
ASSIGN = BY_NAME["assign"]
RELEASE = BY_NAME["release"]

#: a step's event carrying this field (even as ``null``) raised: what it was to do did not happen
ERROR = "error"


class Kind(StrEnum):
    """A field's type, as the timeline reads it (anything else in the field: as if it were missing)."""

    TEXT = "text"
    INTEGER = "integer"  # 64 bits at most, not a bool
    NUMBER = "number"  # finite, not a bool
    TEXTS = "texts"  # a list of strings
    PARTITIONS = "partitions"  # a list of {"topic": text, "partition": integer}


@dataclass(frozen=True, slots=True)
class FigureField:
    """A field a member's figures are made of, read ``on`` those events (every event when empty) as ``kind``."""

    name: str
    kind: Kind
    on: tuple[str, ...]
    meaning: str


def _of(*roles: Role) -> tuple[str, ...]:
    return tuple(name for name, role in ROLES.items() if role in roles)


#: every field a member's figures are made of (``tests/trace/test_roles.py`` holds them to the catalogue's fields)
FIELDS: tuple[FigureField, ...] = (
    FigureField("consumer_id", Kind.TEXT, (), "the member, whose lane the event is on"),
    FigureField("group", Kind.TEXT, (), "the member's group: the first its events name"),
    FigureField("event", Kind.TEXT, (), "the name, whose role is in ROLES"),
    FigureField("timestamp", Kind.TEXT, (), "when it happened; a step's, when it ended"),
    FigureField("rebalance_id", Kind.INTEGER, _of(Role.STARTED, Role.STEP, Role.ATTEMPT_FAILED, Role.COMPLETED),
                "the rebalance the event belongs to"),
    FigureField("attempt", Kind.INTEGER, _of(Role.STEP, Role.ATTEMPT_FAILED), "the attempt of a step or a failure"),
    FigureField("step", Kind.INTEGER, (), "the number a later version's step (no role here) is drawn with"),
    FigureField("duration_ms", Kind.NUMBER, _of(Role.STEP, Role.COMPLETED, Role.FAILED),
                "a step's length (its block reaches back by it, from 0); a rebalance's own figure"),
    FigureField("cause", Kind.TEXT, _of(Role.STARTED), "what began a rebalance"),
    FigureField("attempts", Kind.INTEGER, _of(Role.COMPLETED), "the attempt that completed (else the last a step "
                                                               "names)"),
    FigureField("members", Kind.TEXTS, (ASSIGN.event,), "the group's members"),
    FigureField("owned", Kind.PARTITIONS, _of(Role.COMPLETED), "all the member owns after a completed rebalance"),
    FigureField("conflicts", Kind.PARTITIONS, (CLAIM.event,), "partitions found held by someone else"),
)


def later_step(name: str, fields: Mapping[str, object]) -> bool:
    """A ``rebalance.*`` event with no role here that looks like a step (a later version's): drawn as one."""
    return (name.startswith(REBALANCE_PREFIX) and name not in ROLES and integer(fields.get("step")) is not None
            and finite_number(fields.get("duration_ms")) is not None)
