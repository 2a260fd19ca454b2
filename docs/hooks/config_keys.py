"""MkDocs hook: the table of the consumer's configuration keys, made from ``zkconsumer.config.KEYS`` at build time.

A page holding the line ``<!-- consumer-config-keys -->`` gets the table in its place, so the documented keys,
defaults and bounds are the ones the code parses and cannot drift from them.
"""

from __future__ import annotations

from typing import Any

MARKER = "<!-- consumer-config-keys -->"


def _default(key: Any, names: dict[str, str]) -> str:
    from zkconsumer.config import identity_decoder

    if key.required:
        return "required"
    default = key.default
    if default is identity_decoder:
        return "the bytes unchanged"
    if callable(default):
        cells = getattr(default, "__closure__", None) or ()
        derived = [names[c.cell_contents] for c in cells if c.cell_contents in names]
        return f"`{derived[0]}`" if derived else "derived (see below)"
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    return f"`{default}`"


def _allowed(key: Any) -> str:
    if key.choices:
        return " / ".join(f"`{choice}`" for choice in key.choices)
    bounds = []
    if key.minimum is not None:
        bounds.append(f">= {key.minimum}")
    if key.maximum is not None:
        bounds.append(f"<= {key.maximum}")
    return ", ".join(bounds)


def table() -> str:
    from zkconsumer.config import KEYS

    names = {key.attr: key.name for key in KEYS}
    rows = ["| key | type | default | allowed |", "|---|---|---|---|"]
    for key in KEYS:
        kind = key.kind if isinstance(key.kind, str) else key.kind.__name__
        rows.append(f"| `{key.name}` | {kind} | {_default(key, names)} | {_allowed(key)} |")
    return "\n".join(rows)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return markdown.replace(MARKER, table()) if MARKER in markdown else markdown
