"""Render a page template: Jinja2 with autoescaping on, the templates shipped in the package.

Every value a template prints is escaped, unless it is :class:`Html` (or has ``__html__``, as a chart does): the
strings of a trace come from other processes' logs, and one ``<script>`` in a consumer id must stay text. Control
characters are dropped from every value first, as the timeline's SVG does: they are not allowed in XML, and an
SVG inline in the page is XML to anyone who saves it. Undefined names fail the render instead of printing
nothing, so a renamed field cannot silently empty a column.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import jinja2

_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Html:
    """Markup our own code made (an SVG drawing), printed as it is. Only for text built with every foreign string
    already escaped; anything else goes to the template as a plain value, to be escaped there."""

    text: str

    def __html__(self) -> str:
        return self.text


def strip_control(text: str) -> str:
    """``text`` without the control characters XML does not allow (tab, newline and carriage return stay)."""
    return _CONTROL.sub("", text)


def _finalize(value: Any) -> Any:
    if isinstance(value, str) and not hasattr(value, "__html__"):
        return strip_control(value)
    return value


@functools.cache
def environment() -> jinja2.Environment:
    """The one environment, made on first use (Jinja2 is imported here, not when zkconsumer is)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("zkconsumer.pages", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        finalize=_finalize,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_page(template: str, /, **context: Any) -> str:
    """The page ``template`` (a file under ``zkconsumer/pages/templates``) with ``context``, as one string."""
    return environment().get_template(template).render(**context)
