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


def grow_into_one(*joining: int) -> sc.Scenario:
    """One member takes the topic, then each scene's ``joining`` members more start at once: they meet owner
    znodes."""
    storm = storm_scenario(1 + sum(joining), 1_000)
    names = [m.name for m in storm.members]
    scenes, first = [sc.Scene(1, "one", "", (sc.Action(sc.START, names[0]),))], 1
    for number, count in enumerate(joining, start=2):
        scenes.append(sc.Scene(number, f"{count} join", "",
                               tuple(sc.Action(sc.START, n) for n in names[first:first + count])))
        first += count
    return replace(storm, scenes=tuple(scenes))


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


def test_a_first_rebalance_out_of_retries_leaves_the_member_owning_nothing_until_a_watch_fires():
    """create_message_streams raises ConsumerRebalanceFailedException, as Kafka's consume() did: the member stays
    registered, owning nothing; the next member's registration fires its watch and its rebalance thread takes over."""
    scenes = play(grow_into_one(1, 1), "legacy-range", replace(P, rebalance_max_retries=1), settle_limit_s=60).scenes
    assert scenes[1].retries_exhausted == 1 and scenes[1].time_to_stable_s is None
    assert scenes[1].unsettled is not None and "1 out of retries and waiting for a watch" in scenes[1].unsettled
    assert scenes[2].time_to_stable_s is not None and scenes[2].unsettled is None


def test_the_connector_starts_a_failed_background_rebalance_again_where_kafka_gave_up():
    """KAFKA-4228: this project's connector's rebalance thread retries a rebalance out of retries; Kafka 0.10.0.1's
    watcher thread logged the failure and waited for the next watch."""
    connector = replace(P, rebalance_max_retries=1)
    ours = play(grow_into_one(1, 1), "legacy-range", connector, settle_limit_s=60).scenes[2]
    kafka = play(grow_into_one(1, 1), "legacy-range", replace(connector, give_up_after_retries=True),
                 settle_limit_s=60).scenes[2]
    assert ours.retries_exhausted == kafka.retries_exhausted == 1
    assert ours.time_to_stable_s is not None
    assert kafka.time_to_stable_s is None
    assert kafka.unsettled is not None and "out of retries and waiting for a watch" in kafka.unsettled


def test_a_killed_member_is_replaced_once_its_session_expires():
    scenario = load("rolling-restart")
    crash = play(scenario, "legacy-range", P).scenes[-1]
    assert crash.session_expiries == 1
    assert crash.time_to_stable_s is not None and crash.time_to_stable_s >= P.zookeeper_session_timeout_ms / 1000


def test_an_answer_later_than_the_session_timeout_fails_nothing_while_the_connection_hears_from_the_server():
    """kazoo drops a connection only when its ping goes unanswered, and the connector waits for a first answer:
    a batch of reads answered one after another for longer than the session timeout is no failure."""
    slow = replace(P, zk_read_ms=5.0)  # one member's 2 x 2,000 offset reads: 10 s of the server's time each
    figures = play(storm_scenario(1, 2_000), "legacy-range", slow, settle_limit_s=120).scenes[0]
    assert figures.time_to_stable_s is not None
    assert figures.time_to_stable_s > 2 * slow.zookeeper_session_timeout_ms / 1000
    assert figures.connection_drops == figures.request_timeouts == figures.session_expiries == 0
    assert figures.rebalances == 1


def test_a_server_serves_long_batches_interleaved_so_the_members_waiting_behind_them_keep_their_connections():
    """Ten members each reading 5,000 offsets twice on one server: 20 s of its time, but every member's answers keep
    arriving (ZooKeeper reads the connections in turn), so no ping goes unanswered; served whole, one batch after
    another, the members at the back would hear nothing for seconds and lose their connections."""
    figures = play(storm_scenario(10, 50_000), "legacy-range", replace(P, zookeeper_servers=1),
                   settle_limit_s=120).scenes[0]
    assert figures.time_to_stable_s is not None and figures.time_to_stable_s > 10
    assert figures.connection_drops == figures.retries_exhausted == 0


def test_a_server_far_behind_drops_connections_without_expiring_a_session():
    """Pings queued behind seconds of other members' reads go unanswered: kazoo drops the connection, the attempt
    waiting on it fails, the member connects again at once; the server, hearing from it all along, keeps its
    session. With retries enough the herd passes; with Kafka's four, most members' first rebalance runs out of them
    and raises to the application, leaving them owning nothing."""
    overloaded = replace(P, zk_read_ms=2.0, zookeeper_session_timeout_ms=1_500.0, zookeeper_servers=1,
                         rebalance_max_retries=10)
    figures = play(storm_scenario(30, 100), "legacy-range", overloaded, settle_limit_s=120).scenes[0]
    assert figures.connection_drops > 0 and figures.session_expiries == 0
    assert figures.time_to_stable_s is not None and figures.retries_exhausted == 0
    four = play(storm_scenario(30, 100), "legacy-range", replace(overloaded, rebalance_max_retries=4),
                settle_limit_s=120).scenes[0]
    assert four.time_to_stable_s is None and four.retries_exhausted > 0 and four.session_expiries == 0
    assert four.unsettled is not None and "out of retries and waiting for a watch" in four.unsettled
    calm = play(storm_scenario(30, 100), "legacy-range", P).scenes[0]
    assert calm.connection_drops == calm.request_timeouts == calm.retries_exhausted == 0


def test_a_session_expires_only_when_the_server_has_not_heard_from_it_for_the_session_timeout():
    """Disconnected longer than its session (kazoo's retry delay set beyond it), a member finds its session expired
    when it connects again, and registers again; connected again in time, it keeps it."""
    overloaded = replace(P, zk_read_ms=2.0, zookeeper_session_timeout_ms=1_500.0, zookeeper_servers=1)
    late = play(storm_scenario(30, 100), "legacy-range", replace(overloaded, reconnect_delay_ms=2_000.0),
                settle_limit_s=30).scenes[0]
    assert late.session_expiries > 0 and late.connection_drops >= late.session_expiries
    soon = play(storm_scenario(30, 100), "legacy-range", overloaded, settle_limit_s=30).scenes[0]
    assert soon.connection_drops > 0 and soon.session_expiries == 0


def test_a_member_reconnected_reads_the_group_again_and_rebalances_for_what_it_missed():
    """The server forgets a dropped connection's watches: a member that was disconnected when another joined learns
    of it from its watch recipe's read on reconnecting, and the group settles on three shares."""
    loop, group = started(LegacyGroup, 2, 60)
    dropped = group.members["m0"]
    group._drop(dropped)  # noqa: SLF001 (the connection's drop, as kazoo's loop would)
    group.start("m2")
    assert not dropped.watching
    assert loop.run_until(group.settled, loop.now_ms + 60_000)
    assert sorted(len(m.owned) for m in group.members.values()) == [20, 20, 20]
    assert group.measures.connection_drops == 1


def test_a_group_that_committed_offsets_reads_every_partitions_offset_in_step_6_and_after_its_claim():
    def requests(committed: bool, partitions: int) -> int:
        figures = play(storm_scenario(1, partitions), "legacy-range", replace(P, offsets_committed=committed))
        return figures.scenes[0].zookeeper_requests

    assert requests(True, 500) - requests(False, 500) == 2 * 500 - P.new_group_requests
    assert requests(True, 1_000) - requests(True, 500) == 2 * 500


def test_members_starting_together_start_one_after_another():
    spread = play(storm_scenario(3, 30), "legacy-range", replace(P, start_interval_ms=1_000.0)).scenes[0]
    together = play(storm_scenario(3, 30), "legacy-range", replace(P, start_interval_ms=0.0)).scenes[0]
    assert together.time_to_stable_s is not None and together.time_to_stable_s < 1
    assert spread.time_to_stable_s is not None and spread.time_to_stable_s > 2  # the last started 2 s after the first
    assert spread.rebalances > together.rebalances  # the earlier members rebalance again as each joins


def test_an_ensemble_spreads_the_reads_and_a_read_bound_herd_settles_sooner():
    def stable(servers: int) -> float:
        figures = play(storm_scenario(100, 100), "legacy-range", replace(P, zookeeper_servers=servers)).scenes[0]
        assert figures.time_to_stable_s is not None
        return figures.time_to_stable_s

    assert stable(3) < stable(1) / 1.4


def test_a_group_not_stable_within_the_limit_says_what_keeps_it_from_settling():
    thrashing = replace(P, zk_read_ms=5.0, zookeeper_session_timeout_ms=1_500.0, zookeeper_servers=1)
    figures = play(storm_scenario(30, 100), "legacy-range", thrashing, settle_limit_s=60).scenes[0]
    assert figures.time_to_stable_s is None and figures.retries_exhausted > 0
    assert figures.unsettled is not None
    assert "reconnecting" in figures.unsettled and "ZooKeeper" in figures.unsettled and "behind" in figures.unsettled


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
