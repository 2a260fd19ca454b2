"""The storm model's invariants, per protocol: one member meets no conflict, members converge on the real assignors'
assignment, more members never cost ZooKeeper less, conflicts, retries exhausted and session expiry where the
legacy flow has them, and the modern members end with what the front's coordinators give them."""

from __future__ import annotations

from dataclasses import replace

import pytest

from zkconsumer.assignors.legacy_range import LegacyRangeAssignor
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.errors import UsageError
from zkconsumer.scenarios import model as sc
from zkconsumer.scenarios.parse import load
from zkconsumer.storm.classic_group import ClassicGroup, unpack
from zkconsumer.storm.consumer_group import TOPIC_ID, ConsumerGroup
from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.legacy_group import TOPIC, LegacyGroup
from zkconsumer.storm.modern_group import GROUP
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.simulation import DEFAULT_PROTOCOLS, PROTOCOLS, check, play, simulate, storm_scenario

P = StormParameters()


def started(group_class, members: int, partitions: int, *args):
    loop = EventLoop()
    group = group_class(loop, P, partitions, *args)
    for i in range(members):
        group.start(f"m{i}")
    assert loop.run_until(group.settled, 600_000), "not stable within 10 simulated minutes"
    return loop, group


def grow_into_one(members: int) -> sc.Scenario:
    """One member takes the topic, then ``members`` more start at once: they meet its owner znodes."""
    storm = storm_scenario(members + 1, 1_000)
    first, *rest = storm.members
    return replace(storm, scenes=(
        sc.Scene(1, "one", "", (sc.Action(sc.START, first.name),)),
        sc.Scene(2, "the rest", "", tuple(sc.Action(sc.START, m.name) for m in rest))))


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_member_takes_every_partition_without_a_conflict(protocol):
    figures = play(storm_scenario(1, 100), protocol, P).scenes[0]
    assert figures.time_to_stable_s is not None and figures.time_to_stable_s > 0
    assert figures.conflicts == figures.retries_exhausted == figures.session_expiries == figures.request_timeouts == 0
    assert figures.rebalances == 1


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_members_converge_and_the_figures_are_the_same_every_run(protocol):
    first = play(storm_scenario(7, 60), protocol, P)
    assert first.time_to_stable_s is not None
    assert first.scenes[0].partition_seconds_paused > 0
    assert play(storm_scenario(7, 60), protocol, P) == first


def test_the_legacy_group_ends_with_the_real_assignors_owner_znodes():
    _, group = started(LegacyGroup, 7, 60)
    names = tuple(f"m{i}" for i in range(7))
    request = AssignmentInput({TOPIC: 60}, tuple(Member(n, streams={TOPIC: 1}) for n in names))
    expected = LegacyRangeAssignor().assign(request).by_member(request.members)
    owner_of = {tp.partition: name for name, tps in expected.items() for tp in tps}
    assert [group._by_index[i].name for i in group.owners] == [owner_of[p] for p in range(60)]


@pytest.mark.parametrize("strategy", ["range", "cooperative-sticky"])
def test_classic_members_consume_what_the_front_coordinator_handed_them(strategy):
    _, group = started(ClassicGroup, 6, 40, strategy)
    seen: list[int] = []
    for member in group.members.values():
        assert sorted(member.owned) == sorted(unpack(group.coordinator.assignment_of(GROUP, member.member_id)))
        seen += member.owned
    assert sorted(seen) == list(range(40))


def test_kip848_members_consume_the_front_coordinators_target_assignment():
    _, group = started(ConsumerGroup, 6, 40)
    seen: list[int] = []
    for member in group.members.values():
        target = group.coordinator.target_of(GROUP, member.member_id)
        assert member.owned == target[TOPIC_ID]
        seen += member.owned
    assert sorted(seen) == list(range(40))
    assert sorted(len(m.owned) for m in group.members.values()) == [6, 6, 7, 7, 7, 7]  # uniform: balanced


def test_more_members_never_cost_zookeeper_fewer_requests():
    requests = [play(storm_scenario(n, 1_000), "legacy-range", P).scenes[0].zookeeper_requests
                for n in (1, 2, 4, 8, 16, 32)]
    assert requests == sorted(requests) and requests[0] < requests[-1]


def test_members_joining_an_owner_of_everything_meet_conflicts_and_back_off():
    figures = play(grow_into_one(9), "legacy-range", P).scenes[1]
    assert figures.conflicts > 0
    assert figures.time_to_stable_s is not None and figures.time_to_stable_s >= P.rebalance_backoff_ms / 1000


def test_a_member_out_of_retries_gives_up_and_the_group_does_not_settle():
    figures = play(grow_into_one(9), "legacy-range", replace(P, rebalance_max_retries=1), settle_limit_s=60).scenes[1]
    assert figures.retries_exhausted > 0
    assert figures.time_to_stable_s is None


def test_a_killed_member_is_replaced_once_its_session_expires():
    scenario = load("rolling-restart")
    crash = play(scenario, "legacy-range", P).scenes[-1]
    assert crash.session_expiries == 1
    assert crash.time_to_stable_s is not None and crash.time_to_stable_s >= P.zookeeper_session_timeout_ms / 1000


def test_a_zookeeper_slower_than_the_session_timeout_fails_attempts_until_retries_run_out():
    overloaded = replace(P, zk_read_ms=5.0, zookeeper_session_timeout_ms=500.0)
    figures = play(storm_scenario(30, 100), "legacy-range", overloaded, settle_limit_s=120).scenes[0]
    assert figures.request_timeouts > 0 and figures.retries_exhausted > 0
    assert figures.time_to_stable_s is None
    calm = play(storm_scenario(30, 100), "legacy-range", P).scenes[0]
    assert calm.request_timeouts == calm.retries_exhausted == 0


def test_a_grown_topic_is_consumed_whole_by_every_protocol():
    scenario = storm_scenario(3, 30)
    grow = sc.Scene(2, "grow", "", (sc.Action(sc.GROW, partitions=6),))
    scenario = replace(scenario, scenes=(*scenario.scenes, grow))
    for protocol in DEFAULT_PROTOCOLS:
        assert play(scenario, protocol, P).scenes[1].time_to_stable_s is not None, protocol


def test_what_the_model_cannot_play_is_refused_before_anything_runs():
    with pytest.raises(UsageError, match="pauses a member"):
        check(load("pause-and-grow"), DEFAULT_PROTOCOLS)
    with pytest.raises(UsageError, match=r"^shipped scenario upgrade: scene 2, action 1 upgrades a member to KIP-848 "
                       r"in place, which the storm model does not simulate"):
        check(load("upgrade"), DEFAULT_PROTOCOLS)
    with pytest.raises(UsageError, match="unknown protocol nope"):
        simulate(storm_scenario(2, 2), ("nope",))
    with pytest.raises(UsageError, match="at least one member"):
        storm_scenario(0, 10)
