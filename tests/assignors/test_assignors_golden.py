"""Worked examples of the legacy consumer's range and round-robin assignors and Kafka's own assignor tests, as
golden cases.

Exact lists where Kafka's tests compare lists, sets where they compare sets. Rack-aware cases (RA1 with
racks, RA3, C5, C6) and the server-side KIP-848 assignors (K1, K2) are not modelled and not here; the
non-rack halves of RA1/RA2 are.
"""

from __future__ import annotations

import itertools

import pytest

from zkconsumer.assignors import AssignmentError, AssignmentInput, Member, TopicPartition, create
from zkconsumer.assignors.cooperative_sticky import cooperative_rounds
from zkconsumer.assignors.java_hash import java_hashmap_order, java_sorted, java_string_hash
from zkconsumer.assignors.registry import StrategyOptions
from zkconsumer.assignors.scenario import scenario_from_json
from zkconsumer.assignors.sticky import sticky_assign


def request(partitions: dict, members: dict) -> AssignmentInput:
    return scenario_from_json({"partitions": partitions, "members": members}).request


def subs(*topics: str, owned: tuple = (), generation: int | None = 1, instance: str | None = None) -> dict:
    spec: dict = {"topics": list(topics), "owned": [list(tp) for tp in owned]}
    if generation is not None:
        spec["generation"] = generation
    if instance is not None:
        spec["group_instance_id"] = instance
    return spec


def lists(strategy: str, req: AssignmentInput, **options) -> dict[str, list[str]]:
    result = create(strategy, StrategyOptions(**options)).assign(req)
    return {owner: [str(tp) for tp in parts] for owner, parts in result.assignment.items()}


def sets(strategy: str, req: AssignmentInput) -> dict[str, set[str]]:
    return {owner: set(parts) for owner, parts in lists(strategy, req).items()}


def tps(*names: str) -> tuple[tuple[str, int], ...]:
    return tuple((n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])) for n in names)


# ---------------------------------------------------------------- Java details the assignors depend on


def test_java_string_hash_matches_the_spec_value() -> None:
    assert java_string_hash("[t1,0]") == -1581082495
    assert java_string_hash("") == 0
    # A character outside the BMP is hashed as its two UTF-16 surrogates.
    assert java_string_hash("\U0001F600") == 31 * 0xD83D + 0xDE00


def test_java_string_order_puts_surrogates_below_the_end_of_the_bmp() -> None:
    assert java_sorted(["\uffff", "\U0001F600", "a"]) == ["a", "\U0001F600", "\uffff"]
    assert java_sorted(["c-2", "c-10"]) == ["c-10", "c-2"]


def test_java_hashmap_order_matches_the_spec_examples() -> None:
    assert java_hashmap_order(["consumer1", "consumer2", "consumer3", "consumer4"]) == [
        "consumer4", "consumer3", "consumer2", "consumer1"]
    assert java_hashmap_order(["topic", "topic1", "topic2", "topic3"]) == ["topic1", "topic2", "topic3", "topic"]


# ---------------------------------------------------------------- legacy (0.10.0.1's range and roundrobin)


def legacy(partitions: dict, streams: dict[str, dict[str, int]]) -> AssignmentInput:
    return request(partitions, {m: {"streams": s} for m, s in streams.items()})


def test_legacy_range_doc_example() -> None:  # 7.2 case 1, the PartitionAssignor.scala example
    assert lists("legacy-range", legacy({"t": 5}, {"C1": {"t": 2}, "C2": {"t": 2}})) == {
        "C1-0": ["t-0", "t-1"], "C1-1": ["t-2"], "C2-0": ["t-3"], "C2-1": ["t-4"]}


def test_legacy_range_one_stream_each() -> None:  # 7.2 case 2
    req = legacy({"topic1": 2}, {"group1_consumer1": {"topic1": 1}, "group1_consumer2": {"topic1": 1}})
    assert lists("legacy-range", req) == {"group1_consumer1-0": ["topic1-0"], "group1_consumer2-0": ["topic1-1"]}


def test_legacy_range_more_threads_than_partitions() -> None:  # 7.2 case 3
    assert lists("legacy-range", legacy({"t": 3}, {"g_a": {"t": 3}, "g_b": {"t": 2}})) == {
        "g_a-0": ["t-0"], "g_a-1": ["t-1"], "g_a-2": ["t-2"], "g_b-0": [], "g_b-1": []}


def test_legacy_range_orders_threads_as_strings() -> None:  # 7.2 case 4
    result = lists("legacy-range", legacy({"t": 12}, {"g_c": {"t": 12}}))
    order = ["g_c-0", "g_c-1", "g_c-10", "g_c-11"] + [f"g_c-{n}" for n in range(2, 10)]
    assert list(result) == order
    assert [result[thread] for thread in order] == [[f"t-{p}"] for p in range(12)]


def test_legacy_roundrobin_small_names_follow_partition_order() -> None:  # small topic names: partition order
    req = legacy({"t1": 3, "t2": 3}, {"g_c1": {"t1": 2, "t2": 2}, "g_c2": {"t1": 2, "t2": 2}})
    assert lists("legacy-roundrobin", req) == {
        "g_c1-0": ["t1-0", "t2-1"], "g_c1-1": ["t1-1", "t2-2"], "g_c2-0": ["t1-2"], "g_c2-1": ["t2-0"]}


def test_legacy_roundrobin_hash_order_wraps_two_digit_partitions() -> None:  # 7.2 case 6
    req = legacy({"topic1": 12}, {c: {"topic1": 1} for c in ("g_c1", "g_c2", "g_c3")})
    dealt = [10, 11] + list(range(10))
    threads = ["g_c1-0", "g_c2-0", "g_c3-0"]
    expected = {t: [f"topic1-{p}" for k, p in enumerate(dealt) if k % 3 == i] for i, t in enumerate(threads)}
    assert lists("legacy-roundrobin", req) == expected


def test_legacy_roundrobin_rejects_different_topics_naming_the_member() -> None:  # 7.2 case 7
    with pytest.raises(AssignmentError, match="g_a does not subscribe to t2"):
        create("legacy-roundrobin").assign(legacy({"t1": 1, "t2": 1}, {"g_a": {"t1": 1}, "g_b": {"t1": 1, "t2": 1}}))


def test_legacy_roundrobin_rejects_uneven_stream_counts_of_one_consumer() -> None:
    with pytest.raises(AssignmentError, match=r"g_b has different stream counts \(t1: 1, t2: 2\)"):
        create("legacy-roundrobin").assign(legacy({"t1": 1, "t2": 1}, {"g_a": {"t1": 1, "t2": 1},
                                                                       "g_b": {"t1": 1, "t2": 2}}))


def test_legacy_roundrobin_allows_different_counts_between_consumers() -> None:  # 7.2 case 8
    req = legacy({"t1": 3, "t2": 3}, {"g_a": {"t1": 1, "t2": 1}, "g_b": {"t1": 3, "t2": 3}})
    assert lists("legacy-roundrobin", req) == {
        "g_a-0": ["t1-0", "t2-1"], "g_b-0": ["t1-1", "t2-2"], "g_b-1": ["t1-2"], "g_b-2": ["t2-0"]}


def test_legacy_roundrobin_allows_a_consumer_without_subscription() -> None:
    req = legacy({"t": 2}, {"a": {"t": 1}, "b": {"t": 1}})
    req = AssignmentInput(req.partitions, req.members + (Member("idle", streams={}),))
    assert lists("legacy-roundrobin", req) == {"a-0": ["t-0"], "b-0": ["t-1"]}


def _independent_java_hash(s: str) -> int:
    units = s.encode("utf-16-be")
    h = sum((units[i] << 8 | units[i + 1]) * pow(31, len(units) // 2 - 1 - i // 2, 2**32)
            for i in range(0, len(units), 2)) % 2**32
    return h - 2**32 if h >= 2**31 else h


@pytest.mark.parametrize("hash_format, form", [("bracket", "[{},{}]"), ("dash", "{}-{}")])
def test_legacy_roundrobin_hash_formats(hash_format: str, form: str) -> None:
    req = legacy({"orders": 15, "ü-payments": 4}, {"g_x": {"orders": 1, "ü-payments": 1}})
    order = sorted(((t, p) for t, n in (("orders", 15), ("ü-payments", 4)) for p in range(n)),
                   key=lambda tp: _independent_java_hash(form.format(*tp)))
    assert lists("legacy-roundrobin", req, roundrobin_hash=hash_format) == {"g_x-0": [f"{t}-{p}" for t, p in order]}


def test_legacy_topic_only_member_runs_one_stream_per_topic() -> None:
    req = request({"t0": 3, "t1": 2}, {"group1_c1": {"streams": {"t0": 2, "t1": 1}}, "c2": {"topics": ["t0", "t1"]}})
    assert lists("legacy-range", req) == {
        "c2-0": ["t0-0", "t1-0"], "group1_c1-0": ["t0-1", "t1-1"], "group1_c1-1": ["t0-2"]}


# ---------------------------------------------------------------- RangeAssignor (R1-R10, RA1/RA2 without racks)


@pytest.mark.parametrize("partitions, topics", [({}, []), ({}, ["topic1"])])
def test_r1_r2_member_present_without_partitions(partitions: dict, topics: list) -> None:
    assert lists("range", request(partitions, {"consumer1": subs(*topics)})) == {"consumer1": []}


def test_r3_r4_one_consumer() -> None:
    assert sets("range", request({"topic1": 3, "other": 3}, {"consumer1": subs("topic1")})) == {
        "consumer1": {"topic1-0", "topic1-1", "topic1-2"}}
    assert sets("range", request({"topic1": 1, "topic2": 2}, {"consumer1": subs("topic1", "topic2")})) == {
        "consumer1": {"topic1-0", "topic2-0", "topic2-1"}}


@pytest.mark.parametrize("count, expected", [(1, {"consumer1": ["topic1-0"], "consumer2": []}),
                                             (2, {"consumer1": ["topic1-0"], "consumer2": ["topic1-1"]})])
def test_r5_more_consumers_than_partitions(count: int, expected: dict) -> None:
    req = request({"topic1": count}, {"consumer1": subs("topic1"), "consumer2": subs("topic1")})
    assert lists("range", req) == expected


MIXED = ({"topic1": 3, "topic2": 2},
         {"consumer1": subs("topic1"), "consumer2": subs("topic1", "topic2"), "consumer3": subs("topic1")})


def test_r6_mixed_subscriptions() -> None:
    assert sets("range", request(*MIXED)) == {
        "consumer1": {"topic1-0"}, "consumer2": {"topic1-1", "topic2-0", "topic2-1"}, "consumer3": {"topic1-2"}}


def test_r7_remainder_goes_to_the_first_members() -> None:
    req = request({"topic1": 3, "topic2": 3}, {"consumer1": subs("topic1", "topic2"),
                                               "consumer2": subs("topic1", "topic2")})
    assert sets("range", req) == {"consumer1": {"topic1-0", "topic1-1", "topic2-0", "topic2-1"},
                                  "consumer2": {"topic1-2", "topic2-2"}}


@pytest.mark.parametrize("instance_a", ["instance2", None])
def test_r8_static_members_first_by_instance_id(instance_a: str | None) -> None:
    req = request({"topic1": 3, "topic2": 3}, {
        "consumer-b": subs("topic1", "topic2", instance="instance1"),
        "consumer-a": subs("topic1", "topic2", instance=instance_a)})
    result = lists("range", req)
    assert len(result["consumer-b"]) == 4 and len(result["consumer-a"]) == 2


def test_r9_static_persistence() -> None:
    members = {f"consumer{i}": subs("topic1", "topic2", instance=f"instance{i}") for i in (1, 2, 3)}
    expected = {"consumer1": ["topic1-0", "topic1-1", "topic2-0"], "consumer2": ["topic1-2", "topic2-1"],
                "consumer3": ["topic1-3", "topic2-2"]}
    for dynamic in ("consumer4", "consumer5"):
        req = request({"topic1": 5, "topic2": 4}, {**members, dynamic: subs("topic1", "topic2")})
        assert lists("range", req) == {**expected, dynamic: ["topic1-4", "topic2-3"]}


@pytest.mark.parametrize("strategy, expected", [
    ("range", {"instance1": {"topic1-0", "topic1-1", "topic2-0", "topic2-1"},
               "instance2": {"topic1-2", "topic1-3", "topic2-2", "topic2-3"}, "instance3": {"topic1-4", "topic2-4"}}),
    ("roundrobin", {"instance1": {"topic1-0", "topic1-3", "topic2-1", "topic2-4"},
                    "instance2": {"topic1-1", "topic1-4", "topic2-2"},
                    "instance3": {"topic1-2", "topic2-0", "topic2-3"}}),
])
def test_r10_rr7_member_id_churn_with_static_ids(strategy: str, expected: dict) -> None:  # R10, RR7
    for ids in (("consumer1", "consumer2", "consumer3"), ("consumer1", "consumer5", "consumer4")):
        instances = {m: f"instance{i}" for i, m in enumerate(ids, 1)}
        members = {m: subs("topic1", "topic2", instance=i) for m, i in instances.items()}
        req = request({"topic1": 5, "topic2": 5}, members)
        assert {instances[m]: parts for m, parts in sets(strategy, req).items()} == expected


def _joined(result: dict[str, list[str]]) -> list[str]:
    return [", ".join(sorted(parts)) for _, parts in sorted(result.items())]


def test_ra1_ra2_uniform_subscription_without_racks() -> None:
    three = {f"consumer{i}": subs("t1", "t2", "t3") for i in range(3)}
    assert _joined(lists("range", request({"t1": 6, "t2": 7, "t3": 2}, three))) == [
        "t1-0, t1-1, t2-0, t2-1, t2-2, t3-0", "t1-2, t1-3, t2-3, t2-4, t3-1", "t1-4, t1-5, t2-5, t2-6"]
    assert _joined(lists("range", request({"t1": 5, "t2": 5, "t3": 5}, three))) == [
        "t1-0, t1-1, t2-0, t2-1, t3-0, t3-1", "t1-2, t1-3, t2-2, t2-3, t3-2, t3-3", "t1-4, t2-4, t3-4"]


# ---------------------------------------------------------------- RoundRobinAssignor (RR1-RR7)


def test_rr1_a_lone_consumer_gets_every_partition_in_order() -> None:
    assert lists("roundrobin", request({}, {"consumer1": subs()})) == {"consumer1": []}
    assert lists("roundrobin", request({}, {"consumer1": subs("topic")})) == {"consumer1": []}
    assert lists("roundrobin", request({"topic": 3}, {"consumer1": subs("topic")})) == {
        "consumer1": ["topic-0", "topic-1", "topic-2"]}
    assert lists("roundrobin", request({"topic1": 1, "topic2": 2}, {"consumer1": subs("topic1", "topic2")})) == {
        "consumer1": ["topic1-0", "topic2-0", "topic2-1"]}


def test_rr2_interleaving_and_rr5_static_ordering() -> None:
    both = subs("topic1", "topic2")
    assert lists("roundrobin", request({"topic1": 3, "topic2": 3}, {"consumer1": both, "consumer2": both})) == {
        "consumer1": ["topic1-0", "topic1-2", "topic2-1"], "consumer2": ["topic1-1", "topic2-0", "topic2-2"]}
    req = request({"topic1": 3, "topic2": 3}, {"consumer-b": subs("topic1", "topic2", instance="instance1"),
                                               "consumer-a": subs("topic1", "topic2", instance="instance2")})
    assert lists("roundrobin", req) == {
        "consumer-b": ["topic1-0", "topic1-2", "topic2-1"], "consumer-a": ["topic1-1", "topic2-0", "topic2-2"]}


def test_rr3_mixed_subscriptions() -> None:
    assert lists("roundrobin", request(*MIXED)) == {
        "consumer1": ["topic1-0"], "consumer2": ["topic1-1", "topic2-0", "topic2-1"], "consumer3": ["topic1-2"]}


def test_rr4_unequal_subscriptions_range_roundrobin_and_sticky() -> None:
    req = request({"t0": 1, "t1": 2, "t2": 3}, {"C0": subs("t0"), "C1": subs("t0", "t1"), "C2": subs("t0", "t1", "t2")})
    expected = {"C0": ["t0-0"], "C1": ["t1-0"], "C2": ["t1-1", "t2-0", "t2-1", "t2-2"]}
    assert lists("roundrobin", req) == expected
    assert lists("range", req) == expected
    assert lists("sticky", req) == {"C0": ["t0-0"], "C1": ["t1-0", "t1-1"], "C2": ["t2-0", "t2-1", "t2-2"]}


@pytest.mark.parametrize("dynamic", ["consumer4", "consumer5"])
def test_rr6_static_and_dynamic(dynamic: str) -> None:
    members = {f"consumer{i}": subs("topic1", "topic2", instance=f"instance{i}") for i in (1, 2, 3)}
    req = request({"topic1": 3, "topic2": 3}, {**members, dynamic: subs("topic1", "topic2")})
    assert lists("roundrobin", req) == {"consumer1": ["topic1-0", "topic2-1"], "consumer2": ["topic1-1", "topic2-2"],
                                        "consumer3": ["topic1-2"], dynamic: ["topic2-0"]}


# ---------------------------------------------------------------- sticky assignors (S1-S24, C1, C2)

STICKY = ["sticky", "cooperative-sticky"]


def transfers(req: AssignmentInput) -> dict[str, str] | None:
    outcome = sticky_assign(req)
    return None if outcome.transferring is None else {str(k): v for k, v in outcome.transferring.items()}


def rounds(req: AssignmentInput) -> list[dict[str, list[str]]]:
    return [{m: [str(tp) for tp in parts] for m, parts in r.assignment.assignment.items()}
            for r in cooperative_rounds(req)]


@pytest.mark.parametrize("strategy", STICKY)
def test_s1_mixed_subscriptions_take_the_general_path(strategy: str) -> None:
    req = request(*MIXED)
    assert lists(strategy, req) == {
        "consumer1": ["topic1-0", "topic1-2"], "consumer2": ["topic2-0", "topic2-1"], "consumer3": ["topic1-1"]}
    assert transfers(req) is None


@pytest.mark.parametrize("strategy", STICKY)
def test_s2_fresh_equal_subscriptions(strategy: str) -> None:
    both = subs("topic1", "topic2")
    req = request({"topic1": 3, "topic2": 3}, {"consumer1": both, "consumer2": both})
    assert lists(strategy, req) == {
        "consumer1": ["topic1-0", "topic1-2", "topic2-1"], "consumer2": ["topic1-1", "topic2-0", "topic2-2"]}
    assert transfers(req) == {}


@pytest.mark.parametrize("strategy", STICKY)
def test_s3_owner_at_min_quota_gets_the_extra_one(strategy: str) -> None:
    req = request({"topic1": 2, "topic2": 3}, {
        "consumer1": subs("topic1", "topic2", owned=tps("topic1-0", "topic2-1")),
        "consumer2": subs("topic1", "topic2", owned=tps("topic1-1", "topic2-2"))})
    assert lists(strategy, req) == {"consumer1": ["topic1-0", "topic2-1", "topic2-0"],
                                    "consumer2": ["topic1-1", "topic2-2"]}
    assert transfers(req) == {}


def test_s4_more_max_quota_owners_than_slots() -> None:
    req = request({"topic1": 2, "topic2": 2}, {
        "consumer1": subs("topic1", "topic2", owned=tps("topic1-0", "topic2-0")),
        "consumer2": subs("topic1", "topic2", owned=tps("topic1-1", "topic2-1")),
        "consumer3": subs("topic1", "topic2")})
    assert transfers(req) == {"topic2-0": "consumer3"}
    final = {"consumer1": ["topic1-0"], "consumer2": ["topic1-1", "topic2-1"], "consumer3": ["topic2-0"]}
    assert lists("sticky", req) == final
    assert rounds(req) == [{**final, "consumer3": []}, final]


@pytest.mark.parametrize("strategy", STICKY)
def test_s5_all_under_min_quota(strategy: str) -> None:
    req = request({"topic1": 2, "topic2": 3}, {
        "consumer1": subs("topic1", "topic2", owned=tps("topic1-0")),
        "consumer2": subs("topic1", "topic2", owned=tps("topic1-1")),
        "consumer3": subs("topic1", "topic2")})
    assert lists(strategy, req) == {"consumer1": ["topic1-0", "topic2-1"], "consumer2": ["topic1-1", "topic2-2"],
                                    "consumer3": ["topic2-0"]}
    assert transfers(req) == {}


def test_s6_c1_add_then_remove_a_member() -> None:
    alone = request({"topic": 3}, {"consumer1": subs("topic")})
    assert lists("sticky", alone) == {"consumer1": ["topic-0", "topic-1", "topic-2"]}
    joined = request({"topic": 3}, {"consumer1": subs("topic", owned=tps("topic-0", "topic-1", "topic-2")),
                                    "consumer2": subs("topic")})
    assert transfers(joined) == {"topic-2": "consumer2"}
    final = {"consumer1": ["topic-0", "topic-1"], "consumer2": ["topic-2"]}
    assert lists("sticky", joined) == final
    assert rounds(joined) == [{"consumer1": ["topic-0", "topic-1"], "consumer2": []}, final]  # C1
    left = request({"topic": 3}, {"consumer2": subs("topic", owned=tps("topic-2"))})
    assert sets("sticky", left) == {"consumer2": {"topic-0", "topic-1", "topic-2"}}
    assert transfers(left) == {}


def test_s7_c2_add_two_then_remove_two() -> None:
    partitions = {"topic1": 3, "topic2": 4}
    both = subs("topic1", "topic2")
    assert lists("sticky", request(partitions, {"consumer1": both, "consumer2": both})) == {
        "consumer1": ["topic1-0", "topic1-2", "topic2-1", "topic2-3"],
        "consumer2": ["topic1-1", "topic2-0", "topic2-2"]}
    grown = request(partitions, {
        "consumer1": subs("topic1", "topic2", owned=tps("topic1-0", "topic1-2", "topic2-1", "topic2-3")),
        "consumer2": subs("topic1", "topic2", owned=tps("topic1-1", "topic2-0", "topic2-2")),
        "consumer3": both, "consumer4": both})
    assert transfers(grown) == {"topic1-2": "consumer3", "topic2-3": "consumer3", "topic2-2": "consumer4"}
    final = {"consumer1": ["topic1-0", "topic2-1"], "consumer2": ["topic2-0", "topic1-1"],
             "consumer3": ["topic1-2", "topic2-3"], "consumer4": ["topic2-2"]}
    assert lists("sticky", grown) == final
    assert rounds(grown) == [{**final, "consumer3": [], "consumer4": []}, final]  # C2
    shrunk = request(partitions, {"consumer3": subs("topic1", "topic2", owned=tps("topic1-2", "topic2-3")),
                                  "consumer4": subs("topic1", "topic2", owned=tps("topic2-2"))})
    assert lists("sticky", shrunk) == {"consumer3": ["topic1-2", "topic2-3", "topic1-0", "topic2-1"],
                                       "consumer4": ["topic2-2", "topic1-1", "topic2-0"]}
    assert transfers(shrunk) == {}


@pytest.mark.parametrize("count, consumer1", [(3, ["topic-1"]), (4, ["topic-1", "topic-3"])])
def test_s8_s9_doubly_claimed_partition_waits_under_cooperative(count: int, consumer1: list[str]) -> None:
    req = request({"topic": count}, {"consumer1": subs("topic", owned=tps("topic-0", "topic-1")),
                                     "consumer2": subs("topic", owned=tps("topic-0", "topic-2")),
                                     "consumer3": subs("topic")})
    assert transfers(req) == {"topic-0": "consumer3"}
    eager = {"consumer1": consumer1, "consumer2": ["topic-2"], "consumer3": ["topic-0"]}
    assert lists("sticky", req) == eager
    assert lists("cooperative-sticky", req) == {**eager, "consumer3": []}


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("stale", [9, None])
def test_s10_stale_generation_loses(strategy: str, stale: int | None) -> None:
    claimed = tps("topic-0", "topic-2", "topic2-1")
    req = request({"topic": 3, "topic2": 3}, {"consumer1": subs("topic", "topic2", owned=claimed, generation=10),
                                              "consumer2": subs("topic", "topic2", owned=claimed, generation=stale)})
    assert sets(strategy, req) == {"consumer1": {"topic-0", "topic-2", "topic2-1"},
                                   "consumer2": {"topic-1", "topic2-0", "topic2-2"}}
    assert transfers(req) == {}


@pytest.mark.parametrize("strategy", STICKY)
def test_s11_highest_generation_wins(strategy: str) -> None:
    topics = ("topic", "topic2", "topic3")
    req = request({t: 3 for t in topics}, {
        "consumer1": subs(*topics, owned=tps("topic-0", "topic2-0", "topic3-0"), generation=10),
        "consumer2": subs(*topics, owned=tps("topic-1", "topic2-1", "topic3-1"), generation=9),
        "consumer3": subs(*topics, owned=tps("topic2-1", "topic3-0", "topic3-2"), generation=8)})
    assert sets(strategy, req) == {"consumer1": {"topic-0", "topic2-0", "topic3-0"},
                                   "consumer2": {"topic-1", "topic2-1", "topic3-1"},
                                   "consumer3": {"topic-2", "topic2-2", "topic3-2"}}


@pytest.mark.parametrize("strategy", STICKY)
def test_s12_no_reassignment_of_current_members(strategy: str) -> None:
    topics = ("topic", "topic1", "topic2", "topic3")
    req = request({t: 3 for t in topics}, {
        "consumer1": subs(*topics, generation=None),
        "consumer2": subs(*topics, owned=tps("topic-0", "topic2-0", "topic1-0"), generation=9),
        "consumer3": subs(*topics, owned=tps("topic3-2", "topic2-2", "topic1-1"), generation=8),
        "consumer4": subs(*topics, owned=tps("topic3-1", "topic-1", "topic-2"), generation=7)})
    assert sets(strategy, req)["consumer1"] == {"topic1-2", "topic2-1", "topic3-0"}
    assert transfers(req) == {}


@pytest.mark.parametrize("strategy", STICKY)
def test_s13_multiple_generations_partial_overlap(strategy: str) -> None:
    req = request({"topic": 3, "topic2": 3}, {
        "consumer1": subs("topic", "topic2", owned=tps("topic-0", "topic2-1", "topic-1"), generation=10),
        "consumer2": subs("topic", "topic2", owned=tps("topic-0", "topic2-1", "topic2-2"), generation=8)})
    assert sets(strategy, req) == {"consumer1": {"topic-0", "topic2-1", "topic-1"},
                                   "consumer2": {"topic-2", "topic2-2", "topic2-0"}}


@pytest.mark.parametrize("strategy", STICKY)
def test_s14_everyone_reaches_quota(strategy: str) -> None:
    req = request({"topic": 4}, {"consumer1": subs("topic", owned=tps("topic-0", "topic-1")),
                                 "consumer2": subs("topic", owned=tps("topic-2")), "consumer3": subs("topic")})
    assert lists(strategy, req) == {"consumer1": ["topic-0", "topic-1"], "consumer2": ["topic-2"],
                                    "consumer3": ["topic-3"]}
    assert transfers(req) == {}


@pytest.mark.parametrize("strategy", STICKY)
def test_s15_owned_partitions_of_unknown_topics_are_dropped(strategy: str) -> None:
    owned = tuple(TopicPartition(t, p) for t in ("topic", "other") for p in (0, 1))
    req = AssignmentInput({"topic": 2}, (Member("consumer", topics=("topic",), owned=owned, generation=1),))
    assert lists(strategy, req) == {"consumer": ["topic-0", "topic-1"]}


@pytest.mark.parametrize("strategy", STICKY)
def test_s16_stickiness_when_a_member_leaves(strategy: str) -> None:
    first = lists(strategy, request({"topic1": 3}, {f"consumer{i}": subs("topic1") for i in range(1, 5)}))
    assert all(len(parts) <= 1 for parts in first.values())
    second = lists(strategy, request({"topic1": 3}, {m: subs("topic1", owned=tps(*first[m]))
                                                     for m in ("consumer2", "consumer3", "consumer4")}))
    assert all(len(parts) == 1 for parts in second.values())
    assert all(set(first[m]) <= set(second[m]) for m in second)


@pytest.mark.parametrize("strategy", STICKY)
def test_s17_add_and_remove_a_topic(strategy: str) -> None:
    one = lists(strategy, request({"topic": 3}, {"consumer1": subs("topic"), "consumer2": subs("topic")}))
    assert sorted(map(len, one.values())) == [1, 2]
    partitions = {"topic": 3, "topic2": 3}
    two = lists(strategy, request(partitions, {m: subs("topic", "topic2", owned=tps(*one[m])) for m in one}))
    assert all(len(parts) == 3 and set(one[m]) <= set(parts) for m, parts in two.items())
    req = request(partitions, {m: subs("topic2", owned=tps(*two[m])) for m in two})
    three = {m: parts for m, parts in rounds(req)[-1].items()} if strategy == "cooperative-sticky" else lists(
        strategy, req)
    assert sorted(map(len, three.values())) == [1, 2]
    assert all(set(three[m]) <= set(two[m]) for m in three)


@pytest.mark.parametrize("strategy", STICKY)
def test_s18_poor_round_robin_scenario(strategy: str) -> None:
    all_five = subs("topic1", "topic2", "topic3", "topic4", "topic5")
    odd = subs("topic1", "topic3", "topic5")
    req = request({"topic1": 2, "topic2": 1, "topic3": 2, "topic4": 1, "topic5": 2},
                  {"consumer1": all_five, "consumer2": odd, "consumer3": odd, "consumer4": all_five})
    assert lists(strategy, req) == {"consumer1": ["topic2-0", "topic3-0"], "consumer2": ["topic1-0", "topic3-1"],
                                    "consumer3": ["topic1-1", "topic5-0"], "consumer4": ["topic4-0", "topic5-1"]}


def assert_valid_and_balanced(req: AssignmentInput, result: dict[str, list[str]]) -> None:
    """Kafka's verifyValidityAndBalance plus its isBalanced condition."""
    members = {m.member_id: m for m in req.members}
    assert set(result) == set(members)
    owners: dict[str, str] = {}
    for member, parts in result.items():
        for tp in parts:
            assert tp.rsplit("-", 1)[0] in members[member].subscription
            assert owners.setdefault(tp, member) == member
    topics = {t for m in req.members for t in m.subscription}
    expected = {f"{t}-{p}" for t in topics for p in range(req.partition_count(t))}
    assert set(owners) == expected
    for small, large in itertools.permutations(result, 2):
        if len(result[large]) - len(result[small]) >= 2:
            assert not any(tp.rsplit("-", 1)[0] in members[small].subscription for tp in result[large])


def assert_no_two_cycles(before: dict[str, list[str]], after: dict[str, list[str]]) -> None:
    """Kafka's isSticky: no topic has partitions moving both A -> B and B -> A in one rebalance."""
    old_owner = {tp: m for m, parts in before.items() for tp in parts}
    moves = {(tp.rsplit("-", 1)[0], old_owner[tp], m) for m, parts in after.items() for tp in parts
             if old_owner.get(tp, m) != m}
    assert not any((topic, dst, src) in moves for topic, src, dst in moves)


@pytest.mark.parametrize("strategy", STICKY)
def test_s19_one_of_nineteen_unequal_members_leaves(strategy: str) -> None:
    partitions = {f"t{i:02d}": i for i in range(1, 20)}
    members = {f"c{i:02d}": subs(*[f"t{j:02d}" for j in range(1, i + 1)]) for i in range(1, 20)}
    first = lists(strategy, request(partitions, members))
    assert_valid_and_balanced(request(partitions, members), first)
    del members["c10"]
    owned = {m: [list(tp) for tp in tps(*first[m])] for m in members}
    req = request(partitions, {m: {**spec, "owned": owned[m]} for m, spec in members.items()})
    second = rounds(req)[-1] if strategy == "cooperative-sticky" else lists(strategy, req)
    assert_valid_and_balanced(req, second)
    assert_no_two_cycles(first, second)


@pytest.mark.parametrize("strategy", STICKY)
@pytest.mark.parametrize("generations", list(itertools.permutations([1, 2, 3])))
def test_s21_three_generation_conflict_matrix(strategy: str, generations: tuple[int, ...]) -> None:
    owned = [tps("topic-0", "topic-2"), tps("topic-1", "topic-2", "topic-3"), tps("topic-2", "topic-4", "topic-5")]
    members = {f"consumer{i + 1}": subs("topic", owned=owned[i], generation=g) for i, g in enumerate(generations)}
    members["consumer4"] = subs("topic1", owned=tps("topic1-0"), generation=2)
    result = lists(strategy, request({"topic": 6, "topic1": 1}, members))
    everything = [tp for parts in result.values() for tp in parts]
    assert len(everything) == len(set(everything))
    assert all(1 <= len(parts) <= 2 for parts in result.values())


@pytest.mark.parametrize("strategy", STICKY)
def test_s22_owned_partitions_kept(strategy: str) -> None:
    req = request({"topic1": 3}, {"consumer1": subs("topic1", owned=tps("topic1-0"), generation=None),
                                  "consumer2": subs("topic1", owned=tps("topic1-1")), "consumer3": subs("topic1")})
    assert lists(strategy, req) == {"consumer1": ["topic1-0"], "consumer2": ["topic1-1"], "consumer3": ["topic1-2"]}


def test_s24_multiple_generations() -> None:
    partitions = {"topic": 6, "topic2": 6}
    both = subs("topic", "topic2")
    first = lists("sticky", request(partitions, {f"consumer{i}": both for i in (1, 2, 3)}))
    assert sorted(map(len, first.values())) == [4, 4, 4]
    alone = lists("sticky", request(partitions, {"consumer2": subs("topic", "topic2", owned=tps(*first["consumer2"]))}))
    assert len(alone["consumer2"]) == 12 and set(first["consumer2"]) <= set(alone["consumer2"])
    back = request(partitions, {
        "consumer1": subs("topic", "topic2", owned=tps(*first["consumer1"]), generation=1),
        "consumer2": subs("topic", "topic2", owned=tps(*alone["consumer2"]), generation=2),
        "consumer3": subs("topic", "topic2", owned=tps(*first["consumer3"]), generation=1)})
    third = lists("sticky", back)
    assert sorted(map(len, third.values())) == [4, 4, 4]
    assert_valid_and_balanced(back, third)
