"""``zkconsumer compare``: the side-by-side view, as JSON and as a table, and its errors."""

from __future__ import annotations

import io
import json
import sys

import pytest

from zkconsumer import cli

MIGRATION = {
    "partitions": {"t0": 3, "t1": 2},
    "members": {
        "group1_c1": {"streams": {"t0": 2, "t1": 1}},
        "c2": {"topics": ["t0", "t1"], "owned": [["t0", 0]], "generation": 3},
    },
}

JOINING = {  # the classic join: consumer1 owns everything, consumer2 joins
    "partitions": {"topic": 3},
    "members": {
        "consumer1": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 1], ["topic", 2]], "generation": 1},
        "consumer2": {"topics": ["topic"]},
    },
}


def compare(scenario: object, *options: str, capsys, monkeypatch) -> tuple[int, str, str]:
    text = scenario if isinstance(scenario, str) else json.dumps(scenario)
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    status = cli.main(["compare", *options])
    out, err = capsys.readouterr()
    return status, out, err


def test_json_folds_threads_into_consumers(capsys, monkeypatch) -> None:
    status, out, err = compare(MIGRATION, "--json", "--strategies", "legacy-range,range", capsys=capsys,
                               monkeypatch=monkeypatch)
    assert (status, err) == (0, "")
    report = json.loads(out)["strategies"]
    assert list(report) == ["legacy-range", "range"]
    legacy = report["legacy-range"]
    assert legacy["family"] == "legacy"
    assert legacy["members"]["group1_c1"] == {
        "count": 3, "partitions": [["t0", 1], ["t0", 2], ["t1", 1]],
        "threads": {"group1_c1-0": [["t0", 1], ["t1", 1]], "group1_c1-1": [["t0", 2]]}}
    assert legacy["members"]["c2"]["count"] == 2
    assert legacy["spread"] == {"members": 1, "threads": 1}
    assert legacy["balance_score"] == 1
    assert (legacy["idle_members"], legacy["idle_threads"]) == ([], [])
    assert legacy["moved"] == 0 and legacy["cooperative"] is None
    modern = report["range"]
    assert modern["members"]["c2"]["partitions"] == [["t0", 0], ["t0", 1], ["t1", 0]]
    assert modern["members"]["group1_c1"]["threads"] == {"group1_c1": [["t0", 2], ["t1", 1]]}


def test_json_counts_moves_and_idle_threads(capsys, monkeypatch) -> None:
    scenario = {"partitions": {"t": 2}, "members": {
        "a": {"streams": {"t": 3}, "owned": [["t", 1]]}, "b": {"streams": {"t": 1}, "owned": [["t", 0]]}}}
    status, out, _ = compare(scenario, "--json", "--strategies", "legacy-range,sticky", capsys=capsys,
                             monkeypatch=monkeypatch)
    assert status == 0
    report = json.loads(out)["strategies"]
    legacy = report["legacy-range"]
    assert legacy["idle_members"] == ["b"] and legacy["idle_threads"] == ["a-2", "b-0"]
    assert legacy["moved"] == 1  # t-0 goes from b to a
    assert legacy["spread"] == {"members": 2, "threads": 1}
    assert report["sticky"]["moved"] == 0


def test_cooperative_sticky_revokes_first_and_assigns_in_a_second_rebalance(capsys, monkeypatch) -> None:
    status, out, _ = compare(JOINING, "--json", "--strategies", "sticky,cooperative-sticky", capsys=capsys,
                             monkeypatch=monkeypatch)
    assert status == 0
    report = json.loads(out)["strategies"]
    assert report["cooperative-sticky"]["cooperative"] == {
        "rebalances": 2, "revoked_first_phase": [["topic", 2, "consumer1"]],
        "assigned_second_phase": [["topic", 2, "consumer2"]]}
    for name in ("sticky", "cooperative-sticky"):
        assert report[name]["members"]["consumer2"]["partitions"] == [["topic", 2]]
        assert report[name]["moved"] == 1


def test_table_is_the_default(capsys, monkeypatch) -> None:
    status, out, err = compare(JOINING, capsys=capsys, monkeypatch=monkeypatch)
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0].split() == ["strategy", "family", "spread/member", "spread/thread", "balance", "score",
                                "idle", "members", "idle", "threads", "moved"]
    assert any(line.split()[:2] == ["cooperative-sticky", "modern"] for line in lines)
    assert "partitions per member" in lines
    assert "cooperative-sticky (final assignment, after 2 rebalances)" in lines
    assert "  revoked in the first rebalance: topic-2 (consumer1)" in lines
    assert "  assigned in a follow-up rebalance: topic-2 -> consumer2" in lines
    assert any(line.split() == ["consumer1", "2", "topic[0-1]"] for line in lines)


def test_a_failing_strategy_is_reported_inline(capsys, monkeypatch) -> None:
    status, out, _ = compare(MIGRATION, "--json", capsys=capsys, monkeypatch=monkeypatch)
    assert status == 0
    report = json.loads(out)["strategies"]
    assert list(report) == ["legacy-range", "legacy-roundrobin", "range", "roundrobin", "sticky",
                            "cooperative-sticky", "consumer-uniform", "consumer-range"]
    assert "different stream counts" in report["legacy-roundrobin"]["error"]
    status, out, _ = compare(MIGRATION, capsys=capsys, monkeypatch=monkeypatch)
    assert status == 0 and "legacy-roundrobin: legacy-roundrobin needs every consumer" in out


@pytest.mark.parametrize("scenario, options, message", [
    (MIGRATION, ["--strategies", "legacy-roundrobin"], "different stream counts"),
    (MIGRATION, ["--strategies", "range,bogus"], "unknown strategy 'bogus'"),
    (MIGRATION, ["--strategies", ","], "--strategies names no strategy"),
    ('{"partitions": ', [], "not JSON"),
    ({"partitions": {"t": -2}, "members": {}}, [], "non-negative integer"),
    ({"partitions": {"t": 1}, "members": {"a": {"topics": ["t"], "owned": [["u", 0]]}}}, [],
     'topic "u" does not exist'),
])
def test_a_bad_scenario_or_strategy_fails_in_one_line(scenario, options: list[str], message: str, capsys,
                                                      monkeypatch) -> None:
    status, out, err = compare(scenario, *options, capsys=capsys, monkeypatch=monkeypatch)
    assert (status, out) == (2, "")
    assert err.startswith("zkconsumer compare: ") and err.count("\n") == 1 and message in err


def test_the_same_membership_change_eager_and_cooperative(capsys, monkeypatch) -> None:
    """A joining member under an eager protocol: everything consumer1 owned stops first, then the whole
    assignment starts; under cooperative-sticky only the partition that moves stops, the two others are fetched
    throughout, and the moved one is assigned in the follow-up rebalance."""
    status, out, _ = compare(JOINING, "--json", "--strategies", "legacy-range,range,cooperative-sticky",
                             capsys=capsys, monkeypatch=monkeypatch)
    assert status == 0
    report = json.loads(out)["strategies"]
    for name in ("legacy-range", "range"):
        assert report[name]["rebalance"] == {
            "protocol": "eager", "rebalances": 1,
            "revoked_first": [["topic", 0, "consumer1"], ["topic", 1, "consumer1"], ["topic", 2, "consumer1"]],
            "assigned_after": [["topic", 0, "consumer1"], ["topic", 1, "consumer1"], ["topic", 2, "consumer2"]],
            "kept_fetching": 0}
    assert report["cooperative-sticky"]["rebalance"] == {
        "protocol": "cooperative", "rebalances": 2, "revoked_first": [["topic", 2, "consumer1"]],
        "assigned_after": [["topic", 2, "consumer2"]], "kept_fetching": 2}
    # the older keys are all still there
    assert set(report["range"]) == {"family", "members", "spread", "balance_score", "idle_members", "idle_threads",
                                    "moved", "cooperative", "rebalance"}


def test_the_table_ends_with_the_eager_and_cooperative_outcome(capsys, monkeypatch) -> None:
    scenario = {"partitions": {"t": 6}, "members": {
        "a": {"topics": ["t"], "owned": [["t", 0], ["t", 1], ["t", 2]], "generation": 2},
        "b": {"topics": ["t"], "owned": [["t", 3], ["t", 4], ["t", 5]], "generation": 2},
        "c": {"topics": ["t"]}}}
    status, out, _ = compare(scenario, "--strategies", "roundrobin,cooperative-sticky", capsys=capsys,
                             monkeypatch=monkeypatch)
    assert status == 0
    lines = out.splitlines()
    start = lines.index(next(line for line in lines if line.startswith("the same membership change")))
    assert lines[start + 1].split() == ["strategy", "protocol", "rebalances", "revoked", "first", "assigned",
                                        "after", "kept", "fetching"]
    assert lines[start + 2].split() == ["roundrobin", "eager", "1", "6", "6", "0"]
    assert lines[start + 3].split() == ["cooperative-sticky", "cooperative", "2", "2", "2", "4"]


SPARE = {  # already balanced (2 and 3), but "a" is first in the coordinator's members map
    "partitions": {"orders": 5},
    "members": {
        "a": {"topics": ["orders"], "owned": [["orders", 0], ["orders", 1]]},
        "b": {"topics": ["orders"], "owned": [["orders", 2], ["orders", 3], ["orders", 4]]},
    },
}


def test_the_server_side_assignors_beside_cooperative_sticky(capsys, monkeypatch) -> None:
    """uniform gives the spare partition of an uneven split to the first member in map order, so a balanced
    target still moves one partition, where cooperative-sticky moves none; the consumer protocol revokes
    the moving partition, then assigns it, while the four others are fetched throughout."""
    status, out, _ = compare(SPARE, "--json", "--strategies", "cooperative-sticky,consumer-uniform,consumer-range",
                             capsys=capsys, monkeypatch=monkeypatch)
    assert status == 0
    report = json.loads(out)["strategies"]
    assert [report[s]["moved"] for s in report] == [0, 1, 1]
    uniform = report["consumer-uniform"]
    assert uniform["family"] == "modern"
    assert uniform["members"]["a"]["partitions"] == [["orders", 0], ["orders", 1], ["orders", 4]]
    assert (uniform["spread"], uniform["idle_members"]) == ({"members": 1, "threads": 1}, [])
    assert uniform["rebalance"] == {
        "protocol": "consumer", "rebalances": 1, "revoked_first": [["orders", 4, "b"]],
        "assigned_after": [["orders", 4, "a"]], "kept_fetching": 4}
    assert report["consumer-range"]["members"]["a"]["partitions"] == [["orders", 0], ["orders", 1], ["orders", 2]]
    assert report["consumer-range"]["rebalance"]["revoked_first"] == [["orders", 2, "b"]]
    status, out, _ = compare(SPARE, "--strategies", "cooperative-sticky,consumer-uniform", capsys=capsys,
                             monkeypatch=monkeypatch)
    lines = out.splitlines()
    assert lines[2].split() == ["consumer-uniform", "modern", "1", "1", "1", "0", "0", "1"]
    assert ["consumer-uniform", "consumer", "1", "1", "1", "4"] in [line.split() for line in lines]


def test_the_documented_scenario_runs_and_owned_at_the_top_is_placed(capsys, monkeypatch) -> None:
    """docs/tools.md's example is a valid scenario for every strategy compared; `owned` written one level too high
    is told it belongs inside a member."""
    from support import REPO

    page = (REPO / "docs" / "tools.md").read_text()
    section = page.split("## The scenario of `assign` and `compare`", 1)[1]
    example = section.split("```json\n", 1)[1].split("```", 1)[0]
    status, out, err = compare(example, "--json", "--strategies", "legacy-range,range,sticky", capsys=capsys,
                               monkeypatch=monkeypatch)
    assert (status, err) == (0, "")
    assert set(json.loads(out)["strategies"]) == {"legacy-range", "range", "sticky"}
    misplaced = {"partitions": {"t": 2}, "members": {"c1": {"topics": ["t"]}}, "owned": [["t", 0]]}
    status, out, err = compare(misplaced, capsys=capsys, monkeypatch=monkeypatch)
    assert (status, out) == (2, "")
    assert err.splitlines() == ['zkconsumer compare: invalid scenario: the scenario has "owned" at the top level: '
                                'it is a member\'s key, it belongs inside a member ("members": {"c1": {"owned": '
                                '...}})']
