"""The catalogue of events (:mod:`zkconsumer.events.catalogue`) keeps its contract: one constant per event, named after
it, equal to its name and carrying its declaration, and nothing else but its documented helpers; the rebalance
steps' events made from the steps' table; every field and section declared once."""

from __future__ import annotations

import ast
import importlib
import inspect
import pickle
import pkgutil
from types import ModuleType

import pytest

import zkconsumer.events
from zkconsumer.events import catalogue as ev
from zkconsumer.events import rebalance_steps
from zkconsumer.events.spec import EMISSIONS, LEVELS, SECTIONS, Event

#: what the catalogue holds besides the events (its docstring says what each is)
HELPERS = {"BY_NAME", "COMMON_FIELDS", "STEP_EVENTS", "Event"}


def _declared_events(module: ModuleType) -> list[str]:
    """The events a module declares: its top-level assignments of an :class:`Event` (not those it imports)."""
    names = []
    for statement in ast.parse(inspect.getsource(module)).body:
        targets = (statement.targets if isinstance(statement, ast.Assign)
                   else [statement.target] if isinstance(statement, ast.AnnAssign) else [])
        names += [t.id for t in targets if isinstance(t, ast.Name) and isinstance(getattr(module, t.id), Event)]
    return names


def _area_modules() -> dict[str, ModuleType]:
    """Every module of zkconsumer.events that declares events, by name."""
    modules = {info.name: importlib.import_module(f"zkconsumer.events.{info.name}")
               for info in pkgutil.iter_modules(zkconsumer.events.__path__)}
    return {name: module for name, module in modules.items() if _declared_events(module)}


def test_each_event_is_a_constant_named_after_it_and_equal_to_its_name():
    constants = {name: value for name, value in vars(ev).items() if isinstance(value, Event)}
    assert constants and set(constants.values()) == set(ev.BY_NAME)
    for constant, event in constants.items():
        assert constant == event.upper().replace(".", "_")
        assert event == str(event) and ev.BY_NAME[str(event)] is event
        assert {str(event): 1}[event] == 1 and hash(event) == hash(str(event))


def test_each_area_module_exports_exactly_the_events_it_declares():
    # the catalogue star-imports the areas: whatever an area's __all__ names ends up in the catalogue
    areas = _area_modules()
    assert {"connector", "front", "spark"} <= set(areas)  # the scan finds the areas
    for name, module in areas.items():
        declared = _declared_events(module)
        exported = getattr(module, "__all__", None)
        assert exported is not None, f"zkconsumer/events/{name}.py has no __all__: list its events in one"
        missing, extra = set(declared) - set(exported), set(exported) - set(declared)
        assert not missing, f"zkconsumer/events/{name}.py: events missing from __all__: {sorted(missing)}"
        assert not extra, f"zkconsumer/events/{name}.py: __all__ names what it does not declare: {sorted(extra)}"


def test_the_catalogue_holds_every_event_and_nothing_else_but_its_helpers():
    # (``annotations``: the module's own ``from __future__ import annotations``)
    public = {name for name in vars(ev) if not name.startswith(("_", "@"))} - {"annotations"}  # "@": pytest's rewriting
    events = {name for name in public if isinstance(getattr(ev, name), Event)}
    assert public - events == HELPERS, f"not events nor helpers: {sorted(public - events - HELPERS)}"
    assert set(ev.__all__) == public
    assert {event for event, _ in EMISSIONS} == set(ev.BY_NAME.values())  # every event declared is gathered
    assert not {"F", "section", "STR", "shared"} & public


def test_an_event_carries_its_declaration():
    event = ev.REBALANCE_COMPLETED
    assert event == "rebalance.completed"
    assert (event.level, event.logger, event.section) == ("info", "zkconsumer.connector", "connector.rebalance")
    assert [f.name for f in event.fields] == ["attempts", "duration_ms", "owned"]
    assert event.when and all(f.kind.name for f in event.fields)


def test_an_event_pickles_as_its_plain_name():
    # a log record carrying it may be sent to another process (a QueueHandler)
    copy = pickle.loads(pickle.dumps(ev.REBALANCE_CLAIM))
    assert copy == "rebalance.claim" and type(copy) is str


def test_the_step_events_are_the_steps_table():
    assert [str(e) for e in ev.STEP_EVENTS] == [step.event for step in rebalance_steps.STEPS]
    for step, event in zip(rebalance_steps.STEPS, ev.STEP_EVENTS, strict=True):
        assert ev.BY_NAME[step.event] is event and event.when == step.meaning
        assert [f.name for f in event.fields[:3]] == ["step", "attempt", "duration_ms"]


@pytest.mark.parametrize("event", sorted(ev.BY_NAME.values()), ids=str)
def test_every_declaration_is_complete(event):
    for emission in event.emissions:
        assert emission.level in LEVELS and emission.section in SECTIONS
        assert emission.logger.startswith("zkconsumer")
        names = [f.name for f in emission.fields]
        assert len(names) == len(set(names)), f"{event}: a field declared twice"
    assert event.when or event.emissions[0].drawn, f"{event}: say when it happens"


def test_a_field_is_checked_against_every_emission():
    accepted = ev.REBALANCE_STARTED.accepted()  # the connector's and the modern member's
    assert {"cause", "strategy"} <= set(accepted)
    assert accepted["cause"].accepts("initial") and not accepted["cause"].accepts(3)


def test_a_field_several_events_carry_with_one_meaning_is_declared_once():
    # the same name, kind and meaning in two declarations is one object (events/shared_fields.py), so that it cannot
    # drift between the events that carry it
    declared: dict[tuple[str, str, str], set[int]] = {}
    for event in ev.BY_NAME.values():
        for emission in event.emissions:
            for f in emission.fields:
                declared.setdefault((f.name, f.kind.name, f.meaning), set()).add(id(f))
    assert [key for key, objects in declared.items() if len(objects) > 1] == []
