"""When a position past the end of its partition's log is past it for certain: two looks, some seconds apart.

A consumer whose position lies beyond the log's end (a committed offset that outlived the log, a checkpoint older
than a recreated topic) applies ``auto.offset.reset``, as Kafka's fetch answers OFFSET_OUT_OF_RANGE. One look is not
enough to decide it: on Kafka a new leader's high watermark can trail what consumers already committed for a moment,
and a position between that high watermark and the log's true end is valid there. So a position found past the end
is reset only when a second look, at least :data:`CONFIRM_S` later, finds the same position past the end again.
"""

from __future__ import annotations

from collections.abc import Mapping

from zkconsumer.types import TopicPartition

CONFIRM_S = 3.0
"""The least time between the two looks."""


def still_past_end(first_look: Mapping[TopicPartition, int],
                   ends: Mapping[TopicPartition, int]) -> frozenset[TopicPartition]:
    """Of the positions a first look found past their log's end, those the second look's ``ends`` find past it
    again; a partition whose end the second look could not read is not confirmed."""
    return frozenset(tp for tp, position in first_look.items() if tp in ends and position > ends[tp])
