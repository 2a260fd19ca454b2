"""When a position past the end of its partition's log is past it for certain: two looks, some seconds apart.

A consumer whose position lies beyond the log's end (a committed offset that outlived the log, a checkpoint older
than a recreated topic) applies ``auto.offset.reset``, as Kafka's fetch answers OFFSET_OUT_OF_RANGE. One look is not
enough to decide it: on Kafka a new leader's high watermark can trail what consumers already committed for a moment,
and a position between that high watermark and the log's true end is valid there. So a position found past the end
is reset only when a second look, at least :data:`CONFIRM_S` later, finds the same position past the end again.

Pure: the caller says what it saw and when (a monotonic clock); :class:`PastEndLooks` keeps the first looks.
"""

from __future__ import annotations

from zkconsumer.types import TopicPartition

CONFIRM_S = 3.0
"""The least time between the two looks."""


class PastEndLooks:
    """The first looks that found a position past its log's end, waiting for the second."""

    def __init__(self, confirm_s: float = CONFIRM_S) -> None:
        self.confirm_s = confirm_s
        self._first: dict[TopicPartition, tuple[int, float]] = {}  # partition -> (position, when it was seen)

    def confirmed(self, tp: TopicPartition, position: int, now: float) -> bool:
        """``position`` of ``tp`` was just found past the log's end: True when an earlier look found the same
        position past the end at least ``confirm_s`` ago (the reset may apply); otherwise this look is the first."""
        seen = self._first.get(tp)
        if seen is not None and seen[0] == position:
            if now - seen[1] >= self.confirm_s:
                del self._first[tp]
                return True
            return False
        self._first[tp] = (position, now)
        return False

    def forget(self, tp: TopicPartition) -> None:
        """``tp``'s position was found within its log, or moved: an earlier first look no longer counts."""
        self._first.pop(tp, None)

    def waiting(self) -> frozenset[TopicPartition]:
        """The partitions whose first look waits for a second."""
        return frozenset(self._first)
