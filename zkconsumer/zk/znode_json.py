"""Kafka's znode JSON: compact, keys in the order the writer gives, timestamps as strings.

Kafka's ``kafka.utils.Json.encode`` emits no whitespace and keeps the key order of the map it is
given; readers (Kafka's and the monitoring tools') accept any JSON. Byte-compatibility matters
for people comparing znodes by eye and for tools that diff them, so every writer here goes through
:func:`encode`, and every reader through :func:`decode_object`, which turns bad input into a
:class:`~zkconsumer.errors.ZnodeFormatError` naming the znode.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from zkconsumer.errors import ZnodeFormatError


def encode(value: Mapping[str, Any]) -> bytes:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def decode_object(path: str, data: bytes | None) -> dict[str, Any]:
    """Parse znode data that must be a JSON object."""
    if data is None or not data.strip():
        raise ZnodeFormatError(path, "is empty, expected a JSON object", data)
    try:
        value = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # bad UTF-8 or JSON, a number past Python's digit limit, deep nesting
        raise ZnodeFormatError(path, f"is not valid JSON ({str(exc)[:100]})", data) from None
    if not isinstance(value, dict):
        raise ZnodeFormatError(path, f"holds JSON {type(value).__name__}, expected an object", data)
    return value


def require(path: str, obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], data: bytes | None) -> Any:
    """Fetch a field of a parsed znode, with an error naming znode and field when absent or mistyped."""
    if key not in obj:
        raise ZnodeFormatError(path, f"has no field {key!r}", data)
    value = obj[key]
    # bool is an int in Python, never a valid Kafka number.
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ZnodeFormatError(path, f"field {key!r} is {value!r}, expected {_kind_name(kind)}", data)
    if not isinstance(value, kind):
        raise ZnodeFormatError(path, f"field {key!r} is {value!r}, expected {_kind_name(kind)}", data)
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    names = {int: "a number", str: "a string", list: "a list", dict: "an object"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)
