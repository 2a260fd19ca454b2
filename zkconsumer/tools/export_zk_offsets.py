"""Kafka's ``ExportZkOffsets`` tool: a group's committed offsets as
:class:`~zkconsumer.tools.zk_offsets_file.OffsetEntry`.

Topics are the children of ``/consumers/<group>/offsets``, partitions their children; both in order (partitions
numerically), so two exports of the same state are the same file. Values are read with async calls in batches,
reporting the running count to ``progress`` after each one, so a group of many thousand partitions costs a few
round trips and the caller can show that it is moving. An offset that cannot be read as one, or an entry that
the importer would refuse (a partition znode not named by a number, as 0.7's ``<broker>-<partition>``), is
skipped and returned in ``skipped`` by path, as Kafka's tool logged and skipped it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.group.offset_store import parse_offset
from zkconsumer.group.snapshot import MalformedZnode
from zkconsumer.tools.zk_offsets_file import OffsetEntry, parse_line
from zkconsumer.zk import paths

DEFAULT_BATCH = 500


@dataclass(frozen=True)
class ExportedGroup:
    group: str
    entries: tuple[OffsetEntry, ...]  # topics in order, partitions ascending
    skipped: tuple[MalformedZnode, ...] = ()
    #: False when the group has no ``offsets`` directory at all (it never committed)
    has_offsets: bool = True


def export_group(zk: KazooClient, group: str, progress: Callable[[int], None] | None = None,
                 batch: int = DEFAULT_BATCH) -> ExportedGroup:
    dirs = paths.GroupDirs(group)
    try:
        topics = sorted(zk.get_children(dirs.offsets_dir))
    except NoNodeError:
        return ExportedGroup(group, (), (), has_offsets=False)
    listing = {t: zk.get_children_async(paths.GroupTopicDirs(group, t).offset_dir) for t in topics}
    skipped: list[MalformedZnode] = []
    offset_znodes: list[tuple[str, str, str]] = []  # (topic, partition child, path)
    for topic, call in listing.items():
        try:
            children = call.get()
        except NoNodeError:
            continue  # deleted while we read
        offset_dir = paths.GroupTopicDirs(group, topic).offset_dir
        numeric = sorted((c for c in children if c.isdigit()), key=int)
        other = sorted(c for c in children if not c.isdigit())
        offset_znodes.extend((topic, c, f"{offset_dir}/{c}") for c in numeric + other)
    entries: list[OffsetEntry] = []
    for start in range(0, len(offset_znodes), max(1, batch)):
        chunk = offset_znodes[start:start + max(1, batch)]
        calls = [(path, zk.get_async(path)) for _, _, path in chunk]
        for path, call in calls:
            try:
                data = call.get()[0]
            except NoNodeError:
                continue
            value = parse_offset(path, data)
            if isinstance(value, MalformedZnode):
                skipped.append(value)
                continue
            try:
                entries.append(parse_line(f"{path}:{value}"))
            except ValueError as exc:
                skipped.append(MalformedZnode(path, f"cannot be imported again: {exc}"))
        if progress is not None:
            progress(len(entries))
    return ExportedGroup(group, tuple(entries), tuple(skipped))
