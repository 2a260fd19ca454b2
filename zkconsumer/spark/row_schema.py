"""Arrow and Spark schemas of the analysis rows, read off their dataclasses, so a column added to a row is a
column of its table with no second list to keep in step."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
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


def arrow_structs(pa: Any, cls: type, rows: Sequence[Any]) -> Any:
    """``rows`` (dataclass instances, ``None`` for a null struct) as one Arrow struct array, built a column at a time:
    an executor turning tens of thousands of rows into a batch should not make a dict of each."""
    fields = arrow_fields(pa, cls)
    arrays = [pa.array([None if row is None else getattr(row, f.name) for row in rows], type=f.type) for f in fields]
    nulls = [row is None for row in rows]
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=pa.array(nulls, type=pa.bool_()) if any(nulls)
                                      else None)


def arrow_lists(pa: Any, cls: type, groups: Sequence[Sequence[Any] | None]) -> Any:
    """One list of structs per entry of ``groups`` (``None`` for a null list), as one Arrow list array."""
    offsets = [0]
    flat: list[Any] = []
    for group in groups:
        flat.extend(group or ())
        offsets.append(len(flat))
    nulls = [group is None for group in groups]
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), arrow_structs(pa, cls, flat),
                                    mask=pa.array(nulls, type=pa.bool_()) if any(nulls) else None)
