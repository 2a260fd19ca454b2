"""The sweep's grid and page without Spark: the points, the costliest first, bad input refused before anything runs,
and the page's curves and tables from the rows."""

from __future__ import annotations

import pytest

from zkconsumer.errors import UsageError
from zkconsumer.storm.rendering import sweep_page
from zkconsumer.storm.sweep import SweepPoint, SweepRow, grid, run_point


def test_the_grid_crosses_every_dimension_costliest_first():
    points = grid([10, 100], [1_000, 10_000], ["legacy-range", "kip848-uniform"],
                  settings={"rebalance_backoff_ms": [200, 2_000], "rebalance_max_retries": [4]})
    assert len(points) == 2 * 2 * 2 * 2
    assert points[0] == SweepPoint("storm", "kip848-uniform", 100, 10_000,
                                   (("rebalance_backoff_ms", 200), ("rebalance_max_retries", 4)))
    assert [p.cost() for p in points] == sorted((p.cost() for p in points), reverse=True)
    assert SweepPoint.from_json(points[0].to_json()) == points[0]
    assert points[0].settings_label == "rebalance_backoff_ms=200, rebalance_max_retries=4"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"protocols": ["legacy-rangee"]}, "unknown protocol legacy-rangee"),
    ({"settings": {"zk_reed_ms": [1]}}, "unknown setting 'zk_reed_ms'"),
    ({"settings": {"claim_batch": [0]}}, "claim_batch must be at least 1"),
    ({"members": [0]}, "at least 1"),
])
def test_bad_input_is_refused_in_one_line(kwargs, message):
    arguments = {"members": [2], "partitions": [10], "protocols": ["legacy-range"]} | kwargs
    with pytest.raises(UsageError, match=message):
        grid(**arguments)


def test_a_settings_value_reaches_the_simulation():
    fast, slow = (run_point(SweepPoint("storm", "legacy-range", 5, 50, (("zk_write_ms", ms),))) for ms in (1, 20))
    assert fast.time_to_stable_s < slow.time_to_stable_s
    assert fast.settings == "zk_write_ms=1" and slow.settings == "zk_write_ms=20"


def test_the_page_has_a_panel_per_partition_count_and_lists_what_did_not_settle():
    def row(protocol, members, partitions, stable):
        return SweepRow("storm", protocol, members, partitions, "defaults", stable, 10.0 * members, 5, 5, 0, members,
                        0, 0, 0, 3 if stable is None else 0, 100, 0.5,
                        None if stable is not None else "1. storm: ZooKeeper 9.9 s behind")

    rows = [row(p, m, n, None if (p, m) == ("legacy-range", 1_000) else m / 10)
            for p in ("legacy-range", "kip848-uniform") for m in (10, 100, 1_000) for n in (1_000, 100_000)]
    page = sweep_page(rows, "hand-made")
    assert page.count('class="chart"') == 4  # two partition counts, each a time and a paused panel
    assert "Time to stable, 100,000 partitions" in page and "Paused, 1,000 partitions" in page
    unstable = page.split('id="unstable"')[1].split("</table>")[0]
    assert unstable.count("<tr>") == 1 + 2 and "legacy-range" in unstable  # header, and the two partition counts
    assert unstable.count("ZooKeeper 9.9 s behind") == 2  # what kept each from settling
    assert page.split('id="runs"')[1].count("<tr>") == 1 + len(rows)


def test_the_command_refuses_bad_input_in_one_line_before_spark_starts(capsys, tmp_path):
    from zkconsumer import cli

    (tmp_path / "taken").mkdir()
    for args, said in ((["--set", "zk_reed_ms=1"], "unknown setting 'zk_reed_ms'"),
                       (["--members", "10,x"], "--members '10,x': comma-separated whole numbers expected"),
                       (["--scenarios", "storm,nosuch"], "no shipped scenario 'nosuch'"),
                       (["--out", str(tmp_path / "taken")], "already exists")):
        out_args = [] if "--out" in args else ["--out", str(tmp_path / "new")]
        status = cli.main(["simulate", "sweep", *args, *out_args])
        out, err = capsys.readouterr()
        assert status == 2 and out == "", args
        assert said in err and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]
