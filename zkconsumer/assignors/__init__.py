"""Partition assignment, legacy (per consumer thread) and modern (per member), as pure functions.

Look strategies up by name with :func:`create`; every one takes an :class:`AssignmentInput` and returns
an :class:`AssignmentResult`.
"""

from zkconsumer.assignors.model import AssignmentError, AssignmentInput, AssignmentResult, Assignor, Member
from zkconsumer.assignors.registry import NAMES, StrategyOptions, create
from zkconsumer.types import TopicPartition

__all__ = [
    "NAMES",
    "AssignmentError",
    "AssignmentInput",
    "AssignmentResult",
    "Assignor",
    "Member",
    "StrategyOptions",
    "TopicPartition",
    "create",
]
