"""``simulate sweep`` on Spark (the shared local[2] session): a small grid, one simulation per task, its Parquet
rows the same figures as the simulation run here, and its page of curves rendered by a headless browser."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from browser import assert_offline, dump_dom

from zkconsumer.errors import UsageError
from zkconsumer.fleet.sweep_job import run_sweep_job
from zkconsumer.scenarios.parse import load, shipped
from zkconsumer.storm.sweep import grid, run_point


def small_grid():
    rolling = shipped()["rolling-restart"].read_text(encoding="utf-8")
    return grid([2, 4], [20, 200], ["legacy-range", "kip848-uniform"], [("storm", None), ("rolling-restart", rolling)],
                {"rebalance_backoff_ms": [200]})


@pytest.mark.browser
def test_a_small_sweep_writes_its_rows_and_its_page(spark, tmp_path):
    points = small_grid()
    assert len(points) == 2 * 2 * 2 + 2 * 2  # the storm's members x partitions x protocols; the scenario's cast
    out = tmp_path / "out"

    rows = run_sweep_job(spark, points, str(out), "a test grid")

    assert sorted(p.name for p in out.iterdir()) == ["runs", "sweep.html"]
    assert len(list((out / "runs").glob("part-*.parquet"))) == len(points)  # one task, one file, per simulation
    table = spark.read.parquet(str(out / "runs")).collect()
    assert len(table) == len(rows) == len(points)
    # what the executors computed is the simulation's own figures, point for point (all but its CPU time)
    here = {(r.scenario, r.protocol, r.members, r.partitions): replace(r, cpu_s=0.0)
            for r in (run_point(p) for p in points)}
    for row in rows:
        assert replace(row, cpu_s=0.0) == here[(row.scenario, row.protocol, row.members, row.partitions)]
        assert row.settings == "rebalance_backoff_ms=200" and row.cpu_s >= 0
        assert (row.zookeeper_requests > 0) == (row.protocol == "legacy-range")
    assert {r.members for r in rows if r.scenario == "rolling-restart"} == {len(load("rolling-restart").members)}
    assert all(r["time_to_stable_s"] is not None and r["time_to_stable_s"] > 0 for r in table)

    page = (out / "sweep.html").read_text()
    assert_offline(page)
    body = re.search(r"<body[^>]*>", dump_dom(out / "sweep.html"))[0]
    # two scenarios x two partition counts, each a time panel and a paused panel; every point a row of the table
    assert 'data-rendered="ok"' in body and 'data-charts="8"' in body and f'data-rows="{len(points)}"' in body, body


def test_an_existing_output_is_refused_before_any_simulation(spark, tmp_path):
    (tmp_path / "out").mkdir()
    with pytest.raises(UsageError, match="already exists"):
        run_sweep_job(spark, small_grid(), str(tmp_path / "out"), "")
    assert [p.name for p in tmp_path.iterdir()] == ["out"] and not any((tmp_path / "out").iterdir())
