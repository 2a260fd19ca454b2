"""A dataclass field that is an option of a member's command line: :func:`option` makes the field, :class:`Flag`
(in the field's metadata) says its help, choices and parsing. Alone in its module so that every module declaring
options (the members' own, :mod:`zkconsumer.members.command_line`; the application's,
:mod:`zkconsumer.members.application`) imports it without importing the parser built from them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Flag:
    """What a field's option says and how it is read: ``parse`` is argparse's ``type`` (default: ``int`` for an
    ``int`` field, the text as it is otherwise)."""

    help: str | None = None
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    parse: Callable[[str], Any] | None = None


def option(default: Any = dataclasses.MISSING, **flag: Any) -> Any:
    """A field that is an option of the member's command line (``flag``: :class:`Flag`'s fields)."""
    return dataclasses.field(default=default, metadata={"flag": Flag(**flag)})
