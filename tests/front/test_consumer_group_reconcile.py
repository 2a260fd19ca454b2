"""Reconciliation against the cases of Kafka 4.2's ``CurrentAssignmentBuilderTest`` (group-coordinator): the member
before, the target, who holds the partitions, what the member reports owning (and, where the case says, the topics it
subscribes to now and whether it changed them), and the member after."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from zkconsumer.assignors.topic_ids import Uuid
from zkconsumer.front.groups.consumer_group_messages import MemberState
from zkconsumer.front.groups.consumer_group_reconcile import FREE, Reconciliation, reconcile

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


def held_in_member(topic_id: Uuid, partition: int) -> int:
    """T1's 2 and 3 assigned to the member and 4 pending its revocation; T2's 5 and 6 assigned to it."""
    return 10 if (topic_id, partition) in {(T1, 2), (T1, 3), (T1, 4), (T2, 5), (T2, 6)} else FREE


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
    "UnrevokedPartitionsToUnrevokedPartitions (newer target)": (
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,))), 12, parts((3,), (6,)), held_by(FREE),
        parts((2, 3), (5, 6)), member(UNREVOKED, 10, 10, parts((3,), (6,)), parts((2,), (5,)))),
    "UnrevokedPartitionsToUnrevokedPartitions (same target epoch)": (
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,))), 10, parts((3,), (6,)), held_by(FREE),
        parts((2, 3), (5, 6)), member(UNREVOKED, 10, 10, parts((3,), (6,)), parts((2,), (5,)))),
    "UnrevokedPartitionsToStableWithReturnedPartitionsPendingRevocation": (
        member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((4,), ())), 12, parts((2, 3, 4), (5, 6, 7)),
        held_in_member, parts((2, 3), (5, 6)), member(STABLE, 12, 10, parts((2, 3, 4), (5, 6, 7)))),
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
    assert reconcile(before, target_epoch, target, partition_epoch, owned, {T1, T2}) == after


ONLY_T2_OWNED = parts((), (4, 5, 6))
BOTH_OWNED = parts((1, 2, 3), (4, 5, 6))

# (member epoch, target epoch, subscription changed, owned) -> the member after; the member subscribes to T2 only now
UNSUBSCRIBED_CASES = {
    "StableToStable...NoLongerInSubscription (new target)": (
        10, 11, False, ONLY_T2_OWNED, member(STABLE, 11, 10, parts((), (4, 5, 6)))),
    "StableToStable...NoLongerInSubscription (new target, changed)": (
        10, 11, True, ONLY_T2_OWNED, member(STABLE, 11, 10, parts((), (4, 5, 6)))),
    "StableToStable...NoLongerInSubscription (same target, changed)": (
        10, 10, True, ONLY_T2_OWNED, member(STABLE, 10, 10, parts((), (4, 5, 6)))),
    "StableToUnrevoked...NoLongerInSubscription (new target)": (
        10, 11, False, BOTH_OWNED, member(UNREVOKED, 10, 10, parts((), (4, 5, 6)), parts((1, 2, 3), ()))),
    "StableToUnrevoked...NoLongerInSubscription (new target, changed)": (
        10, 11, True, BOTH_OWNED, member(UNREVOKED, 10, 10, parts((), (4, 5, 6)), parts((1, 2, 3), ()))),
    "StableToUnrevoked...NoLongerInSubscription (same target, changed)": (
        10, 10, True, BOTH_OWNED, member(UNREVOKED, 10, 10, parts((), (4, 5, 6)), parts((1, 2, 3), ()))),
}


@pytest.mark.parametrize("case", UNSUBSCRIBED_CASES.values(), ids=UNSUBSCRIBED_CASES.keys())
def test_partitions_of_topics_no_longer_subscribed_are_revoked_with_or_without_a_new_target(
        case: tuple[int, int, bool, Parts, Reconciliation]) -> None:
    epoch, target_epoch, changed, owned, after = case
    before = member(STABLE, epoch, epoch, parts((1, 2, 3), (4, 5, 6)))
    assert reconcile(before, target_epoch, parts((1, 2, 3), (4, 5, 6)), held_by(FREE), owned, {T2}, changed) == after


def test_an_unrevoked_member_that_unsubscribes_must_also_revoke_that_topic() -> None:
    """``testRemainsInUnrevokedPartitionsWithAssignmentTopicsNoLongerInSubscription``."""
    before = member(UNREVOKED, 10, 10, parts((2, 3), (5, 6)), parts((1,), (4,)))
    after = reconcile(before, 12, parts((1, 3, 4), (6, 7)), held_by(FREE), BOTH_OWNED, {T2}, True)
    assert after == member(UNREVOKED, 10, 10, parts((), (5, 6)), parts((1, 2, 3), (4,)))


@pytest.mark.parametrize(("subscribed", "after"), [
    ({T1}, member(UNREVOKED, 10, 10, parts((1, 2, 3), ()), parts((), (4, 5, 6)))),
    (set(), member(UNREVOKED, 10, 10, {}, parts((1, 2, 3), (4, 5, 6)))),
], ids=["SubscribedTopicNameAndUnresolvedRegularExpression", "UnresolvedRegularExpression"])
def test_a_member_whose_subscription_no_longer_covers_its_topics_revokes_them(
        subscribed: set[Uuid], after: Reconciliation) -> None:
    before = member(STABLE, 10, 10, parts((1, 2, 3), (4, 5, 6)))
    assert reconcile(before, 10, parts((1, 2, 3), (4, 5, 6)), held_by(FREE), BOTH_OWNED, subscribed, True) == after
