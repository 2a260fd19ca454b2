"""Arrow schemas of the analysis rows, read off their dataclasses, so a column added to a row is a column of its
table with no second list to keep in step."""

from __future__ import annotations

import dataclasses
import operator
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
    """``rows`` (dataclass instances, ``None`` for a null struct) as one Arrow struct array, built a column at a time
    (the rows' values read by one ``attrgetter`` and transposed by ``zip``, both in C): an executor turning hundreds of
    thousands of rows into batches should not make a dict of each, nor call ``getattr`` per value."""
    fields = arrow_fields(pa, cls)
    read = operator.attrgetter(*(f.name for f in fields))
    nothing = (None,) * len(fields)
    nulls = [row is None for row in rows]
    values = [nothing if row is None else read(row) for row in rows] if any(nulls) else list(map(read, rows))
    if len(fields) == 1:  # attrgetter of one name gives the value, not a tuple
        values = [(value,) for value in values]
    columns = list(zip(*values, strict=True)) if values else [() for _ in fields]
    arrays = [pa.array(list(column), type=f.type) for column, f in zip(columns, fields, strict=True)]
    return pa.StructArray.from_arrays(arrays, fields=fields, mask=pa.array(nulls, type=pa.bool_()) if any(nulls)
                                      else None)
