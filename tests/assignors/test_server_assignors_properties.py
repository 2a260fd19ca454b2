"""Properties of KIP-848's server-side assignors: every subscribed partition assigned exactly once and only
to a subscriber, whatever the previous target assignment; ``consumer-range`` co-partitions homogeneous
groups and ignores the previous target; ``consumer-uniform`` balances homogeneous groups and gives back
its own output when that output is fed back as the current target assignment."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from zkconsumer.assignors import AssignmentInput, AssignmentResult, Member, TopicPartition, create
from zkconsumer.assignors.topic_ids import Uuid

TOPICS = ["t0", "t1", "t2", "t3"]
IDS = ["c1", "c2", "c10", "c3", "b", "a-1", "a", "z9", "Aa", "BB"]  # "Aa"/"BB": one String.hashCode
SETTINGS = settings(max_examples=80, deadline=None)
SERVER = ["consumer-uniform", "consumer-range"]


@st.composite
def requests(draw, identical: bool = False, equal_counts: bool = False) -> AssignmentInput:
    topics = TOPICS[: draw(st.integers(1, len(TOPICS)))]
    count = draw(st.integers(0, 14))
    partitions = {t: count if equal_counts else draw(st.integers(0, 14)) for t in topics}
    topic_ids = {}
    if draw(st.booleans()):  # otherwise ids generated from names
        halves = st.integers(-(2**63), 2**63 - 1)
        for t in topics:
            uuid = Uuid(draw(halves), draw(halves))
            if not uuid.reserved and uuid not in topic_ids.values():
                topic_ids[t] = uuid
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=7, unique=True))
    shared = draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
    subscriptions = {m: shared if identical else draw(st.lists(st.sampled_from(topics), unique=True)) for m in ids}
    # A previous target assignment: each partition of any topic with at most one holder, in any order.
    owned: dict[str, list[TopicPartition]] = {m: [] for m in ids}
    for t in topics:
        for p in range(partitions[t]):
            holder = draw(st.sampled_from([None, *ids]))
            if holder is not None:
                owned[holder].append(TopicPartition(t, p))
    members = tuple(
        Member(m, topics=tuple(subscriptions[m]), owned=tuple(draw(st.permutations(owned[m]))),
               group_instance_id=draw(st.sampled_from([None, f"i-{m}"])))
        for m in ids
    )
    return AssignmentInput(partitions, members, topic_ids)


def assert_valid(request: AssignmentInput, result: AssignmentResult) -> None:
    subscriptions = {m.member_id: set(m.subscription) for m in request.members}
    assert set(result.assignment) == set(subscriptions)
    seen: list[TopicPartition] = []
    for member_id, partitions in result.assignment.items():
        assert all(tp.topic in subscriptions[member_id] for tp in partitions)
        seen.extend(partitions)
    subscribed = {t for topics in subscriptions.values() for t in topics}
    expected = {TopicPartition(t, p) for t in subscribed for p in range(request.partition_count(t))}
    assert sorted(seen) == sorted(expected)


@SETTINGS
@given(requests(), st.sampled_from(SERVER))
def test_every_subscribed_partition_once_and_only_to_a_subscriber(request: AssignmentInput, name: str) -> None:
    assert_valid(request, create(name).assign(request))


@SETTINGS
@given(requests(identical=True), st.sampled_from(SERVER))
def test_homogeneous_groups_are_valid_too(request: AssignmentInput, name: str) -> None:
    assert_valid(request, create(name).assign(request))


@SETTINGS
@given(requests(identical=True, equal_counts=True))
def test_range_co_partitions_a_homogeneous_group(request: AssignmentInput) -> None:
    result = create("consumer-range").assign(request)
    for partitions in result.assignment.values():
        numbers = {t: {tp.partition for tp in partitions if tp.topic == t} for t in request.members[0].subscription}
        assert len({frozenset(n) for n in numbers.values()}) <= 1


@SETTINGS
@given(requests())
def test_range_ignores_the_previous_target(request: AssignmentInput) -> None:
    fresh = replace(request, members=tuple(replace(m, owned=()) for m in request.members))
    assert create("consumer-range").assign(request).assignment == create("consumer-range").assign(fresh).assignment


@SETTINGS
@given(requests(identical=True))
def test_uniform_balances_a_homogeneous_group(request: AssignmentInput) -> None:
    counts = [len(p) for p in create("consumer-uniform").assign(request).assignment.values()]
    assert max(counts) - min(counts) <= 1


@SETTINGS
@given(requests(), st.randoms(use_true_random=False))
def test_uniform_is_stable_when_its_output_is_the_current_target(request: AssignmentInput, rng) -> None:
    assignor = create("consumer-uniform")
    first = assignor.assign(request)
    members = []
    for m in request.members:
        target = list(first.assignment[m.member_id])
        rng.shuffle(target)  # whatever order the coordinator's record lists them in
        members.append(replace(m, owned=tuple(target)))
    again = assignor.assign(replace(request, members=tuple(members)))
    assert again.assignment == first.assignment
