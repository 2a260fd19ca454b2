"""``zkconsumer simulate storm``: the table, the JSON figures per protocol and scene, and bad input refused in one
line before anything runs."""

from __future__ import annotations

import json

from zkconsumer import cli


def run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = cli.main(["simulate", "storm", *args])
    except SystemExit as exc:  # argparse's own errors
        status = int(exc.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_the_json_has_every_protocol_and_scene(capsys):
    status, out, err = run(capsys, "--members", "4", "--partitions", "40", "--json")
    assert (status, err) == (0, "")
    report = json.loads(out)
    assert (report["members"], report["partitions"]) == (4, 40)
    assert list(report["protocols"]) == ["legacy-range", "eager-range", "cooperative-sticky", "kip848-uniform"]
    for figures in report["protocols"].values():
        (scene,) = figures["scenes"]
        assert scene["time_to_stable_s"] == figures["time_to_stable_s"] > 0
        assert set(scene) >= {"partition_seconds_paused", "zookeeper_requests", "conflicts", "rebalances"}
    assert report["protocols"]["legacy-range"]["scenes"][0]["zookeeper_requests"] > 0
    assert report["protocols"]["kip848-uniform"]["scenes"][0]["zookeeper_requests"] == 0


def test_a_shipped_scenario_prints_a_row_per_scene_and_protocol(capsys):
    status, out, _ = run(capsys, "--scenario", "rolling-restart", "--protocols", "legacy-range,kip848-range")
    assert status == 0
    assert out.count("legacy-range") == out.count("kip848-range") == 8  # the scenario's eight scenes
    assert "8. m3 SIGKILLed" in out


def test_bad_input_is_one_line_and_status_2(capsys):
    for args, said in ((["--protocols", "nope"], "unknown protocol nope"),
                       (["--scenario", "pause-and-grow"], "pauses a member"),
                       (["--scenario", "demo", "--members", "3"], "--members and --scenario"),
                       (["--members", "0"], "at least one member")):
        status, out, err = run(capsys, *args)
        assert status == 2 and out == "", args
        assert said in err and len(err.strip().splitlines()) == 1, err


def test_a_scene_not_stable_within_the_limit_says_what_kept_it(capsys):
    status, out, _ = run(capsys, "--members", "10", "--partitions", "1000", "--protocols",
                         "legacy-range,kip848-uniform", "--settle-limit-s", "0.1")
    assert status == 0
    table, said = out.split("not stable within the limit, as it stood then:")
    assert [line.split()[5] for line in table.splitlines() if line.startswith("1. ")] == ["-", "-"]
    assert "1. 10 members start, legacy-range: " in said and "ZooKeeper" in said and "partitions consuming" in said
    assert "1. 10 members start, kip848-uniform: the coordinator's group" in said
