"""Repeats charged to the fault that caused them, and grouped into bursts."""

from __future__ import annotations

from zkconsumer.chaos.duplicates import blame, find_duplicates
from zkconsumer.chaos.records import Delivery, FaultSpan


def test_a_duplicate_is_charged_to_the_fault_that_interrupted_its_commit():
    kill, rolling = FaultSpan("kill", 23.9, 25.4), FaultSpan("rolling", 27.6, 39.6)
    pause = FaultSpan("pause", 10.5, 17.0)
    # delivered at 23.5, killed before its commit at 23.9, delivered again at 29.3 during the rolling restart
    assert blame([pause, kill, rolling], first=23.5, again=29.3) is kill
    # delivered by the new owner at 14.9 while the old one was stopped; the old one repeats it on waking at 17.0
    assert blame([pause, kill, rolling], first=14.9, again=17.0) is pause
    assert blame([kill], first=40.0, again=41.0) is kill  # long after: the latest before the repeat
    assert blame([kill], first=1.0, again=2.0) is None  # before any fault


def test_repeats_of_one_partition_by_one_member_close_together_are_one_burst():
    """m1 repeats offsets 10-12 of t/0 after m0's kill (within 2 s of each other), and offset 20 four seconds later."""
    kill = FaultSpan("kill", 5.0, 6.0)
    firsts = [Delivery(4.5 + i / 10, "t", 0, 10 + i, f"v{i}", "m0") for i in range(3)]
    firsts.append(Delivery(4.9, "t", 0, 20, "v20", "m0"))
    repeats = [Delivery(7.0 + i, "t", 0, 10 + i, f"v{i}", "m1") for i in range(3)]
    repeats.append(Delivery(13.0, "t", 0, 20, "v20", "m1"))
    found = find_duplicates(list(reversed(repeats + firsts)), [kill])  # any order in, read in order of time
    assert (found.count, found.by_fault, found.unexplained) == (4, {"kill": 4}, [])
    assert sorted(found.first) == ["v0", "v1", "v2", "v20"] and found.first["v1"].member == "m0"
    assert [(b.at, b.member, b.first_by, b.first_at, b.from_offset, b.count, b.fault) for b in found.bursts] == [
        (7.0, "m1", "m0", 4.5, 10, 3, kill), (13.0, "m1", "m0", 4.9, 20, 1, kill)]


def test_a_repeat_before_any_fault_is_unexplained():
    found = find_duplicates([Delivery(1.0, "t", 0, 1, "a", "m0"), Delivery(2.0, "t", 0, 1, "a", "m1")],
                            [FaultSpan("kill", 5.0, 6.0)])
    assert found.count == 1 and found.by_fault == {}
    assert found.unexplained == [Delivery(2.0, "t", 0, 1, "a", "m1")]
