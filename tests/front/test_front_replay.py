"""Issue 47's "no change in behaviour", kept checked: the front's group API exchanges recorded during the coordinator
tests at a73b0dfc (before the front's reshaping) and replayed into a73b0dfc itself and into f71413f (after it) by
``scripts/front_replay.py compare`` answered identically (docs/data/front-replay/results.json, checked against the
committed recording here); and the same recording replayed in process into the current code, which issue 48 changed
on purpose, answers as recorded except where one of those deliberate changes explains a session's first difference
(the rest of such a session follows from it: its clients' later requests were built from the recorded answers)."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "front_replay.py"


def _script():
    spec = importlib.util.spec_from_file_location("front_replay", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["front_replay"] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


replay = _script()

HEARTBEAT = 68


def _fields(entity) -> dict:
    return {field.name: getattr(entity, field.name) for field in dataclasses.fields(entity)}


def _deliberate(call: dict, expected: dict, actual: dict) -> str | None:
    """Which of issue 48's deliberate changes explains a session's first differing answer, if one does: the rest of
    the session follows from it (the recorded clients built their next requests from the recorded answers)."""
    if call["api_key"] != HEARTBEAT or "response" not in expected or "response" not in actual:
        return None
    want, got = (_fields(replay.decode_entity("response", HEARTBEAT, call["version"], outcome["response"]))
                 for outcome in (expected, actual))
    changed = {name for name in want if want[name] != got[name]}
    if changed == {"member_epoch"} and got["member_epoch"] == want["member_epoch"] + 1:
        return "KAFKA-20268: a new consumer group's epoch starts at 1, its first member's at 2"
    if (changed == {"error_message"} and "group.consumer.migration.policy is disabled" in want["error_message"]
            and "because online upgrade is disabled" in got["error_message"]):
        return "KAFKA-18134: the online upgrade's refusal worded as Kafka's"
    return None


@pytest.fixture(scope="module")
def recording() -> list[dict]:
    return replay.read_sessions(replay.RECORDING)


@pytest.fixture(scope="module")
def results() -> dict:
    return json.loads(replay.RESULTS.read_text())


def test_the_reshaping_answered_every_recorded_exchange_as_before(recording, results):
    recorded = [replay.digest(replay.recorded_outputs(session)) for session in recording]
    assert results["recorded"] == recorded, "the results are not those of the committed recording: run compare"
    for commit in (replay.BEFORE, replay.AFTER):
        outcome = results["replays"][commit]
        assert outcome["differences"] == [], f"replayed into {commit}: {outcome['summary']}"
        assert outcome["digests"] == recorded, f"replayed into {commit}: answers other than recorded"
        assert outcome["summary"].endswith(": all identical")
    exchanges = sum(len(replay.recorded_outputs(session)["outcomes"]) for session in recording)
    assert f" {exchanges} exchanges " in results["replays"][replay.AFTER]["summary"]


def test_the_current_code_differs_from_before_only_where_issue_48_meant_it_to(recording):
    """Each session replayed into the current code answers as recorded, or its first differing answer is one of the
    deliberate changes (:func:`_deliberate`); a session whose groups are all classic is identical."""
    unexplained, explained = [], set()
    for session in recording:
        expected, actual = replay.recorded_outputs(session), replay.replay_session(session)
        calls = {str(e["call"]): e for e in session["events"] if e["event"] == "call"}
        differing = [call for call, outcome in expected["outcomes"].items() if actual["outcomes"].get(call) != outcome]
        if not differing:
            assert expected["writes"] == actual["writes"], f"{session['test']}: records written otherwise"
            continue
        first = differing[0]
        reason = _deliberate(calls[first], expected["outcomes"][first], actual["outcomes"][first])
        if reason is None:
            unexplained += [replay.describe(d) for d in replay.compare(session, expected, actual)][:1]
        else:
            explained.add(reason)
            assert any(e["api_key"] == HEARTBEAT for e in calls.values())
    assert not unexplained, "answers changed since a73b0dfc with no deliberate change to explain them:\n" + "\n".join(
        unexplained)
    assert len(explained) == 2, f"the deliberate changes seen: {sorted(explained)}"
