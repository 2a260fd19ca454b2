"""``zkconsumer demo``: the README's main job, the rebalance story of :mod:`zkconsumer.demo.rebalance_demo`.

Without ``--zookeeper`` it runs on the embedded environment (started if needed) in its own ZooKeeper chroot,
``/zkconsumer-demo``, with its own metadata bridge, so that it can add partitions although Tansu cannot, and
never touches anything else in the environment. The chroot carries a marker and is cleared at the start of the
next run; a chroot without the marker is somebody else's and is refused. With ``--zookeeper`` (and optionally
``--bootstrap-server``) it runs against those servers as they are, in a topic and group of its own (existing
ones are refused: it writes test messages and adds partitions), growing the topic through CreatePartitions.
For the same reason it goes to other servers only when they are named on its command line, never from
``ZK_CONNECT`` / ``KAFKA_BOOTSTRAP`` as the other commands do, and ``--bootstrap-server`` alone is refused
rather than ignored.

What it plays is a scenario (``--scenario NAME|FILE``, :mod:`zkconsumer.scenarios`; ``--list-scenarios`` lists the
shipped ones), read and checked before anything starts. Each run makes a topic of its own (``demo-<date>-<time>``)
so that the offsets it shows start at 0; ``--topic`` names one (an existing one goes on from its offsets, which the
demo says). Its closing lines are commands that run as printed: the CLI as this interpreter's environment has it,
the broker named (the demo's bridge, which registered it in the chroot, is gone by then), and, on the embedded
environment, that the servers stay up and how to stop them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.stopping import sigterm_as_ctrl_c
from zkconsumer.demo.classroom import ClassroomOptions
from zkconsumer.demo.classroom import check_options as check_classroom_options
from zkconsumer.demo.play import play_legacy
from zkconsumer.demo.play import play_protocols as play
from zkconsumer.demo.rebalance_demo import DEFAULT_SCENARIO, DemoResult, DemoSettings, fresh_topic
from zkconsumer.demo.topic_placement import placement_lines
from zkconsumer.embedded.servers import ServerOptions
from zkconsumer.errors import UsageError
from zkconsumer.log import configure_logging
from zkconsumer.migration.scenes import CONSUMER_ALIAS, KNOWN, Protocol, check_playable, parse_protocols
from zkconsumer.scenarios.model import RESTART, Scenario
from zkconsumer.scenarios.parse import load, shipped


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help=COMMANDS["demo"],
        description="Start real group members one by one, kill one, add partitions, and narrate every step of "
        "every rebalance; writes events.jsonl and timeline.html to --output-dir.",
    )
    options.add_zookeeper(parser, help="run against this ZooKeeper instead of the embedded environment", auth=False)
    options.add_bootstrap(parser, help="with --zookeeper: the broker (default: the brokers registered in ZooKeeper)")
    options.add_run_dir(parser)
    parser.add_argument("--scenario", default=DEFAULT_SCENARIO, metavar="NAME|FILE",
                        help=f"what to play: a shipped scenario ({', '.join(shipped())}) or a TOML file (the format: "
                        f"docs, the teaching view); default {DEFAULT_SCENARIO}")
    parser.add_argument("--list-scenarios", action="store_true",
                        help="list the shipped scenarios, their scenes and actions, and exit")
    parser.add_argument("--topic", default=None,
                        help="the topic (default: a fresh one per run, <scenario's topic name>-<date>-<time>)")
    parser.add_argument("--group", default="demo", help="the group id of the demo's members (default: %(default)s)")
    parser.add_argument("--partitions", type=int, default=None,
                        help="partitions at the start (default: the scenario's; the demo's is 4, and 2 are added)")
    parser.add_argument("--strategy", choices=("range", "roundrobin"), default="range",
                        help="partition.assignment.strategy of every member (default range)")
    parser.add_argument("--protocol", default=None, metavar="P[,P...]",
                        help="play the scenario with members of these protocols, side by side on one clock: "
                        f"{', '.join(PROTOCOL_NAMES)} ({CONSUMER_ALIAS} is consumer-uniform); on the embedded "
                        "environment the modern groups at a front of the run's own; writes report.html with every "
                        "protocol's lanes. Default: legacy members with --strategy, narrated step by step")
    parser.add_argument("--pace", type=float, default=0.0, metavar="SECONDS",
                        help="pause this long after each scene heading and each narrated rebalance (classrooms)")
    parser.add_argument("--compare", action="store_true",
                        help="after each scene, what every legacy and modern assignor would do at that moment")
    parser.add_argument("--session-timeout-ms", type=int, default=None, metavar="MS",
                        help="zookeeper.session.timeout.ms of the members (default: the scenario's, else 6000, "
                        "Kafka's)")
    parser.add_argument("--output-dir", type=Path, default=Path("demo-output"), metavar="DIR",
                        help="where events.jsonl, timeline.html and the members' logs go (default ./demo-output)")
    parser.add_argument("--topic-placement", action="store_true",
                        help="only show where the demo topic's partitions and leaders would sit on a 3-broker, "
                        "2-rack ZooKeeper-mode cluster, and why (no servers needed)")
    room = parser.add_argument_group("in class")
    room.add_argument("--step", action="store_true",
                      help="stop before each scene's action and each step of a legacy rebalance (with --protocol: each "
                      "coordinator round and each legacy attempt told), and wait for Enter (c: play on); servers and "
                      "members stay as they are, their sessions alive")
    room.add_argument("--serve", type=int, nargs="?", const=0, default=None, metavar="PORT",
                      help="serve the timeline page on 127.0.0.1:PORT (default: a free port, printed) while the demo "
                      "runs; it grows as events arrive, and ends as timeline.html")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.list_scenarios:
        print("\n".join(scenario_listing()))
        return 0
    if args.partitions is not None and args.partitions < 1:
        raise UsageError("--partitions must be at least 1")
    if args.pace < 0:
        raise UsageError("--pace must not be negative")
    if args.session_timeout_ms is not None and args.session_timeout_ms < 1000:
        raise UsageError("--session-timeout-ms must be at least 1000")
    in_class = ClassroomOptions(step=args.step, serve=args.serve)
    check_classroom_options(in_class)  # --step without a terminal, before anything starts
    scenario = load(args.scenario)
    partitions = scenario.topic.partitions if args.partitions is None else args.partitions
    if args.topic_placement:
        print("\n".join(placement_lines(args.topic or scenario.topic.name, partitions, added=scenario.grown)))
        return 0
    protocols = parse_protocols(args.protocol) if args.protocol is not None else None
    if protocols is not None and len(protocols) == 1 and protocols[0].family == "legacy":
        args.strategy, protocols = protocols[0].strategy, None  # the legacy demo itself, narrated step by step
    # the legacy demo plays what its legacy protocol can (an in-place upgrade to KIP-848 it cannot)
    check_playable(scenario, protocols if protocols is not None else (KNOWN[f"legacy-{args.strategy}"],))
    restart = scenario.uses(RESTART)
    if protocols is None and restart is not None:
        raise UsageError(f"{scenario.source}: {restart}: restart is played by the comparison's players (migration "
                         f"compare, demo --protocol), not by the legacy demo")
    if args.bootstrap_server and not args.zookeeper:
        # The embedded run brings its own broker: a broker given alone would be silently ignored.
        raise UsageError("--bootstrap-server needs --zookeeper (without them the demo uses the embedded environment)")
    # SIGTERM ends the demo as Ctrl-C does: members asked to leave, the timeline of what happened written.
    sigterm_as_ctrl_c()
    if args.log_level is None:  # the narration is the output; the bridge's and kazoo's info lines are noise here
        configure_logging(json=args.log_json, level="warning", force=True)
    settings = settings_for(scenario, args, partitions)
    # only the servers named here: never ZK_CONNECT / KAFKA_BOOTSTRAP, as the other commands do
    servers = ServerOptions(zookeeper=args.zookeeper, bootstrap=args.bootstrap_server, run_dir=args.run_dir)
    if protocols is not None:
        return play_protocols(args, servers, in_class, settings, protocols)
    return _report(play_legacy(servers, in_class, settings),
                   servers_stay=None if args.zookeeper else _servers_stay(args))


def settings_for(scenario: Scenario, args: argparse.Namespace, partitions: int) -> DemoSettings:
    """The scenario's values, where an option does not say otherwise."""
    session = args.session_timeout_ms or scenario.session_timeout_ms or 6000
    return DemoSettings(
        zookeeper="", bootstrap="", topic=args.topic or fresh_topic(scenario.topic.name), group=args.group,
        strategy=args.strategy, partitions=partitions, session_timeout_ms=session,
        messages_per_partition=scenario.production.burst, pace=args.pace, compare=args.compare,
        output_dir=args.output_dir, scenario=scenario, step_gate=bool(getattr(args, "step", False)),
    )


def scenario_listing() -> list[str]:
    lines = []
    for name in shipped():
        scenario = load(name)
        lines.append(f"{name}: {scenario.title} ({scenario.topic.partitions} partitions"
                     + (f", grows by {scenario.grown}" if scenario.grown else "") + ")")
        for scene in scenario.scenes:
            lines.append(f"  {scene.label}: {'; '.join(a.describe() for a in scene.actions)}")
    lines.append("Play one with `demo --scenario NAME` or `migration compare --scenario NAME`; a file of your own with "
                 "--scenario FILE.toml.")
    return lines


def reachable_cli() -> str:
    """The CLI as it can be typed in this shell: ``zkconsumer`` when that is this environment's on the PATH, else
    the entry point beside the running interpreter (``.venv/bin/zkconsumer`` from the checkout), else the
    interpreter with ``-m``."""
    script = Path(sys.executable).parent / "zkconsumer"
    if not script.exists():
        return f"{sys.executable} -m zkconsumer"
    found = shutil.which("zkconsumer")
    if found is not None and Path(found).absolute() == script.absolute():
        return "zkconsumer"
    try:
        return str(script.absolute().relative_to(Path.cwd()))
    except ValueError:
        return str(script)


PROTOCOL_NAMES = (*KNOWN, CONSUMER_ALIAS)


def play_protocols(args: argparse.Namespace, servers: ServerOptions, in_class: ClassroomOptions, settings: DemoSettings,
                   protocols: tuple[Protocol, ...]) -> int:
    """``--protocol``: every protocol's members side by side (:func:`zkconsumer.demo.play.play_protocols`), then
    where each protocol's events and the page of every protocol's lanes are."""
    played = play(servers, in_class, settings, protocols)
    print()
    for run in played.runs:
        print(f"{run.protocol.name + ':':<20} {run.events_path}" + (f"  (stopped early: {run.error})"
                                                                   if run.error else ""))
    print(f"every protocol's lanes: {played.page}")
    print(f"replay on a terminal:  {reachable_cli()} trace show {played.runs[0].events_path}")
    if played.embedded:
        print(f"the embedded servers stay up; stop them with: {_servers_stay(args)}")
    return 1 if played.failed else 0


def _servers_stay(args: argparse.Namespace) -> str:
    """The command that stops the embedded environment the demo left up."""
    return f"{reachable_cli()} local down" + ("" if args.run_dir is None else f" --run-dir {args.run_dir}")


def _report(result: DemoResult, servers_stay: str | None = None) -> int:
    """The closing hints, each a command that runs as printed."""
    settings = result.settings
    cli = reachable_cli()
    print()
    print(f"events (JSON lines):  {result.events_path}")
    if result.timeline_path is not None:
        print(f"timeline (HTML):      {result.timeline_path}")
    print(f"replay on a terminal: {cli} trace show {result.events_path}")
    print(f"the group's znodes:   {cli} groups describe --group {settings.group} --zookeeper {settings.zookeeper} "
          f"--bootstrap-server {settings.bootstrap}")
    if servers_stay is not None:
        print(f"the embedded servers stay up for these commands; stop them with: {servers_stay}")
    return 0  # a scene that never verifies is a DemoError (it did not settle), not a result
