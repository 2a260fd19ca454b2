"""Reconciliation against the cases of Kafka's ``CurrentAssignmentBuilderTest`` (group-coordinator, Kafka 4.x): the
member before, the target, who holds the partitions, what the member reports owning, and the member after."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.front.consumer_group_messages import MemberState
from zkconsumer.front.consumer_group_reconcile import FREE, Reconciliation, reconcile

T1 = Uuid(1, 11)
T2 = Uuid(2, 22)
STABLE = MemberState.STABLE
UNREVOKED = MemberState.UNREVOKED_PARTITIONS
UNRELEASED = MemberState.UNRELEASED_PARTITIONS

Parts = dict[Uuid, frozenset[int]]


def parts(t1: tuple[int, ...], t2: tuple[int, ...]) -> Parts:
    return {topic: frozenset(ps) for topic, ps in ((T1, t1), (T2, t2)) if ps}


def member(state: MemberState, epoch: int, previous: int, assigned: Parts,
           pending: Parts | None = None) -> Reconciliation:
    return Reconciliation(state, epoch, previous, assigned, pending or {})


def held_by(epoch: int) -> Callable[[Uuid, int], int]:
    return lambda topic_id, partition: epoch


def t2_held(topic_id: Uuid, partition: int) -> int:
    return 10 if topic_id == T2 else FREE


CASES = {
    "StableToStable": (
        member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6))), 11, parts((1, 2, 3), (4, 5, 6)), held_by(10), None,
        member(STABLE, 11, 10, parts((1, 2, 3), (4, 5, 6)))),
    "StableToStableWithNewPartitions": (
        member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6))), 11, parts((1, 2, 3, 4), (4, 5, 6, 7)), held_by(FREE),
        None, member(STABLE, 11, 10, parts((1, 2, 3, 4), (4, 5, 6, 7)))),
    "StableToUnrevokedPartitions": (
        member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6))), 11, parts((2, 3, 4), (5, 6, 7)), held_by(FREE), None,
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))),
    "StableToUnreleasedPartitions": (
        member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6))), 11, parts((1, 2, 3, 4), (4, 5, 6, 7)), held_by(10),
        None, member(UNRELEASED, 11, 10, parts((1, 2, 3), (4, 5, 6)))),
    "StableToUnreleasedPartitionsWithOwnedPartitionsNotHavingRevokedPartitions": (
        member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6))), 11, parts((1, 2, 3), (4, 5, 7)), t2_held, {},
        member(UNRELEASED, 11, 10, parts((1, 2, 3), (4, 5)))),
    "UnrevokedPartitionsToStable": (
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,))), 11, parts((2, 3), (5, 6)),
        held_by(FREE), parts((2, 3), (5, 6)), member(STABLE, 11, 10, parts((2, 3), (5, 6)))),
    "RemainsInUnrevokedPartitions (owned not reported)": (
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,))), 12, parts((3,), (6,)), held_by(FREE),
        None, member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))),
    "RemainsInUnrevokedPartitions (still owns 1)": (
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,))), 12, parts((3,), (6,)), held_by(FREE),
        parts((1, 2, 3), (5, 6)), member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))),
    "RemainsInUnrevokedPartitions (still owns 4)": (
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,))), 12, parts((3,), (6,)), held_by(FREE),
        parts((2, 3), (4, 5, 6)), member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))),
    "UnrevokedPartitionsToUnrevokedPartitions": (
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,))), 12, parts((3,), (6,)), held_by(FREE),
        parts((2, 3), (5, 6)), member(UNREVOKED, 11, 10, parts((3,), (6,)), parts((2,), (5,)))),
    "UnrevokedPartitionsToUnreleasedPartitions": (
        member(UNREVOKED, 11, 10, parts((2, 3), (5, 6))), 11, parts((2, 3, 4), (5, 6, 7)), held_by(10),
        parts((2, 3), (5, 6)), member(UNRELEASED, 11, 11, parts((2, 3), (5, 6)))),
    "UnreleasedPartitionsToStable": (
        member(UNRELEASED, 11, 11, parts((2, 3), (5, 6))), 12, parts((2, 3), (5, 6)), held_by(10), None,
        member(STABLE, 12, 11, parts((2, 3), (5, 6)))),
    "UnreleasedPartitionsToStableWithNewPartitions": (
        member(UNRELEASED, 11, 11, parts((2, 3), (5, 6))), 11, parts((2, 3, 4), (5, 6, 7)), held_by(FREE), None,
        member(STABLE, 11, 11, parts((2, 3, 4), (5, 6, 7)))),
    "UnreleasedPartitionsToUnreleasedPartitions": (
        member(UNRELEASED, 11, 11, parts((2, 3), (5, 6))), 11, parts((2, 3, 4), (5, 6, 7)), held_by(10), None,
        member(UNRELEASED, 11, 11, parts((2, 3), (5, 6)))),
    "UnreleasedPartitionsToUnrevokedPartitions": (
        member(UNRELEASED, 11, 11, parts((2, 3), (5, 6))), 12, parts((3,), (6,)), held_by(10), None,
        member(UNREVOKED, 11, 11, parts((3,), (6,)), parts((2,), (5,)))),
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_reconciliation_as_kafkas_current_assignment_builder(
        case: tuple[Reconciliation, int, Parts, Callable[[Uuid, int], int], Parts | None, Reconciliation]) -> None:
    before, target_epoch, target, partition_epoch, owned, after = case
    assert reconcile(before, target_epoch, target, partition_epoch, owned) == after
