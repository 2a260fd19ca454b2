"""The simulated replay of Connect's rebalances: exact figures on a cluster small enough to work out by hand, the
published shape with the defaults (eager minutes and growing with the tasks running, cooperative under a minute
and flat), and parameters refused before anything runs."""

from __future__ import annotations

from dataclasses import replace

import pytest

from zkconsumer.connect.simulation import PHASES, SimulationError, SimulationParameters, simulate

SMALL = SimulationParameters(workers=2, connectors=2, tasks_per_connector=2, task_start_ms=100, task_stop_ms=100,
                             rebalance_ms=10, delay_ms=1_000, bounce_ms=200)


@pytest.fixture(scope="module")
def default():
    return simulate(SimulationParameters())


def test_eager_rebalances_cost_what_counting_by_hand_gives():
    eager = simulate(replace(SMALL, protocols=("eager",))).protocol("eager")
    first, second = eager.records("start")
    # c1 created at 0: nothing to stop, the round ends at 10 ms; w1 starts c1 and c1-1, w2 c1-0 (one batch, 100 ms)
    assert (first.change, first.tasks_running, first.rounds, first.tasks_stopped, first.tasks_started) == (
        "create connector-01", 0, 1, 0, 2)
    assert first.time_to_stable_s == pytest.approx(0.11)
    assert first.task_seconds_stopped == pytest.approx(0.22)
    # c2 created at 110 ms: everyone stops everything (100 ms), rejoins (10 ms), starts the new deal (100 ms)
    assert (second.at_s, second.tasks_running, second.tasks_stopped, second.tasks_started) == (
        pytest.approx(0.11), 2, 2, 4)
    assert second.time_to_stable_s == pytest.approx(0.21)
    assert second.task_seconds_stopped == pytest.approx(4 * 0.21)  # two restarted, two new, all 210 ms
    assert eager.phase("start").time_to_stable_s == pytest.approx(0.32)


def test_cooperative_rebalances_cost_what_counting_by_hand_gives():
    cooperative = simulate(replace(SMALL, protocols=("cooperative",)))
    result = cooperative.protocol("cooperative")
    first, second = result.records("start")
    assert (first.rounds, first.tasks_stopped, first.tasks_started) == (1, 0, 2)
    assert first.time_to_stable_s == pytest.approx(0.11)  # a round (10 ms), a start (100 ms)
    assert (second.rounds, second.tasks_stopped, second.tasks_started) == (1, 0, 2)
    assert second.time_to_stable_s == pytest.approx(0.11)  # what runs keeps running
    assert second.task_seconds_stopped == pytest.approx(0.22)
    deleted = result.records("stop")[0]
    # a deletion: the holders stop it (100 ms) and rejoin for the follow-up round (10 ms), which moves nothing
    assert (deleted.rounds, deleted.tasks_stopped, deleted.tasks_started, deleted.task_seconds_stopped) == (2, 2, 0, 0)
    assert deleted.time_to_stable_s == pytest.approx(0.12)
    leaves, returns = result.records("bounce")
    # the worker's 2 tasks wait for it: back at 200 ms, given its work when the 1 s delay expires (+ the round)
    assert (leaves.tasks_stopped, returns.tasks_started) == (2, 2)
    assert leaves.time_to_stable_s == pytest.approx((10 + 1_000 + 10 + 100) / 1000)
    lost = result.phase("lose")
    assert lost.time_to_stable_s >= 1.0 and lost.rounds == 2


def test_eager_costs_grow_with_the_tasks_running_and_cooperative_ones_stay_flat(default):
    eager, cooperative = default.protocol("eager"), default.protocol("cooperative")
    for phase in ("start", "stop"):
        assert eager.phase(phase).time_to_stable_s > 5 * 60  # minutes (published: about 14 and 12)
        assert cooperative.phase(phase).time_to_stable_s < 60  # under a minute
        assert len(eager.records(phase)) == len(cooperative.records(phase)) == 90
    # eager: each rebalance costs more the more tasks run (never less, and 30x from the first to the last)
    started = eager.records("start")
    assert [r.tasks_running for r in started] == list(range(0, 900, 10))
    costs = [r.time_to_stable_s for r in started]
    assert costs == sorted(costs) and costs[-1] > 30 * costs[0]
    # cooperative: flat. What may vary is one batch of starts and one follow-up round, should a connector's new
    # tasks land unevenly; nothing that grows with the tasks running
    p = default.parameters
    tolerance = (p.task_start_ms + p.task_stop_ms + p.rebalance_ms) / 1000
    for phase in ("start", "stop"):
        costs = [r.time_to_stable_s for r in cooperative.records(phase)]
        assert max(costs) - min(costs) <= tolerance, (phase, min(costs), max(costs))
        assert sum(r.tasks_started for r in cooperative.records(phase)) <= 900  # only new work starts


def test_the_delay_is_the_price_of_cooperative(default):
    """A worker that bounces gets its own work back only when scheduled.rebalance.max.delay.ms has passed; eager
    restarts everything twice but is stable sooner."""
    eager, cooperative = default.protocol("eager"), default.protocol("cooperative")
    delay_s = default.parameters.delay_ms / 1000
    for phase in ("bounce", "lose"):
        assert cooperative.phase(phase).time_to_stable_s >= delay_s
        assert eager.phase(phase).time_to_stable_s < delay_s
        assert cooperative.phase(phase).tasks_stopped == 900 // default.parameters.workers  # the departed's only
        assert eager.phase(phase).tasks_stopped >= 900
    assert [r.change for r in cooperative.records("bounce")] == ["worker-05 leaves", "worker-05 returns"]
    assert [p.phase for p in cooperative.phases] == list(PHASES)


@pytest.mark.parametrize("changes, message", [
    ({"workers": 0}, "--workers must be at least 2"),
    ({"workers": 1}, "loses one for good"),
    ({"connectors": 0}, "--connectors must be at least 1"),
    ({"tasks_per_connector": -1}, "--tasks-per-connector must not be negative"),
    ({"task_start_ms": -1}, "--task-start-ms must be a non-negative"),
    ({"task_stop_ms": float("nan")}, "--task-stop-ms must be a non-negative"),
    ({"rebalance_ms": float("inf")}, "--rebalance-ms must be a non-negative"),
    ({"delay_ms": -5}, "--delay-ms must be a non-negative"),
    ({"protocols": ("eager", "bogus")}, "unknown protocol 'bogus'"),
    ({"protocols": ()}, "no protocol"),
])
def test_bad_parameters_are_refused_naming_the_option(changes, message):
    with pytest.raises(SimulationError, match=message):
        SimulationParameters(**changes)

