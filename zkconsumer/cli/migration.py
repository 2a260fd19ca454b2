"""``zkconsumer migration compare``: the legacy ZooKeeper group and modern broker-side groups on one membership
script (:mod:`zkconsumer.migration`), measured side by side. This module parses, calls the runner the pytest plugin
calls too (:mod:`zkconsumer.migration.comparison`) and prints its figures.

Without ``--zookeeper`` it runs on the embedded environment, started for the run and stopped after it (one that
was already running, or whose dead servers ``local up`` would start again, is used and left running). Its modern
groups bootstrap from a front (``--coordinator front``, the default: :mod:`zkconsumer.front`) the run starts before
the environment's broker (its KIP-848 groups get the classic members' session under ``--settings same``), whose
coordinator's events for each protocol's group are added to that protocol's ``events.jsonl`` (the page's coordinator
lane); ``--coordinator broker`` sends them to the broker itself and its own coordinator, so the two can be compared.
With ``--zookeeper`` the brokers given (or registered) are used as they are. On an environment of ``local up --broker
kafka-4`` (found by ``--run-dir``, or given by its ``--zookeeper`` and ``--bootstrap-server``) there is no front: the
modern groups run at Apache Kafka's own coordinator, the legacy ones at ZooKeeper through the run's bridge. Either way
the server is asked who coordinates the modern groups and with what settings, and every report names that
coordinator with its version (``--coordinator``, where given, must match it).
Everything it creates (topics, groups, a ZooKeeper chroot) is named after the run and removed at the end, except the
output directory, which must be new or empty. ``--app MODULE:CALLABLE`` has every member run your application on
each message (:mod:`zkconsumer.members.application`).

The KIP-848 protocols (``consumer-uniform``, ``consumer-range``) need a group coordinator that answers
ConsumerGroupHeartbeat, which the embedded broker's own does not (Kafka 4.x's does): at such a broker's coordinator
the default protocols leave them out in one line; named in ``--protocols`` there, their run stops at the first scene,
saying so.

Exit status: 0 when every protocol played the script to the end and delivered every message; 1 when a message was
lost, a run stopped early (a KIP-848 protocol whose coordinator cannot run it, too) or a member process exited
without being told to (the report lists it under member
failures: its partitions waited for a session expiry the script did not ask for); 2 for bad input; 130 after
Ctrl-C or SIGTERM, with every member process stopped and everything the run created removed.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.stopping import sigterm_as_ctrl_c
from zkconsumer.embedded.servers import ServerOptions
from zkconsumer.errors import UsageError
from zkconsumer.log import configure_logging
from zkconsumer.members.application import Application
from zkconsumer.migration.comparison import COORDINATORS, Comparison, compare, plan
from zkconsumer.migration.report import read_verdict
from zkconsumer.migration.run import CompareSettings
from zkconsumer.migration.scenes import CONSUMER_ALIAS, DEFAULT_SCENARIO, KIP848_PROTOCOLS, KNOWN, Scene
from zkconsumer.migration.timeouts import SAME, SETTINGS_MODES
from zkconsumer.scenarios.parse import shipped


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("migration", help=COMMANDS["migration"],
                                   description=COMMANDS["migration"])
    commands = parser.add_subparsers(dest="migration_command", metavar="SUBCOMMAND", required=True)
    compare = commands.add_parser(
        "compare", help="play one membership script for every protocol and compare pauses, moves and deliveries",
        description="For each protocol, real members play one script while a producer writes keyed messages (by "
        "default six members are restarted in turn, then one is SIGKILLed); writes report.json, report.html and "
        "every run's events to --output-dir.")
    options.add_zookeeper(compare, help="run against this ZooKeeper instead of the embedded environment",
                          auth=False)
    options.add_bootstrap(compare, help="with --zookeeper: the broker (default: the brokers registered in it)")
    options.add_run_dir(compare)
    compare.add_argument("--coordinator", choices=COORDINATORS, default=None,
                         help="the group coordinator of the modern groups: the embedded environment's front (the "
                         "default) or the broker's own (Apache Kafka's, on a local up --broker kafka-4 "
                         "environment); with --zookeeper the server given says which it is, and this must match it")
    compare.add_argument("--protocols", default=None,
                         help=f"comma-separated, from {', '.join(KNOWN)} (default: all of them; "
                         f"{' and '.join(KIP848_PROTOCOLS)} are KIP-848's consumer protocol with that server-side "
                         f"assignor, and need a coordinator that runs it: the default leaves them out at the "
                         f"broker's own; {CONSUMER_ALIAS} is consumer-uniform)")
    compare.add_argument("--settings", choices=SETTINGS_MODES, default=SAME,
                         help="the protocols' session and heartbeat: same (one session for all, the scenario's, 4 s "
                         "by default: the protocols compared) or stock (each at its own defaults: the legacy "
                         "zookeeper.session.timeout.ms 6000 of Kafka 0.10.0.1, the classic session.timeout.ms 45000 "
                         "and heartbeat.interval.ms 3000, KIP-848's coordinator 45000 and 5000); default same")
    compare.add_argument("--scenario", default=DEFAULT_SCENARIO, metavar="NAME|FILE",
                         help=f"the script every protocol plays: a shipped scenario ({', '.join(shipped())}; "
                         f"`zkconsumer demo --list-scenarios` lists them) or a TOML file (docs: the migration "
                         f"comparison); default {DEFAULT_SCENARIO}")
    compare.add_argument("--partitions", type=int, default=None,
                         help="partitions of every protocol's topic at the start (default: the scenario's; 12 in the "
                         "default rolling-restart)")
    compare.add_argument("--rate", type=float, default=None, metavar="MSG_PER_S",
                         help="messages a second to every protocol's topic (default: the scenario's; 50 in the shipped "
                         "ones)")
    compare.add_argument("--pace", type=float, default=2.0, metavar="SECONDS",
                         help="steady production after each scene settled, before the next (default 2)")
    compare.add_argument("--revoke-ms", type=int, default=None, metavar="MS",
                         help="every member's application spends this long each time it gives up partitions, "
                         "before releasing them (flushing state, committing its own offsets); default: each "
                         "member's revoke_ms in the scenario, 0")
    compare.add_argument("--app", default=None, metavar="MODULE:CALLABLE",
                         help="your application: every member calls it with each message (its module's on_revoke "
                         "and on_assign, if any, on rebalances; imported from the current directory; docs: testing a "
                         "migration); each protocol's members share the directory $ZKCONSUMER_STATE_DIR, "
                         "<output-dir>/<protocol>/state")
    compare.add_argument("--member-command", default=None, metavar="COMMAND",
                         help="your own consumer, run as every member of the modern protocols (one process per "
                         "member, the command line split as a shell would): told what to join through ZKCONSUMER_* "
                         "environment variables, it reports on stdout in the JSON lines of Kafka's verifiable "
                         "consumer (docs: writing a member in another language); the legacy members stay ours")
    compare.add_argument("--output-dir", type=Path, required=True, metavar="DIR",
                         help="new or empty: report.json, report.html, <protocol>/events.jsonl, deliveries")
    options.add_json(compare, help="print report.json on stdout instead of the table")
    compare.set_defaults(handler=run)


def validate(args: argparse.Namespace) -> CompareSettings:
    """Every refusal, before anything starts (:func:`zkconsumer.migration.comparison.plan`)."""
    if args.bootstrap_server and not args.zookeeper:
        raise UsageError("--bootstrap-server needs --zookeeper (without them the embedded environment is used)")
    return plan(args.output_dir, scenario=getattr(args, "scenario", None), protocols=args.protocols,
                partitions=args.partitions, rate=args.rate, pace=args.pace, revoke_ms=getattr(args, "revoke_ms", None),
                app=_application(getattr(args, "app", None)), settings=getattr(args, "settings", SAME),
                member=getattr(args, "member_command", None), say=say)


def _application(handle: str | None) -> Application | None:
    """``--app``'s callable, its modules looked up from the current directory as a test's would be."""
    return None if handle is None else Application(handle, path=(str(Path.cwd()),))


def say(line: str) -> None:
    """The runner's notes, on stderr."""
    print(line, file=sys.stderr)


def run(args: argparse.Namespace) -> int:
    settings = validate(args)
    sigterm_as_ctrl_c()  # as Ctrl-C: the members leave, the servers stop
    if args.log_level is None:
        configure_logging(json=args.log_json, level="warning", force=True)
    servers = ServerOptions(zookeeper=args.zookeeper, bootstrap=args.bootstrap_server, run_dir=args.run_dir)
    scenario = settings.scenario
    print(f"playing {len(scenario.scenes)} scenes of {scenario.name!r} for "
          f"{', '.join(p.name for p in settings.protocols)} ({settings.partitions} partitions, "
          f"{settings.rate:g} msg/s each, pace {settings.pace:g} s)", file=sys.stderr)
    return _print(compare(settings, servers, coordinator=args.coordinator, default_protocols=args.protocols is None,
                          on_scene=_progress, say=say), args.json)


def _progress(protocol: str, scene: Scene, settled: bool, seconds: float) -> None:
    state = "settled" if settled else "did NOT settle"
    print(f"  {protocol:<19} scene {scene.label}: {state} in {seconds:.1f} s", file=sys.stderr)


def _print(comparison: Comparison, as_json: bool) -> int:
    """The table and the verdict (or report.json), then what went wrong; the exit status."""
    json_path, html_path = comparison.report_json, comparison.report_html
    if as_json:
        print(json_path.read_text(encoding="utf-8"), end="")
    else:
        header = (f"{'protocol':<19} {'produced':>8} {'lost':>5} {'dup':>5} {'rebal':>5} {'paused p-s':>10} "
                  f"{'max pause ms':>12} {'moved':>5}")
        print(header)
        for o in comparison.result.protocols.values():
            print(f"{o.protocol:<19} {o.produced:>8} {o.lost:>5} {o.duplicates:>5} {o.rebalances:>5} "
                  f"{o.partition_seconds_paused:>10.2f} {o.longest_pause_ms:>12.0f} {o.moved_partitions:>5}")
        for sentence in read_verdict(json.loads(json_path.read_text(encoding="utf-8"))).overall:
            print(sentence)
        print(f"report: {json_path}  page: {html_path}")
    for problem in comparison.problems:  # a member that died on its own makes the figures not the script's: exit 1
        print(f"zkconsumer migration: {problem}", file=sys.stderr)
    return 1 if comparison.problems else 0
