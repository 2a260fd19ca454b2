"""The trace tools' one vocabulary (:mod:`zkconsumer.trace.vocabulary`): every step of the connector's step table and
every mark has a colour and a symbol the page can draw; it agrees with the contract in ``docs/events.md`` both
ways for the steps, and names only documented events; and it is the only list: every event name the trace code
and the narration compare against is in it."""

from __future__ import annotations

import ast
import json
import re
from datetime import UTC, datetime, timedelta

from docs_pages import rendered
from support import REPO

from zkconsumer.events import catalogue, rebalance_steps
from zkconsumer.trace import vocabulary
from zkconsumer.trace.timeline import build_timeline, read_events
from zkconsumer.trace.timeline_html import _shape, render_html, render_svg
from zkconsumer.trace.vocabulary import (
    COLOUR,
    CONFLICT,
    EVENTS,
    LIFE_ENDS,
    MARK_EVENTS,
    MARK_KINDS,
    SHAPES,
    STEP_COLOURS,
    UNKNOWN_STEP_COLOUR,
    Symbol,
    step_colour,
)

EVENTS_MD = rendered("events.md")  # its tables made from the catalogue, as the site shows them
READERS = [*sorted((REPO / "zkconsumer" / "trace").glob("*.py")), REPO / "zkconsumer" / "demo" / "narration.py"]
EVENT_NAME = re.compile(r"(?:rebalance|consumer|zookeeper|session|offsets|znode|stream|demo|fetcher|fetcher_manager"
                        r"|leader_finder|front\.group|front\.consumer_group)\.[a-z_]+")
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def documented_names() -> set[str]:
    return set(re.findall(r"`([a-z_]+(?:\.[a-z_]+)+)`", EVENTS_MD))


def documented_steps() -> dict[str, int]:
    """The step table of docs/events.md: ``| 1 | `rebalance.read_cluster` | ...`` -> {event: number}."""
    return {name: int(number) for number, name in
            re.findall(r"^\|\s*(\d+)\s*\|\s*`(rebalance\.[a-z_]+)`", EVENTS_MD, re.MULTILINE)}


def test_every_step_has_its_own_colour():
    for step in rebalance_steps.STEPS:
        assert COLOUR.fullmatch(STEP_COLOURS[step.name]), step.name
        assert step_colour(step.name) == STEP_COLOURS[step.name] != UNKNOWN_STEP_COLOUR
    assert set(STEP_COLOURS) == set(rebalance_steps.BY_NAME)  # no colour for a step that is not there
    assert len(set(STEP_COLOURS.values())) == len(STEP_COLOURS)  # a legend tells them apart
    assert step_colour("a_later_step") == step_colour("claim", known=False) == UNKNOWN_STEP_COLOUR


def test_the_steps_are_the_connectors_table():
    assert vocabulary.STEPS is rebalance_steps.STEPS and vocabulary.BY_EVENT is rebalance_steps.BY_EVENT


def test_every_mark_and_life_end_has_a_title_and_a_drawable_symbol():
    kinds = [mark.kind for mark in MARK_KINDS]
    assert len(set(kinds)) == len(kinds) and CONFLICT in kinds
    for thing in (*MARK_KINDS, *LIFE_ENDS.values()):
        assert thing.title and thing.symbol.shape in SHAPES and COLOUR.fullmatch(thing.symbol.colour), thing
    assert set(MARK_EVENTS.values()) == set(kinds) - {CONFLICT}
    # each shape is drawn as itself (an unknown one would silently become a bar)
    assert len({_shape(shape, 10, 10, "#000000") for shape in SHAPES}) == len(SHAPES)
    for bad in (("star", "#000000"), ("circle", "red"), ("circle", "#FFF")):
        try:
            Symbol(*bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad} accepted")


def test_every_coordinator_mark_and_state_can_be_told_apart_in_the_legend():
    for mark in vocabulary.COORDINATOR_MARK_KINDS:
        assert mark.title and mark.events and all(e in EVENTS for e in mark.events), mark
    in_legend = [*MARK_KINDS, *(end for end in LIFE_ENDS.values() if end.in_legend),
                 *vocabulary.COORDINATOR_MARK_KINDS]
    symbols = [(thing.symbol.shape, thing.symbol.colour) for thing in in_legend]
    assert len(set(symbols)) == len(symbols), "two legend entries drawn alike"
    colours = [state.colour for state in vocabulary.GROUP_STATES]
    assert all(COLOUR.fullmatch(c) for c in colours) and len(set(colours)) == len(colours)
    assert vocabulary.UNKNOWN_STATE_COLOUR not in colours
    for state in vocabulary.GROUP_STATES:  # Kafka's enum spelling finds the same state
        spelt = re.sub(r"(?<!^)([A-Z])", r"_\1", state.state).upper()
        assert vocabulary.state_name(spelt) == state.state and vocabulary.state_colour(spelt) == state.colour
    assert vocabulary.state_name("Rebalancing") == "Rebalancing"
    assert vocabulary.state_colour("Rebalancing") == vocabulary.UNKNOWN_STATE_COLOUR


def test_every_event_the_vocabulary_knows_is_documented():
    missing = EVENTS - documented_names()
    assert not missing, f"not in docs/events.md: {sorted(missing)}"


def test_the_documented_steps_are_the_known_steps_with_their_numbers():
    documented = documented_steps()
    assert len(documented) >= 10, "the step table of docs/events.md was not found"
    assert documented == {step.event: step.number for step in rebalance_steps.STEPS}


def test_every_event_name_the_trace_code_reads_is_in_the_vocabulary():
    """An event name compared against anywhere in the trace tools or the narration, but not listed, would be a
    second vocabulary growing beside the first. The code names events by the catalogue's constants (``ev.*``)."""
    found: dict[str, set[str]] = {}
    for path in READERS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            name = None
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and EVENT_NAME.fullmatch(node.value):
                name = node.value
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "ev"
                  and isinstance(getattr(catalogue, node.attr, None), catalogue.Event)):
                name = str(getattr(catalogue, node.attr))  # the catalogue's constant, as the code names events
            if name is not None:
                found.setdefault(name, set()).add(path.name)
    assert "rebalance.completed" in found and "demo.scene" in found  # the scan sees the code
    unknown = {name: sorted(where) for name, where in found.items() if name not in EVENTS}
    assert not unknown, f"event names read but not in the vocabulary: {unknown}"


def test_the_page_draws_every_mark_kind_in_its_vocabulary_colour():
    """One event of each mark kind on a lane: each symbol is drawn with its kind's colour, and named in the legend."""

    def line(name: str, at: float, **fields) -> str:
        stamp = (T0 + timedelta(seconds=at)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return json.dumps({**fields, "event": name, "level": "warning", "timestamp": stamp})

    lines = [line("rebalance.started", 0, consumer_id="c1", rebalance_id=1, cause="initial")]
    lines.append(line("rebalance.claim", 0.5, consumer_id="c1", rebalance_id=1, attempt=1, step=8, duration_ms=1,
                      claimed=[], already_ours=[], conflicts=[{"topic": "t", "partition": 0, "holder": "c2-0"}]))
    for i, event in enumerate(MARK_EVENTS, start=1):
        lines.append(line(event, i, consumer_id="c1", rebalance_id=1, attempt=1))
    svg = render_svg(build_timeline(read_events(lines)))
    for mark in MARK_KINDS:
        drawn = re.findall(rf'<g class="(?:legend-)?mark" data-kind="{mark.kind}"[^>]*>.*?</g>', svg)
        assert len(drawn) == 2, mark.kind  # on the lane, and in the legend
        assert all(f'"{mark.symbol.colour}"' in symbol for symbol in drawn), mark.kind
        assert f">{mark.title}</text></g>" in drawn[-1]
    page = render_html(build_timeline(read_events(lines)))
    for step in rebalance_steps.STEPS:
        assert f'fill="{STEP_COLOURS[step.name]}"/><text' in page  # its legend swatch
