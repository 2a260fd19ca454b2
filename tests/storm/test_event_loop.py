"""The simulation's clock: callbacks in time order, equal times in the order scheduled, bounded runs."""

from __future__ import annotations

from zkconsumer.storm.event_loop import EventLoop


def test_callbacks_run_in_time_order_and_equal_times_in_the_order_scheduled():
    loop = EventLoop()
    ran: list[tuple[float, str]] = []
    for time_ms, name in ((30, "c"), (10, "a"), (20, "b1"), (20, "b2")):
        loop.at(time_ms, lambda t=time_ms, n=name: ran.append((loop.now_ms, n)))
    loop.run_for(100)
    assert ran == [(10, "a"), (20, "b1"), (20, "b2"), (30, "c")]
    assert loop.now_ms == 100 and loop.events_run == 4


def test_a_callback_scheduled_in_the_past_runs_now_after_what_is_due():
    loop = EventLoop()
    ran: list[str] = []
    loop.at(50, lambda: (ran.append("first"), loop.at(10, lambda: ran.append("late"))))
    loop.at(50, lambda: ran.append("second"))
    loop.run_for(60)
    assert ran == ["first", "second", "late"]


def test_run_until_stops_when_done_or_at_the_deadline():
    loop = EventLoop()
    count = [0]

    def tick() -> None:
        count[0] += 1
        loop.after(10, tick)

    loop.at(0, tick)
    assert loop.run_until(lambda: count[0] == 5, 1_000) is True
    assert loop.now_ms == 40
    assert loop.run_until(lambda: False, 95) is False
    assert loop.now_ms == 95 and count[0] == 10
