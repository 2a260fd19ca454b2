"""Property tests for every strategy: validity, range contiguity, round-robin spread, sticky balance and
stickiness, and the cooperative rule that nothing is assigned in the round it is revoked."""

from __future__ import annotations

import itertools
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from zkconsumer.assignors import AssignmentInput, AssignmentResult, Member, TopicPartition, create
from zkconsumer.assignors.cooperative_sticky import cooperative_rounds
from zkconsumer.assignors.java_hash import java_sorted
from zkconsumer.assignors.model import member_info_order

TOPICS = ["t0", "t1", "t2", "t3"]
# Ids chosen so that string order differs from numeric order and thread ids look alike.
IDS = ["c1", "c2", "c10", "c3", "b", "a-1", "a", "z9"]
SETTINGS = settings(max_examples=60, deadline=None)


@st.composite
def requests(draw, identical: bool = False, legacy: bool = False, static: bool = False) -> AssignmentInput:
    topics = TOPICS[: draw(st.integers(1, len(TOPICS)))]
    partitions = {t: draw(st.integers(0, 12)) for t in topics}
    ids = draw(st.lists(st.sampled_from(IDS), min_size=1, max_size=6, unique=True))
    shared = draw(st.lists(st.sampled_from(topics), min_size=1, unique=True))
    members = []
    for member_id in ids:
        chosen = shared if identical else draw(st.lists(st.sampled_from(topics), unique=True))
        instance = draw(st.sampled_from([None, f"i-{member_id}"])) if static else None
        if legacy:
            count = draw(st.integers(1, 3))
            streams = {t: count if identical else draw(st.integers(1, 3)) for t in chosen}
            members.append(Member(member_id, streams=streams))
        else:
            members.append(Member(member_id, topics=tuple(chosen), group_instance_id=instance))
    return AssignmentInput(partitions, tuple(members))


def subscribed_partitions(request: AssignmentInput, legacy: bool = False) -> set[TopicPartition]:
    topics = {t for m in request.members for t in (m.stream_counts if legacy else m.subscription)}
    return {TopicPartition(t, p) for t in topics for p in range(request.partition_count(t))}


def assert_valid(request: AssignmentInput, result: AssignmentResult, complete: bool = True) -> None:
    """Each partition of a subscribed topic owned exactly once (at most once if not ``complete``), owners
    only get topics they subscribe to, and every owner is listed."""
    members = {m.member_id: m for m in request.members}
    legacy = result.family == "legacy"
    seen: list[TopicPartition] = []
    for owner, partitions in result.assignment.items():
        member = members[result.owner_member[owner]]
        for tp in partitions:
            if legacy:
                assert int(owner.rsplit("-", 1)[1]) < member.stream_counts[tp.topic]
            else:
                assert tp.topic in member.subscription
        seen.extend(partitions)
    assert len(seen) == len(set(seen))
    if complete:
        assert set(seen) == subscribed_partitions(request, legacy)
    if not legacy:
        assert set(result.assignment) == set(members)


def assert_balanced(request: AssignmentInput, assignment: dict[str, tuple[TopicPartition, ...]]) -> None:
    """The sticky guarantee: no member holds two more than one that could take one of its partitions."""
    subscription = {m.member_id: set(m.subscription) for m in request.members}
    for small, large in itertools.permutations(assignment, 2):
        if len(assignment[large]) - len(assignment[small]) >= 2:
            assert not any(tp.topic in subscription[small] for tp in assignment[large]), (small, large)


def assert_ranges(request: AssignmentInput, result: AssignmentResult, owners_by_topic: dict[str, list[str]]) -> None:
    for topic, owners in owners_by_topic.items():
        count = request.partition_count(topic)
        per_owner, extra = divmod(count, len(owners))
        dealt = [[tp.partition for tp in result.assignment[o] if tp.topic == topic] for o in owners]
        assert [p for block in dealt for p in block] == list(range(count))
        assert [len(block) for block in dealt] == [per_owner + (i < extra) for i in range(len(owners))]


@SETTINGS
@given(requests(legacy=True))
def test_legacy_range_is_valid_and_contiguous_over_string_sorted_threads(request: AssignmentInput) -> None:
    result = create("legacy-range").assign(request)
    assert_valid(request, result)
    threads: dict[str, list[str]] = {}
    for m in request.members:
        for topic, count in m.stream_counts.items():
            threads.setdefault(topic, []).extend(f"{m.member_id}-{n}" for n in range(count))
    assert_ranges(request, result, {t: java_sorted(ts) for t, ts in threads.items()})


@SETTINGS
@given(requests(legacy=True, identical=True), st.sampled_from(["bracket", "dash"]))
def test_legacy_roundrobin_is_valid_and_uniform_per_thread(request: AssignmentInput, hash_format: str) -> None:
    from zkconsumer.assignors.registry import StrategyOptions

    result = create("legacy-roundrobin", StrategyOptions(roundrobin_hash=hash_format)).assign(request)
    assert_valid(request, result)
    counts = [len(p) for p in result.assignment.values()]
    assert max(counts) - min(counts) <= 1


@SETTINGS
@given(requests(static=True))
def test_range_is_valid_and_contiguous_in_member_order(request: AssignmentInput) -> None:
    result = create("range").assign(request)
    assert_valid(request, result)
    subscribers: dict[str, list[str]] = {}
    for m in member_info_order(request.members):
        for topic in m.subscription:
            subscribers.setdefault(topic, []).append(m.member_id)
    assert_ranges(request, result, subscribers)


@SETTINGS
@given(requests(static=True), st.booleans())
def test_roundrobin_is_valid_and_spread_at_most_one_when_subscriptions_match(
    request: AssignmentInput, identical: bool
) -> None:
    if identical:
        request = replace(request, members=tuple(replace(m, topics=request.members[0].topics) for m in request.members))
    result = create("roundrobin").assign(request)
    assert_valid(request, result)
    if identical:
        counts = [len(p) for p in result.assignment.values()]
        assert max(counts) - min(counts) <= 1


@st.composite
def with_history(draw, identical: bool = False) -> AssignmentInput:
    """A group whose members own what an earlier sticky rebalance gave them: either the same group after
    members left and joined (the common case), or an unrelated earlier group; plus, when ``chaos`` is
    drawn, stray claims and mixed generations."""
    before = draw(requests(identical=identical))
    previous = create("sticky").assign(before).assignment
    if draw(st.booleans()):
        stay = draw(st.lists(st.sampled_from(before.members), unique_by=lambda m: m.member_id))
        joining = [Member(i, topics=before.members[0].topics if identical else tuple(draw(
            st.lists(st.sampled_from(sorted(before.partitions)), unique=True))))
            for i in IDS if i not in {m.member_id for m in before.members}][: draw(st.integers(0, 3))]
        now = AssignmentInput(before.partitions, tuple(stay + joining) or before.members[:1])
    else:
        now = draw(requests(identical=identical))
    partitions = {t: max(before.partition_count(t), now.partition_count(t)) for t in TOPICS if
                  t in before.partitions or t in now.partitions}
    chaos = draw(st.booleans())
    members = []
    for m in now.members:
        owned = [tp for tp in previous.get(m.member_id, ())]
        generation = 1
        if chaos:
            extra = draw(st.lists(st.sampled_from(sorted(subscribed_partitions(before) or {TopicPartition("t0", 0)})),
                                  max_size=4, unique=True))
            owned += [tp for tp in extra if tp not in owned]
            generation = draw(st.sampled_from([None, 1, 2, 3]))
        owned = [tp for tp in owned if tp.partition < partitions.get(tp.topic, 0)]
        members.append(replace(m, owned=tuple(owned), generation=generation))
    return AssignmentInput(partitions, tuple(members))


@settings(max_examples=150, deadline=None)
@given(with_history())
def test_sticky_is_valid_and_balanced(request: AssignmentInput) -> None:
    result = create("sticky").assign(request)
    assert_valid(request, result)
    assert_balanced(request, result.assignment)


@settings(max_examples=150, deadline=None)
@given(with_history())
def test_cooperative_never_assigns_what_is_revoked_in_the_same_round(request: AssignmentInput) -> None:
    rounds = cooperative_rounds(request)
    assert len(rounds) <= 5 and not rounds[-1].revoked
    current = request
    for r in rounds:
        assert_valid(current, r.assignment, complete=False)
        assert not {tp for tp, _ in r.added} & {tp for tp, _ in r.revoked}
        current = replace(current, members=tuple(
            replace(m, owned=r.assignment.assignment[m.member_id], generation=2) for m in current.members))
    assert_valid(request, rounds[-1].assignment)
    assert_balanced(request, rounds[-1].assignment.assignment)


@SETTINGS
@given(requests(), st.sampled_from(["sticky", "cooperative-sticky"]))
def test_sticky_keeps_a_balanced_assignment_unchanged(request: AssignmentInput, strategy: str) -> None:
    fresh = create("sticky").assign(request).assignment
    again = replace(request, members=tuple(replace(m, owned=fresh[m.member_id], generation=1) for m in request.members))
    result = create(strategy).assign(again)
    assert {m: set(p) for m, p in result.assignment.items()} == {m: set(p) for m, p in fresh.items()}
    assert not result.transferring


@settings(max_examples=100, deadline=None)
@given(with_history(identical=True))
def test_sticky_moves_only_what_balance_requires(request: AssignmentInput) -> None:
    """With equal subscriptions and undisputed ownership, exactly the unavoidable partitions move."""
    claims = [tp for m in request.members for tp in m.owned]
    if len(claims) != len(set(claims)) or len({m.generation for m in request.members}) > 1:
        return
    result = create("sticky").assign(request)
    total = len(subscribed_partitions(request))
    low, extra = divmod(total, len(request.members))
    valid = subscribed_partitions(request)
    owned = [len(set(m.owned) & valid) for m in request.members]
    kept_possible = sum(min(o, low) for o in owned) + min(extra, sum(1 for o in owned if o > low))
    kept = sum(len(set(m.owned) & set(result.assignment[m.member_id])) for m in request.members)
    assert kept == kept_possible


@SETTINGS
@given(requests(), st.data())
def test_sticky_moves_no_partition_back_and_forth_when_a_member_leaves(request: AssignmentInput, data) -> None:
    first = create("sticky").assign(request).assignment
    leaving = data.draw(st.sampled_from([m.member_id for m in request.members]))
    rest = tuple(replace(m, owned=first[m.member_id], generation=1) for m in request.members if m.member_id != leaving)
    if not rest:
        return
    second = create("sticky").assign(replace(request, members=rest)).assignment
    before = {tp: m for m, parts in first.items() for tp in parts}
    moves = {(tp.topic, before[tp], m) for m, parts in second.items() for tp in parts
             if before.get(tp, m) not in (m, leaving)}
    assert not any((topic, dst, src) in moves for topic, src, dst in moves)


def test_a_member_subscribing_to_nothing_gets_nothing_even_if_kafka_would_hand_it_partitions() -> None:
    # Kafka's allSubscriptionsEqual skips an empty first subscription and takes the constrained path.
    request = AssignmentInput({"t": 4}, (Member("a", topics=()), Member("b", topics=("t",)),
                                         Member("c", topics=("t",))))
    for strategy in ("sticky", "cooperative-sticky"):
        result = create(strategy).assign(request)
        assert result.assignment["a"] == ()
        assert_valid(request, result)
