"""The modern rebalance narrated (:mod:`zkconsumer.demo.modern_narration`): on the hand-made coordinator traces and
the front's own coordinators driven (``tests/coordinator_trace.py``), then on events recorded from real modern
members (cooperative-sticky under the classic protocol, and KIP-848) through a front against the real broker."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import coordinator_trace as ct
import pytest
from support import wait_for
from time_scale import bounded

from zkconsumer.demo.front_log_follower import FrontLogFollower
from zkconsumer.demo.modern_narration import MEANINGS, InTimeOrder, ModernNarrator, is_round_start
from zkconsumer.embedded.front import SHORT_CLASSIC_SESSIONS, consumer_group_options
from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.kafka.topics import create_topic
from zkconsumer.members import modern_member
from zkconsumer.members.group import MemberGroup
from zkconsumer.trace.timeline import parse_timestamp


def narrate(events: list[dict], explain: bool = True) -> list[str]:
    narrator = ModernNarrator(explain=explain)
    return [line for event in events for line in narrator.feed(event)]


def parsed(lines: list[str]) -> list[dict]:
    return [json.loads(line) for line in lines]


def test_a_classic_round_names_the_generation_the_leader_and_the_followers_wait_in_syncgroup():
    lines = narrate(parsed(ct.driven_classic_story()))
    text = "\n".join(lines)
    assert "  coordinator g: ROUND to generation 1 begins (new member g_m1-6f1d joined); it waits 3000 ms" in text
    assert "    initial delay extended by 3000 ms" in text
    assert ("  coordinator g: generation 2: members g_m1, g_m2, g_m3; leader g_m1; protocol range; the JoinGroup "
            "answers went out 250 ms after the round began") in lines
    # the leader's SyncGroup came 4 s after the first round's JoinGroup answers: that is how long g_m2's waited
    assert "    SyncGroup: leader g_m1 sent the assignment of generation 1; g_m2 waited 4020 ms in SyncGroup for it" \
        in lines
    assert "    SyncGroup: leader g_m1 sent the assignment of generation 2; g_m2, g_m3 waited 20.0 ms in SyncGroup " \
           "for it" in lines
    assert "  coordinator g: member left: g_m3 (closing)" in lines
    assert lines.count(f"      ({MEANINGS['classic_round']})") == 1  # each meaning told once
    assert not any(line.startswith("      (") for line in narrate(parsed(ct.driven_classic_story()), explain=False))


def test_the_online_upgrade_names_the_classic_members_kept():
    joined = {"event": "front.group.member_joined", "group": "u", "member_id": "u_m2-1", "client_id": "u_m2",
              "protocols": ["cooperative-sticky"], "timestamp": "2026-11-28T10:00:00Z"}
    upgraded = {"event": "front.consumer_group.upgraded", "group": "u", "generation": 3,
                "classic_state": "PreparingRebalance", "members": ["u_m2-1", "u_m3-1"],
                "timestamp": "2026-11-28T10:00:01Z"}
    lines = narrate([joined, upgraded])
    assert ("  coordinator u: ONLINE UPGRADE: the live classic group (PreparingRebalance) becomes a consumer group at "
            "generation 3 as its epoch; its classic members stay, each with its assignment: u_m2, u_m3-1") in lines
    assert f"      ({MEANINGS['consumer_upgrade']})" in lines


def test_kip_848_epochs_target_assignment_and_revoke_then_assign():
    lines = narrate(parsed(ct.driven_consumer_story()))
    text = "\n".join(lines)
    # a new consumer group starts at epoch 1 (Kafka 4.3 on, KAFKA-20268), so the first join bumps it to 2
    assert "  coordinator k: GROUP EPOCH 1 -> 2 (member_joined)" in lines
    assert "  coordinator k: GROUP EPOCH 2 -> 3 (member_joined)" in lines
    assert "    target assignment for group epoch 3 by uniform: k_m1: t-0, t-1; k_m2: t-2, t-3" in lines
    revoke = lines.index("    k_m1 (member epoch 2) must first revoke t-2, t-3")
    given = lines.index("    k_m2 is given t-2, t-3 at member epoch 3")
    assert revoke < given  # revoke, then assign
    assert "    k_m1: member epoch 2 -> 3 (stable)" in lines
    assert "    group Stable at group epoch 3, reconciled 1000 ms after the bump" in lines
    assert MEANINGS["consumer_revoke"] in text


def test_the_modern_members_revocations_and_resumes_are_told():
    lines = narrate(parsed(ct.classic_story()))
    assert "  g_m1: gave up everything it fetched (eager); given t-0, t-1" in lines
    assert any(line.startswith("    => owns t-0, t-1, t-2; fetched nothing for 3.00 ms; fetching again 53.0 ms "
                               "after the coordinator's decision") for line in lines)
    assert "  coordinator g: member expired: g_m2 (session_timeout)" in lines


def test_rounds_and_reconciliations_are_where_step_mode_stops():
    starts = [e["event"] for e in parsed(ct.classic_story() + ct.consumer_story()) if is_round_start(e)]
    assert starts.count("front.group.round_started") == 4
    assert starts.count("front.consumer_group.epoch_bumped") == 2


# --- recorded from real members through a front ------------------------------------------------------------------

FRONT_OPTIONS = ("--group-initial-rebalance-delay-ms", "200", *SHORT_CLASSIC_SESSIONS,
                 *consumer_group_options(session_timeout_ms=3000, heartbeat_interval_ms=300))


@pytest.fixture
def front(broker_bootstrap, tmp_path) -> Iterator[FrontProcess]:
    with FrontProcess(broker_bootstrap, tmp_path / "front", options=FRONT_OPTIONS) as process:
        yield process


def test_real_cooperative_sticky_and_kip_848_members_are_narrated(front, tmp_path, topic_name):
    """Two cooperative-sticky members and two KIP-848 members, the second of each joining once the first owns
    everything: each group's round (or epoch) is told, and each member's revocation and resume."""
    create_topic(front.address, topic_name, 4)
    (tmp_path / "logs").mkdir()
    members = MemberGroup(tmp_path / "logs")
    received: list[dict] = []

    def start(name: str, group: str, strategy: str, protocol: str) -> None:
        members.start(name, name, modern_member.command(
            bootstrap=front.address, group=group, topic=topic_name, consumer_id=name, strategy=strategy,
            session_timeout_ms=3000, group_protocol=protocol))

    def owned_by(*names: str) -> bool:
        received.extend(members.receive(0.1))
        state = {m.consumer_id: m.state for m in members.live()}
        return all(n in state and not state[n].rebalancing and state[n].owned for n in names) and \
            sum(len(state[n].owned) for n in names) == 4

    followed: list[dict] = []  # the coordinator's events as a demo sees them, while they are written
    follower = FrontLogFollower(front.log_path, followed.append, from_start=True).start()
    try:
        start("coop1", "coop", "cooperative-sticky", "classic")
        start("kip1", "kip", "uniform", "consumer")
        wait_for(lambda: owned_by("coop1") and owned_by("kip1"), timeout=30)
        start("coop2", "coop", "cooperative-sticky", "classic")
        start("kip2", "kip", "uniform", "consumer")
        wait_for(lambda: owned_by("coop1", "coop2") and owned_by("kip1", "kip2"), timeout=30)
        assert any(e["event"] == "front.consumer_group.epoch_bumped" for e in followed)  # read as they came
    finally:
        members.stop_all(timeout=bounded(10.0))
        received.extend(members.close())
        follower.stop()
    written = [json.loads(line) for line in front.log_path.read_text(encoding="utf-8").splitlines()
               if line.startswith("{")]
    assert followed == [e for e in written if e["event"].startswith(("front.group.", "front.consumer_group."))]
    recorded = followed + received
    recorded.sort(key=lambda e: parse_timestamp(e.get("timestamp")).timestamp()
                  if parse_timestamp(e.get("timestamp")) else time.time())
    lines = narrate(recorded)
    text = "\n".join(lines)
    assert "  coordinator coop: ROUND to generation 1 begins" in text
    assert any(line.startswith("  coordinator coop: generation 2: members ") and "leader coop1" in line
               for line in lines), text
    assert any(line.startswith("    SyncGroup: leader coop1 sent the assignment of generation 2; coop2 waited ")
               for line in lines), text
    assert any(line.startswith("  coop1: revoked ") for line in lines), text  # cooperative: only what moves
    assert any(line.startswith("  coordinator kip: GROUP EPOCH 1 -> 2") for line in lines), text
    assert any(line.startswith("    kip1 (member epoch ") and "must first revoke" in line for line in lines), text
    assert any(line.startswith("    kip2 is given ") for line in lines), text
    assert any("fetching again" in line for line in lines if line.startswith("    => owns")), text


def test_events_from_two_sources_are_put_back_in_the_order_they_happened():
    order = InTimeOrder()
    late_coordinator = {"event": "front.group.round_completed", "timestamp": "2026-01-02T03:04:05.100000Z"}
    member = {"event": "rebalance.completed", "timestamp": "2026-01-02T03:04:05.200000Z"}
    order.add(member)  # a member's stdout arrives first
    assert order.release(parse_timestamp("2026-01-02T03:04:05.050000Z").timestamp()) == []
    order.add(late_coordinator)  # the coordinator's log is read later
    assert order.release(float("inf")) == [late_coordinator, member]
    assert order.release(float("inf")) == []
