"""The member processes' command lines, declared once: each option is a field of a dataclass (:class:`MemberOptions`,
what both members take, and each member's subclass, :class:`zkconsumer.members.legacy_member.LegacyOptions` and
:class:`zkconsumer.members.modern_member.ModernOptions`), its help, choices and parsing in the field's metadata
(:func:`~zkconsumer.members.option_field.option`). The member's parser (:func:`parser`) and the argv a starter runs
(:meth:`MemberOptions.argv`) are both derived from the fields, so what a starter writes is what the member reads.

How a field becomes an option: ``--`` and its name with ``-`` for ``_``; a field without a default is required; a
``bool`` is a flag (``store_true``); a ``tuple[str, ...]`` is repeated (``append``); an ``int`` is parsed as one
(or by the field's ``parse``); anything else (a path) is given as text. The argv leaves out an option at its
default, so a member's command line shows what the starter chose.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, get_type_hints

from zkconsumer.members.application import DELIVERY_FORMATS
from zkconsumer.members.option_field import Flag, option
from zkconsumer.members.revoke_cost import revoke_ms


@dataclass(frozen=True, kw_only=True)
class MemberOptions:
    """Whom a member joins and how it reports; a member's subclass sets :attr:`MODULE` and adds its server (a
    required field first) and its own options."""

    MODULE: ClassVar[str]

    group: str = option()
    topic: str = option()
    consumer_id: str = option()
    strategy: str = option("range", choices=("range", "roundrobin"))
    session_timeout_ms: int = option(6000)
    output: Path | None = option(None, help="append one line per message delivered to this file")
    delivery_format: str = option("plain", choices=DELIVERY_FORMATS,
                                  help="plain: 'partition offset value'; timed: 'time topic partition offset value' "
                                  "(time: wall-clock seconds, as the events' timestamps)")
    stop_at_stdin_eof: bool = option(False, help="leave the group when stdin closes: the member cannot outlive the "
                                     "process that started it, whatever way that one ended")
    revoke_ms: int = option(0, parse=revoke_ms, metavar="MS",
                            help="the application's cost of giving partitions up: sleep this long each time the "
                            "member gives up at least one, before releasing them (default 0)")

    def argv(self) -> list[str]:
        """The command line that starts the member with these options, run by this interpreter."""
        argv = [sys.executable, "-m", self.MODULE]
        for f, kind in _options(type(self)):
            value = getattr(self, f.name)
            if f.default is not dataclasses.MISSING and value == f.default:
                continue
            name = _flag_name(f)
            if kind is bool:
                argv.append(name)
            elif kind is tuple:
                argv += [item for each in value for item in (name, str(each))]
            else:
                argv += [name, str(value)]
        return argv


def parser(options: type[MemberOptions], description: str) -> argparse.ArgumentParser:
    """The member's parser, from its options' fields: ``parse_args`` gives a namespace with one attribute per field
    (paths as text)."""
    built = argparse.ArgumentParser(prog=f"python -m {options.MODULE}", description=description)
    for f, kind in _options(options):
        flag: Flag = f.metadata["flag"]
        how: dict[str, Any] = {"help": flag.help}
        if kind is bool:
            how["action"] = "store_true"
        elif kind is tuple:
            how.update(action="append", default=[], metavar=flag.metavar)
        else:
            required = f.default is dataclasses.MISSING
            how.update(required=required, default=None if required else f.default, metavar=flag.metavar,
                       type=flag.parse or (int if kind is int else str), choices=flag.choices)
        built.add_argument(_flag_name(f), **how)
    return built


def _flag_name(f: dataclasses.Field[Any]) -> str:
    return "--" + f.name.replace("_", "-")


def _options(options: type[MemberOptions]) -> list[tuple[dataclasses.Field[Any], type]]:
    """The option fields, required ones first (the server, then whom to join), each with its kind: ``bool``,
    ``tuple`` (repeated), ``int`` or ``str``."""
    hints = get_type_hints(options)
    found = []
    for f in dataclasses.fields(options):
        hint = hints[f.name]
        kind = hint if hint in (bool, int) else tuple if getattr(hint, "__origin__", None) is tuple else str
        found.append((f, kind))
    shared = {f.name for f in dataclasses.fields(MemberOptions)}
    return sorted(found, key=lambda pair: (pair[0].default is not dataclasses.MISSING, pair[0].name in shared))
