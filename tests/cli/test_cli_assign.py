"""``zkconsumer assign``: the output format of the issue, and one clear line for every kind of bad input."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from time_scale import bounded

from zkconsumer import cli

ISSUE_EXAMPLE = {
    "strategy": "legacy-range",
    "partitions": {"t0": 3, "t1": 2},
    "members": {
        "group1_c1": {"streams": {"t0": 2, "t1": 1}},
        "c2": {"topics": ["t0", "t1"], "owned": [["t0", 0]], "generation": 3},
    },
}


def run(argv: list[str], capsys: pytest.CaptureFixture, stdin: str | None = None,
        monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    if stdin is not None:
        assert monkeypatch is not None
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    status = cli.main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def write(tmp_path: Path, document: object) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return str(path)


def test_issue_example_prints_threads_with_sorted_lists(tmp_path: Path, capsys) -> None:
    status, out, err = run(["assign", "--input", write(tmp_path, ISSUE_EXAMPLE)], capsys)
    assert (status, err) == (0, "")
    assert out == ('{"assignment": {"c2-0": [["t0", 0], ["t1", 0]], "group1_c1-0": [["t0", 1], ["t1", 1]], '
                   '"group1_c1-1": [["t0", 2]]}}\n')


def test_strategy_option_overrides_and_modern_owners_are_members(capsys, monkeypatch) -> None:
    status, out, _ = run(["assign", "--strategy", "sticky"], capsys, json.dumps(ISSUE_EXAMPLE), monkeypatch)
    assert status == 0
    assignment = json.loads(out)["assignment"]
    assert sorted(assignment) == ["c2", "group1_c1"]
    assert ["t0", 0] in assignment["c2"]  # owned and sticky
    for partitions in assignment.values():
        assert partitions == sorted(partitions)


def test_every_owner_is_listed_even_when_idle(capsys, monkeypatch) -> None:
    scenario = {"strategy": "range", "partitions": {"t": 1},
                "members": {"a": {"topics": ["t"]}, "b": {"topics": ["t"]}, "c": {"topics": []}}}
    status, out, _ = run(["assign"], capsys, json.dumps(scenario), monkeypatch)
    assert status == 0
    assert json.loads(out) == {"assignment": {"a": [["t", 0]], "b": [], "c": []}}


def test_cooperative_sticky_withholds_a_transferring_partition(capsys, monkeypatch) -> None:
    scenario = {"strategy": "cooperative-sticky", "partitions": {"topic": 3}, "members": {
        "consumer1": {"topics": ["topic"], "owned": [["topic", 0], ["topic", 1], ["topic", 2]], "generation": 1},
        "consumer2": {"topics": ["topic"]}}}
    status, out, _ = run(["assign"], capsys, json.dumps(scenario), monkeypatch)
    assert status == 0
    assert json.loads(out) == {"assignment": {"consumer1": [["topic", 0], ["topic", 1]], "consumer2": []}}


def test_consumer_uniform_orders_topics_by_their_kafka_ids(capsys, monkeypatch) -> None:
    # Kafka's testFirstAssignmentTwoMembersTwoTopicsNoMemberRacks: topic3's id hashes to an earlier bucket,
    # so the flat list starts with topic3 and member A, first in map order, takes the spare partition.
    scenario = {"strategy": "consumer-uniform", "partitions": {"topic1": 3, "topic3": 2},
                "topic_ids": {"topic1": "T1-A4s3VTwiI5CTbEp6POw", "topic3": "T3-CU8fVTLCz5YMkLoDQsa"},
                "members": {"B": {"topics": ["topic1", "topic3"]}, "A": {"topics": ["topic3", "topic1"]}}}
    status, out, _ = run(["assign"], capsys, json.dumps(scenario), monkeypatch)
    assert status == 0
    assert json.loads(out) == {"assignment": {"B": [["topic1", 1], ["topic1", 2]],
                                              "A": [["topic1", 0], ["topic3", 0], ["topic3", 1]]}}
    status, out, _ = run(["assign", "--strategy", "consumer-range"], capsys, json.dumps(scenario), monkeypatch)
    assert json.loads(out) == {"assignment": {"B": [["topic1", 2], ["topic3", 1]],
                                              "A": [["topic1", 0], ["topic1", 1], ["topic3", 0]]}}


def test_consumer_uniform_hands_the_spare_partition_to_the_first_member_in_map_order(capsys, monkeypatch) -> None:
    # Balanced already (2 and 3), yet "a" comes first in the coordinator's map and gets the spare: one move.
    scenario = {"strategy": "consumer-uniform", "partitions": {"orders": 5}, "members": {
        "a": {"topics": ["orders"], "owned": [["orders", 0], ["orders", 1]]},
        "b": {"topics": ["orders"], "owned": [["orders", 2], ["orders", 3], ["orders", 4]]}}}
    status, out, _ = run(["assign"], capsys, json.dumps(scenario), monkeypatch)
    assert status == 0
    assert json.loads(out) == {"assignment": {"a": [["orders", 0], ["orders", 1], ["orders", 4]],
                                              "b": [["orders", 2], ["orders", 3]]}}


def test_roundrobin_hash_option_changes_the_legacy_order(capsys, monkeypatch) -> None:
    scenario = {"strategy": "legacy-roundrobin", "partitions": {"topic1": 12},
                "members": {c: {"streams": {"topic1": 1}} for c in ("g_c1", "g_c2", "g_c3")}}
    results = []
    for extra in ([], ["--roundrobin-hash", "dash"]):
        status, out, _ = run(["assign", *extra], capsys, json.dumps(scenario), monkeypatch)
        assert status == 0
        results.append(json.loads(out)["assignment"])
    assert results[0]["g_c1-0"] == [["topic1", 1], ["topic1", 4], ["topic1", 7], ["topic1", 10]]
    assert results[0] != results[1]


BAD = [
    ("unknown strategy", {**ISSUE_EXAMPLE, "strategy": "sticki"}, "unknown strategy 'sticki'"),
    ("negative partitions", {**ISSUE_EXAMPLE, "partitions": {"t0": -1, "t1": 2}},
     "partitions.t0: the partition count must be a non-negative integer, got -1"),
    ("owned topic missing", {**ISSUE_EXAMPLE, "members": {"c2": {"topics": ["t0"], "owned": [["nope", 0]]}}},
     'members.c2.owned: topic "nope" does not exist'),
    ("owned partition missing", {**ISSUE_EXAMPLE, "members": {"c2": {"topics": ["t0"], "owned": [["t0", 3]]}}},
     "partition t0-3 does not exist (t0 has 3 partitions)"),
    ("duplicate owned", {**ISSUE_EXAMPLE, "members": {"c2": {"topics": ["t0"], "owned": [["t0", 1], ["t0", 1]]}}},
     "members.c2.owned lists t0-1 twice"),
    ("duplicate member", '{"strategy": "range", "partitions": {"t": 1}, "members": {"a": {}, "a": {}}}',
     'duplicate key "a"'),
    ("malformed JSON", '{"strategy": "range", "partitions": {"t": 1}', "not JSON"),
    ("not an object", "[1, 2]", "the scenario must be a JSON object"),
    ("no strategy", {k: v for k, v in ISSUE_EXAMPLE.items() if k != "strategy"}, "no strategy"),
    ("unknown key", {**ISSUE_EXAMPLE, "member": {}}, 'unknown key "member"'),
    ("zero streams", {**ISSUE_EXAMPLE, "members": {"c": {"streams": {"t0": 0}}}},
     "the stream count must be a positive integer"),
    ("bad generation", {**ISSUE_EXAMPLE, "members": {"c": {"topics": ["t0"], "generation": "1"}}},
     "generation must be an integer"),
    ("roundrobin precondition", {**ISSUE_EXAMPLE, "strategy": "legacy-roundrobin"},
     "group1_c1 has different stream counts (t0: 2, t1: 1)"),
    ("topic id not base64", {**ISSUE_EXAMPLE, "topic_ids": {"t0": "not an id!"}},
     "topic_ids.t0: topic id 'not an id!' is not URL-safe base64"),
    ("topic id of no topic", {**ISSUE_EXAMPLE, "topic_ids": {"t9": "T1-A4s3VTwiI5CTbEp6POw"}},
     'topic_ids.t9: topic "t9" does not exist'),
    ("topic id twice", {**ISSUE_EXAMPLE, "topic_ids": {"t0": "T1-A4s3VTwiI5CTbEp6POw",
                                                        "t1": "T1-A4s3VTwiI5CTbEp6POw"}},
     'topic_ids.t1: T1-A4s3VTwiI5CTbEp6POw is already the id of "t0"'),
    ("reserved topic id", {**ISSUE_EXAMPLE, "topic_ids": {"t0": "AAAAAAAAAAAAAAAAAAAAAA"}},
     "is an id Kafka never gives a topic"),
    ("target held twice", {"strategy": "consumer-uniform", "partitions": {"t": 2}, "members": {
        "a": {"topics": ["t"], "owned": [["t", 0]]}, "b": {"topics": ["t"], "owned": [["t", 0]]}}},
     "t-0 is in the target assignment of both 'a' and 'b'"),
]


@pytest.mark.parametrize("document, message", [(d, m) for _, d, m in BAD], ids=[name for name, _, _ in BAD])
def test_bad_input_is_one_line_on_stderr_and_exit_2(tmp_path: Path, capsys, document, message: str) -> None:
    status, out, err = run(["assign", "--input", write(tmp_path, document)], capsys)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1 and err.startswith("zkconsumer assign: ")
    assert message in err


def test_missing_input_file(tmp_path: Path, capsys) -> None:
    status, out, err = run(["assign", "--input", str(tmp_path / "none.json")], capsys)
    assert (status, out) == (2, "")
    assert err.startswith("zkconsumer assign: cannot read ") and err.count("\n") == 1


def test_installed_entry_point(tmp_path: Path) -> None:
    executable = Path(sys.executable).parent / "zkconsumer"
    if not executable.exists():
        pytest.skip("the zkconsumer entry point is not installed next to this interpreter")
    done = subprocess.run([str(executable), "assign", "--input", write(tmp_path, ISSUE_EXAMPLE)],
                          capture_output=True, text=True, timeout=bounded(60))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["assignment"]["group1_c1-1"] == [["t0", 2]]
