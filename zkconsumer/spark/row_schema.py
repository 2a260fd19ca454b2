"""Arrow schemas of the analysis rows, read off their dataclasses, so a column added to a row is a column of its
table with no second list to keep in step."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

# annotation (as written, ``from __future__ import annotations``) -> Arrow type name
_TYPES = {"str": "string", "int": "int64", "float": "float64", "bool": "bool_", "datetime": "timestamp"}


def _base(annotation: str) -> str:
    return annotation.replace(" | None", "").strip()


def arrow_fields(pa: Any, cls: type) -> list[Any]:
    fields = []
    for f in dataclasses.fields(cls):
        kind = _TYPES[_base(str(f.type))]
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
