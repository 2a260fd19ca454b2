"""Partition assignment, legacy (per consumer thread) and modern (per member), as pure functions.

Look strategies up by name with :func:`create`; every one takes an :class:`AssignmentInput` and returns
an :class:`AssignmentResult`. A group coordinator runs KIP-848's server-side assignors on its own state
instead: :func:`uniform_assign` or :func:`range_assign` on a :class:`GroupSpec`.
"""

from zkconsumer.assignors.consumer_range import range_assign
from zkconsumer.assignors.consumer_uniform import uniform_assign
from zkconsumer.assignors.group_spec import GroupSpec, SpecMember, TargetAssignment
from zkconsumer.assignors.model import AssignmentError, AssignmentInput, AssignmentResult, Assignor, Member
from zkconsumer.assignors.registry import NAMES, StrategyOptions, create
from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.types import TopicPartition

__all__ = [
    "NAMES",
    "AssignmentError",
    "AssignmentInput",
    "AssignmentResult",
    "Assignor",
    "GroupSpec",
    "Member",
    "SpecMember",
    "StrategyOptions",
    "TargetAssignment",
    "TopicPartition",
    "Uuid",
    "create",
    "range_assign",
    "uniform_assign",
]
