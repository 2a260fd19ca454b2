"""Each invariant of the chaos run, applied by ``analyse`` to a hand-made run: held on a clean run, each broken on
its own, with its measure in the findings and the report."""

from __future__ import annotations

import json

from hand_made_timelines import claim, end, event

from zkconsumer.chaos.analysis import Limits, RunRecord, analyse
from zkconsumer.chaos.records import Delivery, FaultSpan, Pause
from zkconsumer.chaos.report import Report, verdict

LIMITS = Limits(overlap_ms=1500.0, unfetched_s=20.0)


def run(**changes) -> RunRecord:
    """m0 owns t/0 from 1 s to the end; the group formed at 5 s and was told to leave at 40 s; a and b delivered."""
    base = {"started": 0.0, "produced": frozenset({"a", "b"}),
            "deliveries": [Delivery(6.0, "t", 0, 0, "a", "m0"), Delivery(7.0, "t", 0, 1, "b", "m0")],
            "events": {"m0": [claim(1.0, 0)]}, "deaths": {}, "pauses": [], "faults": [], "zookeeper_down": [],
            "partitions": [("t", 0)], "formed_at": 5.0, "leaving_at": 40.0, "ended": 45.0}
    return RunRecord(**{**base, **changes})


def test_a_clean_run_holds_every_invariant():
    found = analyse(run(), LIMITS)
    assert found.violations == []
    assert (found.produced, found.delivered, found.delivered_distinct, found.lost, found.duplicates) == (2, 2, 2, 0, 0)
    assert (found.handovers, found.deliveries_outside_tenure, found.max_unfetched_s) == (0, 0, 0.0)


def test_a_produced_message_never_delivered_breaks_the_run():
    found = analyse(run(produced=frozenset({"a", "b", "m10", "m9"})), LIMITS)
    assert found.lost == 2
    assert found.violations == ["2 produced messages never delivered (first: ['m9', 'm10'])"]


def test_a_repeat_is_charged_to_its_fault_and_one_before_any_fault_breaks_the_run():
    again = Delivery(8.0, "t", 0, 1, "b", "m0")
    charged = analyse(run(deliveries=[*run().deliveries, again], faults=[FaultSpan("kill", 7.5, 7.9)]), LIMITS)
    assert (charged.duplicates, charged.duplicates_by_fault, charged.violations) == (1, {"kill": 1}, [])
    assert charged.duplicate_bursts == [{"at_s": 8.0, "partition": "t/0", "member": "m0", "first_by": "m0",
                                         "first_at_s": 7.0, "from_offset": 1, "count": 1, "fault": "kill at 7.5s"}]
    early = analyse(run(started=2.0, deliveries=[*run().deliveries, again]), LIMITS)
    assert early.violations == ["b delivered again at 6.0s by m0, before any fault"]


def handover(old_last_delivery: float) -> RunRecord:
    """m0 keeps t/0 until it notices at 15 s that m1 claimed it at 10 s; m1 delivers from 10.5 s."""
    return run(events={"m0": [claim(1.0, 0), end(15.0, "session.expired")], "m1": [claim(10.0, 0)]},
               deliveries=[Delivery(10.5, "t", 0, 5, "a", "m1"), Delivery(old_last_delivery, "t", 0, 6, "b", "m0")])


def test_an_old_owner_delivering_beside_the_new_one_within_the_limit_is_measured_and_beyond_it_breaks_the_run():
    within = analyse(handover(old_last_delivery=11.5), LIMITS)
    assert within.violations == []
    assert (within.max_overlap_ms, within.max_event_overlap_ms, within.handovers) == (1000.0, 5000.0, 1)
    assert within.max_overlap_at == within.max_event_overlap_at == "t/0 m0->m1 claimed at 10.0s"
    beyond = analyse(handover(old_last_delivery=12.5), LIMITS)
    assert beyond.max_overlap_ms == 2000.0
    assert beyond.violations == ["t/0: m0 still delivered it 2000 ms after m1 began, from 10.0s"]


def test_a_member_woken_from_a_pause_handing_out_what_was_claimed_meanwhile_beyond_the_limit_breaks_the_run():
    """m0 is stopped from 8 s to 14 s, m1 claims t/0 at 10 s; m0 hands out b at 15.8 s and notices at 16 s."""
    record = run(events={"m0": [claim(1.0, 0), end(16.0, "session.expired")], "m1": [claim(10.0, 0)]},
                 deliveries=[Delivery(10.5, "t", 0, 5, "a", "m1"), Delivery(15.8, "t", 0, 6, "b", "m0")],
                 pauses=[Pause("m0", 8.0, 14.0)])
    found = analyse(record, LIMITS)
    assert found.stale_after_pause == [{"member": "m0", "resumed_at_s": 14.0, "deliveries": 1, "partitions": ["t/0"],
                                        "last_ms_after_resume": 1800.0}]
    assert found.max_stale_after_pause_ms == 1800.0
    assert found.violations == [
        "m0, woken from a pause at 14.0s, delivered 1 messages of t/0 (claimed by another member meanwhile) for "
        "1800 ms before it noticed its session was gone",
        "t/0: m0 still delivered it 1800 ms after m1 began, from 10.0s"]
    assert analyse(record, Limits(overlap_ms=2000.0, unfetched_s=20.0, stale_after_pause_ms=2000.0)).violations == []
    # with the default limit (0), a stale delivery at any time after waking breaks the run, overlap limit or not
    assert analyse(record, Limits(overlap_ms=2000.0, unfetched_s=20.0)).violations == [
        "m0, woken from a pause at 14.0s, delivered 1 messages of t/0 (claimed by another member meanwhile) for "
        "1800 ms before it noticed its session was gone"]


def test_the_fenced_chunks_of_the_members_streams_are_counted():
    fenced = event("stream.chunk_fenced", 12.0, messages=7, reason="session_lost")
    found = analyse(run(events={"m0": [claim(1.0, 0), fenced, fenced]}), LIMITS)
    assert (found.fenced_chunks, found.fenced_messages) == (2, 14)
    assert found.violations == []


def test_a_partition_fetched_by_nobody_beyond_the_limit_breaks_the_run_unless_zookeeper_was_down():
    released = run(events={"m0": [claim(1.0, 0), end(12.0)]}, leaving_at=40.0)
    found = analyse(released, LIMITS)
    assert found.max_unfetched_s == 28.0
    assert found.violations == ["t/0 fetched by no member from 12.0s to 40.0s (28 s with ZooKeeper up)"]
    excused = analyse(run(events=released.events, zookeeper_down=[FaultSpan("zk-long", 11.0, 21.0)]), LIMITS)
    assert (excused.max_unfetched_s, excused.violations) == (19.0, [])


def test_a_member_delivering_after_its_ownership_ended_beyond_the_limit_breaks_the_run():
    record = run(events={"m0": [claim(1.0, 0), end(7.5)], "m1": [claim(8.0, 0)]},
                 deliveries=[Delivery(6.0, "t", 0, 0, "a", "m0"), Delivery(9.6, "t", 0, 1, "b", "m0")])
    found = analyse(record, LIMITS)
    assert (found.deliveries_outside_tenure, found.max_late_ms) == (1, 2100.0)
    assert found.violations == ["m0 delivered t/0 offset 1 at 9.6s, 2100 ms after it last owned it"]


def test_the_report_is_one_flat_json_object_with_every_violation_and_its_verdict_names_the_first():
    report = Report(seed=7, duration_s=25.0, members=10, session_timeout_ms=4000, faults=[{"kind": "kill"}],
                    load_avg={"max": 3.25})
    assert report.held and verdict(report).startswith("chaos HELD: 0 produced")
    report.violations.append("3.0s committed offset of t/0 moved back from 5 to 4")
    report.findings = analyse(run(produced=frozenset({"a", "b", "c"})), LIMITS)
    written = json.loads(json.dumps(report.as_json()))
    assert "findings" not in written and (written["seed"], written["produced"], written["lost"]) == (7, 3, 1)
    assert written["violations"] == ["3.0s committed offset of t/0 moved back from 5 to 4",
                                     "1 produced messages never delivered (first: ['c'])"]
    assert not report.held
    assert verdict(report) == (
        "chaos BROKEN (2 violations; first: 3.0s committed offset of t/0 moved back from 5 to 4): 3 produced, "
        "2 delivered, 1 lost, 0 duplicates, 1 faults in 25 s, max overlap 0 ms (events: 0 ms), seed 7, load 3.2")
