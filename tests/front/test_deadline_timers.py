"""The coordinator's keyed deadline timers: one per key, re-arming replaces, due ones in deadline then arming order."""

from __future__ import annotations

from zkconsumer.front.groups.deadline_timers import DeadlineTimers, Due


def drain(timers: DeadlineTimers[str, int], now_ms: int) -> list[Due[str, int]]:
    fired = []
    while (due := timers.pop_due(now_ms)) is not None:
        fired.append(due)
    return fired


def test_due_timers_come_out_in_deadline_order_then_in_the_order_they_were_armed() -> None:
    timers = DeadlineTimers[str, int]()
    timers.arm("late", 30, 1)
    timers.arm("b", 10, 2)
    timers.arm("a", 10, 3)
    assert timers.next_deadline_ms() == 10
    assert drain(timers, 9) == []
    assert drain(timers, 20) == [Due(10, "b", 2), Due(10, "a", 3)]
    assert timers.next_deadline_ms() == 30


def test_arming_a_key_again_replaces_its_timer_and_cancel_removes_it() -> None:
    timers = DeadlineTimers[str, int]()
    timers.arm("session", 10, 1)
    timers.arm("session", 50, 2)
    timers.arm("gone", 5, 0)
    timers.cancel("gone")
    timers.cancel("never armed")
    assert drain(timers, 49) == []
    assert drain(timers, 50) == [Due(50, "session", 2)]
    assert timers.next_deadline_ms() is None


def test_cancel_where_disarms_exactly_the_timers_whose_key_matches() -> None:
    timers = DeadlineTimers[str, int]()
    timers.arm("g1/a", 10, 1)
    timers.arm("g2/a", 20, 2)
    timers.arm("g1/b", 30, 3)
    timers.cancel_where(lambda key: key.startswith("g1/"))
    assert timers.next_deadline_ms() == 20
    assert drain(timers, 100) == [Due(20, "g2/a", 2)]
