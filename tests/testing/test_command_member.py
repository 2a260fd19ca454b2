"""A team's own consumer as the members of a comparison (``zkconsumer_migration.compare(member=...)``): the shipped
Python one (examples/migration_testing/orders/consumer.py), reporting in the verifiable consumer's JSON lines and
measured as our own members are; and a consumer that commits before processing and crashes in between, whose lost
message the result names. The shipped Java consumer (examples/migration_testing/java/OrdersConsumer.java) runs from
the wheel, in the example project's own tests (tests/testing/test_example_project.py)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from zkconsumer.events.validation import problems
from zkconsumer.scenarios.model import Action, Member, Production, Scenario, Scene, Topic

pytestmark = [pytest.mark.migration, pytest.mark.timeout(300)]
HERE = Path(__file__).parent
REPO = HERE.parents[1]
EXAMPLE = REPO / "examples" / "migration_testing"

TWO_MEMBERS = Scenario("two", "Two members", "one joins, the first leaves", Topic("orders", 2), Production(rate=20),
                       (Member("a"), Member("b")),
                       (Scene(1, "a starts", "", (Action("start", "a"),)),
                        Scene(2, "b joins", "", (Action("start", "b"),)),
                        Scene(3, "a leaves", "", (Action("stop", "a"),))))
BOTH_START = Scenario("both", "Both start", "two members start together", Topic("orders", 2), Production(rate=20),
                      (Member("a"), Member("b")),
                      (Scene(1, "a and b start", "", (Action("start", "a"), Action("start", "b"))),))


def processed(state: Path) -> list[str]:
    """The values orders.app (and the Java consumer, alike) kept: ``key value`` lines, a file per process."""
    return [line.split(" ")[1] for f in state.glob("processed-*.txt") for line in f.read_text().splitlines()]


def member_events(outcome) -> list[dict]:
    return [json.loads(line) for line in outcome.events.read_text().splitlines()]


def assert_measured_as_ours(outcome) -> None:
    """The member's reports became the events our members write, every one as the catalogue declares it."""
    events = member_events(outcome)
    assert [p for e in events for p in problems(e)] == []
    names = {e["event"] for e in events if str(e.get("consumer_id", "")).endswith(("_a", "_b"))}
    assert {"consumer.subscribed", "rebalance.started", "rebalance.completed", "rebalance.release",
            "offsets.committed", "consumer.shutdown"} <= names, names
    assert "demo.member_output" not in names  # nothing but reports on the members' stdout


@pytest.fixture
def orders_on_path(monkeypatch) -> None:
    """The example project's modules importable by the members, as its own test session has them."""
    monkeypatch.setenv("PYTHONPATH", str(EXAMPLE))


def test_the_team_s_python_consumer_runs_as_the_members_and_loses_nothing(zkconsumer_migration, orders_on_path):
    result = zkconsumer_migration.compare(scenario=TWO_MEMBERS, protocols=["range"],  # KIP-848: the example project
                               member=[sys.executable, "-m", "orders.consumer"])
    result.assert_nothing_lost()
    result.assert_state_complete(processed)
    result.assert_duplicates_at_most(40)  # at most a commit's worth (20 records) when a leaves
    for name, outcome in result.protocols.items():
        assert outcome.produced > 0 and outcome.rebalances >= 3 and not outcome.member_failures, name
        assert_measured_as_ours(outcome)
    report = json.loads(result.report.read_text())
    modern = report["member_settings"]["modern"]  # what the page says ran: the command, and what it was told
    assert modern["member"].endswith("-m orders.consumer") and modern["session.timeout.ms (told)"] == "4000"


def test_a_consumer_that_commits_before_processing_and_crashes_loses_the_message_the_result_names(zkconsumer_migration):
    result = zkconsumer_migration.compare(scenario=BOTH_START, protocols=["range"],
                               member=[sys.executable, str(HERE / "wrong_consumer.py"), "--crash", "a"])
    outcome = result["range"]
    assert [f.member.rsplit("_", 1)[-1] for f in outcome.member_failures] == ["a"]
    (lost,) = outcome.lost_messages  # the one it committed, then died before processing
    commits = [o for e in member_events(outcome)
               if e["event"] == "offsets.committed" and e["consumer_id"].endswith("_a")
               for o in e["offsets"] if o["partition"] == lost.partition]
    assert commits[-1]["offset"] == lost.offset + 1
    with pytest.raises(AssertionError) as failed:
        result.assert_nothing_lost()
    sentence = str(failed.value)
    assert re.match(rf"^range \(at .+\) lost 1 of {outcome.produced} messages: partition {lost.partition} "
                    rf"offset {lost.offset}$", sentence), sentence
    assert "\n" not in sentence
