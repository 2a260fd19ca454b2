"""The migration assertions' pure parts on hand-made data: order within a key (what counts as out of order, what is a
replay), committed against consumed, double ownership from the members' events and timed deliveries, the bound on
rebalances; the team's messages (their shapes, where each goes) and the deliveries lines in either format."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from zkconsumer.errors import UsageError
from zkconsumer.migration.measures import Delivery, Figures, Produced, measure
from zkconsumer.migration.messages import MessageSource, OutMessage, normalise, partition_for
from zkconsumer.migration.outcome import (
    ComparisonResult,
    committed_against_consumed,
    key_positions,
    out_of_order,
    outcome,
)
from zkconsumer.migration.run import delivery_of
from zkconsumer.trace.timeline import read_events

pytestmark = pytest.mark.migration

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
TOPIC = "t"
FIGURES = Figures(produced=0, delivered=0, lost=0, duplicates=0, rebalances=3, failed_attempts=0,
                  partition_seconds_paused=0.0, max_pause_ms=0.0, paused_partitions=0, moved_partitions=0,
                  settle_ms=0.0)


def line(second: float, name: str, **fields) -> str:
    stamp = (T0 + timedelta(seconds=second)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return json.dumps({"event": name, "timestamp": stamp, **fields})


def owned(member: str, *partitions: int) -> list[dict]:
    return [{"topic": TOPIC, "partition": p, "thread": member} for p in partitions]


def result_of(produced, deliveries, committed=None, double=(), rebalances=3) -> ComparisonResult:
    made = outcome("range", replace(FIGURES, rebalances=rebalances), produced, deliveries, (), (), None, Path("e"),
                   Path("s"), "zkconsumer 0.1.0 (the front)", committed,
                   None if committed is not None else "not read", double)
    return ComparisonResult({"range": made}, Path("r.json"), Path("r.html"))


# --- order within a key -------------------------------------------------------------------------------

def test_a_first_sight_after_a_later_message_of_its_key_is_out_of_order():
    assert out_of_order([("k", 0), ("k", 2), ("k", 1)]) == [(2, 2)]
    assert out_of_order([("a", 0), ("b", 5), ("a", 1), ("b", 6)]) == []  # keys are independent


def test_a_replay_of_a_suffix_is_not_out_of_order_nor_is_a_skip():
    # a rebalance replays from the committed offset (1), then goes on; a message skipped (3) is a loss, not disorder
    assert out_of_order([("k", 0), ("k", 1), ("k", 2), ("k", 1), ("k", 2), ("k", 4), ("k", 5)]) == []
    # but a replay followed by a message never seen that is older than one already seen is out of order
    assert out_of_order([("k", 0), ("k", 2), ("k", 0), ("k", 1)]) == [(3, 2)]


def keyed(*rows: tuple[str, int, int, str]) -> list[Produced]:
    return [Produced(value, partition, 1, offset, key, n) for n, (key, partition, offset, value) in enumerate(rows)]


PRODUCED = keyed(("a", 0, 0, "a1"), ("b", 1, 0, "b1"), ("a", 0, 1, "a2"), ("a", 0, 2, "a3"), ("b", 1, 1, "b2"))


def test_positions_follow_the_order_produced_per_key():
    positions = key_positions(PRODUCED)
    assert {m.value: n for m, n in positions.items()} == {"a1": 0, "a2": 1, "a3": 2, "b1": 0, "b2": 1}


def test_order_per_key_from_each_member_s_deliveries_names_the_first_message_out_of_order():
    in_order = [Delivery("m1", 0, 0, "a1"), Delivery("m1", 0, 1, "a2"), Delivery("m2", 0, 1, "a2"),
                Delivery("m2", 0, 2, "a3"), Delivery("m1", 1, 0, "b1"), Delivery("m1", 1, 1, "b2")]
    result_of(PRODUCED, in_order).assert_order_per_key()
    swapped = [Delivery("m1", 0, 0, "a1"), Delivery("m1", 0, 2, "a3"), Delivery("m1", 0, 1, "a2"),
               Delivery("m1", 1, 0, "b1"), Delivery("m1", 1, 1, "b2")]
    with pytest.raises(AssertionError) as failed:
        result_of(PRODUCED, swapped).assert_order_per_key()
    assert str(failed.value) == ("range (at zkconsumer 0.1.0 (the front)): its members delivered 1 message out of "
                                 "order within their key, first key 'a': partition 0 offset 1 after offset 2, by m1")


def test_timed_deliveries_are_one_sequence_over_the_members():
    """A new owner's first message of a key older than one the old owner handed over is out of order, which neither
    member's own sequence shows."""
    across = [Delivery("m1", 0, 0, "a1", 1.0), Delivery("m2", 0, 2, "a3", 2.0), Delivery("m1", 0, 1, "a2", 3.0)]
    with pytest.raises(AssertionError, match=r"first key 'a': partition 0 offset 1 after offset 2, by m1$"):
        result_of(PRODUCED, across).assert_order_per_key()
    handed_over = [Delivery("m1", 0, 0, "a1", 1.0), Delivery("m1", 0, 1, "a2", 2.0), Delivery("m2", 0, 1, "a2", 3.0),
                   Delivery("m2", 0, 2, "a3", 4.0)]  # the new owner replays from the committed offset, then goes on
    result_of(PRODUCED, handed_over).assert_order_per_key()


def test_order_per_key_from_the_application_s_state_sees_what_it_reordered():
    result = result_of(PRODUCED, [])
    result.assert_order_per_key(lambda _state: [(b"a", b"a1"), ("b", "b1"), ("a", "a2"), ("a", "a2"), ("a", "a3")])
    with pytest.raises(AssertionError) as failed:
        result.assert_order_per_key(lambda _state: [("a", "a3"), ("a", "a2"), ("a", "a1"), ("b", "b1")])
    assert str(failed.value).endswith("the application processed 2 messages out of order within their key, first "
                                      "key 'a': value 'a2' after value 'a3'")


# --- committed against consumed ----------------------------------------------------------------------

def test_committed_must_be_one_past_the_last_offset_delivered():
    delivered = [Delivery("m1", 0, 0, "a1"), Delivery("m1", 0, 2, "a3"), Delivery("m2", 0, 1, "a2"),
                 Delivery("m1", 1, 0, "b1")]
    assert committed_against_consumed({0: 3, 1: 1}, delivered) == []
    assert committed_against_consumed({0: 2, 2: 4}, delivered) == [
        "partition 0 2 committed, consumed up to offset 2 (3 expected)",
        "partition 1 nothing committed, consumed up to offset 0 (1 expected)",
        "partition 2 4 committed, nothing consumed"]
    with pytest.raises(AssertionError) as failed:
        result_of(PRODUCED, delivered, committed={0: 2, 1: 1}).assert_committed_equals_consumed()
    assert str(failed.value).endswith("committed other than it consumed on 1 partition: partition 0 2 committed, "
                                      "consumed up to offset 2 (3 expected)")
    with pytest.raises(AssertionError, match=r"its committed offsets could not be read \(not read\)$"):
        result_of(PRODUCED, delivered).assert_committed_equals_consumed()


# --- double ownership ---------------------------------------------------------------------------------

def handover(m2_claims_at: float) -> list[str]:
    """m1 holds 0 and 1; a cooperative rebalance moves 1 to m2: m1 releases it at 3.0, m2 gets it at
    ``m2_claims_at``."""
    return [line(0.0, "demo.scene", scene=1, title="one"),
            line(1.0, "rebalance.completed", consumer_id="m1", owned=owned("m1", 0, 1)),
            line(3.0, "rebalance.release", consumer_id="m1", released=owned("m1", 1)),
            line(3.0, "rebalance.completed", consumer_id="m1", owned=owned("m1", 0)),
            line(m2_claims_at, "rebalance.completed", consumer_id="m2", owned=owned("m2", 1)),
            line(9.0, "demo.draining")]


def measured(lines: list[str], deliveries: list[Delivery]):
    return measure("p", read_events(lines).events, [], deliveries, TOPIC)


def at(second: float) -> float:
    return (T0 + timedelta(seconds=second)).timestamp()


def test_a_handover_in_turn_with_deliveries_inside_each_holding_is_no_double_ownership():
    deliveries = [Delivery("m1", 1, 5, "x", at(2.9)), Delivery("m2", 1, 6, "y", at(3.6)),
                  Delivery("m1", 0, 9, "z", at(5.0)), Delivery("m1", 1, 7, "w")]  # untimed: not judged
    assert measured(handover(3.5), deliveries).double_ownership == ()


def test_a_member_given_a_partition_another_still_fetches_is_double_ownership():
    (found,) = measured(handover(2.0), []).double_ownership
    assert (found.partition, found.at, found.old, found.new, found.offset) == (1, 2.0, "m1", "m2", None)


def test_a_member_delivering_a_partition_after_it_gave_it_up_while_another_holds_it_is_double_ownership():
    deliveries = [Delivery("m1", 1, 5, "x", at(3.2)),  # after its release, before m2 holds it: nobody else held it
                  Delivery("m1", 1, 6, "y", at(4.25))]  # after m2 got it
    (found,) = measured(handover(4.0), deliveries).double_ownership
    assert (found.partition, found.at, found.old, found.new, found.offset) == (1, 4.25, "m2", "m1", 6)
    with pytest.raises(AssertionError) as failed:
        result_of(PRODUCED, [], double=(found,)).assert_no_double_ownership()
    assert str(failed.value) == ("range (at zkconsumer 0.1.0 (the front)) had partition 1 held by two members at once "
                                 "(1 times): first m1 delivered partition 1 offset 6 at 4.250 s, after its own "
                                 "fetching of it had ended, while m2 held it")


def test_rebalances_have_a_bound():
    result_of(PRODUCED, [], rebalances=3).assert_rebalances_at_most(3)
    with pytest.raises(AssertionError, match=r"^range \(at zkconsumer 0.1.0 \(the front\)\) rebalanced 3 times, "
                                             r"more than 2$"):
        result_of(PRODUCED, [], rebalances=3).assert_rebalances_at_most(2)


# --- the team's messages and the members' lines -----------------------------------------------------------

def test_messages_take_every_documented_shape_and_refuse_others_in_one_line():
    assert normalise(("k", "v"), 0) == OutMessage(b"k", b"v")
    assert normalise((None, b"\xff", {"h": "1"}), 1) == OutMessage(None, b"\xff", (("h", b"1"),))
    assert normalise((b"k", "v", [("h", b"2")]), 2).headers == (("h", b"2"),)
    for item, said in ((["k", "v"], "messages: message 3 is list, expected a tuple (key, value) or (key, value, "
                                    "headers)"),
                       (("k", 5), "messages: message 3: its value is int, expected bytes or str"),
                       (("k", "v", 7), "messages: message 3: its headers are not a mapping or (name, value) pairs")):
        with pytest.raises(UsageError) as refused:
            normalise(item, 3)
        assert str(refused.value) == said


def test_every_protocol_gets_message_n_the_same_drawn_once_until_they_end():
    calls = []

    def messages(n):
        calls.append(n)
        return (f"k{n % 2}", f"v{n}") if n < 3 else None

    source = MessageSource(messages)
    assert [source.get(n) for n in (0, 1, 0, 2, 1, 3, 4)] == [
        OutMessage(b"k0", b"v0"), OutMessage(b"k1", b"v1"), OutMessage(b"k0", b"v0"), OutMessage(b"k0", b"v2"),
        OutMessage(b"k1", b"v1"), None, None]
    assert calls == [0, 1, 2, 3] and source.error is None
    listed = MessageSource([("a", "1"), ("b", "2")])
    assert [listed.get(n) for n in range(3)] == [OutMessage(b"a", b"1"), OutMessage(b"b", b"2"), None]


def test_a_bad_message_stops_the_messages_and_is_said_a_bad_first_one_before_anything_starts():
    later = MessageSource(iter([("a", "1"), "oops"]))
    assert later.get(1) is None and later.error == ("messages: message 1 is str, expected a tuple (key, value) or "
                                                    "(key, value, headers)")
    with pytest.raises(UsageError, match="^messages: message 0: ZeroDivisionError: division by zero$"):
        MessageSource(lambda n: 1 / 0).check()


def test_one_key_s_messages_go_to_one_partition_and_keyless_ones_round_robin():
    message = OutMessage(b"order-7", b"")
    assert {partition_for(message, n, 4) for n in range(10)} == {partition_for(message, 0, 4)}
    assert [partition_for(OutMessage(None, b""), n, 3) for n in range(4)] == [0, 1, 2, 0]


def test_deliveries_lines_are_read_in_either_format_and_a_cut_line_is_left_out():
    assert delivery_of("m1", "2 17 orders:5 with spaces") == Delivery("m1", 2, 17, "orders:5 with spaces")
    assert delivery_of("m1", "1767323045.250 t 2 17 a b") == Delivery("m1", 2, 17, "a b", 1767323045.25)
    assert delivery_of("m1", "1767323045.250 t 2") is None and delivery_of("m1", "x y z") is None


def test_deliveries_are_matched_to_the_events_of_their_member_s_consumer_id_in_the_group():
    """A run's members are ``<member>`` in their deliveries files, ``<group>_<member>`` in their events."""
    lines = [x.replace('"consumer_id": "m', '"consumer_id": "g_m') for x in handover(4.0)]
    deliveries = [Delivery("m1", 1, 5, "x", at(2.0)), Delivery("m1", 1, 6, "y", at(4.25))]
    (found,) = measure("p", read_events(lines).events, [], deliveries, TOPIC, "g").double_ownership
    assert (found.old, found.new, found.offset) == ("m2", "m1", 6)
