"""Which files ``zkconsumer analyze events`` reads: every file given, and the event files under every directory given.

A directory is searched at every depth, because the tools that write events put them in subdirectories (a migration
comparison writes ``<protocol>/events.jsonl`` beside ``report.json``, ``report.html``, ``produced.txt`` and the
members' deliveries and stderr logs). Beside event files such directories hold files of other kinds, whose lines
would otherwise all be counted as broken events and hide the ones that are: a file found in a directory is read only
when one of its first lines (:data:`SNIFF_LINES`, within :data:`SNIFF_BYTES`) is an event, as
:func:`zkconsumer.trace.timeline.read_events` reads one; the others are skipped and named once. An empty file holds
nothing to skip and is not named. A file given by name is always read: its lines that are not events are broken
lines, counted as before. Hidden names (``.``, ``_`` first, as Hadoop skips them) are left out at every depth below
a directory given.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.errors import UsageError
from zkconsumer.trace.timeline import read_events

SNIFF_LINES = 32  # non-blank lines looked at: a log may start with a few lines of other output
SNIFF_BYTES = 1 << 20  # of a file's head; a line longer than this is not an event this command can use


@dataclass(frozen=True, slots=True)
class EventFiles:
    read: tuple[Path, ...]  # the files to read, in the order found
    skipped: tuple[Path, ...]  # files under a directory given whose first lines are no events


def find_event_files(paths: list[str]) -> EventFiles:
    """The files to read for ``paths`` (files and directories, each existing: see ``job_output.check_inputs``); a
    file under a directory that cannot be read is a UsageError naming it."""
    read: list[Path] = []
    skipped: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            read.append(path)
            continue
        for found in sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p.relative_to(path))):
            try:
                if found.stat().st_size == 0:
                    continue
                (read if holds_events(found) else skipped).append(found)
            except FileNotFoundError:
                continue  # gone since the listing (a member's file replaced by a rename while it runs)
            except OSError as exc:
                raise UsageError(f"events file {found} cannot be read ({exc.strerror or exc})") from None
    return EventFiles(tuple(read), tuple(skipped))


def holds_events(path: Path) -> bool:
    """One of the file's first non-blank lines is an event."""
    with open(path, "rb") as f:
        head = f.read(SNIFF_BYTES)
    lines = head.decode("utf-8", errors="replace").splitlines()
    if len(head) == SNIFF_BYTES and lines:
        lines.pop()  # cut short by the read
    blank_free = (line for line in lines if line.strip())
    return bool(read_events(itertools.islice(blank_free, SNIFF_LINES)).events)


def _hidden(relative: Path) -> bool:
    return any(part.startswith((".", "_")) for part in relative.parts)
