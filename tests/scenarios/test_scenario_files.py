"""Scenario files (zkconsumer.scenarios): the shipped ones are today's demo and comparison, and a bad file is one
line naming the key and the problem, from either command, before any server or process starts."""

from __future__ import annotations

import pytest

from zkconsumer.cli import main
from zkconsumer.errors import UsageError
from zkconsumer.migration.scenes import check_playable, parse_protocols
from zkconsumer.migration.scenes import default_scenario as migration_default
from zkconsumer.scenarios.model import BOUNCE, CUTOVER, GROW, PAUSE, START, UPGRADE, WAIT, Action
from zkconsumer.scenarios.parse import ScenarioError, load, parse, shipped

GOOD = """
title = "mine"
[topic]
partitions = 2
[members.a]
[members.b]
streams = 2
config = { "rebalance.backoff.ms" = 500, "auto.commit.enable" = true }
[[scenes]]
title = "a starts"
actions = [{ start = "a" }]
[[scenes]]
title = "b joins, a freezes"
actions = [{ start = "b" }, { settle = true }, { pause = "a", seconds = 1.5 }, { wait = 2 }, { grow = 1 }]
"""


def test_the_shipped_scenarios_are_the_demo_s_and_the_comparison_s_stories():
    assert list(shipped()) == ["demo", "migration", "move", "move-offsets-tools", "move-skipped-step",
                               "pause-and-grow", "rolling-restart", "upgrade"]
    demo = load("demo")
    assert [(s.number, [a.describe() for a in s.actions]) for s in demo.scenes] == [
        (1, ["start c1"]), (2, ["start c2"]), (3, ["start c3"]), (4, ["kill c2"]), (5, ["grow the topic by 2"])]
    assert (demo.topic.partitions, demo.final_partitions, demo.member("c3").streams) == (4, 6, 3)
    assert demo.scenes[3].waiting_for == "ZooKeeper to expire c2's session"
    migration = load("migration")
    assert [s.label for s in migration.scenes] == ["1. m1 starts", "2. m2 joins", "3. m3 joins", "4. m2 SIGKILLed",
                                                   "5. m1 leaves"]
    assert migration.grown == 0 and migration.production.rate == 50.0
    rolling = load("rolling-restart")
    assert (len(rolling.members), rolling.topic.partitions, len(rolling.scenes)) == (6, 12, 8)
    assert [[a.describe() for a in s.actions] for s in rolling.scenes[1:]] == [
        [f"stop m{i}", "wait until the group has settled", f"start m{i}"] for i in range(1, 7)] + [["kill m3"]]
    assert migration_default().title == rolling.title  # the comparison plays a deploy and a crash by default
    check_playable(rolling, parse_protocols("legacy-range,cooperative-sticky,consumer-uniform"))


def test_a_written_scenario_reads_as_written():
    scenario = parse(GOOD, "mine", "scenario mine.toml")
    assert scenario.member("b").config == (("rebalance.backoff.ms", "500"), ("auto.commit.enable", "true"))
    assert scenario.scenes[1].actions == (Action(START, "b"), Action("settle"), Action(PAUSE, "a", seconds=1.5),
                                          Action(WAIT, seconds=2.0), Action(GROW, partitions=1))
    assert scenario.final_partitions == 3 and scenario.uses(GROW) == "scene 2, action 5"
    assert not parse(GOOD.replace(', { grow = 1 }', '').replace(
        '{ start = "b" }, { settle = true }, ', ''), "x", "x").scenes[1].changes_membership


BAD = [  # (what replaces what in GOOD, the line's key and problem)
    (("title = \"mine\"", "title = "), "not TOML: Invalid value (at line 2, column"),
    (("title = \"mine\"", "topics = 3"), "topics: unknown key (known: title,"),
    (("partitions = 2", "partitions = 0"), "topic.partitions: must be from 1 to 64, not 0"),
    (("partitions = 2", "partitions = \"2\""), "topic.partitions: must be a whole number, not a string"),
    (("streams = 2", "streams = 2\nowned = [1]"),
     "members.b.owned: unknown key (known: streams, config, revoke_ms, static)"),
    (("[members.a]\n[members.b]\nstreams = 2\n", ""), "topic.config: unknown key (known: name, partitions)"),
    (("actions = [{ start = \"a\" }]", "actions = []"), "scene 1: actions: must be a non-empty array"),
    (("{ start = \"a\" }", "{ start = \"c9\" }"), "scene 1, action 1 (start): unknown member 'c9' (members: a, b)"),
    (("{ start = \"a\" }", "{ kill = \"a\" }"), "scene 1, action 1 (kill): a is not running at this point"),
    (("{ pause = \"a\", seconds = 1.5 }", "{ pause = \"a\" }"), "scene 2, action 3 (pause): seconds: pause needs"),
    (("seconds = 1.5", "seconds = -1"), "scene 2, action 3 (pause): seconds: must be more than 0"),
    (("{ wait = 2 }", "{ wait = 2, grow = 1 }"), "scene 2, action 4: names 2 actions (wait, grow)"),
    (("{ grow = 1 }", "{ grow = 70 }"), "scene 2, action 5 (grow): must be from 1 to 64, not 70"),
    (("{ settle = true }", "{ settle = 1 }"), "scene 2, action 2 (settle): write settle = true"),
    (("title = \"a starts\"", "name = \"a starts\""), "scene 1: name: unknown key"),
    (("{ start = \"b\" }", "{ upgrade = \"b\" }"), "scene 2, action 1 (upgrade): b is not running at this point"),
    (("{ start = \"b\" }", "{ upgrade = \"a\", seconds = 1 }"), "scene 2, action 1 (upgrade): seconds: unknown key"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_a_bad_file_is_one_line_naming_the_key(tmp_path, change, message):
    path = tmp_path / "bad.toml"
    old, new = change
    assert old in GOOD
    path.write_text(GOOD.replace(old, new, 1))
    with pytest.raises(ScenarioError) as caught:
        load(str(path))
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"scenario {path}: ") and message in line, line


def test_both_commands_refuse_a_bad_file_before_anything_starts(tmp_path, capsys, monkeypatch):
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace("{ start = \"a\" }", "{ stop = \"a\" }"))
    run_dir, out = tmp_path / "run", tmp_path / "out"
    monkeypatch.setenv("ZKCONSUMER_RUN_DIR", str(run_dir))
    want = f"scenario {path}: scene 1, action 1 (stop): a is not running at this point of the story"
    for command, prefix in ((["demo", "--output-dir", str(out)], "zkconsumer demo"),
                            (["migration", "compare", "--output-dir", str(out)], "zkconsumer migration")):
        capsys.readouterr()
        assert main([*command, "--scenario", str(path)]) == 2
        assert capsys.readouterr().err.splitlines() == [f"{prefix}: {want}"]
        assert not run_dir.exists() and not out.exists()  # no environment started, nothing written
    assert main(["demo", "--scenario", "nope"]) == 2
    assert "no shipped scenario 'nope' (shipped: demo, migration, move, move-offsets-tools" in capsys.readouterr().err


def test_a_modern_group_that_cannot_see_the_topic_grow_is_refused_before_start():
    scenario = load("pause-and-grow")
    check_playable(scenario, parse_protocols("legacy-range,legacy-roundrobin"), modern_growth=False)  # the bridge
    check_playable(scenario, parse_protocols("legacy-range,cooperative-sticky"))  # a front holds the topic smaller
    with pytest.raises(UsageError, match=r"scene 3, action 1: grow cannot be played by "
                       r"cooperative-sticky: a modern group sees a topic grow through a front's Metadata \(which "
                       r"holds it smaller until the scene\) or the broker's CreatePartitions"):
        check_playable(scenario, parse_protocols("legacy-range,cooperative-sticky"), modern_growth=False)


def test_the_shipped_scenarios_are_listed_with_their_actions(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ZKCONSUMER_RUN_DIR", str(tmp_path))
    capsys.readouterr()
    assert main(["demo", "--list-scenarios"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "demo: The classic rebalance story (4 partitions, grows by 2)" in lines
    assert "  4. m2 SIGKILLed: kill m2" in lines and "  2. b frozen for 1 s: pause b for 1 s; wait 1 s" in lines
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(("page", "scenes"), [("teaching.md", 4), ("migration-compare.md", 3)])
def test_the_docs_examples_are_valid_scenarios(page, scenes):
    import re
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / page).read_text()
    example = re.search(r"```toml\n(.*?)```", text, re.S)
    assert example is not None
    scenario = parse(example.group(1), "example", f"the example in docs/{page}")
    assert len(scenario.scenes) == scenes and scenario.uses(PAUSE) and scenario.uses(GROW)


def test_a_member_s_settings_are_refused_for_a_modern_member():
    scenario = parse(GOOD.replace(", { grow = 1 }", ""), "mine", "scenario mine.toml")
    check_playable(scenario, parse_protocols("legacy-range"))
    with pytest.raises(UsageError, match=r"^scenario mine.toml: members.b.config: settings over a "
                       r"member's own apply to legacy members only, not to range"):
        check_playable(scenario, parse_protocols("legacy-range,range"))


def test_the_upgrade_scenario_upgrades_every_member_in_turn_and_only_modern_groups_play_it(tmp_path):
    upgrade = load("upgrade")
    assert [[a.describe() for a in s.actions] for s in upgrade.scenes[1:]] == [
        [f"upgrade m{i} to group.protocol=consumer"] for i in range(1, 5)] + [["kill m2"]]
    assert all(s.changes_membership for s in upgrade.scenes) and upgrade.uses(UPGRADE) == "scene 2, action 1"
    # an upgraded member is running, as before: it can be upgraded again, paused
    upgrades = '{ upgrade = "a" }, { upgrade = "b" }, { upgrade = "a" }'
    again = parse(GOOD.replace('{ settle = true }', upgrades), "x", "x")
    assert [a.kind for a in again.scenes[1].actions][1:5] == [UPGRADE, UPGRADE, UPGRADE, PAUSE]
    check_playable(upgrade, parse_protocols("range,roundrobin,cooperative-sticky,consumer-uniform,consumer-range"))
    with pytest.raises(UsageError, match=r"^shipped scenario upgrade: scene 2, action 1: upgrade cannot be played by "
                       r"legacy-range: a ZooKeeper group has no in-place path to KIP-848 .*; play it with modern "
                       r"protocols only$"):
        check_playable(upgrade, parse_protocols("legacy-range,cooperative-sticky"))
    # by default, the comparison plays it with the modern protocols, and says which it left out
    from zkconsumer.migration.comparison import plan

    said: list[str] = []
    planned = plan(tmp_path / "out", scenario="upgrade", say=said.append)
    assert [p.name for p in planned.protocols] == ["range", "roundrobin", "cooperative-sticky", "consumer-uniform",
                                                   "consumer-range"]
    assert said == ["zkconsumer migration: legacy-range, legacy-roundrobin left out: shipped scenario upgrade "
                    "upgrades members to KIP-848 in place, which a ZooKeeper group cannot do (name them in "
                    "--protocols to see why)"]


MOVE = """
[members.a]
[members.b]
[[scenes]]
title = "legacy"
actions = [{ start = "a" }, { start = "b" }]
[[scenes]]
title = "dual commit"
actions = [{ dual_commit = "a" }, { dual_commit = "b" }]
[[scenes]]
title = "cutover"
actions = [{ cutover = "kafka" }]
"""


def test_the_move_s_actions_read_as_written_and_only_modern_protocols_play_them():
    scenario = parse(MOVE, "mine", "scenario mine.toml")
    assert scenario.moves and scenario.scenes[2].actions == (Action(CUTOVER, offsets="kafka", reset="latest"),)
    assert scenario.scenes[1].actions[0].describe() == "restart a with offsets.storage=kafka, dual.commit.enabled=true"
    assert all(s.changes_membership for s in scenario.scenes)
    earliest = parse(MOVE.replace('"kafka" }', '"exported", reset = "earliest" }'), "x", "x")
    assert earliest.scenes[2].actions == (Action(CUTOVER, offsets="exported", reset="earliest"),)
    check_playable(load("move"), parse_protocols("range,cooperative-sticky,consumer"))
    with pytest.raises(UsageError, match=r"^shipped scenario move: scene 2, action 1: dual_commit cannot be played by "
                       r"legacy-range: the move's target is a broker-side group"):
        check_playable(load("move"), parse_protocols("legacy-range,range"))
    with pytest.raises(UsageError, match=r"^scenario mine.toml: scene 3, action 2: grow cannot be played in a move"):
        check_playable(parse(MOVE.replace('"kafka" }', '"kafka" }, { grow = 1 }'), "mine", "scenario mine.toml"),
                       parse_protocols("range"))


@pytest.mark.parametrize(("change", "message"), [
    ('{ cutover = "zk" }', 'scene 3, action 1 (cutover): must say where the modern members find their offsets: '
                              "'kafka' or 'exported', not 'zk'"),
    ('{ cutover = "kafka", reset = "none" }', "scene 3, action 1 (cutover): reset: must be 'latest' or 'earliest'"),
    ('{ cutover = "kafka", seconds = 1 }', "scene 3, action 1 (cutover): seconds: unknown key for cutover "
                                           "(cutover takes reset)"),
    ('{ cutover = "kafka" }, { dual_commit = "a" }', "scene 3, action 2 (dual_commit): a is a modern member since "
                                                     "the cutover (scene 3, action 1)"),
    ('{ cutover = "kafka" }, { cutover = "kafka" }', "scene 3, action 2 (cutover): the group was cut over already"),
])
def test_a_bad_move_is_one_line_naming_the_action(change, message):
    with pytest.raises(ScenarioError) as caught:
        parse(MOVE.replace('{ cutover = "kafka" }', change), "mine", "scenario mine.toml")
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"scenario mine.toml: {message}"), line


def test_static_members_and_a_bounce_read_as_written_and_only_modern_protocols_play_static_members():
    text = GOOD.replace("[members.a]", "[members.a]\nstatic = true").replace('{ settle = true }', '{ bounce = "a" }')
    scenario = parse(text, "mine", "scenario mine.toml")
    assert scenario.member("a").static and not scenario.member("b").static
    assert scenario.scenes[1].actions[1] == Action(BOUNCE, "a") and scenario.scenes[1].changes_membership
    assert Action(BOUNCE, "a").describe() == "bounce a (stop it cleanly, start it again at once)"
    with pytest.raises(UsageError, match=r"^scenario mine.toml: members.a.static cannot be played by legacy-range: "
                       r"static membership \(group.instance.id, KIP-345\) has no ZooKeeper equivalent"):
        check_playable(scenario, parse_protocols("legacy-range,range"))
    with pytest.raises(ScenarioError, match=r"members.a.static: write static = true or false"):
        parse(GOOD.replace("[members.a]", "[members.a]\nstatic = 1"), "mine", "scenario mine.toml")
