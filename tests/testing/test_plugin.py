"""The pytest plugin (zkconsumer.testing) used as a team would: its fixtures on the session's servers, and a comparison
with the team's own application in a few lines. Also in make test's container pass (scripts/containers.sh), where the
session's ZooKeeper is a container."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from migration_apps import REVOKED, read_values
from support import TWO_JOIN_SCENARIO, wait_for
from time_scale import bounded

from zkconsumer.scenarios.model import Action, Member, Production, Scenario, Scene, Topic

pytestmark = [pytest.mark.migration, pytest.mark.timeout(300)]
HERE = Path(__file__).parent
APP = "migration_apps:record"

TWO_MEMBERS = Scenario("two", "Two members", "one joins, the first leaves", Topic("plugin", 2), Production(rate=20),
                       (Member("a"), Member("b")),
                       (Scene(1, "a starts", "", (Action("start", "a"),)),
                        Scene(2, "b joins", "", (Action("start", "b"),)),
                        Scene(3, "a leaves", "", (Action("stop", "a"),))))


def test_loading_the_plugin_imports_nothing_that_starts_or_weighs():
    probe = ("import sys, zkconsumer.testing.plugin; print(sorted(m for m in ('kazoo', 'confluent_kafka', "
             "'testcontainers', 'docker', 'zkconsumer.embedded', 'zkconsumer.migration', 'zkconsumer.members') "
             "if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=bounded(30))
    assert (done.returncode, done.stdout, done.stderr) == (0, "[]\n", "")


def test_a_legacy_member_in_the_test_s_process_reads_what_was_produced_and_commits_it(
        zkconsumer_topics, zkconsumer_produce, zkconsumer_legacy_members, zkconsumer_group, zkconsumer_names):
    topic = zkconsumer_topics.create(partitions=2)
    sent = [*zkconsumer_produce(topic, 5, keys=lambda n: f"k{n}", partition=0),
            *zkconsumer_produce(topic, 5, partition=1)]
    assert [(s.partition, s.offset) for s in sent] == [(p, o) for p in (0, 1) for o in range(5)]
    assert sent[1].key == b"k1" and sent[6].key is None
    group = zkconsumer_names.group()
    member = zkconsumer_legacy_members.start(group, topic)
    wait_for(lambda: len(member.delivered) == 10)
    assert sorted(m.value for m in member.delivered) == sorted(s.value for s in sent)
    ends = {(topic, p): max(s.offset for s in sent if s.partition == p) + 1 for p in {s.partition for s in sent}}
    state = wait_for(lambda: (read := zkconsumer_group(group)).offsets == ends and read)
    assert set(state.owners) == {(topic, 0), (topic, 1)} and state.members == (member.consumer_id,)
    member.stop()
    wait_for(lambda: not zkconsumer_group(group).owners)


def test_a_legacy_member_process_killed_leaves_its_claims_until_its_session_ends(
        zkconsumer_topics, zkconsumer_produce, zkconsumer_legacy_members, zkconsumer_group, zkconsumer_names):
    topic = zkconsumer_topics.create()
    zkconsumer_produce(topic, ["a", "b"])
    group = zkconsumer_names.group()
    member = zkconsumer_legacy_members.start(group, topic, in_process=False,
                                             config={"zookeeper.session.timeout.ms": 2000})
    wait_for(lambda: [m.value for m in member.delivered] == [b"a", b"b"], timeout=30)
    member.kill()
    assert not member.running() and zkconsumer_group(group).owners  # the ephemeral owner outlives the process
    wait_for(lambda: not zkconsumer_group(group).owners, timeout=20)


def test_bad_input_fails_the_test_in_one_line_before_any_process_starts(zkconsumer_migration):
    for kwargs, line in (
            ({"app": "no_such_module:handle"}, "application 'no_such_module:handle': cannot import no_such_module "
                                               "(ModuleNotFoundError: No module named 'no_such_module')"),
            ({"app": "migration_apps:nothing"}, "application 'migration_apps:nothing': migration_apps has no nothing"),
            ({"app": APP, "scenario": "no-such-scenario"}, "no shipped scenario 'no-such-scenario'"),
            ({"app": APP, "protocols": ["sticky"]}, "unknown protocol 'sticky'"),
            ({"app": APP, "settings": "kafka"}, "--settings 'kafka': expected one of same, stock"),
            ({"app": APP, "messages": ["order-1"]}, "messages: message 0 is str, expected a tuple (key, value) or "
                                                    "(key, value, headers)"),
            ({"app": APP, "fetch_after_revoke_ms": 500}, "fetch_after_revoke_ms: a modern member's fault, from 0 ms; "
                                                         "play it with modern protocols")):
        with pytest.raises(pytest.fail.Exception) as failed:
            zkconsumer_migration.compare(**kwargs)
        assert line in str(failed.value) and "\n" not in str(failed.value), str(failed.value)
    assert not any(zkconsumer_migration.workdir.iterdir())  # no comparison was started


def test_a_comparison_runs_the_team_s_application_and_its_hooks_under_each_protocol(zkconsumer_migration):
    result = zkconsumer_migration.compare(app="migration_apps:record", scenario=TWO_MEMBERS,
                                          protocols=["legacy-range", "cooperative-sticky", "consumer"])
    result.assert_nothing_lost()
    result.assert_state_complete(read_values)
    # an application that dropped every tenth message it was given, as its state would show it: the assertion names
    # the first protocol and the count
    legacy = result.protocols["legacy-range"]
    kept = sorted(set(read_values(legacy.state_dir)), key=lambda v: int(v.rsplit(":", 1)[1]))
    dropped = kept[9::10]
    assert dropped
    with pytest.raises(AssertionError, match=rf"^legacy-range: the application lost {len(dropped)} of "
                                             rf"{legacy.produced} messages \(not in its state\): partition \d+ "):
        result.assert_state_complete(lambda state: [v for v in read_values(state) if v not in dropped])
    result.assert_duplicates_at_most(60)
    result.assert_no_application_failures()
    assert list(result.protocols) == ["legacy-range", "cooperative-sticky", "consumer-uniform"]
    whole = json.loads(result.report.read_text())
    # the coordinator that ran (the run's own front) and every protocol's timeouts, as the front's log says it ran
    (started,) = [json.loads(line) for line in (result.report.parent / "front" / "front.log").read_text().splitlines()
                  if '"front.started"' in line]
    assert whole["coordinator"] == "front" and whole["coordinator_identity"]["settings"] == {
        name: value for name, value in started["group_settings"].items()
        if name in whole["coordinator_identity"]["settings"]}
    assert started["group_settings"]["group.consumer.session.timeout.ms"] == "4000"
    assert {name: t["session_timeout_ms"] for name, t in whole["timeouts"].items()} == {
        "legacy-range": 4000, "cooperative-sticky": 4000, "consumer-uniform": 4000}
    assert whole["broker_note"] is None and not any("different session" in s for s in whole["verdict"]["overall"])
    report = whole["protocols"]  # the report the command would have written
    for name, outcome in result.protocols.items():
        assert outcome.produced > 0 and outcome.delivered == outcome.produced, name
        assert (outcome.produced, outcome.lost, outcome.duplicates, outcome.rebalances, outcome.moved_partitions) == (
            report[name]["produced"], report[name]["lost"], report[name]["duplicates"], report[name]["rebalances"],
            report[name]["moved_partitions"]), name
        assert outcome.rebalances >= 3 and outcome.events.is_file(), name
        assert outcome.state_dir.parent.name == name
        assert list(outcome.state_dir.glob("assigned-*.txt")), name  # the module's on_assign hook ran
        assert list(outcome.state_dir.glob(f"{REVOKED}-*.txt")), name  # and on_revoke, when b joined
    assert result.page.is_file() and result.report.is_file()
    with pytest.raises(AssertionError, match=r"^legacy-range paused partitions for [0-9.]+ partition-seconds, more "
                                             r"than 0$"):
        result.assert_paused_at_most(partition_seconds=0.0)


def test_an_application_that_raises_is_retried_then_given_up_and_the_result_says_which(zkconsumer_migration):
    result = zkconsumer_migration.compare(app="migration_apps:refuse_sevens", scenario=TWO_MEMBERS,
                                          protocols=["range"])
    outcome = result["range"]
    refused = [m for m in outcome.produced_messages if m.value.endswith("7")]
    assert refused and outcome.lost == len(refused)
    assert {(m.partition, m.offset) for m in outcome.lost_messages} == {(m.partition, m.offset) for m in refused}
    failures = [f for f in outcome.application_failures if f.hook is None]
    assert {(f.partition, f.offset) for f in failures} == {(m.partition, m.offset) for m in refused}
    assert all(f.attempts == 3 and f.gave_up and f.error.startswith("ValueError: cannot process") for f in failures)
    with pytest.raises(AssertionError) as caught:
        result.assert_nothing_lost()
    assert str(caught.value).startswith("range (at ")  # the coordinator's software, then what was lost
    assert f") lost {len(refused)} of {outcome.produced} messages: partition " in str(caught.value)
    assert "given up after the application raised on every attempt: ValueError: cannot process" in str(caught.value)


def test_the_command_runs_the_application_through_the_same_runner(kafka_zk, tmp_path):
    """``zkconsumer migration compare --app`` (its modules imported from the current directory) calls the runner the
    plugin calls: the application's state holds every message the report counts."""
    scenario = tmp_path / "two-join.toml"
    scenario.write_text(TWO_JOIN_SCENARIO)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "zkconsumer", "migration", "compare", "--zookeeper", kafka_zk,
                           "--protocols", "legacy-range", "--scenario", str(scenario), "--pace", "0.3",
                           "--app", APP, "--output-dir", str(out), "--json"],
                          capture_output=True, text=True, cwd=HERE, timeout=bounded(240))
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)["protocols"]["legacy-range"]
    assert figures["lost"] == 0 and len(set(read_values(out / "legacy-range" / "state"))) == figures["produced"] > 0
