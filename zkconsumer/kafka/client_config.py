"""Client settings every librdkafka client of the project takes on top of its own: the security settings
(``security.protocol``, ``sasl.mechanism``, ``sasl.username``, ``ssl.ca.location``...) a production cluster asks of
every client, given once as a file of librdkafka properties named by ``ZKCONSUMER_CLIENT_CONFIG``.

An environment variable, because the clients live in many processes: the comparison's producer and admin calls, each
member process (which inherits the variable), the legacy members' fetchers. The pytest plugin sets it from its
``--zkconsumer-client-config`` option or ``zkconsumer_client_config`` ini setting (:mod:`zkconsumer.testing.plugin`).

The file: one ``key=value`` a line (``key: value`` too, as Java's properties allow), ``#`` and ``!`` comments, blank
lines ignored. What says where and who the client is (``bootstrap.servers``, ``group.id``) stays the caller's and is
refused. Values are never repeated in an error: a line may hold a password.

Pure but for :func:`client_settings`, which reads the file the variable names (again whenever it changes).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError

CLIENT_CONFIG_ENV = "ZKCONSUMER_CLIENT_CONFIG"
#: the caller's own: a file of settings for every client cannot say which broker or group each one is for
REFUSED = frozenset({"bootstrap.servers", "metadata.broker.list", "group.id"})

_cache: dict[tuple[str, float], dict[str, str]] = {}


def parse_properties(text: str, source: str) -> dict[str, str]:
    """The settings of a properties text; a :class:`UsageError` of one line naming ``source`` and the line number
    (never the value) for a line without a key, or a key the caller sets itself."""
    settings: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line[0] in "#!":
            continue
        cut = min((i for i in (line.find("="), line.find(":")) if i >= 0), default=-1)
        key = line[:cut].strip() if cut >= 0 else ""
        if not key:
            raise UsageError(f"{source} line {number}: expected KEY=VALUE")
        if key in REFUSED:
            raise UsageError(f"{source} line {number}: {key} is set by each client itself, not by client settings")
        settings[key] = line[cut + 1:].strip()
    return settings


def read_properties(path: Path) -> dict[str, str]:
    """:func:`parse_properties` of the file at ``path``; a :class:`UsageError` of one line when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"client settings {path}: {exc.strerror or exc}") from None
    return parse_properties(text, f"client settings {path}")


def client_settings(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """The settings of the file ``ZKCONSUMER_CLIENT_CONFIG`` names; none when it is not set."""
    named = (os.environ if environ is None else environ).get(CLIENT_CONFIG_ENV)
    if not named:
        return {}
    path = Path(named)
    try:
        key = (str(path.resolve()), path.stat().st_mtime)
    except OSError:
        return read_properties(path)  # says why, in one line
    if key not in _cache:
        _cache[key] = read_properties(path)
    return dict(_cache[key])


def with_client_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """A client's ``config`` with the client settings on top: the security a cluster asks of every client wins over
    a client's defaults (none of which are security settings)."""
    return {**config, **client_settings()}
