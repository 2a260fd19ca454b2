"""The classic group coordinator against Kafka's behaviour, one behaviour per test, on a simulated clock."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from classic_group_driver import GROUP, RANGE, REBALANCE_MS, SESSION_MS, Driver

from zkconsumer.front.groups.classic_group import ClassicGroupConfig
from zkconsumer.front.groups.classic_group_messages import (
    DeleteGroupsResponse,
    DescribeGroupsResponse,
    ErrorCode,
    GroupState,
    Heartbeat,
    HeartbeatResponse,
    JoinGroupResponse,
    LeaveGroupResponse,
    LeaveMemberResponse,
    LeavingMember,
    ListGroupsResponse,
    Protocol,
)

COOP = (Protocol("cooperative-sticky", b"coop-meta"),)
ROUNDROBIN = (Protocol("roundrobin", b"rr-meta"),)
HEARTBEAT_MS = 3_000
INITIAL_DELAY_MS = 3_000


def rejoin_all(d: Driver, members: list[str], **kwargs: object) -> list[tuple[str, int]]:
    return [(m, d.join(m, **kwargs)) for m in members]  # type: ignore[arg-type]


# --- the timing properties --------------------------------------------------------------------------------


def test_a_stable_group_of_three_takes_in_a_fourth_member_within_one_heartbeat_interval() -> None:
    d = Driver()
    members = d.stable_group(3, session_ms=SESSION_MS)
    # Each member heartbeats every 3 s; their phases are spread over the interval.
    next_heartbeat = {m: d.now + HEARTBEAT_MS - 700 * i for i, m in enumerate(members)}
    d.advance(500)
    start = d.now
    newcomer, newcomer_join = d.join_new(client="c3")
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE
    rejoins: list[tuple[str, int]] = []
    while newcomer_join not in d.answers:
        member = min((m for m in members if m not in dict(rejoins)), key=next_heartbeat.__getitem__)
        d.advance_to(next_heartbeat[member])
        assert d.heartbeat(member, 1) is ErrorCode.rebalance_in_progress
        rejoins.append((member, d.join(member, client="again")))
    took = d.answered_at[newcomer_join] - start
    assert took <= HEARTBEAT_MS
    assert took < SESSION_MS // 2
    assert d.join_answer(newcomer_join).generation_id == 2
    assert all(d.join_answer(rid).generation_id == 2 for _, rid in rejoins)
    assert d.finish_round([*rejoins, (newcomer, newcomer_join)]) == 2
    assert d.coordinator.state_of(GROUP) is GroupState.STABLE
    assert len(d.coordinator.members_of(GROUP)) == 4


def test_two_members_joining_an_empty_group_at_once_get_one_generation_after_the_initial_delay() -> None:
    d = Driver()
    first, first_join = d.join_new(client="a")
    d.advance(5)
    second, second_join = d.join_new(client="b")
    d.advance_until(lambda: first_join in d.answers and second_join in d.answers)
    assert d.join_answer(first_join).generation_id == d.join_answer(second_join).generation_id == 1
    # The first wait (3 s) saw the second member arrive, so it was extended once by the delay.
    assert d.answered_at[first_join] == d.answered_at[second_join] == 2 * INITIAL_DELAY_MS
    completed = d.events_named("front.group.round_completed")
    assert [e.fields["generation"] for e in completed] == [1]
    assert completed[0].fields["members"] == [first, second]


# --- states and the join phase ------------------------------------------------------------------------------------


def test_first_join_v4_gets_a_generated_member_id_with_member_id_required() -> None:
    d = Driver()
    response = d.join_answer(d.join(client="client-1", version=4))
    assert response.error_code is ErrorCode.member_id_required
    assert response.member_id == "client-1-u1"
    assert d.coordinator.pending_members_of(GROUP) == ["client-1-u1"]
    assert d.coordinator.members_of(GROUP) == []
    assert d.coordinator.state_of(GROUP) is GroupState.EMPTY


def test_first_join_v3_adds_the_member_at_once() -> None:
    d = Driver()
    rid = d.join(client="old", version=3)
    assert rid not in d.answers
    assert d.coordinator.members_of(GROUP) == ["old-u1"]
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE


def test_pending_member_rejoining_with_its_id_joins_the_group() -> None:
    d = Driver()
    member_id, rid = d.join_new()
    assert d.coordinator.members_of(GROUP) == [member_id]
    assert d.coordinator.pending_members_of(GROUP) == []
    assert rid not in d.answers


def test_pending_member_is_forgotten_after_its_session_timeout() -> None:
    d = Driver()
    member_id = d.join_answer(d.join(session_ms=10_000)).member_id
    d.advance(9_999)
    assert d.coordinator.pending_members_of(GROUP) == [member_id]
    d.advance(1)
    assert d.coordinator.pending_members_of(GROUP) == []
    assert d.events_named("front.group.member_expired")[0].fields["cause"] == "pending_member_timeout"
    assert d.join_answer(d.join(member_id)).error_code is ErrorCode.unknown_member_id


def test_empty_group_first_round_waits_the_initial_delay() -> None:
    d = Driver()
    _, rid = d.join_new()
    d.advance(INITIAL_DELAY_MS - 1)
    assert rid not in d.answers
    d.advance(1)
    assert d.join_answer(rid).generation_id == 1
    assert d.coordinator.state_of(GROUP) is GroupState.COMPLETING_REBALANCE


def test_initial_delay_is_extended_by_each_new_member_but_not_past_the_rebalance_timeout() -> None:
    d = Driver()
    _, first = d.join_new(client="a", rebalance_ms=7_000)
    # A newcomer in each wait: 3000 + 3000 + the 1000 left of the 7000 rebalance timeout.
    d.advance(2_000)
    d.join_new(client="b", rebalance_ms=7_000)
    d.advance(2_000)
    d.join_new(client="c", rebalance_ms=7_000)
    d.advance(2_500)
    d.join_new(client="d", rebalance_ms=7_000)
    d.advance_until(lambda: first in d.answers)
    assert d.answered_at[first] == 7_000
    assert [e.fields["delay_ms"] for e in d.events_named("front.group.initial_delay_extended")] == [3_000, 1_000]


def test_initial_round_does_not_complete_early_when_everyone_has_joined() -> None:
    d = Driver()
    _, rid = d.join_new()
    d.advance(100)
    assert rid not in d.answers


def test_round_completes_as_soon_as_every_member_has_rejoined() -> None:
    d = Driver()
    members = d.stable_group(3)
    d.advance(1_000)
    leader_rejoin = d.join(members[0])
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE
    others = [d.join(m) for m in members[1:]]
    assert all(d.join_answer(rid).generation_id == 2 for rid in [leader_rejoin, *others])
    assert d.answered_at[leader_rejoin] == d.now


def test_round_completes_at_the_rebalance_timeout_without_the_members_that_did_not_rejoin() -> None:
    d = Driver()
    members = d.stable_group(3, rebalance_ms=60_000)
    start = d.now
    # The two followers keep heartbeating (their sessions stay alive) but never rejoin.
    rid = d.join(members[0], rebalance_ms=60_000)
    for t in range(3_000, 60_000, 3_000):
        d.advance_to(start + t)
        for follower in members[1:]:
            assert d.heartbeat(follower, 1) is ErrorCode.rebalance_in_progress
    d.advance_to(start + 60_000)
    assert d.answered_at[rid] == start + 60_000
    assert d.join_answer(rid).generation_id == 2
    assert d.coordinator.members_of(GROUP) == [members[0]]
    expired = d.events_named("front.group.member_expired")
    assert {e.fields["member_id"] for e in expired} == set(members[1:])
    assert {e.fields["cause"] for e in expired} == {"not_rejoined"}


def test_leader_is_the_first_member_to_join() -> None:
    d = Driver()
    a, a_join = d.join_new(client="a")
    b, b_join = d.join_new(client="b")
    d.advance_until(lambda: a_join in d.answers)
    assert d.join_answer(a_join).leader == d.join_answer(b_join).leader == a
    assert [m.member_id for m in d.join_answer(a_join).members] == [a, b]
    assert d.join_answer(a_join).members[0].metadata == b"range-meta"
    assert d.join_answer(b_join).members == ()


def test_when_the_leader_leaves_the_next_member_in_join_order_leads() -> None:
    d = Driver()
    members = d.stable_group(3)
    d.leave(LeavingMember(members[0]))
    assert d.coordinator.leader_of(GROUP) == members[1]


def test_leaving_the_last_member_empties_the_group_with_a_new_generation() -> None:
    d = Driver()
    [only] = d.stable_group(1)
    d.leave(LeavingMember(only))
    assert d.coordinator.state_of(GROUP) is GroupState.EMPTY
    assert d.coordinator.generation_of(GROUP) == 2


def test_a_member_waiting_for_its_join_answer_is_not_expired_by_its_session() -> None:
    d = Driver()
    members = d.stable_group(2, session_ms=10_000, rebalance_ms=60_000)
    rid = d.join(members[0], session_ms=10_000, rebalance_ms=60_000)
    for _ in range(10):
        d.advance(3_000)
        d.heartbeat(members[1], 1)  # keeps the round open: this member has not rejoined
    assert members[0] in d.coordinator.members_of(GROUP)
    assert rid not in d.answers


def test_a_new_member_that_never_completes_its_first_round_expires_after_the_join_timeout() -> None:
    d = Driver(ClassicGroupConfig(new_member_join_timeout_ms=300_000))
    members = d.stable_group(2, rebalance_ms=900_000)
    newcomer, rid = d.join_new(client="new", rebalance_ms=900_000)
    # The old members keep heartbeating but never rejoin, so the round waits on the 15-minute rebalance timeout.
    start = d.now
    for t in range(3_000, 300_001, 3_000):
        d.advance_to(start + t)
        for m in members:
            d.heartbeat(m, 1)
    assert d.join_answer(rid) == JoinGroupResponse(ErrorCode.unknown_member_id)
    assert newcomer not in d.coordinator.members_of(GROUP)
    assert d.events_named("front.group.member_expired")[-1].fields["cause"] == "new_member_join_timeout"


def test_states_move_only_along_kafkas_transitions() -> None:
    d = Driver()
    [only] = d.stable_group(1)
    d.leave(LeavingMember(only))
    d.delete(GROUP)
    moves = [(e.fields["from"], e.fields["to"]) for e in d.events_named("front.group.state_changed")]
    assert moves == [
        ("Empty", "PreparingRebalance"), ("PreparingRebalance", "CompletingRebalance"),
        ("CompletingRebalance", "Stable"), ("Stable", "PreparingRebalance"), ("PreparingRebalance", "Empty"),
        ("Empty", "Dead")]


def test_a_superseded_join_of_the_same_member_is_dropped_not_answered() -> None:
    d = Driver()
    members = d.stable_group(2)
    first = d.join(members[0])
    second = d.join(members[0])
    assert first in d.dropped
    d.join(members[1])
    assert d.join_answer(second).generation_id == 2


# --- the sync phase ----------------------------------------------------------------------------------------------


def test_followers_sync_waits_for_the_leaders_and_gets_its_assignment() -> None:
    d = Driver()
    (a, a_join), (b, _) = d.join_new(client="a"), d.join_new(client="b")
    d.advance_until(lambda: a_join in d.answers)
    follower_sync = d.sync(b, 1)
    assert follower_sync not in d.answers
    leader_sync = d.sync(a, 1, {a: b"A", b: b"B"})
    assert d.sync_answer(follower_sync).assignment == b"B"
    assert d.sync_answer(leader_sync).assignment == b"A"
    assert d.sync_answer(follower_sync).protocol_name == "range"
    assert d.coordinator.state_of(GROUP) is GroupState.STABLE
    assert d.events_named("front.group.assignment_sent")[0].fields["members"] == [
        {"member_id": a, "bytes": 1}, {"member_id": b, "bytes": 1}]


def test_members_the_leader_left_out_get_an_empty_assignment() -> None:
    d = Driver()
    (a, a_join), (b, _) = d.join_new(client="a"), d.join_new(client="b")
    d.advance_until(lambda: a_join in d.answers)
    follower_sync = d.sync(b, 1)
    d.sync(a, 1, {a: b"A"})
    assert d.sync_answer(follower_sync) .error_code is ErrorCode.none
    assert d.sync_answer(follower_sync).assignment == b""


def test_sync_in_a_stable_group_returns_the_current_assignment() -> None:
    d = Driver()
    members = d.stable_group(2)
    assert d.sync_answer(d.sync(members[1], 1)).assignment == f"assignment-of-{members[1]}".encode()


SYNC_ERRORS: list[tuple[str, Callable[[Driver, str], int], ErrorCode]] = [
    ("unknown member", lambda d, m: d.sync("nobody", 1), ErrorCode.unknown_member_id),
    ("other generation", lambda d, m: d.sync(m, 7), ErrorCode.illegal_generation),
    ("other protocol", lambda d, m: d.sync(m, 1, protocol_name="roundrobin"), ErrorCode.inconsistent_group_protocol),
    ("other protocol type", lambda d, m: d.sync(m, 1, protocol_type="connect"), ErrorCode.inconsistent_group_protocol),
    ("unknown group", lambda d, m: d.sync(m, 1, group="other"), ErrorCode.unknown_member_id),
    ("empty group id", lambda d, m: d.sync(m, 1, group=""), ErrorCode.invalid_group_id),
]


@pytest.mark.parametrize(("sync", "expected"), [case[1:] for case in SYNC_ERRORS], ids=[c[0] for c in SYNC_ERRORS])
def test_sync_errors(sync: Callable[[Driver, str], int], expected: ErrorCode) -> None:
    d = Driver()
    members = d.stable_group(2)
    assert d.sync_answer(sync(d, members[0])).error_code is expected


def test_sync_while_preparing_a_rebalance_answers_rebalance_in_progress() -> None:
    d = Driver()
    members = d.stable_group(2)
    d.join(members[0])
    assert d.sync_answer(d.sync(members[1], 1)).error_code is ErrorCode.rebalance_in_progress


def test_a_rebalance_during_the_sync_answers_waiting_syncs_with_rebalance_in_progress() -> None:
    d = Driver()
    (_, a_join), (b, _) = d.join_new(client="a"), d.join_new(client="b")
    d.advance_until(lambda: a_join in d.answers)
    follower_sync = d.sync(b, 1)
    d.join_new(client="late")
    assert d.sync_answer(follower_sync).error_code is ErrorCode.rebalance_in_progress
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE


def test_a_member_waiting_for_its_sync_answer_is_kept_and_its_session_restarts_with_the_answer() -> None:
    d = Driver()
    (a, a_join), (b, _) = (d.join_new(client="a", session_ms=10_000, rebalance_ms=60_000),
                           d.join_new(client="b", session_ms=10_000, rebalance_ms=60_000))
    d.advance_until(lambda: a_join in d.answers)
    follower_sync = d.sync(b, 1)
    for _ in range(10):  # the leader takes 30 s to assign, heartbeating meanwhile
        d.advance(3_000)
        d.heartbeat(a, 1)
    assert b in d.coordinator.members_of(GROUP)
    d.sync(a, 1, {a: b"A", b: b"B"})
    answered = d.now
    assert d.sync_answer(follower_sync).assignment == b"B"
    while d.now < answered + 12_000:  # b falls silent
        d.advance(3_000)
        d.heartbeat(a, 1)
    assert [e.at_ms for e in d.events_named("front.group.member_expired")] == [answered + 10_000]


def test_members_that_do_not_sync_within_the_rebalance_timeout_are_removed_and_a_rebalance_starts() -> None:
    d = Driver()
    (a, a_join), (b, _) = d.join_new(client="a", rebalance_ms=20_000), d.join_new(client="b", rebalance_ms=20_000)
    d.advance_until(lambda: a_join in d.answers)
    completed_at = d.now
    d.sync(a, 1, {a: b"A", b: b"B"})
    d.heartbeat(b, 1)  # alive, but never syncs
    d.advance_to(completed_at + 20_000 - 1)
    assert b in d.coordinator.members_of(GROUP)
    d.advance_to(completed_at + 20_000)
    assert d.coordinator.members_of(GROUP) == [a]
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE
    assert d.events_named("front.group.member_expired")[-1].fields == {
        "member_id": b, "group_instance_id": None, "cause": "sync_timeout"}


# --- heartbeats and sessions -------------------------------------------------------------------------------------


def test_heartbeat_answers_rebalance_in_progress_while_a_round_is_under_way() -> None:
    d = Driver()
    members = d.stable_group(2)
    assert d.heartbeat(members[1], 1) is ErrorCode.none
    d.join(members[0])
    assert d.heartbeat(members[1], 1) is ErrorCode.rebalance_in_progress


def test_heartbeat_in_completing_rebalance_is_a_normal_one() -> None:
    d = Driver()
    (a, a_join), _ = d.join_new(client="a"), d.join_new(client="b")
    d.advance_until(lambda: a_join in d.answers)
    assert d.heartbeat(a, 1) is ErrorCode.none


HEARTBEAT_ERRORS: list[tuple[str, Callable[[Driver, str], ErrorCode], ErrorCode]] = [
    ("other generation", lambda d, m: d.heartbeat(m, 0), ErrorCode.illegal_generation),
    ("unknown member", lambda d, m: d.heartbeat("stranger", 1), ErrorCode.unknown_member_id),
    ("unknown group", lambda d, m: d.heartbeat(m, 1, group="unknown-group"), ErrorCode.unknown_member_id),
    ("empty group id", lambda d, m: d.heartbeat(m, 1, group=""), ErrorCode.invalid_group_id),
    ("unknown instance id", lambda d, m: d.heartbeat(m, 1, instance="not-static"), ErrorCode.unknown_member_id),
]


@pytest.mark.parametrize(("heartbeat", "expected"), [case[1:] for case in HEARTBEAT_ERRORS],
                         ids=[c[0] for c in HEARTBEAT_ERRORS])
def test_heartbeat_errors(heartbeat: Callable[[Driver, str], ErrorCode], expected: ErrorCode) -> None:
    d = Driver()
    members = d.stable_group(2)
    assert heartbeat(d, members[0]) is expected


def test_session_expiry_in_a_stable_group_removes_the_member_and_starts_a_rebalance() -> None:
    d = Driver()
    members = d.stable_group(2, session_ms=10_000)
    start = d.now
    for t in range(3_000, 12_001, 3_000):
        d.advance_to(start + t)
        d.heartbeat(members[0], 1)
    assert members[1] not in d.coordinator.members_of(GROUP)
    expired = d.events_named("front.group.member_expired")[0]
    assert expired.fields["cause"] == "session_timeout"
    assert expired.at_ms == start + 10_000
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE
    assert d.heartbeat(members[0], 1) is ErrorCode.rebalance_in_progress


@pytest.mark.parametrize("keep_alive", [Driver.heartbeat, Driver.commit], ids=["heartbeat", "offset commit"])
def test_heartbeats_and_commits_keep_a_member_alive_past_its_session_timeout(
        keep_alive: Callable[[Driver, str, int], ErrorCode]) -> None:
    d = Driver()
    members = d.stable_group(1, session_ms=10_000)
    for _ in range(10):
        d.advance(9_000)
        assert keep_alive(d, members[0], 1) is ErrorCode.none
    assert d.coordinator.members_of(GROUP) == members


def test_invalid_session_timeout_and_group_id_are_refused() -> None:
    d = Driver()
    assert d.join_answer(d.join(session_ms=5_999)).error_code is ErrorCode.invalid_session_timeout
    assert d.join_answer(d.join(session_ms=1_800_001)).error_code is ErrorCode.invalid_session_timeout
    assert d.join_answer(d.join(group="")).error_code is ErrorCode.invalid_group_id


def test_join_with_an_unknown_member_id_to_an_unknown_group_is_refused() -> None:
    d = Driver()
    assert d.join_answer(d.join("made-up")).error_code is ErrorCode.unknown_member_id
    assert d.coordinator.group_ids() == []


# --- protocols ---------------------------------------------------------------------------------------------------


def test_protocol_type_must_match_the_groups() -> None:
    d = Driver()
    d.join_new()
    response = d.join_answer(d.join(protocol_type="connect"))
    assert response.error_code is ErrorCode.inconsistent_group_protocol
    assert response.member_id == ""


def test_a_member_with_no_protocol_in_common_is_refused() -> None:
    d = Driver()
    d.join_new(protocols=RANGE)
    assert d.join_answer(d.join(protocols=ROUNDROBIN)).error_code is ErrorCode.inconsistent_group_protocol


def test_a_round_whose_members_all_left_accepts_any_protocol_of_the_groups_type() -> None:
    d = Driver()
    first, rid = d.join_new(protocols=RANGE)
    d.leave(LeavingMember(first))
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE
    _, other = d.join_new(protocols=ROUNDROBIN)
    d.advance_until(lambda: other in d.answers)
    assert d.join_answer(other).protocol_name == "roundrobin"
    assert d.join_answer(rid).error_code is ErrorCode.unknown_member_id


def test_the_protocol_with_most_votes_among_those_all_support_wins() -> None:
    d = Driver()
    both_rr_first = (ROUNDROBIN[0], RANGE[0])
    (_, a_join), _, _ = (d.join_new(client="a", protocols=(RANGE[0], ROUNDROBIN[0])),
                         d.join_new(client="b", protocols=both_rr_first),
                         d.join_new(client="c", protocols=both_rr_first))
    d.advance_until(lambda: a_join in d.answers)
    assert d.join_answer(a_join).protocol_name == "roundrobin"
    assert {m.metadata for m in d.join_answer(a_join).members} == {b"rr-meta"}


def test_a_protocol_not_supported_by_every_member_is_not_a_candidate() -> None:
    d = Driver()
    (_, a_join), _ = (d.join_new(client="a", protocols=(COOP[0], RANGE[0])),
                      d.join_new(client="b", protocols=RANGE))
    d.advance_until(lambda: a_join in d.answers)
    assert d.join_answer(a_join).protocol_name == "range"


def test_a_tied_vote_goes_to_the_first_protocol_in_javas_hashmap_order() -> None:
    # Java iterates {"cooperative-sticky", "range"} as range first, and Kafka's max keeps the first of equals,
    # whoever voted first.
    d = Driver()
    (_, a_join), _ = (d.join_new(client="a", protocols=(COOP[0], RANGE[0])),
                      d.join_new(client="b", protocols=(RANGE[0], COOP[0])))
    d.advance_until(lambda: a_join in d.answers)
    assert d.join_answer(a_join).protocol_name == "range"
    d2 = Driver()
    (_, c_join), _ = (d2.join_new(client="c", protocols=(ROUNDROBIN[0], COOP[0])),
                      d2.join_new(client="d", protocols=(COOP[0], ROUNDROBIN[0])))
    d2.advance_until(lambda: c_join in d2.answers)
    assert d2.join_answer(c_join).protocol_name == "roundrobin"


def test_a_follower_rejoining_a_stable_group_with_unchanged_metadata_causes_no_rebalance() -> None:
    d = Driver()
    members = d.stable_group(2)
    response = d.join_answer(d.join(members[1]))
    assert (response.error_code, response.generation_id, response.leader) == (ErrorCode.none, 1, members[0])
    assert d.coordinator.state_of(GROUP) is GroupState.STABLE


def test_a_follower_rejoining_with_changed_metadata_starts_a_rebalance() -> None:
    d = Driver()
    members = d.stable_group(2)
    d.join(members[1], protocols=(Protocol("range", b"new-subscription"),))
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE


# --- static members ----------------------------------------------------------------------------------------------


def static_stable_group(d: Driver, instances: list[str], version: int = 5) -> list[str]:
    rids = [d.join(instance=i, version=version) for i in instances]
    d.advance_until(lambda: all(rid in d.answers for rid in rids))
    joined = [(d.join_answer(rid).member_id, rid) for rid in rids]
    d.finish_round(joined)
    return [m for m, _ in joined]


def test_static_member_gets_no_member_id_required_and_its_id_from_its_instance_id() -> None:
    d = Driver()
    rid = d.join(instance="box-1", version=5)
    assert rid not in d.answers
    assert d.coordinator.members_of(GROUP) == ["box-1-u1"]


def test_static_member_rejoining_a_stable_group_takes_over_without_a_rebalance() -> None:
    d = Driver()
    old_a, old_b = static_stable_group(d, ["box-a", "box-b"])
    response = d.join_answer(d.join(instance="box-b"))
    assert response.error_code is ErrorCode.none
    assert response.generation_id == 1
    assert d.coordinator.state_of(GROUP) is GroupState.STABLE
    assert d.coordinator.members_of(GROUP) == [old_a, response.member_id]
    assert d.coordinator.assignment_of(GROUP, response.member_id) == f"assignment-of-{old_b}".encode()
    assert d.events_named("front.group.static_member_replaced")[0].fields == {
        "group_instance_id": "box-b", "old_member_id": old_b, "new_member_id": response.member_id}


def test_the_replaced_static_member_id_is_fenced() -> None:
    d = Driver()
    _, old_b = static_stable_group(d, ["box-a", "box-b"])
    d.join(instance="box-b")
    assert d.heartbeat(old_b, 1, instance="box-b") is ErrorCode.fenced_instance_id
    assert d.commit(old_b, 1, instance="box-b") is ErrorCode.fenced_instance_id
    assert d.sync_answer(d.sync(old_b, 1, instance="box-b")).error_code is ErrorCode.fenced_instance_id
    assert d.join_answer(d.join(old_b, instance="box-b")).error_code is ErrorCode.fenced_instance_id


def test_a_waiting_join_of_the_replaced_static_member_is_answered_fenced() -> None:
    d = Driver()
    old_a, old_b = static_stable_group(d, ["box-a", "box-b"])
    waiting = d.join(old_a, instance="box-a")  # the leader's rejoin starts a round
    d.join(instance="box-a")
    assert d.join_answer(waiting).error_code is ErrorCode.fenced_instance_id


def test_a_static_leader_rejoining_v9_is_told_to_skip_the_assignment() -> None:
    d = Driver()
    static_stable_group(d, ["box-a", "box-b"])
    response = d.join_answer(d.join(instance="box-a", version=9))
    assert response.skip_assignment
    assert response.leader == response.member_id
    assert len(response.members) == 2
    assert d.coordinator.state_of(GROUP) is GroupState.STABLE


def test_a_static_leader_rejoining_before_v9_learns_its_old_id_as_leader() -> None:
    d = Driver()
    old_a, _ = static_stable_group(d, ["box-a", "box-b"])
    response = d.join_answer(d.join(instance="box-a", version=8))
    assert not response.skip_assignment
    assert response.leader == old_a != response.member_id
    assert response.members == ()


def test_a_static_member_rejoining_with_a_protocol_that_changes_the_groups_choice_starts_a_rebalance() -> None:
    d = Driver()
    static_stable_group(d, ["box-a"])
    rid = d.join(instance="box-a", protocols=(ROUNDROBIN[0], RANGE[0]))
    # Its only member has rejoined, so the round it started completes at once, with the new choice.
    assert d.events_named("front.group.round_started")[-1].fields["generation"] == 1
    assert (d.join_answer(rid).generation_id, d.join_answer(rid).protocol_name) == (2, "roundrobin")


def test_a_static_member_rejoining_during_the_sync_redoes_the_round() -> None:
    d = Driver()
    a_join, b_join = d.join(instance="box-a"), d.join(instance="box-b")
    d.advance_until(lambda: a_join in d.answers)
    d.join(instance="box-b")
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE
    assert b_join in d.answers


def test_static_members_that_do_not_rejoin_stay_in_the_round() -> None:
    d = Driver()
    old_a, old_b = static_stable_group(d, ["box-a", "box-b"])
    start = d.now
    rid = d.join(old_a, instance="box-a", rebalance_ms=REBALANCE_MS)
    for t in range(3_000, REBALANCE_MS + 1, 3_000):
        d.advance_to(start + t)
        d.heartbeat(old_b, 1, instance="box-b")
    assert d.join_answer(rid).generation_id == 2
    assert d.coordinator.members_of(GROUP) == [old_a, old_b]


def test_a_static_member_leaves_by_its_member_id_or_is_removed_by_instance_id() -> None:
    d = Driver()
    old_a, old_b, old_c = static_stable_group(d, ["box-a", "box-b", "box-c"])
    rid = d.leave(LeavingMember(old_b, "box-b"), LeavingMember("", "box-c"), LeavingMember("", "box-z"))
    response = d.answers[rid]
    assert response == LeaveGroupResponse(ErrorCode.none, (
        LeaveMemberResponse(old_b, "box-b", ErrorCode.none), LeaveMemberResponse("", "box-c", ErrorCode.none),
        LeaveMemberResponse("", "box-z", ErrorCode.unknown_member_id)))
    assert d.coordinator.members_of(GROUP) == [old_a]


def test_heartbeat_with_an_unknown_instance_id_is_unknown_member() -> None:
    d = Driver()
    [a] = static_stable_group(d, ["box-a"])
    assert d.heartbeat(a, 1, instance="box-unknown") is ErrorCode.unknown_member_id


# --- LeaveGroup --------------------------------------------------------------------------------------------------


def test_leave_group_v3_removes_a_batch_and_reports_each_member() -> None:
    d = Driver()
    members = d.stable_group(3)
    rid = d.leave(LeavingMember(members[1]), LeavingMember(members[2]), LeavingMember("ghost"))
    response = d.answers[rid]
    assert isinstance(response, LeaveGroupResponse)
    assert [m.error_code for m in response.members] == [ErrorCode.none, ErrorCode.none, ErrorCode.unknown_member_id]
    assert response.single_member_error_code is ErrorCode.unknown_member_id
    assert d.coordinator.members_of(GROUP) == [members[0]]
    assert d.coordinator.state_of(GROUP) is GroupState.PREPARING_REBALANCE


def test_the_last_member_to_rejoin_leaving_completes_the_round() -> None:
    d = Driver()
    members = d.stable_group(2)
    rid = d.join(members[0])
    d.leave(LeavingMember(members[1]))
    assert d.join_answer(rid).generation_id == 2
    assert d.coordinator.members_of(GROUP) == [members[0]]


def test_a_pending_member_may_leave() -> None:
    d = Driver()
    pending = d.join_answer(d.join()).member_id
    response = d.answers[d.leave(LeavingMember(pending))]
    assert isinstance(response, LeaveGroupResponse)
    assert response.members[0].error_code is ErrorCode.none
    assert d.coordinator.pending_members_of(GROUP) == []


def test_leave_from_an_unknown_group_is_unknown_member() -> None:
    d = Driver()
    response = d.answers[d.leave(LeavingMember("x"), group="nope")]
    assert response == LeaveGroupResponse(ErrorCode.unknown_member_id)


# --- OffsetCommit checks -----------------------------------------------------------------------------------------


def test_a_simple_commit_to_an_unknown_group_creates_an_empty_group() -> None:
    d = Driver()
    assert d.commit("", -1) is ErrorCode.none
    assert d.coordinator.state_of(GROUP) is GroupState.EMPTY
    assert d.commit("", -1) is ErrorCode.none


def test_a_generation_commit_to_an_unknown_group_is_refused_by_version() -> None:
    d = Driver()
    assert d.commit("m", 1, version=8) is ErrorCode.illegal_generation
    assert d.commit("m", 1, version=9) is ErrorCode.group_id_not_found


def test_members_commit_in_their_generation() -> None:
    d = Driver()
    members = d.stable_group(2)
    assert d.commit(members[0], 1) is ErrorCode.none
    assert d.commit(members[0], 0) is ErrorCode.illegal_generation
    assert d.commit("stranger", 1) is ErrorCode.unknown_member_id
    assert d.commit("", -1) is ErrorCode.unknown_member_id


def test_commits_are_accepted_while_preparing_and_refused_while_completing_a_rebalance() -> None:
    d = Driver()
    members = d.stable_group(2)
    d.join(members[0])
    assert d.commit(members[1], 1) is ErrorCode.none
    d.join(members[1])
    assert d.coordinator.state_of(GROUP) is GroupState.COMPLETING_REBALANCE
    assert d.commit(members[1], 2) is ErrorCode.rebalance_in_progress


def test_a_transactional_commit_is_checked_as_kafka_checks_one() -> None:
    """KIP-447: a TxnOffsetCommit naming a member is held to its generation; one naming none (versions 0-2) is taken
    in any state; one in the middle of a round is not refused for it; a generation to an unknown group is
    ILLEGAL_GENERATION at every version."""
    d = Driver()
    assert d.commit("m", 1, version=3, transactional=True) is ErrorCode.illegal_generation
    members = d.stable_group(2)
    assert d.commit(members[0], 1, transactional=True) is ErrorCode.none
    assert d.commit(members[0], 0, transactional=True) is ErrorCode.illegal_generation
    assert d.commit("stranger", 1, transactional=True) is ErrorCode.unknown_member_id
    assert d.commit("", -1, transactional=True) is ErrorCode.none  # refused to an OffsetCommit, above
    d.join(members[0])
    d.join(members[1])
    assert d.coordinator.state_of(GROUP) is GroupState.COMPLETING_REBALANCE
    assert d.commit(members[1], 2, transactional=True) is ErrorCode.none


# --- group.max.size ----------------------------------------------------------------------------------------------


def test_group_max_size_refuses_a_member_beyond_it() -> None:
    d = Driver(ClassicGroupConfig(max_size=2))
    d.stable_group(2)
    response = d.join_answer(d.join(client="third"))
    assert response == JoinGroupResponse(ErrorCode.group_max_size_reached)
    assert len(d.coordinator.members_of(GROUP)) == 2


def test_group_max_size_counts_waiting_members_while_preparing() -> None:
    d = Driver(ClassicGroupConfig(max_size=2))
    a, a_join = d.join_new(client="a")
    b, b_join = d.join_new(client="b")
    c = d.join_answer(d.join(client="c"))
    assert c.error_code is ErrorCode.group_max_size_reached
    assert d.coordinator.members_of(GROUP) == [a, b]


# --- DescribeGroups, ListGroups, DeleteGroups --------------------------------------------------------------------


def test_describe_a_stable_group_shows_protocol_members_metadata_and_assignments() -> None:
    d = Driver()
    members = d.stable_group(2)
    response = d.answers[d.describe(GROUP, "unknown")]
    assert isinstance(response, DescribeGroupsResponse)
    stable, unknown = response.groups
    assert (stable.state, stable.protocol_type, stable.protocol_data) == ("Stable", "consumer", "range")
    assert [m.member_id for m in stable.members] == members
    assert stable.members[0].metadata == b"range-meta"
    assert stable.members[0].assignment == f"assignment-of-{members[0]}".encode()
    assert stable.members[0].client_id == "c0"
    assert (unknown.state, unknown.error_code, unknown.members) == ("Dead", ErrorCode.none, ())


def test_describe_a_rebalancing_group_shows_no_protocol_or_metadata() -> None:
    d = Driver()
    members = d.stable_group(2)
    d.join(members[0])
    response = d.answers[d.describe(GROUP)]
    assert isinstance(response, DescribeGroupsResponse)
    [group] = response.groups
    assert (group.state, group.protocol_data) == ("PreparingRebalance", "")
    assert {m.metadata for m in group.members} == {b""}


def test_list_groups_filters_by_state_and_type_case_insensitively() -> None:
    d = Driver()
    d.stable_group(1)
    d.commit("", -1, group="offsets-only")
    every = d.answers[d.list_groups()]
    assert isinstance(every, ListGroupsResponse)
    assert {(g.group_id, g.state, g.protocol_type, g.group_type) for g in every.groups} == {
        (GROUP, "Stable", "consumer", "classic"), ("offsets-only", "Empty", "", "classic")}
    stable = d.answers[d.list_groups(states=("STABLE ",))]
    assert isinstance(stable, ListGroupsResponse)
    assert [g.group_id for g in stable.groups] == [GROUP]
    consumer_type = d.answers[d.list_groups(types=("consumer",))]
    assert isinstance(consumer_type, ListGroupsResponse)
    assert consumer_type.groups == ()


def test_delete_groups_removes_empty_groups_only() -> None:
    d = Driver()
    d.stable_group(1)
    d.commit("", -1, group="empty")
    response = d.answers[d.delete(GROUP, "empty", "missing")]
    assert isinstance(response, DeleteGroupsResponse)
    assert response.results == (
        (GROUP, ErrorCode.non_empty_group), ("empty", ErrorCode.none), ("missing", ErrorCode.group_id_not_found))
    assert d.coordinator.group_ids() == [GROUP]


# --- the edge's contract -----------------------------------------------------------------------------------------


def test_next_deadline_is_the_earliest_timer_and_none_when_nothing_waits() -> None:
    d = Driver()
    assert d.coordinator.next_deadline_ms() is None
    d.join_new()
    assert d.coordinator.next_deadline_ms() == INITIAL_DELAY_MS


def test_ticking_late_fires_each_timer_at_its_own_deadline() -> None:
    d = Driver()
    _, rid = d.join_new(session_ms=10_000)
    d.now = 100_000
    d.record(d.coordinator.tick(d.now))
    # The round completed at 3 s and the member's session (restarted then) expired at 13 s.
    assert d.join_answer(rid).generation_id == 1
    assert [e.at_ms for e in d.events_named("front.group.round_completed")] == [INITIAL_DELAY_MS]
    assert [e.at_ms for e in d.events_named("front.group.member_expired")] == [INITIAL_DELAY_MS + 10_000]


def test_a_clock_that_goes_back_counts_as_the_latest_time_seen() -> None:
    d = Driver()
    members = d.stable_group(1, session_ms=10_000)
    d.advance(9_000)
    rid = d.send(Heartbeat(d.next_id(), GROUP, 1, members[0]))
    d.record(d.coordinator.tick(0))
    d.advance(9_000)
    assert d.answers[rid] == HeartbeatResponse(ErrorCode.none)
    assert d.coordinator.members_of(GROUP) == members


def test_events_name_rounds_with_generation_and_members() -> None:
    d = Driver()
    members = d.stable_group(2)
    names = d.event_names()
    assert names.count("front.group.member_joined") == 2
    assert names.count("front.group.member_id_required") == 2
    started = d.events_named("front.group.round_started")[0]
    assert started.fields["generation"] == 0
    assert started.fields["initial_delay_ms"] == INITIAL_DELAY_MS
    completed = d.events_named("front.group.round_completed")[0]
    assert completed.fields == {"generation": 1, "protocol": "range", "leader": members[0], "members": members}
