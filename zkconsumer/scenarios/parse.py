"""Reading a scenario file: TOML into :class:`~zkconsumer.scenarios.model.Scenario`, every problem one line.

TOML because the standard library reads it (``tomllib``, no dependency), it takes comments (a teacher explains the
story beside it), and its tables and arrays of tables say scenes and members without the quoting and bracket
matching of JSON or the indentation traps of YAML. Every check runs here, before any server or process starts:
an unknown key, a wrong type, a member that is not in the cast or not running when an action needs it; the
message names the file and the key (scenes and actions numbered from 1, as the scenes are).

The shipped scenarios are files in ``shipped/`` beside this module, read by name (:func:`load`, :func:`shipped`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.scenarios.model import (
    ACTIONS,
    GROW,
    KILL,
    MAX_REVOKE_MS,
    MEMBER_ACTIONS,
    PAUSE,
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
_TOP_KEYS = ("title", "description", "session_timeout_ms", "topic", "production", "members", "scenes")
_SCENE_KEYS = ("title", "note", "actions", "waiting_for")


class ScenarioError(UsageError):
    """A scenario file that cannot be played; the message is one line naming the file, the key and the problem."""


def shipped() -> dict[str, Path]:
    """The shipped scenarios by name, sorted."""
    folder = resources.files("zkconsumer.scenarios") / "shipped"
    return {Path(entry.name).stem: Path(str(entry)) for entry in sorted(folder.iterdir(), key=lambda e: e.name)
            if entry.name.endswith(".toml")}


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

    # --- the file, top to bottom ----------------------------------------------------------------------------

    def scenario(self, data: dict[str, Any], name: str) -> Scenario:
        self.known_keys(data, _TOP_KEYS, "")
        title = self.text(data, "title", "", default=name)
        description = self.text(data, "description", "", default="")
        session = data.get("session_timeout_ms")
        if session is not None:
            session = self.whole(session, "session_timeout_ms", 1000, 600_000)
        topic = self.topic(self.table(data, "topic"))
        production = self.production(self.table(data, "production"))
        members = self.members(data.get("members"))
        scenes = self.scenes(data.get("scenes"), members)
        final = topic.partitions + sum(s.grows for s in scenes)
        if final > MAX_PARTITIONS:
            raise self.fail("scenes", f"the topic would grow to {final} partitions, more than {MAX_PARTITIONS}")
        return Scenario(name, title, description, topic, production, members, scenes, session, self.where)

    def topic(self, data: dict[str, Any]) -> Topic:
        self.known_keys(data, ("name", "partitions"), "topic.")
        name = self.text(data, "name", "topic.", default="demo")
        if not _TOPIC.match(name):
            raise self.fail("topic.name", f"{name!r} is not a topic name (letters, digits, '.', '_', '-')")
        partitions = self.whole(data.get("partitions", 4), "topic.partitions", 1, MAX_PARTITIONS)
        return Topic(name, partitions)

    def production(self, data: dict[str, Any]) -> Production:
        self.known_keys(data, ("burst", "rate"), "production.")
        burst = self.whole(data.get("burst", 25), "production.burst", 0, 10_000)
        rate = self.number(data.get("rate", 50.0), "production.rate")
        if not 0 < rate <= 2000:
            raise self.fail("production.rate", f"must be more than 0 and at most 2000 messages a second, not {rate:g}")
        return Production(burst, float(rate))

    def members(self, data: Any) -> tuple[Member, ...]:
        if data is None:
            raise self.fail("members", "missing: name the members, e.g. [members.c1]")
        if not isinstance(data, dict) or not data:
            raise self.fail("members", "must be a table of members, e.g. [members.c1] with streams = 1")
        found = []
        for name, spec in data.items():
            key = f"members.{name}"
            if not _NAME.match(name):
                raise self.fail(key, "a member's name is 1 to 40 letters, digits, '_' or '-'")
            if not isinstance(spec, dict):
                raise self.fail(key, "must be a table (streams, config, revoke_ms)")
            self.known_keys(spec, ("streams", "config", "revoke_ms"), f"{key}.")
            streams = self.whole(spec.get("streams", 1), f"{key}.streams", 1, MAX_STREAMS)
            revoke_ms = self.whole(spec.get("revoke_ms", 0), f"{key}.revoke_ms", 0, MAX_REVOKE_MS)
            config = self.table(spec, "config", prefix=f"{key}.")
            items = []
            for setting, value in config.items():
                if isinstance(value, dict | list) or not isinstance(value, str | int | float | bool):
                    raise self.fail(f"{key}.config.{setting}", "must be a string, a number or true/false")
                shown = str(value).lower() if isinstance(value, bool) else str(value)
                items.append((setting, shown))
            found.append(Member(name, streams, tuple(items), revoke_ms))
        return tuple(found)

    def scenes(self, data: Any, members: tuple[Member, ...]) -> tuple[Scene, ...]:
        if data is None:
            raise self.fail("scenes", "missing: the story, as [[scenes]] with a title and actions")
        if not isinstance(data, list) or not data or not all(isinstance(s, dict) for s in data):
            raise self.fail("scenes", "must be an array of tables, [[scenes]], each with a title and actions")
        cast = {m.name for m in members}
        running: set[str] = set()
        scenes = []
        for number, spec in enumerate(data, 1):
            key = f"scene {number}"
            self.known_keys(spec, _SCENE_KEYS, f"{key}: ")
            title = self.text(spec, "title", f"{key}: ", default=None)
            note = self.text(spec, "note", f"{key}: ", default="")
            waiting_for = self.text(spec, "waiting_for", f"{key}: ", default="the group to settle")
            raw = spec.get("actions")
            if not isinstance(raw, list) or not raw:
                raise self.fail(f"{key}: actions", "must be a non-empty array of actions, e.g. [{ start = \"c1\" }]")
            actions = tuple(self.action(item, f"{key}, action {i}", cast, running) for i, item in enumerate(raw, 1))
            if not running:
                raise self.fail(f"{key}", "no member is left running; a scene settles on its members (the command "
                                          "stops the rest at the end)")
            scenes.append(Scene(number, str(title), note, actions, waiting_for))
        return tuple(scenes)

    def action(self, item: Any, key: str, cast: set[str], running: set[str]) -> Action:
        if not isinstance(item, dict):
            raise self.fail(key, "must be a table such as { start = \"c1\" }")
        kinds = [k for k in item if k in ACTIONS]
        if len(kinds) != 1:
            what = "names no action" if not kinds else f"names {len(kinds)} actions ({', '.join(kinds)})"
            raise self.fail(key, f"{what}; one of {', '.join(ACTIONS)}")
        kind = kinds[0]
        value = item[kind]
        extra = sorted(set(item) - {kind, "seconds"}) if kind == PAUSE else sorted(set(item) - {kind})
        if extra:
            raise self.fail(f"{key} ({kind}): {extra[0]}", f"unknown key for {kind}" + (" (pause takes seconds)"
                                                                              if kind == PAUSE else ""))
        if kind in MEMBER_ACTIONS:
            if not isinstance(value, str) or value not in cast:
                raise self.fail(f"{key} ({kind})", f"unknown member {value!r} (members: {', '.join(sorted(cast))})")
            if kind == START:
                if value in running:
                    raise self.fail(f"{key} ({kind})", f"{value} is already running")
                running.add(value)
            elif value not in running:
                raise self.fail(f"{key} ({kind})", f"{value} is not running at this point of the story")
            elif kind in (STOP, KILL):  # gone; a paused member resumes, an expired one registers again
                running.discard(value)
            if kind == PAUSE:
                seconds = self.number(item.get("seconds"), f"{key} ({kind}): seconds",
                                      missing="pause needs seconds = N")
                if not 0 < seconds <= MAX_SECONDS:
                    raise self.fail(f"{key} ({kind}): seconds", f"must be more than 0 and at most {MAX_SECONDS:g}")
                return Action(kind, value, seconds=float(seconds))
            return Action(kind, value)
        if kind == GROW:
            return Action(kind, partitions=self.whole(value, f"{key} ({kind})", 1, MAX_PARTITIONS))
        if kind == WAIT:
            seconds = self.number(value, f"{key} ({kind})")
            if not 0 < seconds <= MAX_SECONDS:
                raise self.fail(f"{key} ({kind})", f"must be more than 0 and at most {MAX_SECONDS:g} seconds")
            return Action(kind, seconds=float(seconds))
        assert kind == SETTLE
        if value is not True:
            raise self.fail(f"{key} ({kind})", "write settle = true")
        return Action(kind)

    # --- values -----------------------------------------------------------------------------------------------

    def known_keys(self, data: Mapping[str, Any], known: tuple[str, ...], prefix: str) -> None:
        for key in data:
            if key not in known:
                raise self.fail(f"{prefix}{key}", f"unknown key (known: {', '.join(known)})")

    def table(self, data: Mapping[str, Any], key: str, prefix: str = "") -> dict[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(f"{prefix}{key}", "must be a table")
        return value

    def text(self, data: Mapping[str, Any], key: str, prefix: str, default: str | None) -> str:
        value = data.get(key, default)
        if value is None:
            raise self.fail(f"{prefix}{key}", "missing")
        if not isinstance(value, str):
            raise self.fail(f"{prefix}{key}", f"must be a string, not {_kind(value)}")
        return value

    def whole(self, value: Any, key: str, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be a whole number, not {_kind(value)}")
        if not low <= value <= high:
            raise self.fail(key, f"must be from {low} to {high}, not {value}")
        return value

    def number(self, value: Any, key: str, missing: str = "missing") -> float:
        if value is None:
            raise self.fail(key, missing)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number, not {_kind(value)}")
        return float(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    return {str: "a string", int: "a whole number", float: "a number", list: "an array", dict: "a table"}.get(
        type(value), type(value).__name__)
