"""docs/storm.md's tables are made from committed data: ``benchmarks/storm_tables.py --check`` finds the page as the
data and the model make it, the committed predictions are the model's own (re-simulated where cheap), a calibration
record survives its JSON, and a page's generated regions are replaced whole."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from time_scale import bounded

from zkconsumer.storm import calibration as cal
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.rendering import marked_regions, replace_region
from zkconsumer.storm.sweep import SweepPoint, SweepRow, run_point

pytestmark = pytest.mark.spark_run  # no server: in the Spark run, whose second worker has time left

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "benchmarks" / "data" / "storm"


def test_the_pages_tables_are_what_the_committed_data_and_the_model_give():
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "storm_tables.py"), "--check"],
                         capture_output=True, text=True, timeout=bounded(120), cwd=ROOT)
    assert run.returncode == 0, f"docs/storm.md differs from its data: run benchmarks/storm_tables.py\n" \
                                f"{run.stdout[-4000:]}{run.stderr[-2000:]}"
    assert marked_regions((ROOT / "docs" / "storm.md").read_text()) == [
        "example", "parameters", "agreement", "validation", "large", "fleet", "sweep"]


def test_the_committed_predictions_are_the_models_own_where_they_are_cheap_to_simulate_again():
    predictions = json.loads((DATA / "predictions.json").read_text())
    rows = [SweepRow(**row) for row in predictions["rows"]]
    cheap = sorted(rows, key=lambda row: row.cpu_s)[:16]
    assert {row.protocol for row in cheap} == {row.protocol for row in rows}, "a protocol has no cheap point"
    for row in cheap:
        again = run_point(SweepPoint(row.scenario, row.protocol, row.members, row.partitions),
                          predictions["settle_limit_s"])
        assert replace(again, cpu_s=0.0) == replace(row, cpu_s=0.0), \
            "benchmarks/data/storm/predictions.json is not the model's: run benchmarks/storm_tables.py --predict"


def calibration_record() -> cal.CalibrationRecord:
    (path,) = DATA.glob("calibration-*.json")
    return cal.load_record(path.read_text())


def test_a_calibration_record_survives_its_json_and_a_broken_one_is_refused_in_one_line():
    text = next(DATA.glob("calibration-*.json")).read_text()
    record = cal.load_record(text)
    assert cal.load_record(cal.record_json(record)) == record
    assert {r.spec.name for r in record.runs} >= set(record.left_out)
    with pytest.raises(ValueError, match=r"^not a calibration record: KeyError 'started'$"):
        cal.load_record("{}")


def test_a_replayed_record_fits_the_rebalance_cpu_again_and_compares_every_run_not_left_out():
    record = calibration_record()
    replayed = cal.replay(record)
    fitted = {f.name: f for f in replayed.calibration.fits}
    assert fitted["rebalance_cpu_ms"].value > 0 and "time to stable" in fitted["rebalance_cpu_ms"].source
    assert {f.name for f in (*record.measured, *record.recorded)} < set(fitted)
    assert len(replayed.rows) == len(record.runs) - len(record.left_out)
    # the model's default is that fit, made again by the model as it is
    assert fitted["rebalance_cpu_ms"].value == StormParameters().rebalance_cpu_ms


def test_fresh_runs_are_predicted_with_the_frozen_calibration_and_nothing_of_theirs_but_what_each_run_was():
    record = calibration_record()
    lone = next(r for r in record.runs if r.spec.legacy and r.spec.members == 1)
    fresh = replace(record, measured=(cal.ParameterFit("zk_read_ms", 50.0, "a fresh run's own, unused"),),
                    runs=(replace(lone, figures=replace(lone.figures, time_to_stable_s=100.0)),))
    validation = cal.validate(record, [fresh, fresh])
    expected = cal.predict(lone.spec, cal.run_settings(lone.spec, cal.calibrate(record).parameters))
    assert [[row.predicted for row in rows] for rows in validation.rows] == [[expected], [expected]]
    (row,) = validation.rows[0]
    assert not row.within and row.figures[0].real == 100.0
    # told to, each fresh run's own measurement of the machine replaces the calibration's
    (own,) = cal.validate(record, [fresh], own_machine=True).rows[0]
    assert own.predicted.time_to_stable_s is not None and expected.time_to_stable_s is not None
    assert own.predicted.time_to_stable_s > expected.time_to_stable_s


def test_a_record_of_played_runs_keeps_each_runs_median_its_spread_and_only_the_fits_samples():
    spec = cal.RunSpec("legacy-range", cal.AT_ONCE, 3, 100, cal.CALIBRATION)
    steps = (cal.StepSample("assign", 1.0, 100, 1, 0), cal.StepSample("assign", 9.0, 100, 3, 0),
             cal.StepSample("commit_offsets", 1.0, 100, 1, 0))
    played = [cal.RealRun(replace(spec, start_interval_ms=ms), cal.Figures(t, 1.0, 5, 0), steps)
              for t, ms in ((1.0, 0.1), (3.0, 0.3))]
    record = cal.record_of(played, (), "now", "cmd", "here", "played")
    (run,) = record.runs
    assert run.figures.time_to_stable_s == 2.0 and run.spec.start_interval_ms == pytest.approx(0.2)
    assert [s.members for s in run.steps] == [1, 1]  # the lone members' assign steps of both repeats
    assert record.spreads[spec.name]["time_to_stable_s"] == (1.0, 3.0)


def test_a_region_is_replaced_whole_and_a_broken_one_is_refused():
    page = "a\n<!-- generated: t -->\nold\n<!-- /generated: t -->\nb\n"
    assert replace_region(page, "t", "new\n") == "a\n<!-- generated: t -->\nnew\n<!-- /generated: t -->\nb\n"
    assert marked_regions(page) == ["t"]
    with pytest.raises(ValueError, match="region 'u'"):
        replace_region(page, "u", "x")
    with pytest.raises(ValueError, match="region 't'"):
        replace_region(page.replace("<!-- /generated: t -->", ""), "t", "x")
