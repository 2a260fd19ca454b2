"""The command line as a whole: each command loads only its own module, ``zkconsumer --help`` is what it was,
options shared by several commands are declared once, and older spellings keep working with the same output."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest
from time_scale import bounded

from zkconsumer import cli

SCENARIO = {
    "strategy": "legacy-range",
    "partitions": {"t0": 5},
    "members": {"C1": {"streams": {"t0": 2}}, "C2": {"streams": {"t0": 2}}},
}

# `zkconsumer --help` at 100 columns before the commands were loaded lazily: the command table, line for line.
COMMAND_TABLE = """\
positional arguments:
  COMMAND
    local               start, stop or inspect the embedded ZooKeeper + broker + bridge
                        environment
    topics              create, grow, describe or place topics (broker admin API, or ZooKeeper as
                        kafka-topics.sh did)
    bridge              mirror brokers, topics and leaders of any Kafka-protocol cluster into
                        ZooKeeper
    demo                watch the legacy rebalance: consumers join, die and a topic grows,
                        narrated step by step
    assign              assign partitions for a JSON scenario with one strategy
    compare             compare strategies on a JSON scenario (spread, idle members, moves)
    consume             the console consumer: join a group and print its messages
    produce             the console producer: send each line of stdin or a file as a message,
                        every delivery checked
    groups              list, describe (offsets, lag, owners) and verify consumer groups
    offsets             export or import groups' ZooKeeper offsets (ExportZkOffsets,
                        ImportZkOffsets), or move a group's offsets between ZooKeeper and Kafka
    coordinator         the broker-side view of a group: offsets partition, coordinator, members
    trace               draw the rebalance timeline of a run from its JSON-line events (HTML/SVG,
                        or text)
    snapshot            read every consumer group into JSON lines (or make synthetic ones), for
                        `analyze fleet`
    analyze             Spark jobs over a fleet snapshot (fleet) or event logs (events): Parquet
                        tables and a summary page
"""

LOADS = """
import json, sys
from zkconsumer import cli
status = cli.main(sys.argv[1:])
heavy = sorted(m for m in ("kazoo", "confluent_kafka") if m in sys.modules)
commands = sorted(m for m in sys.modules if m.startswith("zkconsumer.cli."))
print(json.dumps({"status": status, "heavy": heavy, "commands": commands}), file=sys.stderr)
"""


def loads(*argv: str, stdin: str) -> tuple[str, dict]:
    """Run the CLI in a fresh interpreter and report what it imported."""
    done = subprocess.run([sys.executable, "-c", LOADS, *argv], input=stdin, capture_output=True, text=True,
                          timeout=bounded(60))
    return done.stdout, json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["assign"], ["compare", "--json", "--strategies", "legacy-range,sticky"]])
def test_pure_commands_import_neither_kazoo_nor_confluent_kafka(argv: list[str]) -> None:
    out, seen = loads(*argv, stdin=json.dumps(SCENARIO))
    assert seen["status"] == 0
    assert seen["heavy"] == []
    assert f"zkconsumer.cli.{argv[0]}" in seen["commands"]
    assert not {"zkconsumer.cli.consume", "zkconsumer.cli.groups", "zkconsumer.cli.local"} & set(seen["commands"])
    result = json.loads(out)
    if argv[0] == "assign":
        assert result == {"assignment": {"C1-0": [["t0", 0], ["t0", 1]], "C1-1": [["t0", 2]],
                                         "C2-0": [["t0", 3]], "C2-1": [["t0", 4]]}}
    else:
        assert sorted(result["strategies"]) == ["legacy-range", "sticky"]


def help_of(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 0
    return capsys.readouterr().out


def test_top_level_help_lists_every_command_as_before(capsys, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    shown = help_of(["--help"], capsys)
    assert COMMAND_TABLE in shown
    # The same page as a parser that loads every command's module builds, whatever Python's argparse prints.
    assert shown == cli.build_parser(cli.COMMANDS).format_help()
    assert cli.main([]) == 2
    assert capsys.readouterr().out == shown


def test_a_command_s_help_is_its_real_parser(capsys) -> None:
    assert "--strategy NAME" in help_of(["assign", "--help"], capsys)
    assert "--socket-timeout-ms MS" in help_of(["groups", "describe", "--help"], capsys)


def test_unknown_command_and_option_fail_as_before(capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["bogus"])
    assert exited.value.code == 2
    assert "argument COMMAND: invalid choice: 'bogus' (choose from 'local', 'topics'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        cli.main(["assign", "--bogus"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "zkconsumer: error: unrecognized arguments: --bogus"


def option_help(argv: list[str], capsys: pytest.CaptureFixture) -> str:
    """The command's help with its line breaks undone, so that an option's words read in one piece."""
    return " ".join(help_of([*argv, "--help"], capsys).split())


def test_server_options_are_declared_once_with_each_command_s_own_words(capsys) -> None:
    shared = ("--zookeeper HOST:PORT[/CHROOT] ZooKeeper connect string (default: $ZK_CONNECT, else the running "
              "`zkconsumer local` environment)")
    for argv in (["bridge"], ["consume"], ["groups", "list"], ["offsets", "export"], ["topics", "create"]):
        assert (shared if argv[0] != "topics" else "--bootstrap-server HOST:PORT a broker of the cluster (default: "
                "$KAFKA_BOOTSTRAP") in option_help(argv, capsys), argv
    assert ("--zookeeper HOST:PORT[/CHROOT] run against this ZooKeeper instead of the embedded environment"
            in option_help(["demo"], capsys))
    assert ("--bootstrap-server HOST:PORT a broker to ask for log sizes (default: the brokers registered in "
            "ZooKeeper)" in option_help(["groups", "describe"], capsys))


def test_every_json_output_is_asked_for_with_json(capsys) -> None:
    for argv in (["local", "up"], ["local", "status"], ["groups", "describe"], ["compare"], ["consume"]):
        assert "--json" in help_of([*argv, "--help"], capsys), argv


def test_demo_refuses_a_broker_without_zookeeper_instead_of_ignoring_it(capsys) -> None:
    assert cli.main(["demo", "--bootstrap-server", "127.0.0.1:9092"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == ["zkconsumer demo: --bootstrap-server needs --zookeeper (without them the demo uses "
                                "the embedded environment)"]


def test_input_dash_is_stdin_as_for_every_command(capsys, monkeypatch) -> None:
    outputs = []
    for argv in (["assign"], ["assign", "--input", "-"]):
        monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(SCENARIO)))
        assert cli.main(argv) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])["assignment"]["C2-1"] == [["t0", 4]]
