"""The table of what events mean to a member's rebalances (:mod:`zkconsumer.trace.roles`) agrees with the catalogue
(every event it gives a role is declared; every field it reads is one the events it is read on declare, in a kind
the catalogue allows) and with the timeline (every role has a handler, and the three steps with more to say have
theirs)."""

from __future__ import annotations

from zkconsumer.events import catalogue as ev
from zkconsumer.events import spec
from zkconsumer.trace import timeline
from zkconsumer.trace.roles import (
    ASSIGN,
    CLAIM,
    FIELDS,
    LANE_ONLY,
    PAUSE_BEGINS,
    PAUSE_ENDS,
    RELEASE,
    ROLES,
    Kind,
    Role,
)

CATALOGUE_KINDS = {Kind.TEXT: spec.STR, Kind.INTEGER: spec.INT, Kind.NUMBER: spec.NUMBER, Kind.TEXTS: spec.LIST,
                   Kind.PARTITIONS: spec.LIST}


def test_every_event_with_a_role_is_declared():
    assert sorted(name for name in ROLES if name not in ev.BY_NAME) == []
    assert ROLES[ev.REBALANCE_STARTED] is Role.STARTED and ROLES[ev.REBALANCE_COMPLETED] is Role.COMPLETED
    assert {PAUSE_BEGINS.event, PAUSE_ENDS.event, CLAIM.event, ASSIGN.event} <= {n for n, r in ROLES.items()
                                                                                  if r is Role.STEP}


def test_every_field_the_figures_read_is_declared_by_the_events_it_is_read_on():
    wrong = []
    for field in FIELDS:
        assert field.on or field.name in ev.COMMON_FIELDS or field.name == "step", field.name  # step: later steps
        for name in field.on:
            if field.name in ev.COMMON_FIELDS:
                continue
            declared = ev.BY_NAME[name].accepted().get(field.name)
            if declared is None or not set(CATALOGUE_KINDS[field.kind].types) <= set(declared.types):
                wrong.append((name, field.name, declared))
    assert wrong == []


def test_the_timeline_handles_every_role():
    assert set(timeline._BY_ROLE) == set(Role)
    for name, role in ROLES.items():
        if name not in (CLAIM.event, RELEASE.event, ASSIGN.event):
            assert timeline._HANDLERS[name] is timeline._BY_ROLE[role], name
    assert Role.STARTED not in LANE_ONLY and Role.REQUESTED in LANE_ONLY
