"""Hand-made traces with a group coordinator's events, as the front logs them (JSON lines: ``event``, ``timestamp``,
``level``, the group in ``group``, the event's fields), beside the members' own events.

``classic_story()``: a classic group ``g`` of members ``g_m1``, ``g_m2``, ``g_m3`` (their client ids, as a modern
member of this project sets them): an empty group's first round with the initial delay extended once, a third
member joining a stable group, a member expiring, a member leaving. ``consumer_story()``: a KIP-848 group ``k``
through two group epochs. Every time is in seconds after ``T0``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
IDS = {"g_m1": "g_m1-6f1d", "g_m2": "g_m2-0b7e", "g_m3": "g_m3-93aa"}  # client id -> member id


def line(name: str, at: float, **fields) -> str:
    stamp = (T0 + timedelta(seconds=at)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return json.dumps({"event": name, "timestamp": stamp, "level": fields.pop("level", "info"), **fields})


def classic(kind: str, at: float, group: str = "g", **fields) -> str:
    return line(f"front.group.{kind}", at, group=group, at_ms=int(at * 1000), **fields)


def consumer(kind: str, at: float, group: str = "k", **fields) -> str:
    return line(f"front.consumer_group.{kind}", at, group=group, at_ms=int(at * 1000), **fields)


def joined(at: float, client: str) -> str:
    return classic("member_joined", at, member_id=IDS[client], group_instance_id=None, client_id=client,
                   client_host="/127.0.0.1", session_timeout_ms=45000, rebalance_timeout_ms=300000,
                   protocols=["range", "roundrobin"])


def state(at: float, before: str, after: str, generation: int, group: str = "g") -> str:
    return classic("state_changed", at, group=group, generation=generation, **{"from": before, "to": after})


def completed_round(at: float, generation: int, clients: list[str]) -> list[str]:
    """A round's completion, the state changes and the leader's assignment sent."""
    ids = [IDS[c] for c in clients]
    return [
        classic("round_completed", at, generation=generation, protocol="range", leader=ids[0], members=ids),
        state(at, "PreparingRebalance", "CompletingRebalance", generation),
        classic("assignment_sent", at + 0.02, generation=generation, leader=ids[0],
                members=[{"member_id": m, "bytes": 26} for m in ids]),
        state(at + 0.02, "CompletingRebalance", "Stable", generation),
    ]


def member_rebalance(at: float, client: str, rid: int, partitions: list[int]) -> list[str]:
    """A modern member's rebalance in the steps' words, as :mod:`zkconsumer.members.modern_member` logs it."""
    owned = [{"topic": "t", "partition": p, "thread": f"{client}-0"} for p in partitions]
    common = {"consumer_id": client, "group": "g", "rebalance_id": rid, "attempt": 1}
    return [
        line("rebalance.started", at, cause="assign", strategy="range", **common),
        line("rebalance.stop_fetchers", at + 0.001, step=2, chunks_dropped=0, duration_ms=1.0, **common),
        line("rebalance.assign", at + 0.002, step=5, strategy="range", assignment=owned, members=[], partitions={},
             **common),
        line("rebalance.start_fetchers", at + 0.003, step=9, partitions=len(partitions), fetching=True,
             duration_ms=1.0, **common),
        line("rebalance.completed", at + 0.004, attempts=1, owned=owned, duration_ms=4.0, **common),
    ]


def classic_story(members: bool = True) -> list[str]:
    """The classic group's story; with ``members``, the members' own rebalances beside the coordinator's."""
    lines = [
        classic("created", 0.0, protocol_type="consumer"),
        classic("member_id_required", 0.0, member_id=IDS["g_m1"], client_id="g_m1", session_timeout_ms=45000),
        joined(0.01, "g_m1"),
        state(0.01, "Empty", "PreparingRebalance", 0),
        classic("round_started", 0.01, generation=0, reason="member g_m1 joined", members=1, initial_delay_ms=3000),
        joined(0.5, "g_m2"),
        classic("initial_delay_extended", 3.01, delay_ms=3000, remaining_ms=296990),
        *completed_round(6.01, 1, ["g_m1", "g_m2"]),
        joined(10.0, "g_m3"),
        state(10.0, "Stable", "PreparingRebalance", 1),
        classic("round_started", 10.0, generation=1, reason="member g_m3 joined", members=3,
                rebalance_timeout_ms=300000),
        classic("member_rejoined", 10.2, member_id=IDS["g_m1"], protocols_changed=False),
        classic("member_rejoined", 10.25, member_id=IDS["g_m2"], protocols_changed=False),
        *completed_round(10.25, 2, ["g_m1", "g_m2", "g_m3"]),
        classic("member_expired", 16.0, member_id=IDS["g_m2"], group_instance_id=None, cause="session_timeout",
                level="warning"),
        state(16.0, "Stable", "PreparingRebalance", 2),
        classic("round_started", 16.0, generation=2, reason="member g_m2 expired", members=2,
                rebalance_timeout_ms=300000),
        *completed_round(16.3, 3, ["g_m1", "g_m3"]),
        classic("member_left", 19.0, member_id=IDS["g_m3"], group_instance_id=None, reason="the consumer closed"),
        state(19.0, "Stable", "PreparingRebalance", 3),
        classic("round_started", 19.0, generation=3, reason="member g_m3 left", members=1,
                rebalance_timeout_ms=300000),
    ]
    if members:
        lines += member_rebalance(6.05, "g_m1", 1, [0, 1, 2])
        lines += member_rebalance(6.06, "g_m2", 1, [3, 4, 5])
        lines += member_rebalance(10.3, "g_m1", 2, [0, 1])
        lines += member_rebalance(10.3, "g_m2", 2, [2, 3])
        lines += member_rebalance(10.31, "g_m3", 1, [4, 5])
        lines += member_rebalance(16.35, "g_m1", 3, [0, 1, 2])
        lines += member_rebalance(16.36, "g_m3", 2, [3, 4, 5])
    return lines


def consumer_story() -> list[str]:
    """A KIP-848 group, its fields as the consumer coordinator names them: a member joins (epoch 1), a
    second joins (epoch 2: a partition revoked from the first before the second gets it), the second is fenced."""
    return [
        consumer("created", 1.0),
        consumer("member_joined", 1.0, member_id="k1-id", instance_id=None, client_id="k_m1",
                 subscribed_topic_names=["t"], server_assignor=None, rebalance_timeout_ms=60000),
        consumer("epoch_bumped", 1.0, reason="member_joined", **{"from": 0, "to": 1}),
        consumer("state_changed", 1.0, group_epoch=1, assignment_epoch=0, **{"from": "Empty", "to": "Assigning"}),
        consumer("target_assignment_computed", 1.0, epoch=1, assignor="uniform",
                 members=[{"member_id": "k1-id", "partitions": [{"topic": "t", "partition": 0}]}]),
        consumer("state_changed", 1.0, group_epoch=1, assignment_epoch=1,
                 **{"from": "Assigning", "to": "Reconciling"}),
        consumer("partitions_assigned", 1.1, member_id="k1-id", member_epoch=1,
                 partitions=[{"topic": "t", "partition": 0}]),
        consumer("member_epoch_advanced", 1.1, member_id="k1-id", state="stable", **{"from": 0, "to": 1}),
        consumer("state_changed", 1.1, group_epoch=1, assignment_epoch=1, **{"from": "Reconciling", "to": "Stable"}),
        consumer("member_joined", 7.0, member_id="k2-id", instance_id=None, client_id="k_m2",
                 subscribed_topic_names=["t"], server_assignor=None, rebalance_timeout_ms=60000),
        consumer("epoch_bumped", 7.0, reason="member_joined", **{"from": 1, "to": 2}),
        consumer("target_assignment_computed", 7.0, epoch=2, assignor="uniform",
                 members=[{"member_id": "k1-id", "partitions": []},
                          {"member_id": "k2-id", "partitions": [{"topic": "t", "partition": 0}]}]),
        consumer("state_changed", 7.0, group_epoch=2, assignment_epoch=2, **{"from": "Stable", "to": "Reconciling"}),
        consumer("member_state_changed", 7.5, member_id="k1-id", **{"from": "stable", "to": "unrevoked_partitions"}),
        consumer("partitions_revoked", 7.5, member_id="k1-id", member_epoch=1,
                 partitions=[{"topic": "t", "partition": 0}]),
        consumer("partitions_assigned", 9.0, member_id="k2-id", member_epoch=2,
                 partitions=[{"topic": "t", "partition": 0}]),
        consumer("state_changed", 9.0, group_epoch=2, assignment_epoch=2, **{"from": "Reconciling", "to": "Stable"}),
        consumer("heartbeat_rejected", 13.0, member_id="k2-id", member_epoch=1, error="FENCED_MEMBER_EPOCH",
                 message="stale epoch", level="warning"),
        consumer("member_fenced", 14.0, member_id="k2-id", instance_id=None, member_epoch=2,
                 rebalance_timeout_ms=60000, level="warning"),
    ]


# --- the front's own coordinators, driven ------------------------------------------------------------------------
# What the pure coordinators of zkconsumer.front log for a small story, as the edge logs a GroupEvent: its name as
# ``event``, its group id as ``group``, ``at_ms``, its fields, and the time it happened (``at_ms`` from T0).


def group_event_line(event) -> str:
    """A :class:`zkconsumer.front.groups.classic_group_messages.GroupEvent` as a JSON line."""
    return line(event.name, event.at_ms / 1000, group=event.group_id, at_ms=event.at_ms, **dict(event.fields))


def driven_classic_story() -> list[str]:
    """Two members join an empty classic group (one round after the initial delay), a third joins the stable group
    (a round as soon as all have rejoined), then the third leaves."""
    from zkconsumer.front.groups.classic_group import ClassicGroupCoordinator
    from zkconsumer.front.groups.classic_group_messages import (
        JoinGroup,
        JoinGroupResponse,
        LeaveGroup,
        LeavingMember,
        Protocol,
        Respond,
        SyncGroup,
    )

    uuids = iter(["6f1d", "0b7e", "93aa"])
    coordinator = ClassicGroupCoordinator(new_uuid=lambda: next(uuids))
    events, answers = [], {}
    request_ids = iter(range(1, 1000))

    def step(outcome) -> None:
        events.extend(outcome.events)
        answers.update({e.request_id: e.response for e in outcome.effects if isinstance(e, Respond)})

    def join(client: str, now: int, member_id: str = "") -> int:
        request_id = next(request_ids)
        step(coordinator.handle(JoinGroup(request_id, "g", member_id, "consumer", (Protocol("range"),), 45000,
                                          60000, 5, client_id=client, client_host="/127.0.0.1"), now))
        return request_id

    def sync(generation: int, member_id: str, now: int, assignments=()) -> None:
        step(coordinator.handle(SyncGroup(next(request_ids), "g", generation, member_id, protocol_type="consumer",
                                          protocol_name="range", assignments=assignments), now))

    member_ids = []
    for client, now in (("g_m1", 0), ("g_m2", 500)):
        first = join(client, now)
        member_ids.append(answers[first].member_id)
        join(client, now, member_ids[-1])  # MEMBER_ID_REQUIRED first (KIP-394)
    step(coordinator.tick(10_000))  # the initial delay, extended once, is over
    joined_1 = [r for r in answers.values() if isinstance(r, JoinGroupResponse) and r.generation_id == 1]
    assert len(joined_1) == 2, answers
    m1, m2 = member_ids
    sync(1, m2, 10_010)
    sync(1, m1, 10_020, ((m1, b"a"), (m2, b"b")))
    third = join("g_m3", 15_000)
    m3 = answers[third].member_id
    rejoins = [join("g_m3", 15_000, m3), join("g_m1", 15_200, m1), join("g_m2", 15_250, m2)]
    assert all(isinstance(answers.get(r), JoinGroupResponse) and answers[r].generation_id == 2 for r in rejoins)
    sync(2, m2, 15_260)
    sync(2, m3, 15_260)
    sync(2, m1, 15_270, ((m1, b"a"), (m2, b"b"), (m3, b"c")))
    step(coordinator.handle(LeaveGroup(next(request_ids), "g", (LeavingMember(m3, reason="closing"),)), 20_000))
    return [group_event_line(e) for e in events]


def driven_consumer_story() -> list[str]:
    """A KIP-848 group: a member joins (epoch 1, everything); a second joins (epoch 2: the first is asked to revoke
    half before the second gets it); the second leaves (epoch 3)."""
    from zkconsumer.assignors.topic_ids import generated_topic_id
    from zkconsumer.front.groups.consumer_group import ConsumerGroupCoordinator
    from zkconsumer.front.groups.consumer_group_messages import ConsumerGroupHeartbeat, TopicMetadata

    names = iter(["k1-id", "k2-id"])
    coordinator = ConsumerGroupCoordinator(new_member_id=lambda: next(names))
    events = list(coordinator.set_topics([TopicMetadata("t", generated_topic_id("t"), 4)], 0))
    members: dict[str, tuple[int, dict]] = {}

    def beat(now: int, member_id: str = "", client: str = "", epoch: int | None = None) -> str:
        known_epoch, owned = members.get(member_id, (0, {}))
        joining = member_id == ""
        outcome = coordinator.heartbeat(ConsumerGroupHeartbeat(
            "k", member_id, known_epoch if epoch is None else epoch, rebalance_timeout_ms=60000 if joining else -1,
            subscribed_topic_names=("t",) if joining else None, owned={} if joining else owned, client_id=client,
            ), now)
        events.extend(outcome.events)
        response = outcome.response
        if response.member_epoch >= 0:
            assignment = response.assignment if response.assignment is not None else owned
            members[response.member_id] = (response.member_epoch, dict(assignment))
        return response.member_id

    k1 = beat(1000, client="k_m1")
    k2 = beat(7000, client="k_m2")
    for now in (7500, 8000, 8500, 9000):  # each heartbeats what it owns until the group is stable again
        beat(now, k1)
        beat(now, k2)
    beat(14_000, k2, epoch=-1)  # leaves
    beat(15_000, k1)
    return [group_event_line(e) for e in events]
