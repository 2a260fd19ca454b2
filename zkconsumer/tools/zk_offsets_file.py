"""The offsets file of ExportZkOffsets / ImportZkOffsets (``kafka.tools``): one ``<offset znode path>:<offset>`` a
line, e.g. ``/consumers/group1/offsets/topic1/0:286894308``. Pure.

Reading follows ImportZkOffsets (lines until the end or the first empty one) but, unlike it, checks every line
before anything is written: the path must be ``/consumers/<group>/offsets/<topic>/<partition>`` with a legal topic
name and a partition number, the value a whole number that fits a Java long, and no path may appear twice. The
first bad line is reported as ``line N: <problem>``. The value is split off at the *last* colon, so a group name
with a colon in it survives the round trip (Kafka's tool split at the first one and broke such lines).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from zkconsumer.errors import ZkConsumerError
from zkconsumer.zk import paths

_TOPIC_RE = re.compile(r"[a-zA-Z0-9._-]{1,249}")
_PARTITION_RE = re.compile(r"0|[1-9][0-9]*")
_OFFSET_RE = re.compile(r"-?[0-9]+")
_ZK_FORBIDDEN_RE = re.compile("[\u0000-\u001f\u007f-\u009f\ud800-\uf8ff\ufff0-\uffff]")
_INT_MAX = 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True, order=True)
class OffsetEntry:
    group: str
    topic: str
    partition: int
    offset: int

    @property
    def path(self) -> str:
        return paths.GroupTopicDirs(self.group, self.topic).offset_path(self.partition)

    def line(self) -> str:
        return f"{self.path}:{self.offset}"


class OffsetsFileError(ZkConsumerError):
    """The file is not an offsets file; nothing of it was written."""

    def __init__(self, line_number: int, problem: str, more: int = 0) -> None:
        self.line_number = line_number
        self.problem = problem
        self.more = more
        suffix = f" (and {more} more bad line{'s' if more != 1 else ''})" if more else ""
        super().__init__(f"line {line_number}: {problem}{suffix}; nothing was written")


def format_lines(entries: Iterable[OffsetEntry]) -> str:
    return "".join(f"{e.line()}\n" for e in entries)


def parse_line(text: str) -> OffsetEntry:
    """One line (without its newline); raises ValueError saying what is wrong with it."""
    path, sep, value = text.rpartition(":")
    if not sep:
        raise ValueError(f"{_shown(text)} is not PATH:OFFSET")
    parts = path.split("/")
    if len(parts) != 6 or parts[0] != "" or parts[1] != "consumers" or parts[3] != "offsets":
        raise ValueError(f"path {_shown(path)} is not /consumers/<group>/offsets/<topic>/<partition>")
    group, topic, partition = parts[2], parts[4], parts[5]
    if group in ("", ".", "..") or _ZK_FORBIDDEN_RE.search(group):
        raise ValueError(f"group {_shown(group)} in {_shown(path)} is not a valid znode name")
    if not _TOPIC_RE.fullmatch(topic) or topic in (".", ".."):
        raise ValueError(f"topic {_shown(topic)} in {_shown(path)} is not a legal Kafka topic name")
    if not _PARTITION_RE.fullmatch(partition) or int(partition) > _INT_MAX:
        raise ValueError(f"partition {_shown(partition)} in {_shown(path)} is not a partition number")
    value = value.strip()
    if not _OFFSET_RE.fullmatch(value) or not _LONG_MIN <= int(value) <= _LONG_MAX:
        raise ValueError(f"offset {_shown(value)} of {path} is not a whole number")
    return OffsetEntry(group, topic, int(partition), int(value))


def parse_offsets_file(text: str) -> list[OffsetEntry]:
    """Every entry up to the end or the first empty line, in file order; raises OffsetsFileError naming the first
    bad line (and how many more there are) when any line is bad."""
    entries: list[OffsetEntry] = []
    seen: dict[str, int] = {}
    problems: list[tuple[int, str]] = []
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        if not line:
            break
        try:
            entry = parse_line(line)
        except ValueError as exc:
            problems.append((number, str(exc)))
            continue
        if entry.path in seen:
            problems.append((number, f"{entry.path} again (first on line {seen[entry.path]})"))
            continue
        seen[entry.path] = number
        entries.append(entry)
    if problems:
        number, problem = problems[0]
        raise OffsetsFileError(number, problem, len(problems) - 1)
    return entries


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:77] + "...")
