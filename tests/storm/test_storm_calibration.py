"""The calibration's pure parts over data: the run shapes as scenarios, paused partition-seconds from a timeline, the
line fit, the parameters fitted from step samples, the agreement rule and its tables; and ZooKeeper's group commit
in the request queue."""

from __future__ import annotations

import pytest

from zkconsumer.scenarios import model as sc
from zkconsumer.storm import calibration as cal
from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.rendering import agreement_markdown, calibration_markdown
from zkconsumer.storm.request_queue import RequestQueue

BASE = StormParameters()


def spec(shape=cal.AT_ONCE, members=3, changing=0, protocol="legacy-range", role=cal.CALIBRATION, lead_s=0.0):
    return cal.RunSpec(protocol, shape, members, 100, role, changing, lead_s)


def run(spec_: cal.RunSpec, steps=(), figures=None) -> cal.RealRun:
    return cal.RealRun(spec_, figures or cal.Figures(1.0, 10.0, 5, 0), tuple(steps))


# --- shapes --------------------------------------------------------------------------------------------------------

def test_each_shape_measures_its_last_scene_and_waits_as_long_as_the_real_run_did():
    at_once = cal.scenario_for(spec())
    assert [a.kind for a in at_once.scenes[-1].actions] == [sc.START] * 3
    joining = cal.scenario_for(spec(cal.JOIN_RUNNING, 5, 2, lead_s=4.5))
    first, wait, last = joining.scenes
    assert [a.member for a in first.actions] == ["m00", "m01", "m02"]
    assert wait.actions == (sc.Action(sc.WAIT, seconds=4.5),)
    assert [a.member for a in last.actions] == ["m03", "m04"]
    leaving = cal.scenario_for(spec(cal.LEAVE, 5, 2))
    assert [(a.kind, a.member) for a in leaving.scenes[-1].actions] == [(sc.STOP, "m03"), (sc.STOP, "m04")]


@pytest.mark.parametrize("shape, members, changing", [("sideways", 3, 0), (cal.JOIN_RUNNING, 3, 0),
                                                      (cal.LEAVE, 3, 3)])
def test_a_shape_that_cannot_be_played_is_refused(shape, members, changing):
    with pytest.raises(ValueError):
        spec(shape, members, changing)


def test_a_prediction_is_the_simulation_of_the_measured_scene():
    one = cal.predict(spec(cal.AT_ONCE, 1), BASE)
    assert one.rebalances == 1 and one.conflicts == 0 and one.zookeeper_requests > 0
    joined = cal.predict(spec(cal.JOIN_RUNNING, 3, 2), BASE)
    assert joined.rebalances >= 3  # the owner and both newcomers rebalance in the measured scene


# --- timelines -----------------------------------------------------------------------------------------------------

def test_paused_partition_seconds_integrate_what_is_not_consuming_over_the_window():
    # 10 partitions, 4 consuming from before the start; 6 start at t=2; all 10 stop at t=3; 10 start at t=5
    changes = [(-1.0, 4), (2.0, 6), (3.0, -10), (5.0, 10), (9.0, -10)]
    assert cal.paused_partition_seconds(changes, 10, 4, 0.0, 6.0) == pytest.approx(6 * 2 + 0 * 1 + 10 * 2 + 0 * 1)


def test_nothing_consuming_pauses_every_partition_for_the_whole_window():
    assert cal.paused_partition_seconds([], 7, 0, 1.0, 3.0) == pytest.approx(14.0)


# --- fitting -------------------------------------------------------------------------------------------------------

def test_a_line_is_fitted_through_the_points_and_never_costs_less_than_nothing():
    assert cal.fit_line([1, 2, 3], [3, 5, 7]) == pytest.approx((1.0, 2.0))
    assert cal.fit_line([1, 2], [5, 1]) == pytest.approx((3.0, 0.0))  # falling: a constant
    intercept, slope = cal.fit_line([10, 20], [0.5, 2.5])  # through zero when the intercept would be negative
    assert intercept == 0 and slope == pytest.approx((10 * 0.5 + 20 * 2.5) / (100 + 400))
    assert cal.fit_line([4, 4], [2, 2]) == pytest.approx((0.0, 0.5))
    with pytest.raises(ValueError):
        cal.fit_line([], [])


def test_the_steps_of_lone_members_give_the_per_partition_costs_and_crowded_ones_do_not():
    alone = [cal.StepSample("start_fetchers", 5.0, 1_000, 1, 1_000), cal.StepSample("start_fetchers", 50.0, 10_000,
                                                                                      1, 10_000)]
    crowded = [cal.StepSample("start_fetchers", 900.0, 10_000, 10, 1_000)]
    fitted = cal.fit(BASE, [run(spec(), alone + crowded)])
    assert fitted.parameters.fetchers_per_partition_ms == pytest.approx(0.005)
    (fit,) = fitted.fits
    assert fit.name == "fetchers_per_partition_ms" and "2 lone members" in fit.source


def test_measured_parameters_come_in_as_given_and_the_others_keep_their_defaults():
    fitted = cal.fit(BASE, [], {"zk_read_ms": (0.3, "a burst")})
    assert fitted.parameters.zk_read_ms == 0.3
    assert fitted.parameters.zk_write_ms == BASE.zk_write_ms
    assert [(f.name, f.source) for f in fitted.fits] == [("zk_read_ms", "a burst")]


def test_the_assign_step_is_fitted_less_the_group_reads_the_model_books_apart():
    p = BASE
    reads = p.zk_read_ms + p.network_rtt_ms + p.zk_read_ms * 3 + p.assign_per_member_ms
    samples = [cal.StepSample("assign", reads + 0.004 * n, n, 1, 0) for n in (1_000, 5_000, 10_000)]
    fitted = cal.fit(BASE, [run(spec(), samples)])
    assert fitted.parameters.assign_per_partition_ms == pytest.approx(0.004)


def test_the_owners_stop_is_what_it_takes_beyond_its_partitions():
    samples = [cal.StepSample("stop_fetchers", 30.0, 1_000, 10, 1_000), cal.StepSample("stop_fetchers", 0.1, 1_000,
                                                                                       10, 0)]
    fitted = cal.fit(replace_params(fetchers_per_partition_ms=0.01), [run(spec(), samples)])
    assert fitted.parameters.stop_fetchers_ms == pytest.approx(20.0)


def replace_params(**changes) -> StormParameters:
    from dataclasses import replace

    return replace(BASE, **changes)


def shared_cpu(_spec: cal.RunSpec, parameters: StormParameters) -> StormParameters:
    from dataclasses import replace

    return replace(parameters, members_share_one_cpu=True)


def test_members_sharing_one_process_pay_each_others_rebalance_cpu_in_turn():
    def stable(members: int, cost_ms: float) -> float:
        figures = cal.predict(spec(members=members), replace_params(members_share_one_cpu=True,
                                                                     rebalance_cpu_ms=cost_ms))
        assert figures.time_to_stable_s is not None
        return figures.time_to_stable_s

    assert stable(1, 50.0) - stable(1, 0.0) == pytest.approx(0.05, abs=0.005)
    assert stable(5, 50.0) - stable(5, 0.0) >= 0.2


def test_the_rebalance_cpu_is_the_value_whose_predicted_times_match_the_crowded_legacy_runs():
    truth = replace_params(rebalance_cpu_ms=25.0)
    crowded = [spec(members=5), spec(cal.JOIN_RUNNING, 4, 3, lead_s=1.0)]
    runs = [run(s, figures=cal.predict(s, shared_cpu(s, truth))) for s in crowded]
    lone = run(spec(members=1), figures=cal.Figures(10.0, 1.0, 5, 0))  # far off, and not used
    fitted = cal.fit_rebalance_cpu(BASE, [*runs, lone], shared_cpu)
    assert fitted is not None and fitted.name == "rebalance_cpu_ms"
    assert fitted.value == pytest.approx(25.0, abs=1.0)
    assert "2 legacy runs" in fitted.source


def test_the_rebalance_cpu_is_fitted_only_from_crowded_legacy_runs_and_only_when_asked():
    others = [run(spec(members=1)), run(spec(members=3, protocol="eager-range"))]
    assert cal.fit_rebalance_cpu(BASE, others, shared_cpu) is None
    crowded = [run(spec(members=3), figures=cal.Figures(0.5, 10.0, 5, 0))]
    assert "rebalance_cpu_ms" not in {f.name for f in cal.fit(BASE, crowded).fits}
    assert cal.fit(BASE, crowded, model_for=shared_cpu).parameters.rebalance_cpu_ms > 0


# --- agreement -----------------------------------------------------------------------------------------------------

def test_agreement_is_within_a_fifth_or_an_absolute_slack_and_both_missing_agree():
    assert cal.agree(10.0, 11.9) and not cal.agree(10.0, 12.1)
    assert cal.agree(0, 1, slack=1.0) and not cal.agree(0, 2, slack=1.0)
    assert cal.agree(None, None) and not cal.agree(None, 3.0) and not cal.agree(3.0, None)


def test_a_run_agrees_only_when_all_four_figures_do_and_the_table_says_which_missed():
    real = run(spec(role=cal.HELD_BACK), figures=cal.Figures(2.0, 100.0, 50, 0))
    good = cal.compare(real, cal.Figures(2.2, 110.0, 45, 1))
    bad = cal.compare(real, cal.Figures(3.0, 100.0, 50, 0))
    assert good.within and not bad.within
    assert [a.figure for a in bad.figures if not a.within] == ["time_to_stable_s"]
    table = agreement_markdown([good, bad])
    assert table.count("\n") == 3 and "| yes |" in table and "no: time |" in table and "held-back" in table


def test_the_calibration_table_names_each_fitted_parameter_its_default_and_source():
    fitted = cal.fit(BASE, [], {"zk_read_ms": (0.3, "a burst")})
    table = calibration_markdown(fitted, BASE)
    assert f"| `zk_read_ms` | 0.3 | {BASE.zk_read_ms:.4g} | a burst |" in table


# --- group commit --------------------------------------------------------------------------------------------------

def test_writes_reaching_the_log_during_a_force_are_forced_together_and_reads_go_on_meanwhile():
    loop = EventLoop()
    zk = RequestQueue(loop, network_rtt_ms=0.0)
    applied: list[tuple[str, float]] = []

    def write(name: str) -> None:
        zk.write(0.1, 2.0, lambda: applied.append((name, loop.now_ms)), lambda *_: None)

    write("a")  # alone: its own force, 0.1 to 2.1
    write("b")  # reaches the log at 0.2, during a's force: the next one, 2.1 to 4.1
    write("c")  # at 0.3: with b
    zk.request(0.1, lambda: applied.append(("read", loop.now_ms)), lambda *_: None)
    loop.run_for(10.0)
    assert applied == [("read", pytest.approx(0.4)), ("a", pytest.approx(2.1)), ("b", pytest.approx(4.1)),
                       ("c", pytest.approx(4.1))]
    assert (zk.requests, zk.operations) == (4, 4)


# --- repeats -------------------------------------------------------------------------------------------------------

def test_repeats_of_a_run_compare_by_each_figures_median_and_keep_every_step_for_the_fit():
    step = cal.StepSample("assign", 1.0, 100, 1, 0)
    repeats = [cal.RealRun(spec(lead_s=lead), cal.Figures(t, p, q, c), (step,), cpu, 0.0, (load, 1.0, 1.0), 2.0)
               for t, p, q, c, lead, cpu, load in ((1.0, 10.0, 5, 0, 4.0, 0.1, 3.0), (3.0, 30.0, 7, 2, 5.0, 0.3, 9.0),
                                                   (2.0, 50.0, 6, 1, 6.0, 0.2, 6.0))]
    one = cal.median_run(repeats)
    assert one.figures == cal.Figures(2.0, 30.0, 6, 1, 0, 0)
    assert (one.spec.lead_s, one.cpu_s, one.load[0], len(one.steps)) == (5.0, 0.2, 6.0, 3)
    assert cal.spread(repeats) == {"time_to_stable_s": (1.0, 3.0), "partition_seconds_paused": (10.0, 50.0),
                                   "zookeeper_requests": (5, 7), "conflicts": (0, 2)}


def test_a_run_not_stable_in_every_repeat_takes_the_median_of_those_that_were():
    repeats = [run(spec(), figures=cal.Figures(t, 1.0, 1, 0)) for t in (None, 2.0, 4.0)]
    assert cal.median_run(repeats).figures.time_to_stable_s == 3.0
    assert cal.median_run(repeats[:1]).figures.time_to_stable_s is None


def test_only_repeats_of_one_run_are_combined():
    with pytest.raises(ValueError):
        cal.median_run([run(spec()), run(spec(members=4))])
    with pytest.raises(ValueError):
        cal.median_run([])


def test_a_prediction_inside_the_repeats_spread_widened_by_a_fifth_is_in_the_spread():
    real = run(spec(), figures=cal.Figures(2.0, 100.0, 50, 0))
    spread_ = {"time_to_stable_s": (1.0, 4.0), "partition_seconds_paused": (50.0, 200.0),
               "zookeeper_requests": (40, 60), "conflicts": (0, 0)}
    inside = cal.compare(real, cal.Figures(4.7, 230.0, 33, 1), spread_=spread_)
    assert inside.in_spread and not inside.within
    assert cal.compare(real, cal.Figures(4.9, 100.0, 50, 0), spread_=spread_).in_spread is False
    assert cal.compare(real, cal.Figures(2.0, 100.0, 50, 0)).in_spread is None
    assert "within the repeats' spread" in agreement_markdown([inside]) and "| yes |" in agreement_markdown(
        [inside])
