"""structlog, configured once for the whole process.

Every event zkconsumer emits goes through structlog with a stable event name (``bridge.znode_written``,
``local.started``...) and typed fields; the modules that emit them list them in their docstrings.
By default events are rendered for a person on stderr; with ``--log-json`` or ``ZKCONSUMER_LOG_JSON=1``
each event is one JSON line, so a run can be collected and replayed (the trace tools read those lines).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TextIO

import structlog

LOG_JSON_ENV = "ZKCONSUMER_LOG_JSON"
LOG_LEVEL_ENV = "ZKCONSUMER_LOG_LEVEL"

_configured = False


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def configure_logging(
    json: bool | None = None, level: str | None = None, stream: TextIO | None = None, force: bool = False
) -> None:
    """Configure structlog; later calls are ignored unless ``force`` (the first caller decides)."""
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
    processors: list = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if json:
        processors += [structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]
    else:
        processors.append(structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream or sys.stderr),
        cache_logger_on_first_use=False,
    )
    # kazoo and others log through the standard library; keep them quiet unless asked.
    logging.basicConfig(level=max(numeric, logging.WARNING), stream=stream or sys.stderr)
    _configured = True


def get_logger(name: str) -> structlog.stdlib.BoundLogger:
    return structlog.get_logger(name)
