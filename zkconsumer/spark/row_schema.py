"""Arrow and Spark schemas of the analysis rows, read off their dataclasses, so a column added to a row is a
column of its table with no second list to keep in step."""

from __future__ import annotations

import dataclasses
from typing import Any

# annotation (as written, ``from __future__ import annotations``) -> (Arrow type name, Spark SQL type)
_TYPES = {
    "str": ("string", "string"),
    "int": ("int64", "bigint"),
    "float": ("float64", "double"),
    "bool": ("bool_", "boolean"),
    "datetime": ("timestamp", "timestamp"),
}


def _base(annotation: str) -> str:
    return annotation.replace(" | None", "").strip()


def names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def spark_ddl(cls: type) -> str:
    """``name type, ...`` for a struct or a schema (every name backquoted: ``group`` is an SQL keyword)."""
    return ", ".join(f"`{f.name}` {_TYPES[_base(str(f.type))][1]}" for f in dataclasses.fields(cls))


def spark_struct(cls: type) -> str:
    return "struct<" + ", ".join(f"`{f.name}`: {_TYPES[_base(str(f.type))][1]}" for f in dataclasses.fields(cls)) + ">"


def arrow_fields(pa: Any, cls: type) -> list[Any]:
    fields = []
    for f in dataclasses.fields(cls):
        kind = _TYPES[_base(str(f.type))][0]
        fields.append(pa.field(f.name, pa.timestamp("us", tz="UTC") if kind == "timestamp" else getattr(pa, kind)()))
    return fields


def as_dicts(rows: Any) -> list[dict[str, Any]]:
    return [{f.name: getattr(row, f.name) for f in dataclasses.fields(row)} for row in rows]
