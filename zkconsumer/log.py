"""Events: structlog on top of the standard library's ``logging``, so that the application decides what is shown.

zkconsumer is a library first, and a library that prints is a library people wrap in ``contextlib.redirect_stdout``.
So it never configures logging itself: importing it, or creating a connector, changes nothing in the process.
Every event it emits has a stable name (``consumer.connected``, ``rebalance.completed``...), a level and typed fields,
declared once in :mod:`zkconsumer.events.catalogue` (and listed in ``docs/events.md``, made from it); an emitter
writes ``log.emit(ev.REBALANCE_COMPLETED, ...)`` and the event goes at its declared level:

* when the application configured structlog (``structlog.configure``, or :func:`configure_logging`): through that
  configuration, like the application's own events (its processors, its level filtering, its output);
* otherwise to the standard library's logger named after the emitting module (``zkconsumer.connector``,
  ``zkconsumer.fetcher``...), so ``logging``'s configuration decides: its levels, its handlers. With no
  configuration at all, Python's last-resort handler shows warnings and errors on stderr and nothing else. The
  message is ``<event> key=value ...``; the record also carries the event as a dict, ``record.event_dict``, for
  handlers that want the fields.

Either way the level is checked before the event is built: a debug event on the fetch path, with debug off, costs a
method call and a level lookup (``benchmarks/log_filtered.py`` measures it against the standard library's own
filtered ``logger.debug``). That is why :func:`get_logger` returns its own small logger instead of structlog's
lazy proxy, which assembles a bound logger on every call and, unconfigured, prints everything to stdout.

Only structlog's public API is read. Its one accessor of the configuration, ``structlog.get_config()``, builds a
dict (about twice the cost of a whole filtered event), so a logger keeps the bound logger and level it assembled,
and a filtered event checks only ``structlog.is_configured()`` and that cache. The cache is dropped for every logger
when :func:`configure_logging` or :func:`reset_logging` runs, and when an emitted event (which pays for a
processor chain anyway) finds ``get_config()`` changed. So an application that configures structlog itself is
followed from its first event on; if it lowers the level later, a logger's filtered events follow once any
zkconsumer event has been emitted.

The command line, the demo and its member processes call :func:`configure_logging`: structlog feeding the standard
library, and one ProcessorFormatter rendering zkconsumer's events and other libraries' lines (kazoo) alike, for a
person or as JSON lines (``--log-json`` or ``ZKCONSUMER_LOG_JSON=1``; level ``--log-level`` or
``ZKCONSUMER_LOG_LEVEL``). The JSON lines are what the demo collects and the trace tools read: ``event``, ``level``,
``timestamp`` (ISO 8601, UTC) and the event's fields. The command line keeps the terminal for what the operator
asked for, as Kafka's tools did (their log4j printed warnings only): unless a level or JSON is asked for, it passes a
``file`` to :func:`configure_logging`, where the events go from ``level`` up, and only warnings and errors also reach
stderr.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import sys
from pathlib import Path
from typing import Any, TextIO

import structlog
from structlog import is_configured
from structlog.stdlib import ProcessorFormatter

LOG_JSON_ENV = "ZKCONSUMER_LOG_JSON"
LOG_LEVEL_ENV = "ZKCONSUMER_LOG_LEVEL"
#: the parent of every logger zkconsumer emits on
PACKAGE_LOGGER = "zkconsumer"

_configured = False
#: what configure_logging changed, so that reset_logging can put it back
_installed: list[tuple[logging.Logger, logging.Handler]] = []
_saved_levels: dict[str, tuple[int, bool]] = {}

_message_fields = structlog.processors.LogfmtRenderer(bool_as_flag=False)

#: structlog's filtering wrapper classes and the level each lets through; their level is fixed once configured
#: (``make_filtering_bound_logger``'s documentation), so it can be checked before any call. Another wrapper class
#: (``structlog.stdlib.BoundLogger``, whose level the standard library may change at any time) filters by itself.
_FILTERING_LEVELS: dict[Any, int] = {
    structlog.make_filtering_bound_logger(level): level
    for level in (logging.NOTSET, logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL)
}


class _Resolved:
    """The structlog configuration the loggers' caches were assembled from. A new ``epoch`` drops every cache."""

    epoch: object = object()
    seen: tuple[Any, ...] = ()

    @classmethod
    def invalidate(cls) -> None:
        cls.epoch, cls.seen = object(), ()

    @classmethod
    def follow(cls) -> object:
        """Compare structlog's configuration with the last one seen (by identity); a new one starts a new epoch.
        Returns the current epoch."""
        config = structlog.get_config()
        current = (config["processors"], config["wrapper_class"], config["logger_factory"], config["context_class"])
        if not cls.seen or any(now is not then for now, then in zip(current, cls.seen, strict=True)):
            cls.epoch, cls.seen = object(), current
        return cls.epoch


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _level_method(fixed: int | None, fixed_name: str | None) -> Any:
    """A logging method: at a fixed level (``debug``...), or with ``None`` at the level the event declares
    (``emit``: the catalogue's :class:`~zkconsumer.events.spec.Event` carries it)."""

    def emit(self: EventLogger, event: Any, **fields: Any) -> Any:
        level = fixed if fixed is not None else event.levelno  # emit(): an Event carries its level
        if is_configured():
            if self._epoch is not _Resolved.epoch:
                self._resolve()
            if level < self._min_level:
                return None
            if self._epoch is not _Resolved.follow():  # reconfigured since: this event goes where the new one says
                self._resolve()
                if level < self._min_level:
                    return None
            return getattr(self._bound, fixed_name or event.level)(event, **fields)
        if self._stdlib.isEnabledFor(level):
            self._to_stdlib(level, event, fields)
        return None

    emit.__name__ = fixed_name or "emit"
    emit.__doc__ = (f"Emit ``event`` at {logging.getLevelName(fixed).lower()} level with ``fields``." if fixed
                    else "Emit ``event`` (an :class:`~zkconsumer.events.spec.Event`) at the level it declares.")
    return emit


class EventLogger:
    """What :func:`get_logger` returns: structlog's logging methods and ``bind``, routed as the module docstring
    says, and decided again at every event, so a configuration made after the logger was created (an application
    configuring at start-up, a test capturing events) is followed."""

    __slots__ = ("name", "_context", "_stdlib", "_epoch", "_bound", "_min_level")

    def __init__(self, name: str, context: dict[str, Any] | None = None) -> None:
        self.name = name
        self._context: dict[str, Any] = context or {}
        self._stdlib = logging.getLogger(name)
        # The bound logger of structlog's configuration, and the level below which its methods do nothing, as of
        # the epoch they were assembled in (see _Resolved).
        self._epoch: object = None
        self._bound: Any = None
        self._min_level = logging.NOTSET

    def bind(self, **values: Any) -> EventLogger:
        """A logger whose events all carry ``values`` too."""
        return EventLogger(self.name, {**self._context, **values})

    emit = _level_method(None, None)
    debug = _level_method(logging.DEBUG, "debug")
    info = _level_method(logging.INFO, "info")
    warning = _level_method(logging.WARNING, "warning")
    error = _level_method(logging.ERROR, "error")
    critical = _level_method(logging.CRITICAL, "critical")

    def exception(self, event: str, **fields: Any) -> Any:
        """An error event with the exception being handled."""
        fields.setdefault("exc_info", True)
        return self.error(event, **fields)

    def is_enabled_for(self, level: int) -> bool:
        """Whether an event at ``level`` would be emitted, for a caller whose fields cost something to compute.
        Under a structlog configuration that filters in a processor rather than in its wrapper class, ``True``."""
        if not is_configured():
            return self._stdlib.isEnabledFor(level)
        if self._epoch is not _Resolved.follow():
            self._resolve()
        return level >= self._min_level

    def _resolve(self) -> None:
        """Assemble the bound logger of the current structlog configuration. The processor list is kept by
        reference, so ``capture_logs``, which edits it in place, is seen without assembling again. The level of a
        filtering wrapper class (``make_filtering_bound_logger``) is looked up once here, so that an event below it
        returns before its call. The epoch is set last: another thread emitting on this logger meanwhile assembles
        its own rather than use half of this one."""
        epoch = _Resolved.follow()
        self._bound = structlog.get_logger(self.name).bind(**self._context)
        self._min_level = _FILTERING_LEVELS.get(structlog.get_config()["wrapper_class"], logging.NOTSET)
        self._epoch = epoch

    def _to_stdlib(self, level: int, event: str, fields: dict[str, Any]) -> None:
        event_dict = {**structlog.contextvars.get_contextvars(), **self._context, **fields}
        exc_info = event_dict.pop("exc_info", None)
        message = f"{event} {_message_fields(None, '', dict(event_dict))}" if event_dict else event
        self._stdlib.log(level, message, exc_info=exc_info, stacklevel=3,
                         extra={"event_dict": {"event": event, **event_dict}})

    def __repr__(self) -> str:
        return f"EventLogger({self.name!r}, {self._context!r})"


def get_logger(name: str) -> EventLogger:
    """The logger of a module, named ``zkconsumer.<something>``; cheap to keep at module level."""
    return EventLogger(name)


def configure_logging(
    json: bool | None = None, level: str | None = None, stream: TextIO | None = None, force: bool = False,
    file: Path | None = None,
) -> None:
    """For entry points only (the command line, the demo's member processes, benchmarks), never for the library:
    zkconsumer's events rendered on ``stream`` (default stderr), for a person or as JSON lines, from ``level`` up;
    other libraries' lines (kazoo) rendered alike on stderr, from warning up (or ``level`` if higher). With ``file``,
    the events from ``level`` up go to that file instead (appended, rotated at 10 MB, opened at the first event), and
    ``stream`` gets warnings and errors only. Later calls are ignored unless ``force`` (the first caller decides)."""
    global _configured
    if _configured and not force:
        return
    if json is None:
        json = _env_flag(LOG_JSON_ENV)
    level_name = (level or os.environ.get(LOG_LEVEL_ENV) or "info").upper()
    numeric = logging.getLevelName(level_name)
    if not isinstance(numeric, int):
        from zkconsumer.errors import UsageError

        raise UsageError(f"unknown log level {level_name!r} (use debug, info, warning or error)")
    _remove_installed()
    timestamper = structlog.processors.TimeStamper(fmt="iso", utc=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            timestamper,
            ProcessorFormatter.wrap_for_formatter,
        ],
        # Filters before the event is built: a debug call below the level is a no-op method.
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.stdlib.LoggerFactory(),
        cache_logger_on_first_use=False,
    )
    _Resolved.invalidate()
    renderer: list[Any] = (
        [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()] if json
        else [structlog.dev.ConsoleRenderer(colors=False)]
    )
    formatter = ProcessorFormatter(
        processors=[ProcessorFormatter.remove_processors_meta, *renderer],
        # Lines of other libraries (kazoo) get the same shape, with the logger they came from.
        foreign_pre_chain=[structlog.processors.add_log_level, structlog.stdlib.add_logger_name, timestamper],
    )
    package = logging.getLogger(PACKAGE_LOGGER)
    root = logging.getLogger()
    for logger in (package, root):
        _saved_levels.setdefault(logger.name, (logger.level, logger.propagate))
    package.setLevel(numeric)
    package.propagate = False  # the root handler below is for other libraries' lines; ours are rendered once
    root.setLevel(max(numeric, logging.WARNING))
    handlers: list[tuple[logging.Logger, logging.Handler]] = [(package, logging.StreamHandler(stream or sys.stderr)),
                                                              (root, logging.StreamHandler(sys.stderr))]
    if file is not None:
        handlers[0][1].setLevel(max(numeric, logging.WARNING))
        rotating = logging.handlers.RotatingFileHandler(file, maxBytes=10 * 1024 * 1024, backupCount=2,
                                                        encoding="utf-8", delay=True)
        handlers += [(package, rotating), (root, rotating)]
    for logger, handler in handlers:
        handler.setFormatter(formatter)
        logger.addHandler(handler)
        _installed.append((logger, handler))
    _configured = True


def _remove_installed() -> None:
    while _installed:
        logger, handler = _installed.pop()
        logger.removeHandler(handler)
        handler.close()  # a file handler's file; a stream handler leaves its stream open


def reset_logging() -> None:
    """Undo :func:`configure_logging` and any structlog configuration: the process is as a fresh one (tests)."""
    global _configured
    structlog.reset_defaults()
    _Resolved.invalidate()
    _remove_installed()
    for name, (level, propagate) in _saved_levels.items():
        logger = logging.getLogger(name) if name != "root" else logging.getLogger()
        logger.setLevel(level)
        logger.propagate = propagate
    _saved_levels.clear()
    _configured = False
