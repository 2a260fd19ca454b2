"""Promises every command keeps: each data command takes ``--json`` and prints JSON with it (one loop over them,
against the real servers), and every option of every command has help text (a walk over every subcommand)."""

from __future__ import annotations

import argparse
import json

import pytest
from support import mirrored_topic, produce, zkconsumer_cli

from zkconsumer import cli

#: commands that print no data, each with why: everything else is a data command and must take --json
NOT_DATA = {
    "local down": "stops processes; one line",
    "topics create": "an action; its one line says it was done",
    "topics alter": "an action; its one line says it was done",
    "bridge": "a long-running mirror",
    "demo": "a narrated show and a page",
    "front": "a long-running proxy",
    "trace render": "writes a page (HTML/SVG)",
    "trace show": "a text rendering of an events file that is already JSON lines",
    "snapshot": "writes JSON lines to --output: JSON is its only format",
    "analyze fleet": "writes Parquet tables and a page",
    "analyze events": "writes Parquet tables and a page",
    "simulate sweep": "a Spark job; writes a Parquet table and a page",
}


def leaf_parsers() -> dict[str, argparse.ArgumentParser]:
    """Every runnable subcommand's parser, by its words (``groups describe``)."""
    found: dict[str, argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found[" ".join(words)] = parser
            return
        for name, sub in subs[0].choices.items():
            walk(sub, [*words, name])

    walk(cli.build_parser(cli.COMMANDS), [])
    return found


def test_every_option_of_every_command_has_help_text() -> None:
    parsers = {"": cli.build_parser(cli.COMMANDS), **leaf_parsers()}
    assert len(parsers) > 25
    for words, parser in parsers.items():
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            name = "/".join(action.option_strings) or action.dest
            assert action.help and action.help != argparse.SUPPRESS, f"zkconsumer {words}: {name} has no help"
        shown = parser.format_help()
        assert "%%" not in shown and "%(" not in shown, f"zkconsumer {words}: unformatted % in its help"


def test_every_data_command_takes_json() -> None:
    leaves = leaf_parsers()
    assert set(NOT_DATA) <= set(leaves)
    for words, parser in leaves.items():
        has_json = any("--json" in action.option_strings for action in parser._actions)
        assert has_json or words in NOT_DATA, f"zkconsumer {words}: --json missing"


@pytest.fixture
def quiet_log(tmp_path, monkeypatch):
    monkeypatch.setenv("ZKCONSUMER_LOG_FILE", str(tmp_path / "zkconsumer.log"))


def test_each_data_command_prints_json(zk, kafka_zk, bootstrap_servers, topic_name, tmp_path, capsys, quiet_log):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    produce(bootstrap_servers, topic, [b"a", b"b"], partition=0)
    group = "json-loop"
    offsets = tmp_path / "offsets.txt"
    offsets.write_text(f"/consumers/{group}/offsets/{topic}/0:1\n")
    assert cli.main(["offsets", "import", "--input", str(offsets), "--zookeeper", kafka_zk]) == 0
    capsys.readouterr()
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps({"strategy": "range", "partitions": {"t": 2},
                                    "members": {"a": {"streams": {"t": 1}}, "b": {"streams": {"t": 1}}}}))
    zk_args, broker_args = ["--zookeeper", kafka_zk], ["--bootstrap-server", bootstrap_servers]
    in_process = {
        "groups list": ["groups", "list", *zk_args],
        "groups list --bootstrap-server": ["groups", "list", *zk_args, *broker_args],
        "groups describe": ["groups", "describe", "--group", group, *zk_args],
        "groups verify": ["groups", "verify", "--group", group, *zk_args],
        "topics describe": ["topics", "describe", *zk_args],
        "topics describe NAME": ["topics", "describe", topic, *zk_args],
        "topics place": ["topics", "place", "--brokers", "0,1", "--partitions", "2", "--replication-factor", "1"],
        "offsets export": ["offsets", "export", "--group", group, *zk_args],
        "offsets import": ["offsets", "import", "--input", str(offsets), "--dry-run", *zk_args],
        "offsets migrate": ["offsets", "migrate", "--group", group, "--to", "kafka", "--dry-run", *zk_args,
                            *broker_args],
        "coordinator": ["coordinator", "--group", group, *broker_args],
        "assign": ["assign", "--input", str(scenario)],
        "compare": ["compare", "--input", str(scenario)],
        "simulate connect": ["simulate", "connect", "--workers", "2", "--connectors", "1", "--tasks-per-connector",
                             "2", "--delay-ms", "1000"],
        "simulate storm": ["simulate", "storm", "--members", "2", "--partitions", "4"],
        "local status": ["local", "status", "--run-dir", str(tmp_path / "no-environment")],
    }
    printed: dict[str, object] = {}
    for name, argv in in_process.items():
        status = cli.main([*argv, "--json"])
        out = capsys.readouterr().out
        assert status == (1 if name == "local status" else 0), name  # status: nothing runs there; JSON all the same
        printed[name] = json.loads(out)
    # The console tools run in their own process (they install signal handlers).
    sent = zkconsumer_cli("produce", "--topic", topic, "--partition", "1", *broker_args, "--json", input="c\n")
    printed["produce"] = json.loads(sent.stdout)
    read = zkconsumer_cli("consume", "--topic", topic, "--group", group, "--max-messages", "1", *zk_args, "--json")
    printed["consume"] = json.loads(read.stdout)
    assert {"topic": topic, "delivered": 1, "failures": []} == printed["produce"]
    assert printed["groups verify"] == {"group": group, "ok": True, "problems": [],  # no member subscribes yet
                                        "verdict": "Rebalance operation successful !"}
    assert [t["topic"] for t in printed["topics describe NAME"]] == [topic]  # type: ignore[index]
    assert printed["topics describe NAME"][0]["partition_count"] == 2  # type: ignore[index]
    assert topic in [t["topic"] for t in printed["topics describe"]]  # type: ignore[union-attr]
    assert printed["offsets export"] == [{"group": group, "topic": topic, "partition": 0, "offset": 1}]
    assert printed["offsets import"]["dry_run"] is True  # type: ignore[index]
    assert printed["offsets import"]["writes"] == [  # type: ignore[index]
        {"path": f"/consumers/{group}/offsets/{topic}/0", "offset": 1, "current": "1"}]


@pytest.mark.parametrize("raised", ["interrupt", "interrupt inside an extension"])
def test_an_interrupted_command_says_so_in_one_line_even_where_an_extension_wrapped_the_interrupt(raised, monkeypatch,
                                                                                                 capsys):
    """A C extension that runs the interrupt's handler inside a call and returns as if nothing was raised (confluent
    -kafka's, taking SIGTERM as Ctrl-C in ``local up``) makes CPython raise SystemError from the KeyboardInterrupt: it
    is an interruption all the same, said in one line, status 130."""
    def interrupted(_args: object) -> None:
        if raised == "interrupt":
            raise KeyboardInterrupt
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as exc:
            raise SystemError("<built-in method list_topics> returned a result with an exception set") from exc

    monkeypatch.setattr(cli, "_configure_logging", interrupted)
    assert cli.main(["topics", "describe", "--zookeeper", "127.0.0.1:1"]) == 130
    assert capsys.readouterr().err.splitlines() == ["zkconsumer topics: interrupted"]


def test_a_system_error_of_another_cause_is_not_taken_for_an_interruption(monkeypatch):
    def broken(_args: object) -> None:
        raise SystemError("something else")

    monkeypatch.setattr(cli, "_configure_logging", broken)
    with pytest.raises(SystemError, match="something else"):
        cli.main(["topics", "describe", "--zookeeper", "127.0.0.1:1"])
