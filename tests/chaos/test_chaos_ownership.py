"""Ownership read from the members' events (tenures), and the deliveries measured against it: overlaps, stale
deliveries after a pause, late deliveries, partitions nobody fetches. Hand-made timelines, every number worked out
by hand."""

from __future__ import annotations

import json
import math

import pytest
from hand_made_timelines import claim, end, event

from zkconsumer.chaos.late_deliveries import late_deliveries
from zkconsumer.chaos.overlaps import overlaps, stale_wakes
from zkconsumer.chaos.records import Delivery, FaultSpan, Pause, parse_deliveries
from zkconsumer.chaos.tenures import TENURE_ENDS, handovers, tenures
from zkconsumer.chaos.unfetched import unfetched_spans
from zkconsumer.trace.timeline import read_events


def test_a_quick_back_and_forth_of_ownership_is_no_overlap():
    """m0 -> m1 -> m0 on one partition within two seconds, each delivering while it owned it: reading the deliveries
    alone (Y..X..Y within 2 s) would call this a 1.5 s overlap."""
    t0 = tenures("m0", [claim(1.0, 0), end(3.0), claim(6.5, 0)], [], end_of_run=10.0)
    t1 = tenures("m1", [claim(3.5, 0), end(6.0)], [], end_of_run=10.0)
    deliveries = [Delivery(at, "t", 0, i, f"m{i}", member) for i, (at, member) in
                  enumerate([(1.5, "m0"), (2.9, "m0"), (3.6, "m1"), (5.9, "m1"), (6.6, "m0")])]
    assert [(t.start, t.end, t.ended_by) for t in t0] == [(1.0, 3.0, "rebalance.stop_fetchers"),
                                                           (6.5, 10.0, "end of run")]
    assert overlaps(t0 + t1, deliveries) == []
    assert handovers(t0 + t1) == 2
    assert late_deliveries(t0 + t1, deliveries) == []


def test_a_paused_owner_overlaps_until_it_notices_its_session_is_gone():
    paused = tenures("m0", [claim(1.0, 0, 1), end(20.0, "session.expired")], [], end_of_run=30.0)
    taker = tenures("m1", [claim(10.0, 0)], [], end_of_run=30.0)
    deliveries = [Delivery(10.5, "t", 0, 5, "a", "m1"), Delivery(19.0, "t", 0, 3, "b", "m0"),
                  Delivery(19.5, "t", 0, 4, "c", "m0"), Delivery(20.4, "t", 1, 9, "d", "m0")]
    [overlap] = overlaps(paused + taker, deliveries)
    assert (overlap.old, overlap.new, overlap.event_ms) == ("m0", "m1", 10000.0)
    assert round(overlap.delivery_ms) == 9000  # m0's last delivery (19.5) after m1's first (10.5)
    [late] = late_deliveries(paused + taker, deliveries)
    assert late.delivery.value == "d" and round(late.late_ms) == 400


def test_a_killed_owner_s_tenure_ends_with_its_process():
    killed = tenures("m0", [claim(1.0, 0), event("consumer.connected", 6.0), claim(7.0, 1)],
                     deaths=[4.0], end_of_run=9.0)
    assert [(t.partition, t.start, t.end, t.ended_by) for t in killed] == [(0, 1.0, 4.0, "death"),
                                                                          (1, 7.0, 9.0, "end of run")]
    taker = tenures("m1", [claim(4.5, 0)], [], end_of_run=9.0)
    assert overlaps(killed + taker, []) == []
    conflicted = event("rebalance.claim", 2.0, claimed=[], already_ours=[],
                       conflicts=[{"topic": "t", "partition": 0, "holder": "x"}])
    assert tenures("m2", [conflicted], [], end_of_run=9.0) == []


def test_a_member_woken_from_a_pause_is_live_again_only_from_its_sigcont_and_its_stale_deliveries_are_named():
    """m0 owns t/0 and is stopped at 5 s; its session expires and m1 claims t/0 at 10 s; m0 wakes at 12 s and hands
    out two messages it had fetched before the pause, then notices (session.expired at 12.05 s)."""
    m0 = tenures("m0", [claim(1.0, 0), end(12.05, "session.expired")], [], end_of_run=20.0)
    m1 = tenures("m1", [claim(10.0, 0)], [], end_of_run=20.0)
    deliveries = [Delivery(4.9, "t", 0, 9, "a", "m0"), Delivery(10.2, "t", 0, 10, "b", "m1"),
                  Delivery(12.01, "t", 0, 10, "b", "m0"), Delivery(12.02, "t", 0, 11, "c", "m0")]
    pauses = [Pause("m0", stopped=5.0, resumed=12.0)]
    [overlap] = overlaps(m0 + m1, deliveries, pauses)
    assert round(overlap.delivery_ms) == 20  # live from 12.0, last delivery at 12.02; not the 1.8 s since 10.2
    [wake] = stale_wakes(m0 + m1, deliveries, pauses)
    assert (wake.member, wake.deliveries, wake.partitions, round(wake.last_ms)) == ("m0", 2, ("t/0",), 20)
    untouched = tenures("m2", [claim(1.0, 1)], [], end_of_run=20.0)  # nobody claimed t/1 meanwhile
    assert stale_wakes(untouched, [Delivery(12.01, "t", 1, 3, "x", "m2")], [Pause("m2", 5.0, 12.0)]) == []


def test_a_partition_nobody_fetches_is_found_whoever_holds_its_owner_znode():
    ts = (tenures("m2", [claim(1.0, 3), end(18.4)], [], end_of_run=90.0)
          + tenures("m3", [claim(1.0, 4)], [], end_of_run=90.0))
    zk_down = [FaultSpan("zk-long", 18.6, 24.3)]
    spans = unfetched_spans(ts, [("t", 3), ("t", 4)], start=5.0, end=90.0, excused=zk_down)
    assert [(s.topic, s.partition, s.start, s.end) for s in spans] == [("t", 3, 18.4, 90.0)]
    assert round(spans[0].counted_s, 1) == round(90.0 - 18.4 - 5.7, 1)  # ZooKeeper's 5.7 s down are excused


@pytest.mark.parametrize("ending", TENURE_ENDS)
def test_each_event_that_stops_the_fetchers_ends_every_open_tenure(ending):
    [a, b] = tenures("m0", [claim(1.0, 0, 1), end(2.5, ending), event("consumer.connected", 3.0)], [], end_of_run=9.0)
    assert {(t.partition, t.end, t.ended_by) for t in (a, b)} == {(0, 2.5, ending), (1, 2.5, ending)}


def test_a_claim_that_failed_opens_no_tenure_and_one_already_ours_keeps_its_first_start():
    failed = event("rebalance.claim", 1.0, claimed=[{"topic": "t", "partition": 0}], already_ours=[], conflicts=[],
                   error="ConnectionLoss")
    again = event("rebalance.claim", 4.0, claimed=[], conflicts=[], already_ours=[{"topic": "t", "partition": "2"}])
    assert [(t.partition, t.start, t.end) for t in
            tenures("m0", [failed, claim(2.0, 2), again], [], end_of_run=9.0)] == [(2, 2.0, 9.0)]


def test_a_member_that_died_without_a_word_and_came_back_owns_nothing_in_between():
    """Killed at 3 s with t/0 claimed; the next process logs at 5 s and claims at 6 s; the last one is killed at 8 s."""
    ts = tenures("m0", [claim(1.0, 0), event("consumer.connected", 5.0), claim(6.0, 0)], deaths=[8.0, 3.0],
                 end_of_run=9.0)
    assert [(t.start, t.end, t.ended_by) for t in ts] == [(1.0, 3.0, "death"), (6.0, 8.0, "death")]
    [late] = late_deliveries(ts, [Delivery(4.0, "t", 0, 7, "x", "m0"), Delivery(7.0, "t", 0, 8, "y", "m0")])
    assert (late.delivery.value, round(late.late_ms)) == ("x", 1000)


def test_a_delivery_of_a_partition_its_member_never_owned_is_infinitely_late():
    [late] = late_deliveries(tenures("m0", [claim(1.0, 0)], [], end_of_run=9.0), [Delivery(2.0, "t", 5, 0, "x", "m0")])
    assert math.isinf(late.late_ms)


def test_handovers_count_only_changes_of_member():
    ts = (tenures("m0", [claim(1.0, 0), end(2.0), claim(3.0, 0), end(4.0)], [], end_of_run=9.0)
          + tenures("m1", [claim(5.0, 0)], [], end_of_run=9.0))
    assert handovers(ts) == 1  # m0, m0 again, then m1


def test_an_old_owner_that_stopped_in_time_is_an_overlap_of_events_only():
    """m0's fetcher stop comes 300 ms after m1's claim, but m0 delivered nothing after m1 began."""
    ts = (tenures("m0", [claim(1.0, 0), end(5.3)], [], end_of_run=9.0)
          + tenures("m1", [claim(5.0, 0)], [], end_of_run=9.0))
    deliveries = [Delivery(4.9, "t", 0, 1, "a", "m0"), Delivery(5.1, "t", 0, 2, "b", "m1")]
    [overlap] = overlaps(ts, deliveries)
    assert (overlap.event_ms, overlap.delivery_ms) == (300.0, 0.0)


def test_tenures_read_from_the_json_lines_a_member_logs():
    lines = [json.dumps({"event": "rebalance.claim", "timestamp": "2026-11-21T21:12:00.500000Z",
                         "claimed": [{"topic": "t", "partition": 0}], "already_ours": [], "conflicts": []}),
             '{"event": "rebalance.stop_fetchers", "timestamp": "2026-11-21T21:12:02.250000Z"}',
             '{"event": "consumer.shut']  # cut by SIGKILL
    [tenure] = tenures("m0", read_events(lines).events, [], end_of_run=0.0)
    assert tenure.end - tenure.start == pytest.approx(1.75)


def test_a_delivery_line_cut_by_sigkill_is_skipped():
    lines = ["1700000000.125 chaos-a 3 41 m7\n", "1700000000.250 chaos-b 1 9 m8\n", "1700000000.375 chaos-a 3 4"]
    assert parse_deliveries("m2", lines) == [Delivery(1700000000.125, "chaos-a", 3, 41, "m7", "m2"),
                                             Delivery(1700000000.25, "chaos-b", 1, 9, "m8", "m2")]
