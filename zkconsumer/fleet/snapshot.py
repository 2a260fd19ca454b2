"""One consumer group as a JSON line: what ``zkconsumer snapshot`` writes and ``zkconsumer analyze fleet`` reads.

A line holds everything the analysis of one group needs, so that the analysis runs on any executor with no
server and no other line: the members' registrations (subscription as written, its pattern, and the streams per
topic it expands to against the topics of that moment), the ids registered (a member whose registration is
malformed is still registered: its session is alive), the owner znodes, the committed offsets, the partition
counts of every topic involved, where the offsets live, the znodes that could not be read, and whether the group
held still while it was read (``consistent``).

Pure: :func:`encode` and :func:`decode` are the codec, with no I/O. A line that is not a group record raises
:class:`SnapshotFormatError` naming what is wrong, so a reader can count it and carry on.

Format (version 1), keys in this order::

    {"v": 1, "group": "g", "read_at": "2026-11-21T21:12:00.928Z", "consistent": true,
     "registered": ["g_c1", "g_c2"],
     "members": [{"id": "g_c1", "pattern": "static", "subscription": {"t": 2}, "streams": {"t": 2}}],
     "partitions": {"t": 4},
     "owners": [["t", 0, "g_c1-0"]], "offsets": [["t", 0, 42]],
     "offsets_storage": "zookeeper", "malformed": [{"path": "/consumers/g/ids/g_c2", "problem": "..."}]}
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from zkconsumer.errors import ZkConsumerError

VERSION = 1
#: ``offsets_storage``: ZooKeeper's offset znodes, Kafka's ``__consumer_offsets``, both, or none found
OFFSETS_STORAGES = ("zookeeper", "kafka", "both", "none")


class SnapshotFormatError(ZkConsumerError):
    """A line of a snapshot that is not a group record."""


@dataclass(frozen=True, slots=True)
class Registration:
    """A member's registration znode: ``subscription`` as written (topics, or one regex for a wildcard pattern) and
    ``streams``, the topic -> stream count it expanded to against the topics of the moment it was read."""

    consumer_id: str
    pattern: str
    subscription: Mapping[str, int]
    streams: Mapping[str, int]

    @property
    def threads(self) -> int:
        return sum(self.streams.values())


@dataclass(frozen=True, slots=True, order=True)
class Owner:
    topic: str
    partition: int
    thread: str  # the owner znode's data: ``<consumer id>-<thread number>``


@dataclass(frozen=True, slots=True, order=True)
class CommittedOffset:
    topic: str
    partition: int
    offset: int


@dataclass(frozen=True, slots=True)
class Malformed:
    path: str
    problem: str


@dataclass(frozen=True, slots=True)
class GroupRecord:
    group: str
    read_at: str  # ISO 8601, UTC
    registered: tuple[str, ...]  # sorted
    members: tuple[Registration, ...]  # parsed registrations, by consumer id
    partitions: Mapping[str, int]  # every topic involved -> partition count (0: absent or malformed)
    owners: tuple[Owner, ...] = ()
    offsets: tuple[CommittedOffset, ...] = ()
    offsets_storage: str = "none"
    malformed: tuple[Malformed, ...] = ()
    consistent: bool = True

    @property
    def threads(self) -> int:
        return sum(m.threads for m in self.members)


def encode(record: GroupRecord) -> str:
    """The record as one JSON line (no newline)."""
    return json.dumps({
        "v": VERSION,
        "group": record.group,
        "read_at": record.read_at,
        "consistent": record.consistent,
        "registered": list(record.registered),
        "members": [{"id": m.consumer_id, "pattern": m.pattern, "subscription": dict(m.subscription),
                     "streams": dict(m.streams)} for m in record.members],
        "partitions": dict(record.partitions),
        "owners": [[o.topic, o.partition, o.thread] for o in record.owners],
        "offsets": [[o.topic, o.partition, o.offset] for o in record.offsets],
        "offsets_storage": record.offsets_storage,
        "malformed": [{"path": m.path, "problem": m.problem} for m in record.malformed],
    }, separators=(",", ":"), ensure_ascii=False)


def decode(line: str) -> GroupRecord:
    """A record from its line; :class:`SnapshotFormatError` for anything else."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        raise SnapshotFormatError("not JSON") from None
    if not isinstance(data, dict):
        raise SnapshotFormatError("not a JSON object")
    if data.get("v") != VERSION:
        raise SnapshotFormatError(f"unknown snapshot version {data.get('v')!r} (expected {VERSION})")
    storage = _get(data, "offsets_storage", str)
    if storage not in OFFSETS_STORAGES:
        raise SnapshotFormatError(f"offsets_storage {storage!r} is not one of {', '.join(OFFSETS_STORAGES)}")
    return GroupRecord(
        group=_get(data, "group", str),
        read_at=_get(data, "read_at", str),
        consistent=_get(data, "consistent", bool),
        registered=tuple(_strings(_get(data, "registered", list), "registered")),
        members=tuple(_registration(m) for m in _get(data, "members", list)),
        partitions=_counts(_get(data, "partitions", dict), "partitions"),
        owners=tuple(Owner(*_triple(o, "owners", str)) for o in _get(data, "owners", list)),
        offsets=tuple(CommittedOffset(*_triple(o, "offsets", int)) for o in _get(data, "offsets", list)),
        offsets_storage=storage,
        malformed=tuple(Malformed(_get(m, "path", str), _get(m, "problem", str))
                        for m in _objects(_get(data, "malformed", list), "malformed")),
    )


def _get(data: Any, key: str, kind: type) -> Any:
    if not isinstance(data, dict):
        raise SnapshotFormatError(f"expected an object holding {key!r}")
    value = data.get(key)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise SnapshotFormatError(f"{key!r} is not a {kind.__name__}: {value!r:.80}")
    return value


def _strings(values: list, key: str) -> list[str]:
    if not all(isinstance(v, str) for v in values):
        raise SnapshotFormatError(f"{key!r} holds something other than strings")
    return values


def _objects(values: list, key: str) -> list[dict]:
    if not all(isinstance(v, dict) for v in values):
        raise SnapshotFormatError(f"{key!r} holds something other than objects")
    return values


def _counts(value: dict, key: str) -> Mapping[str, int]:
    for count in value.values():
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise SnapshotFormatError(f"{key!r} holds {count!r:.40}, not a count")
    return MappingProxyType(value)


def _registration(value: Any) -> Registration:
    return Registration(_get(value, "id", str), _get(value, "pattern", str),
                        _counts(_get(value, "subscription", dict), "subscription"),
                        _counts(_get(value, "streams", dict), "streams"))


def _triple(value: Any, key: str, third: type) -> tuple[str, int, Any]:
    if (not isinstance(value, list) or len(value) != 3 or not isinstance(value[0], str)
            or not isinstance(value[1], int) or isinstance(value[1], bool) or not isinstance(value[2], third)
            or isinstance(value[2], bool)):
        raise SnapshotFormatError(f"an entry of {key!r} is not [topic, partition, {third.__name__}]: {value!r:.80}")
    return value[0], value[1], value[2]
