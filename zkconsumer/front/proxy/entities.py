"""kio's entities built from plain values: one mapping serves every version of an API, each version taking the
fields it has (:func:`build`)."""

from __future__ import annotations

import dataclasses
import datetime
import sys
from typing import Any

from kio.schema.errors import ErrorCode as KioErrorCode


def response_type(request: Any) -> Any:
    """kio's response class of the request's API and version."""
    module = type(request).__module__.rsplit(".", 1)[0] + ".response"
    return next(getattr(sys.modules[module], name) for name in dir(sys.modules[module])
                if name.endswith("Response") and getattr(getattr(sys.modules[module], name), "__api_key__", None)
                is not None)


def nested(entity_type: Any, name: str) -> Any:
    """A nested entity class of the module ``entity_type`` lives in (``JoinGroupResponseMember``...)."""
    return getattr(sys.modules[entity_type.__module__], name)


def build(entity_type: Any, **values: Any) -> Any:
    """``entity_type`` from those of ``values`` its version has: a missing field keeps its default, ``None`` for a
    non-nullable string is ``""``, a timedelta field takes milliseconds, an error code Kafka's number."""
    kwargs: dict[str, Any] = {}
    for spec in dataclasses.fields(entity_type):
        if spec.name not in values:
            if spec.name == "throttle_time":
                kwargs[spec.name] = datetime.timedelta(0)
            continue
        value = values[spec.name]
        if value is None and spec.type is str:
            value = ""
        elif spec.name == "error_code":
            value = KioErrorCode(int(value))
        elif isinstance(spec.type, type) and issubclass(spec.type, datetime.timedelta) and isinstance(value, int):
            value = datetime.timedelta(milliseconds=value)
        kwargs[spec.name] = value
    return entity_type(**kwargs)


__all__ = ["build", "nested", "response_type"]
