"""Hand-made traces with a group coordinator's events, as the front logs them (JSON lines: ``event``, ``timestamp``,
``level``, the group in ``group``, the event's fields), beside the members' own events.

``classic_story()``: a classic group ``g`` of members ``g_m1``, ``g_m2``, ``g_m3`` (their client ids, as a modern
member of this project sets them): an empty group's first round with the initial delay extended once, a third
member joining a stable group, a member expiring, a member leaving. ``consumer_story()``: a KIP-848 group ``k``
through two group epochs. Every time is in seconds after ``T0``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
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
    """A KIP-848 group: a member joins (epoch 1), a second joins (epoch 2: a partition revoked from the first
    before the second gets it), the second is fenced."""
    return [
        consumer("created", 1.0),
        consumer("member_joined", 1.0, member_id="k1-id", client_id="k_m1", member_epoch=0,
                 subscribed_topics=["t"]),
        consumer("epoch_bumped", 1.0, group_epoch=1, reason="member k_m1 joined"),
        consumer("state_changed", 1.0, group_epoch=1, **{"from": "EMPTY", "to": "ASSIGNING"}),
        consumer("target_assignment_computed", 1.0, group_epoch=1, assignor="uniform",
                 members=[{"member_id": "k1-id", "partitions": [{"topic": "t", "partition": 0}]}]),
        consumer("state_changed", 1.0, group_epoch=1, **{"from": "ASSIGNING", "to": "RECONCILING"}),
        consumer("partitions_assigned", 1.1, member_id="k1-id", partitions=[{"topic": "t", "partition": 0}]),
        consumer("member_epoch_advanced", 1.1, member_id="k1-id", member_epoch=1, previous_epoch=0),
        consumer("state_changed", 1.1, group_epoch=1, **{"from": "RECONCILING", "to": "STABLE"}),
        consumer("member_joined", 7.0, member_id="k2-id", client_id="k_m2", member_epoch=0,
                 subscribed_topics=["t"]),
        consumer("epoch_bumped", 7.0, group_epoch=2, reason="member k_m2 joined"),
        consumer("state_changed", 7.0, group_epoch=2, **{"from": "STABLE", "to": "ASSIGNING"}),
        consumer("target_assignment_computed", 7.0, group_epoch=2, assignor="uniform",
                 members=["k1-id", "k2-id"]),
        consumer("state_changed", 7.0, group_epoch=2, **{"from": "ASSIGNING", "to": "RECONCILING"}),
        consumer("partitions_revoked", 7.5, member_id="k1-id", partitions=[{"topic": "t", "partition": 0}]),
        consumer("partitions_assigned", 9.0, member_id="k2-id", partitions=[{"topic": "t", "partition": 0}]),
        consumer("state_changed", 9.0, group_epoch=2, **{"from": "RECONCILING", "to": "STABLE"}),
        consumer("member_fenced", 14.0, member_id="k2-id", member_epoch=2, reason="unknown member epoch",
                 level="warning"),
    ]
