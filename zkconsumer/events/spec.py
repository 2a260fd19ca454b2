"""How an event is declared: its name, level, typed fields, logger and when it happens, once, for the code that
emits it, the code that reads it and the events page.

An :class:`Event` is a ``str`` equal to the event's name, so it goes wherever the name went (a logger's first
argument, a comparison with a JSON line's ``event``, a dict key, an Arrow filter) and carries its declaration.
Some events are emitted by more than one component (``rebalance.started`` by the connector and by the modern
member, ``znode.malformed`` by the connector and the Spark sources): each component's use is an :class:`Emission`,
the first one the event's own, the others added with :func:`also`. A line is valid if any emission declares its
fields.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Kind:
    """The JSON types a field's value may have."""

    name: str
    types: tuple[type, ...]

    def __or__(self, other: Kind) -> Kind:
        return Kind(f"{self.name} or {other.name}", self.types + other.types)

    def accepts(self, value: Any) -> bool:
        if object in self.types:
            return True
        if isinstance(value, bool):  # a bool is an int to isinstance, not to JSON
            return bool in self.types
        return isinstance(value, self.types)


STR = Kind("string", (str,))
INT = Kind("integer", (int,))
#: durations and other measures: a float, or an int when the number had no fraction
NUMBER = Kind("number", (int, float))
BOOL = Kind("boolean", (bool,))
LIST = Kind("list", (list,))
OBJECT = Kind("object", (dict,))
NULL = Kind("null", (type(None),))
#: a field whose value takes several shapes (the trigger's details); its name is still checked
ANY = Kind("any", (object,))

LEVELS = ("debug", "info", "warning", "error", "critical")


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    kind: Kind
    #: one line: what the value is (the events page's text in parentheses)
    meaning: str = ""


@dataclass(frozen=True, slots=True)
class Emission:
    """One component's use of an event: where it is documented and what it carries."""

    #: the key of the events page's table it is listed in (``Section.key``)
    section: str
    logger: str
    level: str
    fields: tuple[Field, ...]
    when: str
    #: when the level varies: the other levels and why (``warning when the step raised``)
    level_note: str = ""
    #: for the coordinators' events: how the trace draws it
    drawn: str = ""


@dataclass(frozen=True, slots=True)
class Section:
    """A table of the events page: the marker ``<!-- events: <key> -->`` is replaced by it."""

    key: str
    #: the table's columns, among ``step``, ``event``, ``logger``, ``level``, ``fields``, ``when``, ``drawn``
    columns: tuple[str, ...] = ("event", "level", "fields", "when")
    #: fields every event of the table carries besides its own (a logger's bound context), said in the page's text
    context: tuple[str, ...] = ()


#: every table of the events page, by key, in the order the area modules declare them
SECTIONS: dict[str, Section] = {}
#: every emission, in the order declared: a table's rows
EMISSIONS: list[tuple[Event, Emission]] = []


def section(key: str, logger: str, *, columns: tuple[str, ...] = ("event", "level", "fields", "when"),
            context: tuple[str, ...] = ()) -> Area:
    """Declare a table of the events page; returns the :class:`Area` its events, emitted by ``logger``, are declared
    through."""
    SECTIONS[key] = Section(key, columns, context)
    return Area(key, logger)


class Event(str):
    """An event's name, with its declaration. Pickled (a log record sent to another process) as the plain name."""

    emissions: tuple[Emission, ...]
    levelno: int

    def __new__(cls, name: str, emission: Emission) -> Event:
        if emission.level not in LEVELS:
            raise ValueError(f"event {name}: unknown level {emission.level!r}")
        event = super().__new__(cls, name)
        event.emissions = (emission,)
        event.levelno = logging.getLevelName(emission.level.upper())
        return event

    def __reduce__(self) -> tuple[Any, ...]:
        return (str, (str(self),))

    @property
    def name(self) -> str:
        return str(self)

    @property
    def level(self) -> str:
        return self.emissions[0].level

    @property
    def fields(self) -> tuple[Field, ...]:
        return self.emissions[0].fields

    @property
    def when(self) -> str:
        return self.emissions[0].when

    @property
    def logger(self) -> str:
        return self.emissions[0].logger

    @property
    def section(self) -> str:
        return self.emissions[0].section

    def accepted(self) -> dict[str, Kind]:
        """Every field any emission declares, with the kinds the emissions give it."""
        kinds: dict[str, Kind] = {}
        for emission in self.emissions:
            for f in emission.fields:
                kinds[f.name] = kinds[f.name] | f.kind if f.name in kinds and kinds[f.name] != f.kind else f.kind
        return kinds


def declare(name: str, level: str, *, section: str, logger: str, fields: tuple[Field, ...] = (), when: str = "",
            level_note: str = "", drawn: str = "") -> Event:
    """An event, as the first component that emits it uses it."""
    event = Event(name, Emission(section, logger, level, fields, when, level_note, drawn))
    EMISSIONS.append((event, event.emissions[0]))
    return event


def also(event: Event, level: str | None = None, *, section: str, logger: str, fields: tuple[Field, ...] = (),
         when: str = "", level_note: str = "", drawn: str = "") -> Event:
    """Another component's use of ``event`` (its own section of the page, its own fields)."""
    emission = Emission(section, logger, level or event.level, fields, when, level_note, drawn)
    event.emissions += (emission,)
    EMISSIONS.append((event, emission))
    return event


@dataclass(frozen=True, slots=True)
class Area:
    """One table of the events page as one logger fills it, so that each of its events is declared in a line or three:
    ``FETCHER_STARTED = fetchers.event("fetcher.started", "info", "when it happens", F("thread", STR), ...)``."""

    section: str
    logger: str

    def logged_by(self, logger: str) -> Area:
        """The same table, for the events another logger emits."""
        return Area(self.section, logger)

    def event(self, name: str, level: str, when: str, *fields: Field, level_note: str = "", drawn: str = "") -> Event:
        """Declare an event (:func:`declare`) listed in this table."""
        return declare(name, level, section=self.section, logger=self.logger, fields=fields, when=when,
                       level_note=level_note, drawn=drawn)

    def also(self, event: Event, when: str, *fields: Field, level: str | None = None, level_note: str = "",
             drawn: str = "") -> Event:
        """This table's use of an event another area declared (:func:`also`)."""
        return also(event, level, section=self.section, logger=self.logger, fields=fields, when=when,
                    level_note=level_note, drawn=drawn)
