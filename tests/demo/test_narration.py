"""The live narration, on the recorded run of tests/data/sample-events.jsonl: one block per attempt, every step
with its duration, each meaning told once, conflicts and stop-the-world gaps in plain words."""

from __future__ import annotations

import json

from support import SAMPLE_EVENTS

from zkconsumer.demo.narration import RebalanceNarrator
from zkconsumer.events.rebalance_steps import STEPS

SAMPLE = SAMPLE_EVENTS


def narrate(explain: bool = True) -> list[str]:
    narrator = RebalanceNarrator(explain=explain)
    lines: list[str] = []
    for line in SAMPLE.read_text().splitlines():
        lines += narrator.feed(json.loads(line))
    return lines


def test_each_attempt_is_one_block_with_its_outcome():
    lines = narrate()
    heads = [line.strip() for line in lines if ": rebalance " in line]
    assert heads[:3] == ["gs2_c1: rebalance 1 (initial), attempt 1", "gs2_c2: rebalance 1 (initial), attempt 1",
                         "gs2_c1: rebalance 2 (members_changed), attempt 1"]
    first_c2 = lines.index("  gs2_c2: rebalance 1 (initial), attempt 1")
    block = lines[first_c2:lines.index("    => attempt failed (ownership conflict); retrying after 300 ms") + 1]
    assert any("CONFLICT sample-2 held by gs2_c1-0, sample-3 held by gs2_c1-0" in line for line in block)
    assert not any(line.strip().startswith("9 ") for line in block)  # a failed attempt never restarts fetching


def test_meanings_are_told_once_and_gaps_are_measured():
    lines = narrate()
    for step in STEPS[:3]:
        assert lines.count(f"      ({step.meaning})") == 1
    done = [line for line in lines if line.startswith("    => done:")]
    assert done[1] == "    => done: owns gs2_c1-0: sample-0, sample-1; stop-the-world 83.5 ms"
    # c2's first attempt stopped its (empty) fetchers and failed on a conflict; the gap runs from there to the
    # restart in attempt 2, as the timeline page measures it (322 ms), not just attempt 2's own 8.9 ms.
    assert done[2] == ("    => done: owns gs2_c2-0: sample-2, sample-3; stop-the-world 322 ms "
                       "(since attempt 1 stopped the fetchers)")
    assert not any(line.startswith("      (") for line in narrate(explain=False))


def test_the_session_expiry_and_the_shutdown_are_told():
    text = "\n".join(narrate())
    assert "gs2_c3: watch fired: the members are now gs2_c1, gs2_c3" in text
    assert "gs2_c1: shut down cleanly" in text


def test_an_attempt_without_step_events_keeps_its_own_number():
    """An attempt that ended before its first step has no step event; the narrator then takes the number from
    attempt_failed itself."""
    narrator = RebalanceNarrator()
    base = {"consumer_id": "g_c1", "rebalance_id": 4, "level": "info", "timestamp": "2026-11-21T21:00:00.000000Z"}
    narrator.feed({**base, "event": "rebalance.started", "cause": "members_changed"})
    lines = narrator.feed({**base, "event": "rebalance.attempt_failed", "attempt": 3, "backoff_ms": 300,
                           "reason": "ConnectionLoss: "})
    assert lines[0] == "  g_c1: rebalance 4 (members_changed), attempt 3"


def test_a_step_that_raised_says_so_and_a_failed_restart_does_not_end_the_gap():
    """A failed step's event carries ``error``: the block says why, and a ``start_fetchers`` that raised did not
    restart fetching, so the stop-the-world gap runs on to the attempt that did."""
    narrator = RebalanceNarrator(explain=False)
    base = {"consumer_id": "g_c1", "rebalance_id": 1, "level": "info"}

    def at(ms: int) -> str:
        return f"2026-11-21T21:00:00.{ms:03d}000Z"

    def step(name: str, attempt: int, ms: int, **fields) -> dict:
        from zkconsumer.events.rebalance_steps import BY_NAME
        return {**base, "event": f"rebalance.{name}", "step": BY_NAME[name].number, "attempt": attempt,
                "duration_ms": 1.0, "timestamp": at(ms), **fields}

    lines = narrator.feed({**base, "event": "rebalance.started", "cause": "initial", "timestamp": at(0)})
    lines += narrator.feed(step("stop_fetchers", 1, 10, chunks_dropped=0))
    lines += narrator.feed(step("start_fetchers", 1, 20, level="warning", error="RuntimeError: boom"))
    lines += narrator.feed({**base, "event": "rebalance.attempt_failed", "attempt": 1, "backoff_ms": 100,
                            "reason": "RuntimeError: boom", "level": "warning", "timestamp": at(21)})
    lines += narrator.feed(step("stop_fetchers", 2, 130, chunks_dropped=0))
    lines += narrator.feed(step("start_fetchers", 2, 150, partitions=1))
    lines += narrator.feed({**base, "event": "rebalance.completed", "attempts": 2, "duration_ms": 150.0,
                            "owned": [], "timestamp": at(151)})
    assert any(line.strip().startswith("9 ") and line.endswith("FAILED: RuntimeError: boom") for line in lines)
    first_outcome = next(line for line in lines if line.startswith("    => attempt failed"))
    assert "stop-the-world" not in first_outcome  # the failed restart ended nothing
    done = next(line for line in lines if line.startswith("    => done"))
    assert "stop-the-world 141 ms" in done  # from attempt 1's stop (9 ms) to attempt 2's restart (150 ms)


def test_repeated_and_skipped_step_numbers_are_explained_once_before_the_first_block_that_has_them():
    """Steps 2, 2, 4 with no listener set read as a mistake unless the screen says why (the original's numbers)."""
    lines = narrate()
    notes = [i for i, line in enumerate(lines) if "the numbers are the steps of Kafka's" in line]
    assert len(notes) == 1
    assert lines[notes[0]] == ("      (the numbers are the steps of Kafka's ZKRebalancerListener.rebalance, in its "
                               "order: 2 is stop fetchers then commit offsets; 3 (listener: before release) is "
                               "skipped: no rebalance listener is set)")
    assert ": rebalance " in lines[notes[0] - 1]  # right under the block's heading, before its first step
    assert not any("the numbers are" in line for line in narrate(explain=False))
