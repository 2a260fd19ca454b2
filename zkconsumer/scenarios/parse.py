"""Reading a scenario file: TOML into :class:`~zkconsumer.scenarios.model.Scenario`, every problem one line.

TOML because the standard library reads it (``tomllib``, no dependency), it takes comments (a teacher explains the
story beside it), and its tables and arrays of tables say scenes and members without the quoting and bracket
matching of JSON or the indentation traps of YAML. Every check runs here, before any server or process starts:
an unknown key, a wrong type, a member that is not in the cast or not running when an action needs it; the
message names the file and the key (scenes and actions numbered from 1, as the scenes are).

The file's shape is declared once, as msgspec structs (``_ScenarioFile`` and the structs of its tables): their types,
their bounds (``msgspec.Meta``) and ``forbid_unknown_fields`` are the checks, msgspec decodes the TOML-loaded data
into them, and its refusal is put in the file's words (the key by its name, a member by its name, a scene by its
number). What a type cannot say is checked by hand on the decoded values: which action an action is, the members it
names, the topic's name, and the topic's final size. The structs are then mapped to the model.

The shipped scenarios are files in ``shipped/`` beside this module, read by name (:func:`load`, :func:`shipped`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin, get_type_hints

import msgspec
from msgspec import Meta, Struct

from zkconsumer.errors import UsageError
from zkconsumer.scenarios.model import (
    ACTIONS,
    CUTOVER,
    CUTOVER_OFFSETS,
    CUTOVER_RESETS,
    DUAL_COMMIT,
    GROW,
    KILL,
    MAX_REVOKE_MS,
    MEMBER_ACTIONS,
    PAUSE,
    RESTART,
    RESTART_SERVERS,
    SETTLE,
    START,
    STOP,
    WAIT,
    Action,
    Member,
    Production,
    Scenario,
    Scene,
    Topic,
)

MAX_PARTITIONS = 64  # the pages draw a row per partition
MAX_STREAMS = 32
MAX_SECONDS = 600.0
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,40}$")
_TOPIC = re.compile(r"^[A-Za-z0-9._-]{1,200}$")

# --- the file's shape, as msgspec decodes it ---------------------------------------------------------------------
# Types, ranges and unknown keys are msgspec's checks; a Meta's ``extra`` words what a check refused, where the
# default wording (:func:`_explain`) does not fit: ``type`` for a value of the wrong type (a format string, given
# ``kind``), ``range`` for one out of its bounds (given the bounds and ``value``), ``missing`` after "missing: " for a
# required key.

class _TopicFile(Struct, forbid_unknown_fields=True):
    name: str = "demo"
    partitions: Annotated[int, Meta(ge=1, le=MAX_PARTITIONS)] = 4


class _ProductionFile(Struct, forbid_unknown_fields=True):
    burst: Annotated[int, Meta(ge=0, le=10_000)] = 25
    rate: Annotated[float, Meta(gt=0, le=2000, extra={
        "range": "must be more than {gt:g} and at most {le:g} messages a second, not {value:g}"})] = 50.0


class _MemberFile(Struct, forbid_unknown_fields=True):
    streams: Annotated[int, Meta(ge=1, le=MAX_STREAMS)] = 1
    config: dict[str, Annotated[str | int | float | bool, Meta(extra={
        "type": "must be a string, a number or true/false"})]] = {}
    revoke_ms: Annotated[int, Meta(ge=0, le=MAX_REVOKE_MS)] = 0
    static: Annotated[bool, Meta(extra={"type": "write static = true or false"})] = False


_ACTIONS = "must be a non-empty array of actions, e.g. [{{ start = \"c1\" }}]"


class _SceneFile(Struct, forbid_unknown_fields=True, kw_only=True):
    title: str
    note: str = ""
    actions: Annotated[list[Any], Meta(min_length=1, extra={"type": _ACTIONS, "range": _ACTIONS})]
    waiting_for: str = "the group to settle"


_MEMBERS = "must be a table of members, e.g. [members.c1] with streams = 1"
_SCENES = "must be an array of tables, [[scenes]], each with a title and actions"


class _ScenarioFile(Struct, forbid_unknown_fields=True, kw_only=True):
    title: str | None = None
    description: str = ""
    session_timeout_ms: Annotated[int, Meta(ge=1000, le=600_000)] | None = None
    topic: _TopicFile = msgspec.field(default_factory=_TopicFile)
    production: _ProductionFile = msgspec.field(default_factory=_ProductionFile)
    members: Annotated[dict[str, Annotated[_MemberFile, Meta(extra={
        "type": "must be a table (streams, config, revoke_ms, static)"})]], Meta(min_length=1, extra={
            "type": _MEMBERS, "range": _MEMBERS, "missing": "name the members, e.g. [members.c1]"})]
    scenes: Annotated[list[Annotated[_SceneFile, Meta(extra={"type": "must be a table with a title and actions"})]],
                      Meta(min_length=1, extra={"type": _SCENES, "range": _SCENES,
                                                "missing": "the story, as [[scenes]] with a title and actions"})]


class _ActionFile(Struct, forbid_unknown_fields=True):
    """An action's values; which action it is, and the members it names, are checked by hand (``_Reader.action``)."""

    start: str = ""
    stop: str = ""
    kill: str = ""
    pause: str = ""
    expire: str = ""
    upgrade: str = ""
    dual_commit: str = ""
    bounce: str = ""
    cutover: str = ""
    restart: str = ""
    reset: str = "latest"
    grow: Annotated[int, Meta(ge=1, le=MAX_PARTITIONS)] = 0
    settle: Annotated[bool, Meta(extra={"type": "write settle = true"})] = False
    wait: Annotated[float, Meta(gt=0, le=MAX_SECONDS, extra={
        "range": "must be more than {gt:g} and at most {le:g} seconds"})] = 0.0
    seconds: Annotated[float, Meta(gt=0, le=MAX_SECONDS, extra={
        "range": "must be more than {gt:g} and at most {le:g}"})] | None = None


_S = TypeVar("_S")


class ScenarioError(UsageError):
    """A scenario file that cannot be played; the message is one line naming the file, the key and the problem."""


def shipped() -> dict[str, Path]:
    """The shipped scenarios by name, sorted."""
    folder = resources.files("zkconsumer.scenarios") / "shipped"
    return {Path(entry.name).stem: Path(str(entry))
            for entry in sorted(folder.iterdir(), key=lambda e: Path(e.name).stem) if entry.name.endswith(".toml")}


def load(name_or_file: str) -> Scenario:
    """A shipped scenario by name, or a file by path (anything with a ``/`` or ending in ``.toml``)."""
    known = shipped()
    if name_or_file in known:
        return parse(known[name_or_file].read_text(encoding="utf-8"), name_or_file, f"shipped scenario {name_or_file}")
    path = Path(name_or_file)
    if "/" not in name_or_file and not name_or_file.endswith(".toml"):
        raise ScenarioError(f"no shipped scenario {name_or_file!r} (shipped: {', '.join(known)}; a file needs a "
                            f"path or a .toml name)")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
        raise ScenarioError(f"scenario {path}: cannot read it ({why})") from None
    return parse(text, path.stem, f"scenario {path}")


def parse(text: str, name: str, where: str) -> Scenario:
    """``where`` starts every message (``scenario my.toml``)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"{where}: not TOML: {exc}") from None
    return _Reader(where).scenario(data, name)


class _Reader:
    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, key: str, problem: str) -> ScenarioError:
        return ScenarioError(f"{self.where}: {key}: {problem}")

    def decode(self, data: Any, shape: type[_S], key: Callable[[list[str | int]], str]) -> _S:
        """``data`` as ``shape``, or the first problem msgspec found, named by ``key`` of its path."""
        try:
            return msgspec.convert(data, shape)
        except msgspec.ValidationError as exc:
            path, problem = _explain(str(exc), data, shape)
            raise self.fail(key(path), problem) from None

    # --- the file, top to bottom ----------------------------------------------------------------------------

    def scenario(self, data: dict[str, Any], name: str) -> Scenario:
        file = self.decode(data, _ScenarioFile, _file_key)
        if not _TOPIC.match(file.topic.name):
            raise self.fail("topic.name", f"{file.topic.name!r} is not a topic name (letters, digits, '.', '_', '-')")
        members = tuple(self.member(member, spec) for member, spec in file.members.items())
        scenes = self.scenes(file.scenes, members)
        final = file.topic.partitions + sum(s.grows for s in scenes)
        if final > MAX_PARTITIONS:
            raise self.fail("scenes", f"the topic would grow to {final} partitions, more than {MAX_PARTITIONS}")
        title = name if file.title is None else file.title
        return Scenario(name, title, file.description, Topic(file.topic.name, file.topic.partitions),
                        Production(file.production.burst, float(file.production.rate)), members, scenes,
                        file.session_timeout_ms, self.where)

    def member(self, name: str, spec: _MemberFile) -> Member:
        if not _NAME.match(name):
            raise self.fail(f"members.{name}", "a member's name is 1 to 40 letters, digits, '_' or '-'")
        config = tuple((setting, str(value).lower() if isinstance(value, bool) else str(value))
                       for setting, value in spec.config.items())
        return Member(name, spec.streams, config, spec.revoke_ms, spec.static)

    def scenes(self, specs: list[_SceneFile], members: tuple[Member, ...]) -> tuple[Scene, ...]:
        cast = {m.name for m in members}
        running: set[str] = set()
        scenes = []
        moved: list[str] = []  # where the cutover is, once there is one
        for number, spec in enumerate(specs, 1):
            key = f"scene {number}"
            actions = tuple(self.action(item, f"{key}, action {i}", cast, running, moved)
                            for i, item in enumerate(spec.actions, 1))
            if not running:
                raise self.fail(f"{key}", "no member is left running; a scene settles on its members (the command "
                                          "stops the rest at the end)")
            scenes.append(Scene(number, spec.title, spec.note, actions, spec.waiting_for))
        return tuple(scenes)

    def action(self, item: Any, key: str, cast: set[str], running: set[str], moved: list[str]) -> Action:
        # 1. which action: exactly one, and no key another action does not take
        if not isinstance(item, dict):
            raise self.fail(key, "must be a table such as { start = \"c1\" }")
        kinds = [k for k in item if k in ACTIONS]
        if len(kinds) != 1:
            what = "names no action" if not kinds else f"names {len(kinds)} actions ({', '.join(kinds)})"
            raise self.fail(key, f"{what}; one of {', '.join(ACTIONS)}")
        kind = kinds[0]
        value = item[kind]
        takes = {PAUSE: "seconds", CUTOVER: "reset"}.get(kind)
        extra = sorted(set(item) - {kind, takes})
        if extra:
            raise self.fail(f"{key} ({kind}): {extra[0]}", f"unknown key for {kind}" + (f" ({kind} takes {takes})"
                                                                              if takes else ""))
        # 2. the member it names is in the cast, and running when the action needs it to be
        if kind in MEMBER_ACTIONS:
            if not isinstance(value, str) or value not in cast:
                raise self.fail(f"{key} ({kind})", f"unknown member {value!r} (members: {', '.join(sorted(cast))})")
            if kind == START:
                if value in running:
                    raise self.fail(f"{key} ({kind})", f"{value} is already running")
                running.add(value)
            elif value not in running:
                raise self.fail(f"{key} ({kind})", f"{value} is not running at this point of the story")
            elif kind in (STOP, KILL):  # gone; a paused member resumes, an expired or upgraded one is back
                running.discard(value)
            elif kind == DUAL_COMMIT and moved:
                raise self.fail(f"{key} ({kind})", f"{value} is a modern member since the cutover ({moved[0]}): "
                                                   f"dual commit is a legacy member's setting")
        if kind == RESTART and value not in RESTART_SERVERS:
            raise self.fail(f"{key} ({kind})", f"must name {' or '.join(map(repr, RESTART_SERVERS))}, not {value!r}")
        if kind == CUTOVER:
            if moved:
                raise self.fail(f"{key} ({kind})", f"the group was cut over already ({moved[0]})")
            if value not in CUTOVER_OFFSETS:
                raise self.fail(f"{key} ({kind})", f"must say where the modern members find their offsets: "
                                                   f"{' or '.join(repr(o) for o in CUTOVER_OFFSETS)}, not {value!r}")
            if not running:
                raise self.fail(f"{key} ({kind})", "no member is running to cut over")
            if item.get("reset", "latest") not in CUTOVER_RESETS:
                raise self.fail(f"{key} ({kind}): reset", f"must be {' or '.join(map(repr, CUTOVER_RESETS))} (the "
                                                          f"modern members' auto.offset.reset), not {item['reset']!r}")
            moved.append(key)
        # 3. its values, typed and in range
        values = self.decode(item, _ActionFile,
                             lambda path: f"{key} ({kind})" + "".join(f": {p}" for p in path if p != kind))
        if kind == PAUSE:
            if values.seconds is None:
                raise self.fail(f"{key} ({kind}): seconds", "pause needs seconds = N")
            return Action(kind, value, seconds=values.seconds)
        if kind in MEMBER_ACTIONS:
            return Action(kind, value)
        if kind == CUTOVER:
            return Action(kind, offsets=value, reset=values.reset)
        if kind == RESTART:
            return Action(kind, server=value)
        if kind == GROW:
            return Action(kind, partitions=values.grow)
        if kind == WAIT:
            return Action(kind, seconds=values.wait)
        assert kind == SETTLE
        if not values.settle:
            raise self.fail(f"{key} ({kind})", "write settle = true")
        return Action(kind)


def _file_key(path: list[str | int]) -> str:
    """A key of the file as its messages name it: ``members.c1.streams``, ``scene 2: title`` (numbered from 1)."""
    if len(path) >= 2 and path[0] == "scenes" and isinstance(path[1], int):
        rest = ".".join(str(p) for p in path[2:])
        return f"scene {path[1] + 1}" + (f": {rest}" if rest else "")
    return ".".join(str(p) for p in path)


# --- msgspec's refusals, in the file's words ------------------------------------------------------------------------

_AT = re.compile(r" - at `\$(?P<path>.*)`$")
_STEP = re.compile(r"\.(?P<field>\w+)|\[(?P<index>\d+)\]|\[\.\.\.\]")
_MISSING = re.compile(r"Object missing required field `(?P<field>\w+)`")
_UNKNOWN = re.compile(r"Object contains unknown field `(?P<field>[^`]*)`")
_TYPE_WORDS = {int: "must be a whole number, not {kind}", float: "must be a number, not {kind}",
               str: "must be a string, not {kind}"}


def _explain(message: str, data: Any, shape: Any) -> tuple[list[str | int], str]:
    """The path of the key msgspec refused (a table's entries by their keys) and the problem, one line: the wording
    of the refused type's Meta ``extra`` where it has one, else the default for its type."""
    at = _AT.search(message)
    text = message[:at.start()] if at else message
    path: list[str | int] = []
    value, hint = data, shape
    for step in _STEP.finditer(at.group("path") if at else ""):
        container, _ = _unwrap(hint)
        if step.group("field") is not None:
            hint = get_type_hints(container, include_extras=True)[step.group("field")]
            value = value.get(step.group("field"))
            path.append(step.group("field"))
        elif step.group("index") is not None:
            hint, value = get_args(container)[0], value[int(step.group("index"))]
            path.append(int(step.group("index")))
        else:  # msgspec does not say which entry of a table: the first one that does not decode
            hint = get_args(container)[1]
            entry = next(k for k, v in value.items() if not _decodes(v, hint))
            value = value[entry]
            path.append(entry)
    base, meta = _unwrap(hint)
    if (missing := _MISSING.match(text)) is not None:
        _, field_meta = _unwrap(get_type_hints(base, include_extras=True)[missing.group("field")])
        why = field_meta.get("missing")
        return [*path, missing.group("field")], "missing" + (f": {why}" if why else "")
    if (unknown := _UNKNOWN.match(text)) is not None:
        return [*path, unknown.group("field")], f"unknown key (known: {', '.join(base.__struct_fields__)})"
    if ", got `" in text:  # the wrong type
        wording = meta.get("type") or _TYPE_WORDS.get(base, "must be a table")
        return path, wording.format(kind=_kind(value))
    wording = meta.get("range") or "must be from {ge} to {le}, not {value}"  # out of its bounds
    return path, wording.format(value=value, **{k: v for k, v in meta.items() if k in ("ge", "le", "gt", "lt")})


def _unwrap(hint: Any) -> tuple[Any, dict[str, Any]]:
    """The type under ``Annotated`` and ``| None``, and its Meta's bounds and ``extra`` in one mapping."""
    meta: dict[str, Any] = {}
    while True:
        if get_origin(hint) is Annotated:
            hint, *annotations = get_args(hint)
            for annotation in annotations:
                if isinstance(annotation, Meta):
                    meta.update({k: getattr(annotation, k) for k in ("ge", "le", "gt", "lt")
                                 if getattr(annotation, k) is not None})
                    meta.update(annotation.extra or {})
        elif get_origin(hint) in (Union, UnionType) and type(None) in get_args(hint):
            rest = [arg for arg in get_args(hint) if arg is not type(None)]
            if len(rest) != 1:
                return hint, meta
            hint = rest[0]
        else:
            return hint, meta


def _decodes(value: Any, hint: Any) -> bool:
    try:
        msgspec.convert(value, hint)
    except msgspec.ValidationError:
        return False
    return True


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    return {str: "a string", int: "a whole number", float: "a number", list: "an array", dict: "a table"}.get(
        type(value), type(value).__name__)
