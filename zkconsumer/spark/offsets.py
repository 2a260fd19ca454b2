"""The streaming source's offsets and micro-batch plans. Pure: the source feeds it what ZooKeeper and the brokers
said, and gets back what to read and what to commit.

**The offset.** Spark stores the source's offset as JSON in the query's checkpoint (the offset log) and hands it
back to ``partitions(start, end)`` and ``commit(end)``; it compares offsets as strings. So the JSON is built with a
fixed key order (topics sorted, partitions in numeric order, string partition keys) and has the layout of Spark's
Kafka source, ``{"topic": {"0": 42}}``: the next offset to read in each partition, the same number the legacy group
commits. A partition keeps its position while the source does not own it.

One addition: the range a micro-batch reads in a partition normally begins at the previous batch's position, but
not always: a partition read for the first time begins where the group (or ``startingOffsets``) says, and a
partition regained after a rebalance may begin further on (below). Spark re-plans a batch from ``(start, end)``
alone after a failure or restart, so where such a range begins is written into the batch's ``end``, under the key
``"@from"`` (no topic can be called that: ``@`` is not allowed in topic names)::

    {"@from": {"orders": {"3": 120}}, "orders": {"0": 600, "3": 150}}

reads ``orders-0`` from the previous position to 600 and ``orders-3`` from 120 to 150. The next batch's start
ignores ``@from``.

**A partition regained.** While another member owned a partition, it consumed it and committed its offsets to the
group. When the source owns the partition again it begins at the group's committed offset if that is ahead of its
own position, so that what the other member consumed meanwhile is not read twice (the legacy member did the same: a
new owner starts from the committed offset). It never begins behind its own position: what the source processed is
in the sink, and nothing between the source's position and the other member's committed offset can be lost, since
the other member started from an offset the source committed, at most its own position. A committed offset past
the end of the log (a topic recreated) is ignored: the source keeps its own position.

**A position past the end of the log.** A log that ends before the source's position (the broker lost it, the topic
was recreated) would leave the partition waiting for offsets it may never reach. Kafka's broker answers such a fetch
with OFFSET_OUT_OF_RANGE and the consumer resets by ``auto.offset.reset``; the planner does the same from the true
log end: it gives :func:`plan_batch` the reset position (``resets``) and the range begins there, written into
``@from`` like any other jump. Without a reset position (the log's start not known yet) the position is kept and
nothing is read there.

**Rate limit.** ``maxOffsetsPerTrigger`` is shared over the partitions in proportion to what each has waiting,
rounded down, the remainder going to the largest fractions: a batch reads exactly ``min(limit, available)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.types import TopicPartition

FROM_KEY = "@from"
#: a range larger than this is read by several Spark tasks
DEFAULT_MAX_RANGE = 100_000


class OffsetFormatError(ValueError):
    """An offset from the checkpoint that this source did not write."""


@dataclass(frozen=True)
class SourceOffset:
    """Where the source stands: the next offset of each partition it has read or positioned, and, for the batch
    ending here, where ranges began that did not begin at the previous position."""

    positions: Mapping[TopicPartition, int] = field(default_factory=dict)
    begins: Mapping[TopicPartition, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The offset as Spark stores it; the same offset always gives the same JSON text."""
        out: dict[str, Any] = {}
        if self.begins:
            out[FROM_KEY] = _by_topic(self.begins)
        out.update(_by_topic(self.positions))
        return out

    @staticmethod
    def from_json(obj: Any) -> SourceOffset:
        if not isinstance(obj, Mapping):
            raise OffsetFormatError(f"expected a JSON object of topics, got {obj!r:.80}")
        positions: dict[TopicPartition, int] = {}
        begins: dict[TopicPartition, int] = {}
        for topic, partitions in obj.items():
            target = begins if topic == FROM_KEY else positions
            if topic == FROM_KEY:
                if not isinstance(partitions, Mapping):
                    raise OffsetFormatError(f"{FROM_KEY} must hold topics, got {partitions!r:.80}")
                for inner_topic, inner in partitions.items():
                    target.update(_partitions(inner_topic, inner))
            else:
                target.update(_partitions(topic, partitions))
        return SourceOffset(dict(sorted(positions.items())), dict(sorted(begins.items())))

    def begin_of(self, tp: TopicPartition, start: SourceOffset) -> int | None:
        """Where the batch ending here began reading ``tp`` (``None``: it has no position anywhere)."""
        return self.begins.get(tp, start.positions.get(tp))

    def same_positions(self, other: SourceOffset) -> bool:
        return dict(self.positions) == dict(other.positions) and not self.begins


def _by_topic(offsets: Mapping[TopicPartition, int]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for tp in sorted(offsets):
        out.setdefault(tp.topic, {})[str(tp.partition)] = int(offsets[tp])
    return out


def _partitions(topic: Any, partitions: Any) -> dict[TopicPartition, int]:
    if not isinstance(topic, str) or not isinstance(partitions, Mapping):
        raise OffsetFormatError(f'expected "topic": {{"0": offset}}, got {topic!r:.40}: {partitions!r:.80}')
    out = {}
    for partition, offset in partitions.items():
        if not (isinstance(partition, str) and partition.isdigit()):
            raise OffsetFormatError(f"partition {partition!r} of topic {topic!r} is not a partition number")
        if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
            raise OffsetFormatError(f"offset {offset!r} of {topic}-{partition} is not an offset")
        out[TopicPartition(topic, int(partition))] = offset
    return out


@dataclass(frozen=True, order=True)
class OffsetRange:
    """``[begin, end)`` of one partition: what one Spark task reads."""

    topic: str
    partition: int
    begin: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.begin

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)


@dataclass(frozen=True)
class BatchPlan:
    """The end of the next micro-batch, and what the planning saw on the way (for its event)."""

    end: SourceOffset
    #: partitions whose range begins at the group's committed offset, ahead of the source's position:
    #: partition -> (the source's position, the group's offset)
    resumed: Mapping[TopicPartition, tuple[int, int]] = field(default_factory=dict)
    #: partitions whose log ends before the source's position (nothing read; the position is kept):
    #: partition -> (position, log end)
    behind: Mapping[TopicPartition, tuple[int, int]] = field(default_factory=dict)
    #: partitions whose log ends before the source's position, reset by ``auto.offset.reset``:
    #: partition -> (position, where the range begins instead)
    reset: Mapping[TopicPartition, tuple[int, int]] = field(default_factory=dict)
    #: offsets waiting in the partitions read, and how many this batch takes (less when rate-limited)
    available: int = 0
    planned: int = 0

    @property
    def limited(self) -> bool:
        return self.planned < self.available


def plan_batch(start: SourceOffset, log_ends: Mapping[TopicPartition, int],
               first_positions: Mapping[TopicPartition, int] | None = None,
               committed: Mapping[TopicPartition, int] | None = None,
               max_offsets: int | None = None, resets: Mapping[TopicPartition, int] | None = None) -> BatchPlan:
    """The next batch's end.

    ``log_ends``: the partitions to read now (owned, and whose log end is known) with their log end.
    ``first_positions``: where each of those without a position in ``start`` begins.
    ``committed``: the group's committed offset of partitions regained since the last planning (see the module's
    docstring); ``max_offsets``: ``maxOffsetsPerTrigger``; ``resets``: where a partition whose log ends before its
    position begins instead (``auto.offset.reset``'s answer, at most its log end).
    """
    first_positions = first_positions or {}
    committed = committed or {}
    resets = resets or {}
    begins: dict[TopicPartition, int] = {}
    resumed: dict[TopicPartition, tuple[int, int]] = {}
    behind: dict[TopicPartition, tuple[int, int]] = {}
    reset: dict[TopicPartition, tuple[int, int]] = {}
    waiting: dict[TopicPartition, int] = {}
    for tp in sorted(log_ends):
        log_end = log_ends[tp]
        position = start.positions.get(tp)
        if position is None:
            if tp not in first_positions:
                continue
            begin = first_positions[tp]
            begins[tp] = begin
        else:
            begin = position
            theirs = committed.get(tp)
            if theirs is not None and position < theirs <= log_end:
                begin = theirs
                begins[tp] = begin
                resumed[tp] = (position, theirs)
        if log_end < begin:
            if tp in resets and resets[tp] <= log_end:
                reset[tp] = (begin, resets[tp])
                begin = begins[tp] = resets[tp]
            else:
                behind[tp] = (begin, log_end)
        waiting[tp] = max(0, log_end - begin)
    available = sum(waiting.values())
    take = rate_limit(waiting, max_offsets) if max_offsets is not None else waiting
    positions = dict(start.positions)
    for tp in waiting:
        begin = begins.get(tp, start.positions.get(tp, 0))
        positions[tp] = begin + take[tp]
    end = SourceOffset(dict(sorted(positions.items())), begins)
    return BatchPlan(end, resumed, behind, reset, available, sum(take.values()))


def rate_limit(waiting: Mapping[TopicPartition, int], limit: int) -> dict[TopicPartition, int]:
    """How many offsets each partition gives to a batch of at most ``limit``: shares in proportion to what waits,
    rounded down, the remainder to the largest fractions (ties: partition order)."""
    total = sum(waiting.values())
    if total <= limit:
        return dict(waiting)
    shares = {tp: limit * n / total for tp, n in waiting.items()}
    take = {tp: min(waiting[tp], math.floor(share)) for tp, share in shares.items()}
    remainder = limit - sum(take.values())
    by_fraction = sorted(waiting, key=lambda tp: (-(shares[tp] - math.floor(shares[tp])), tp))
    for tp in by_fraction:
        if remainder <= 0:
            break
        if take[tp] < waiting[tp]:
            take[tp] += 1
            remainder -= 1
    return take


def batch_ranges(start: SourceOffset, end: SourceOffset) -> list[OffsetRange]:
    """The non-empty ranges of the batch ``(start, end]``, as Spark asks for them again after a restart."""
    ranges = []
    for tp, stop in end.positions.items():
        begin = end.begin_of(tp, start)
        if begin is not None and stop > begin:
            ranges.append(OffsetRange(tp.topic, tp.partition, begin, stop))
    return sorted(ranges)


def split_ranges(ranges: Iterable[OffsetRange], max_size: int = DEFAULT_MAX_RANGE,
                 min_pieces: int | None = None) -> list[OffsetRange]:
    """Ranges cut so that none is larger than ``max_size``, then the largest halved until there are at least
    ``min_pieces`` (``minPartitions``), as long as a range has two offsets to cut between."""
    pieces: list[OffsetRange] = []
    for r in ranges:
        count = max(1, math.ceil(r.size / max_size))
        pieces.extend(_cut(r, count))
    while min_pieces is not None and len(pieces) < min_pieces:
        largest = min(pieces, key=lambda r: (-r.size, r), default=None)  # ties: the first range
        if largest is None or largest.size < 2:
            break
        pieces.remove(largest)
        pieces.extend(_cut(largest, 2))
    return sorted(pieces)


def _cut(r: OffsetRange, count: int) -> list[OffsetRange]:
    bounds = [r.begin + (r.size * i) // count for i in range(count + 1)]
    return [OffsetRange(r.topic, r.partition, a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


@dataclass(frozen=True)
class CommitPlan:
    """What a commit writes to ``/consumers/<group>/offsets``, and what it leaves."""

    write: Mapping[TopicPartition, int] = field(default_factory=dict)
    #: positions of partitions the source does not own now: their owner commits them
    not_owned: tuple[TopicPartition, ...] = ()
    #: the group already holds this offset or a higher one: partition -> (ours, the group's)
    not_ahead: Mapping[TopicPartition, tuple[int, int]] = field(default_factory=dict)


def plan_commit(positions: Mapping[TopicPartition, int], owned: Iterable[TopicPartition],
                committed: Mapping[TopicPartition, int]) -> CommitPlan:
    """Commit a position only for a partition owned now, and only forward of what the group holds (``-1``: none)."""
    owned_set = set(owned)
    write: dict[TopicPartition, int] = {}
    not_ahead: dict[TopicPartition, tuple[int, int]] = {}
    not_owned = []
    for tp in sorted(positions):
        if tp not in owned_set:
            not_owned.append(tp)
            continue
        theirs = committed.get(tp, -1)
        if positions[tp] > theirs:
            write[tp] = positions[tp]
        elif positions[tp] < theirs:
            not_ahead[tp] = (positions[tp], theirs)
    return CommitPlan(write, tuple(not_owned), not_ahead)
