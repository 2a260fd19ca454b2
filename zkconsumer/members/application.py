"""The user's own application inside a member process: a callable named ``module:function`` (``orders.app:handle``)
that the member calls with each message it delivers, and optional hooks told which partitions the member gives up
(``on_revoke``) and gets (``on_assign``), so that a team can run *its* consumer through every protocol of the
migration comparison (:mod:`zkconsumer.migration`) and the pytest plugin (:mod:`zkconsumer.testing`).

What the application is given:

- ``handle(message)``: a :class:`Message` (``topic``, ``partition``, ``offset``, ``key``, ``value``, bytes);
- ``on_revoke(partitions)`` / ``on_assign(partitions)``: a sorted list of ``(topic, partition)``; a legacy member
  calls ``on_revoke`` in the connector's rebalance listener before it releases them (Kafka 0.10's
  ``beforeReleasingPartitions``) and ``on_assign`` once it owns the new ones; a modern member in librdkafka's
  rebalance callbacks. Neither is called when the member leaves the group cleanly, nor for a SIGKILL;
- its own place for side effects: the directory in the ``ZKCONSUMER_STATE_DIR`` environment variable (given to the
  member as ``--app-state``), one per protocol of a comparison, shared by that protocol's members, so that a test can
  compare what the application built under each protocol.

An application that raises: the member calls it again with the same message, up to :data:`ATTEMPTS` times in all,
``RETRY_BACKOFF_S`` apart (the partition's next messages wait, as behind a real consumer's retry loop); each failure
is the event ``application.failed`` (``consumer_id``, ``topic``, ``partition``, ``offset``, ``attempt``, ``error``:
the exception's type and message). After the last attempt the message is given up (``gave_up``: true): it is not
recorded as delivered, so the comparison counts it lost, and the result lists which messages failed and how often.
The member goes on with the next message; its offsets are committed as its client commits them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.events import catalogue as ev
from zkconsumer.members.option_field import option

STATE_DIR_ENV = "ZKCONSUMER_STATE_DIR"
ATTEMPTS = 3
RETRY_BACKOFF_S = 0.05
FAILED_EVENT = ev.APPLICATION_FAILED
#: a member's ``--delivery-format``: how it writes each message it delivered (:func:`delivery_line`)
DELIVERY_FORMATS = ("plain", "timed")
#: the hooks looked up beside ``handle`` in its module when not named
HOOKS = ("on_revoke", "on_assign")


@dataclass(frozen=True, slots=True)
class Message:
    """One message as the application gets it."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes


@dataclass(frozen=True, slots=True)
class Application:
    """What a starter tells a member about the application: the callables' names, where their modules are found
    (``path``: directories put first on the member's ``sys.path``), and the member's state directory."""

    handle: str
    on_revoke: str | None = None
    on_assign: str | None = None
    path: tuple[str, ...] = ()
    state_dir: Path | None = None

    def options(self) -> dict[str, Any]:
        """The member's options for this application (:class:`ApplicationOptions`' fields)."""
        return {"app": self.handle, "app_on_revoke": self.on_revoke, "app_on_assign": self.on_assign,
                "app_path": os.pathsep.join(self.path) or None, "app_state": self.state_dir}


@dataclass(frozen=True, kw_only=True)
class ApplicationOptions:
    """The application's options of a member's command line, declared as the others are
    (:mod:`zkconsumer.members.command_line`): both members' options classes take them in."""

    app: str | None = option(None, metavar="MODULE:CALLABLE",
                             help="call this with each message delivered (zkconsumer.members.application.Message)")
    app_on_revoke: str | None = option(None, metavar="MODULE:CALLABLE",
                                       help="call this with the (topic, partition) list the member gives up")
    app_on_assign: str | None = option(None, metavar="MODULE:CALLABLE",
                                       help="call this with the (topic, partition) list the member was given")
    app_path: str | None = option(None, metavar="DIRS",
                                  help="directories (os.pathsep-separated) put first on sys.path for the application")
    app_state: Path | None = option(None, metavar="DIR",
                                    help=f"the application's own directory, given to it as ${STATE_DIR_ENV}")


def delivery_text(data: bytes) -> str:
    """A message's bytes as one field of a deliveries line (and as the measures compare values): UTF-8 as it is,
    other bytes as ``\\xNN``, line breaks escaped, so that any payload stays on its line."""
    return data.decode("utf-8", "backslashreplace").replace("\n", "\\n").replace("\r", "\\r")


def delivery_line(topic: str, partition: int, offset: int, value: bytes, delivery_format: str) -> str:
    """A member's line for a message it delivered (its ``--output``): ``plain`` is ``partition offset value``;
    ``timed`` is ``time topic partition offset value``, the time in wall-clock seconds, the clock of the events'
    timestamps (the comparison's double-ownership check sets deliveries against the members' assignments)."""
    if delivery_format == "timed":
        return f"{time.time():.3f} {topic} {partition} {offset} {delivery_text(value)}\n"
    return f"{partition} {offset} {delivery_text(value)}\n"


def resolve(spec: str, what: str = "application") -> Callable[..., Any]:
    """The callable ``module:name`` names (``name`` may be dotted: ``module:Class.method``); a :class:`UsageError`
    of one line naming it when it cannot be imported or is not callable."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise UsageError(f"{what} {spec!r}: expected MODULE:CALLABLE, such as orders.app:handle")
    try:
        target: Any = importlib.import_module(module_name)
    except Exception as exc:  # whatever the module raises on import is the user's to see, in one line
        raise UsageError(f"{what} {spec!r}: cannot import {module_name} ({type(exc).__name__}: {exc})") from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise UsageError(f"{what} {spec!r}: {module_name} has no {attribute}") from None
    if not callable(target):
        raise UsageError(f"{what} {spec!r}: {attribute} is not callable")
    return target


def with_default_hooks(app: Application) -> Application:
    """``app`` with the hooks its handler's module defines (``on_revoke``, ``on_assign``) where none are named."""
    module_name = app.handle.partition(":")[0]
    module = sys.modules.get(module_name)
    found = {hook: f"{module_name}:{hook}" for hook in HOOKS
             if getattr(app, hook) is None and module is not None and callable(getattr(module, hook, None))}
    return Application(app.handle, found.get("on_revoke", app.on_revoke), found.get("on_assign", app.on_assign),
                       app.path, app.state_dir)


def check(app: Application) -> Application:
    """Import every callable ``app`` names, here, with its ``path`` first on ``sys.path``: the one-line refusal of a
    member that could not import them, before any process starts. Returns ``app`` with its module's hooks."""
    added = [p for p in app.path if p not in sys.path]
    sys.path[:0] = added
    resolve(app.handle)
    checked = with_default_hooks(app)
    for hook in HOOKS:
        spec = getattr(checked, hook)
        if spec is not None:
            resolve(spec, hook)
    return checked


@dataclass
class Runner:
    """The loaded application in a member: calls it as the module's docstring says, and reports its failures through
    ``report`` (the member's logger's ``error``-level call: ``report(event, **fields)``)."""

    handle: Callable[[Message], object]
    report: Callable[..., None]
    on_revoke: Callable[[list[tuple[str, int]]], object] | None = None
    on_assign: Callable[[list[tuple[str, int]]], object] | None = None
    consumer_id: str = ""
    sleep: Callable[[float], None] = field(default=time.sleep)

    def deliver(self, message: Message) -> bool:
        """Whether the application took the message (after up to :data:`ATTEMPTS` calls)."""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                self.handle(message)
                return True
            except Exception as exc:  # the application's failure is reported, the member goes on
                self.report(FAILED_EVENT, consumer_id=self.consumer_id, topic=message.topic,
                            partition=message.partition, offset=message.offset, attempt=attempt,
                            gave_up=attempt == ATTEMPTS, error=f"{type(exc).__name__}: {exc}")
                if attempt < ATTEMPTS:
                    self.sleep(RETRY_BACKOFF_S)
        return False

    def revoked(self, partitions: Iterable[tuple[str, int]]) -> None:
        self._hook(self.on_revoke, "on_revoke", partitions)

    def assigned(self, partitions: Iterable[tuple[str, int]]) -> None:
        self._hook(self.on_assign, "on_assign", partitions)

    def _hook(self, hook: Callable[[list[tuple[str, int]]], object] | None, name: str,
              partitions: Iterable[tuple[str, int]]) -> None:
        given = sorted(partitions)
        if hook is None or not given:
            return
        try:
            hook(given)
        except Exception as exc:  # a hook's failure is reported; the rebalance goes on, as Kafka's listener's did
            self.report(FAILED_EVENT, consumer_id=self.consumer_id, hook=name,
                        error=f"{type(exc).__name__}: {exc}")


def load(args: argparse.Namespace, consumer_id: str, report: Callable[..., None]) -> Runner | None:
    """The member's application from its options (:class:`ApplicationOptions`), or None without ``--app``. The
    state directory is made and put in the environment before the application's module is imported."""
    if not args.app:
        return None
    if args.app_path:
        sys.path[:0] = [p for p in args.app_path.split(os.pathsep) if p]
    if args.app_state:
        Path(args.app_state).mkdir(parents=True, exist_ok=True)
        os.environ[STATE_DIR_ENV] = str(Path(args.app_state).resolve())
    return Runner(resolve(args.app), report,
                  resolve(args.app_on_revoke, "on_revoke") if args.app_on_revoke else None,
                  resolve(args.app_on_assign, "on_assign") if args.app_on_assign else None, consumer_id)
