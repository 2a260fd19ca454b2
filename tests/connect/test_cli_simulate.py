"""``zkconsumer simulate connect``: the table, the JSON keys, the page file, and bad input refused in one line
before anything runs (nothing written)."""

from __future__ import annotations

import json

import pytest

from zkconsumer import cli

SMALL = ["--workers", "3", "--connectors", "4", "--tasks-per-connector", "3", "--delay-ms", "10000"]


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = cli.main(["simulate", "connect", *args])
    except SystemExit as exc:  # argparse's own errors: its usage and one line, status 2
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_the_json_report_has_every_protocol_phase_and_rebalance(capsys):
    status, out, err = run(capsys, *SMALL, "--json")
    assert (status, err) == (0, "")
    report = json.loads(out)
    assert list(report["protocols"]) == ["eager", "cooperative"]
    assert report["parameters"]["workers"] == 3 and report["parameters"]["delay_ms"] == 10000
    for protocol in report["protocols"].values():
        assert set(protocol) >= {"rebalances", "task_seconds_stopped", "time_to_stable_s"}
        assert list(protocol["time_to_stable_s"]) == ["start", "stop", "bounce", "lose"]
        assert list(protocol["task_seconds_stopped"]) == ["start", "stop", "bounce", "lose"]
        assert len(protocol["rebalances"]) == 4 + 4 + 2 + 1
        assert set(protocol["rebalances"][0]) == {"phase", "change", "at_s", "tasks_running", "rounds",
                                                  "tasks_stopped", "tasks_started", "task_seconds_stopped",
                                                  "time_to_stable_s"}
    eager, cooperative = report["protocols"]["eager"], report["protocols"]["cooperative"]
    assert eager["rebalances"][3]["tasks_stopped"] == 9  # the fourth connector: eager restarts all 9 tasks
    assert cooperative["rebalances"][3]["tasks_stopped"] == 0


def test_one_protocol_and_the_table(capsys):
    status, out, err = run(capsys, *SMALL, "--protocol", "cooperative")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].startswith("3 workers, 4 connectors x 3 tasks")
    header = lines[2].split()
    assert header[:3] == ["phase", "protocol", "changes"]
    rows = [line.split() for line in lines[3:7]]
    assert [row[:3] for row in rows] == [["start", "cooperative", "4"], ["stop", "cooperative", "4"],
                                         ["bounce", "cooperative", "2"], ["lose", "cooperative", "1"]]
    assert "eager" not in out


def test_html_page_is_written(tmp_path, capsys):
    page = tmp_path / "connect.html"
    status, out, _ = run(capsys, *SMALL, "--json", "--html", str(page))
    assert status == 0 and json.loads(out)["protocols"]
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>") and text.count('class="chart"') == 6
    assert [p.name for p in tmp_path.iterdir()] == ["connect.html"]


@pytest.mark.parametrize("args, status, message", [
    (["--workers", "0"], 2, "--workers must be at least 2"),
    (["--connectors", "0"], 2, "--connectors must be at least 1"),
    (["--task-start-ms", "-1"], 2, "--task-start-ms must be a non-negative"),
    (["--task-stop-ms", "-0.5"], 2, "--task-stop-ms must be a non-negative"),
    (["--rebalance-ms", "nan"], 2, "--rebalance-ms must be a non-negative"),
    (["--protocol", "sticky"], 2, "invalid choice: 'sticky'"),
    (["--workers", "two"], 2, "invalid int value"),
])
def test_bad_input_fails_in_one_line_and_writes_no_page(args, status, message, tmp_path, capsys):
    page = tmp_path / "page.html"
    code, out, err = run(capsys, *args, "--html", str(page))
    assert (code, out) == (status, "")
    last = err.strip().splitlines()[-1]
    assert message in last  # ours: one line; argparse's: its usage, then one line
    assert err.startswith("zkconsumer simulate: ") and err.count("\n") == 1 or err.startswith("usage: ")
    assert "Traceback" not in err
    assert not page.exists()


def test_an_unwritable_page_is_one_line(tmp_path, capsys):
    code, out, err = run(capsys, *SMALL, "--html", str(tmp_path / "missing" / "page.html"))
    assert (code, out) == (2, "")
    assert err.startswith("zkconsumer simulate: cannot write") and err.count("\n") == 1
