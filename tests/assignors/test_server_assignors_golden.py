"""KIP-848's server-side assignors against the expectations of Kafka's own tests.

Every case below is one of Kafka 4.x's ``UniformHomogeneousAssignmentBuilder`` (its
``OptimizedUniformAssignmentBuilderTest``), ``UniformHeterogeneousAssignmentBuilderTest`` and
``RangeAssignorTest`` cases that do not draw random topic ids or random subscriptions, with Kafka's
topic ids, members and expected assignments, run through :func:`uniform_assign` and
:func:`range_assign` the way Kafka's tests drive the assignor: members in sorted order (Kafka's tests
use a ``TreeMap`` or a sorted member list), a current target built with ``HashMap``/``HashSet`` (or
``LinkedHashMap`` where the test orders it).
"""

from __future__ import annotations

import pytest

from zkconsumer.assignors.consumer_range import range_assign
from zkconsumer.assignors.consumer_uniform import uniform_assign
from zkconsumer.assignors.group_spec import GroupSpec, SpecMember, target_from_record
from zkconsumer.assignors.java_hash_map import integer_set_order
from zkconsumer.assignors.model import AssignmentError
from zkconsumer.assignors.topic_ids import Uuid

T1 = Uuid.parse("T1-A4s3VTwiI5CTbEp6POw")
T2 = Uuid.parse("T2-B4s3VTwiI5YHbPp6YUe")
T3 = Uuid.parse("T3-CU8fVTLCz5YMkLoDQsa")
T4 = Uuid.parse("T4-Tw9fVTLCz5HbPp6YQsa")
TOPICS = {"t1": T1, "t2": T2, "t3": T3, "t4": T4}

Target = dict[str, list[int]]


def member(member_id: str, topics: str, target: Target | None = None, *, ordered: bool = False,
           instance: str | None = None) -> SpecMember:
    """``ordered``: the test built the target with ``mkOrderedAssignment`` (a ``LinkedHashMap``)."""
    pairs = [(TOPICS[t], parts) for t, parts in (target or {}).items()]
    if ordered:
        current = tuple((tid, tuple(integer_set_order(parts))) for tid, parts in pairs)
    else:
        current = target_from_record(pairs)
    return SpecMember(member_id, tuple(TOPICS[t] for t in topics.split()), current, instance)


def spec(partitions: dict[str, int], *members: SpecMember, homogeneous: bool) -> GroupSpec:
    return GroupSpec(members, {TOPICS[t]: n for t, n in partitions.items()}, homogeneous)


def named(result: dict[str, dict[Uuid, frozenset[int]]]) -> dict[str, dict[str, list[int]]]:
    names = {v: k for k, v in TOPICS.items()}
    return {m: {names[t]: sorted(p) for t, p in sorted(ts.items())} for m, ts in result.items()}


# Inputs that Kafka's uniform and range tests share.
ONE_MEMBER_NO_TOPIC = spec({"t1": 3}, member("A", ""), homogeneous=True)
TWO_MEMBERS_TWO_TOPICS = spec({"t1": 3, "t3": 2}, member("A", "t1 t3"), member("B", "t1 t3"), homogeneous=True)

HOMOGENEOUS = {
    "testOneMemberNoTopicSubscription": (ONE_MEMBER_NO_TOPIC, {"A": {}}),
    "testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks": (
        TWO_MEMBERS_TWO_TOPICS, {"A": {"t1": [0], "t3": [0, 1]}, "B": {"t1": [1, 2]}}),
    "testFirstAssignmentNumMembersGreaterThanTotalNumPartitions": (
        spec({"t3": 2}, member("A", "t3"), member("B", "t3"), member("C", "t3"), homogeneous=True),
        {"A": {"t3": [0]}, "B": {"t3": [1]}, "C": {}}),
    "testReassignmentForTwoMembersTwoTopicsGivenUnbalancedPrevAssignment": (
        spec({"t1": 3, "t2": 3},
             member("A", "t1 t2", {"t1": [0, 1], "t2": [0, 1]}, ordered=True),
             member("B", "t1 t2", {"t1": [2], "t2": [2]}, ordered=True), homogeneous=True),
        {"A": {"t1": [0, 1], "t2": [0]}, "B": {"t1": [2], "t2": [1, 2]}}),
    "testReassignmentWhenPartitionsAreAddedForTwoMembersTwoTopics": (
        spec({"t1": 6, "t2": 5},
             member("A", "t1 t2", {"t1": [0, 2], "t2": [0]}, ordered=True),
             member("B", "t1 t2", {"t1": [1], "t2": [1, 2]}, ordered=True), homogeneous=True),
        {"A": {"t1": [0, 2, 3], "t2": [0, 3, 4]}, "B": {"t1": [1, 4, 5], "t2": [1, 2]}}),
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        spec({"t1": 3, "t2": 3},
             member("A", "t1 t2", {"t1": [0, 2], "t2": [0]}, ordered=True),
             member("B", "t1 t2", {"t1": [1], "t2": [1, 2]}, ordered=True),
             member("C", "t1 t2"), homogeneous=True),
        {"A": {"t1": [0, 2]}, "B": {"t1": [1], "t2": [1]}, "C": {"t2": [0, 2]}}),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersTwoTopics": (
        spec({"t1": 3, "t2": 3},
             member("A", "t1 t2", {"t1": [0], "t2": [0]}),
             member("B", "t1 t2", {"t1": [1], "t2": [1]}), homogeneous=True),
        {"A": {"t1": [0], "t2": [0, 2]}, "B": {"t1": [1, 2], "t2": [1]}}),
    "testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        spec({"t1": 2, "t2": 2},
             member("A", "t2", {"t1": [0], "t2": [0]}),
             member("B", "t2", {"t1": [1], "t2": [1]}), homogeneous=True),
        {"A": {"t2": [0]}, "B": {"t2": [1]}}),
}

HETEROGENEOUS = {
    "testTwoMembersNoTopicSubscription": (
        spec({"t1": 3}, member("A", ""), member("B", ""), homogeneous=False),
        {"A": {}, "B": {}}),
    "testFirstAssignmentTwoMembersTwoTopics": (
        spec({"t1": 3, "t3": 6}, member("A", "t1 t3"), member("B", "t3"), homogeneous=False),
        {"A": {"t1": [0, 1, 2], "t3": [4]}, "B": {"t3": [0, 1, 2, 3, 5]}}),
    "testFirstAssignmentNumMembersGreaterThanTotalNumPartitions": (
        spec({"t3": 1, "t1": 2}, member("A", "t3"), member("B", "t3"), member("C", "t1"), homogeneous=False),
        {"A": {"t3": [0]}, "B": {}, "C": {"t1": [0, 1]}}),
    "testReassignmentForTwoMembersThreeTopicsGivenUnbalancedPrevAssignment": (
        spec({"t1": 6, "t2": 4, "t3": 4},
             member("A", "t1", {"t1": [0, 1, 2]}),
             member("B", "t1 t2", {"t1": [3], "t2": [0]}),
             member("C", "t1 t2 t3", {"t1": [4, 5], "t2": [1, 2, 3], "t3": [0, 1, 2, 3]}), homogeneous=False),
        {"A": {"t1": [0, 1, 2, 5]}, "B": {"t1": [3], "t2": [0, 1, 2, 3]}, "C": {"t1": [4], "t3": [0, 1, 2, 3]}}),
    "testReassignmentWhenPartitionsAreAddedForTwoMembers": (
        spec({"t1": 6, "t2": 5, "t3": 3, "t4": 3},
             member("A", "t1 t3", {"t1": [0, 1, 2, 3], "t3": [0, 1]}),
             member("B", "t1 t2 t3 t4", {"t2": [0, 1, 2], "t4": [0, 1, 2]}), homogeneous=False),
        {"A": {"t1": [0, 1, 2, 3, 4, 5], "t3": [0, 1, 2]}, "B": {"t2": [0, 1, 2, 3, 4], "t4": [0, 1, 2]}}),
    "testReassignmentWhenOneMemberAddedAndPartitionsAddedTwoMembersTwoTopics": (
        spec({"t1": 6, "t2": 7},
             member("A", "t1", {"t1": [0, 2], "t2": [0]}),
             member("B", "t1 t2", {"t1": [1], "t2": [1, 2]}),
             member("C", "t1 t2"), homogeneous=False),
        {"A": {"t1": [0, 2, 3, 4, 5]}, "B": {"t1": [1], "t2": [1, 2, 6]}, "C": {"t2": [0, 3, 4, 5]}}),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithThreeMembersThreeTopics": (
        spec({"t1": 3, "t2": 8, "t3": 3},
             member("A", "t1 t3", {"t1": [0, 1, 2], "t3": [0, 1]}),
             member("B", "t2", {"t2": [3, 4, 5, 6]}), homogeneous=False),
        {"A": {"t1": [0, 1, 2], "t3": [0, 1, 2]}, "B": {"t2": [0, 1, 2, 3, 4, 5, 6, 7]}}),
    "testReassignmentWhenOneSubscriptionRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        spec({"t1": 3, "t2": 5},
             member("A", "t1", {"t1": [0, 2], "t2": [1, 3]}),
             member("B", "t1 t2", {"t1": [1], "t2": [0, 2, 4]}), homogeneous=False),
        {"A": {"t1": [0, 1, 2]}, "B": {"t2": [0, 1, 2, 3, 4]}}),
    "testReassignmentWhenTopicPartitionsRunOutAndMembersHaveNoPartitions": (
        spec({"t1": 2, "t2": 2, "t3": 2},
             member("A", "t1 t2 t3", {"t1": [0, 1], "t2": [0, 1], "t3": [0, 1]}),
             member("B", "t1 t2 t3"), homogeneous=False),
        {"A": {"t2": [0], "t3": [0, 1]}, "B": {"t1": [0, 1], "t2": [1]}}),
    "testFirstAssignmentWithTwoMembersIncludingOneWithoutSubscriptions": (
        spec({"t1": 3}, member("A", "t1"), member("B", ""), homogeneous=False),
        {"A": {"t1": [0, 1, 2]}, "B": {}}),
}

RANGE = {
    "testOneMemberNoTopic": (ONE_MEMBER_NO_TOPIC, {"A": {}}),
    "testFirstAssignmentTwoMembersTwoTopicsSameSubscriptions": (
        TWO_MEMBERS_TWO_TOPICS, {"A": {"t1": [0, 1], "t3": [0]}, "B": {"t1": [2], "t3": [1]}}),
    "testFirstAssignmentThreeMembersThreeTopicsDifferentSubscriptions": (
        spec({"t1": 3, "t2": 3, "t3": 2}, member("A", "t1 t2"), member("B", "t3"), member("C", "t2 t3"),
             homogeneous=False),
        {"A": {"t1": [0, 1, 2], "t2": [0, 1]}, "B": {"t3": [0]}, "C": {"t2": [2], "t3": [1]}}),
    "testFirstAssignmentNumMembersGreaterThanNumPartitions": (
        spec({"t1": 3, "t3": 2}, member("A", "t1 t3"), member("B", "t1 t3"), member("C", "t1 t3"),
             homogeneous=True),
        {"A": {"t1": [0], "t3": [0]}, "B": {"t1": [1], "t3": [1]}, "C": {"t1": [2]}}),
    "testReassignmentNumMembersGreaterThanNumPartitionsWhenOneMemberAdded": (
        spec({"t1": 2, "t2": 2},
             member("A", "t1 t2", {"t1": [0], "t2": [0]}), member("B", "t1 t2", {"t1": [1], "t2": [1]}),
             member("C", "t1 t2"), homogeneous=True),
        {"A": {"t1": [0], "t2": [0]}, "B": {"t1": [1], "t2": [1]}, "C": {}}),
    "testReassignmentWhenOnePartitionAddedForTwoMembersTwoTopics": (
        spec({"t1": 4, "t2": 4},
             member("A", "t1 t2", {"t1": [0, 1], "t2": [0, 1]}), member("B", "t1 t2", {"t1": [2], "t2": [2]}),
             homogeneous=True),
        {"A": {"t1": [0, 1], "t2": [0, 1]}, "B": {"t1": [2, 3], "t2": [2, 3]}}),
    "testReassignmentWhenOneMemberAddedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        spec({"t1": 3, "t2": 3},
             member("A", "t1 t2", {"t1": [0, 1], "t2": [0, 1]}), member("B", "t1 t2", {"t1": [2], "t2": [2]}),
             member("C", "t1 t2"), homogeneous=True),
        {"A": {"t1": [0], "t2": [0]}, "B": {"t1": [1], "t2": [1]}, "C": {"t1": [2], "t2": [2]}}),
    "testReassignmentWhenOneMemberAddedAndOnePartitionAfterInitialAssignmentWithTwoMembersTwoTopics": (
        spec({"t1": 4, "t2": 3},
             member("A", "t1 t2", {"t1": [0, 1], "t2": [0, 1]}), member("B", "t1 t2", {"t1": [2], "t2": [2]}),
             member("C", "t1"), homogeneous=False),
        {"A": {"t1": [0, 1], "t2": [0, 1]}, "B": {"t1": [2], "t2": [2]}, "C": {"t1": [3]}}),
    "testReassignmentWhenOneMemberRemovedAfterInitialAssignmentWithTwoMembersTwoTopics": (
        spec({"t1": 3, "t2": 3}, member("B", "t1 t2", {"t1": [2], "t2": [2]}), homogeneous=True),
        {"B": {"t1": [0, 1, 2], "t2": [0, 1, 2]}}),
    "testReassignmentWhenMultipleSubscriptionsRemovedAfterInitialAssignmentWithThreeMembersTwoTopics": (
        spec({"t1": 3, "t2": 3, "t3": 2},
             member("A", "t1", {"t1": [0, 1, 2], "t2": [0]}),
             member("B", "t1 t2 t3", {"t2": [1]}),
             member("C", "t2", {"t2": [2], "t3": [0, 1]}), homogeneous=False),
        {"A": {"t1": [0, 1]}, "B": {"t1": [2], "t2": [0, 1], "t3": [0, 1]}, "C": {"t2": [2]}}),
}


@pytest.mark.parametrize("case", list(HOMOGENEOUS) + list(HETEROGENEOUS))
def test_uniform_matches_kafka(case: str) -> None:
    group, expected = HOMOGENEOUS.get(case) or HETEROGENEOUS[case]
    assert named(uniform_assign(group)) == expected


@pytest.mark.parametrize("case", list(RANGE))
def test_range_matches_kafka(case: str) -> None:
    group, expected = RANGE[case]
    assert named(range_assign(group)) == expected


@pytest.mark.parametrize("homogeneous", [True, False])
@pytest.mark.parametrize("assign", [uniform_assign, range_assign])
def test_a_subscribed_topic_without_metadata_fails_the_assignment(assign, homogeneous: bool) -> None:
    # testOneMemberSubscribedToNonexistentTopic, testTwoMembersSubscribedToNonexistentTopics
    group = spec({"t1": 3}, member("A", "t3"), member("B", "t3" if homogeneous else "t2"), homogeneous=homogeneous)
    with pytest.raises(AssignmentError, match="no metadata"):
        assign(group)


@pytest.mark.parametrize("mixed", [False, True])
def test_range_static_members_keep_their_ranges_under_new_member_ids(mixed: bool) -> None:
    # testStaticMembership (A, B static) and testMixedStaticMembership (A, C static, B dynamic)
    def group(a_id: str, mixed: bool) -> GroupSpec:
        members = [member(a_id, "t1", instance="instanceA"),
                   member("B", "t1", instance=None if mixed else "instanceB")]
        if mixed:
            members.append(member("C", "t1", instance="instanceC"))
        return spec({"t1": 5 if mixed else 3}, *sorted(members, key=lambda m: m.member_id), homogeneous=True)

    before, after = named(range_assign(group("A", mixed))), named(range_assign(group("memberA1", mixed)))
    assert after["memberA1"] == before["A"] and after["B"] == before["B"]
    if mixed:
        assert before == {"A": {"t1": [0, 1]}, "C": {"t1": [2, 3]}, "B": {"t1": [4]}}
        assert after["C"] == before["C"]
    else:
        assert before == {"A": {"t1": [0, 1]}, "B": {"t1": [2]}}
