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
"""

from __future__ import annotations

import argparse
import signal
from pathlib import Path

from zkconsumer.cli import COMMANDS, options
from zkconsumer.demo.rebalance_demo import DemoResult, DemoSettings, play_against, play_in_own_chroot
from zkconsumer.demo.topic_placement import placement_lines
from zkconsumer.embedded.environment import LocalEnvironment
from zkconsumer.errors import UsageError
from zkconsumer.log import configure_logging


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo", help=COMMANDS["demo"],
        description="Start real group members one by one, kill one, add partitions, and narrate every step of "
        "every rebalance; writes events.jsonl and timeline.html to --output-dir.",
    )
    options.add_zookeeper(parser, help="run against this ZooKeeper instead of the embedded environment", auth=False)
    options.add_bootstrap(parser, help="with --zookeeper: the broker (default: the brokers registered in ZooKeeper)")
    options.add_run_dir(parser)
    parser.add_argument("--topic", default="demo")
    parser.add_argument("--group", default="demo")
    parser.add_argument("--partitions", type=int, default=4, help="partitions at the start (default 4; 2 are added)")
    parser.add_argument("--strategy", choices=("range", "roundrobin"), default="range",
                        help="partition.assignment.strategy of every member (default range)")
    parser.add_argument("--pace", type=float, default=0.0, metavar="SECONDS",
                        help="pause this long after each scene heading and each narrated rebalance (classrooms)")
    parser.add_argument("--compare", action="store_true",
                        help="after each scene, what every legacy and modern assignor would do at that moment")
    parser.add_argument("--session-timeout-ms", type=int, default=6000, metavar="MS",
                        help="zookeeper.session.timeout.ms of the members (default 6000, Kafka's)")
    parser.add_argument("--output-dir", type=Path, default=Path("demo-output"), metavar="DIR",
                        help="where events.jsonl, timeline.html and the members' logs go (default ./demo-output)")
    parser.add_argument("--topic-placement", action="store_true",
                        help="only show where the demo topic's partitions and leaders would sit on a 3-broker, "
                        "2-rack ZooKeeper-mode cluster, and why (no servers needed)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.partitions < 1:
        raise UsageError("--partitions must be at least 1")
    if args.pace < 0:
        raise UsageError("--pace must not be negative")
    if args.session_timeout_ms < 1000:
        raise UsageError("--session-timeout-ms must be at least 1000")
    if args.topic_placement:
        print("\n".join(placement_lines(args.topic, args.partitions, added=2)))
        return 0
    if args.bootstrap_server and not args.zookeeper:
        # The embedded run brings its own broker: a broker given alone would be silently ignored.
        raise UsageError("--bootstrap-server needs --zookeeper (without them the demo uses the embedded environment)")
    # SIGTERM ends the demo as Ctrl-C does: members asked to leave, the timeline of what happened written.
    signal.signal(signal.SIGTERM, _interrupt)
    if args.log_level is None:  # the narration is the output; the bridge's and kazoo's info lines are noise here
        configure_logging(json=args.log_json, level="warning", force=True)
    settings = DemoSettings(
        zookeeper="", bootstrap="", topic=args.topic, group=args.group, strategy=args.strategy,
        partitions=args.partitions, session_timeout_ms=args.session_timeout_ms, pace=args.pace,
        compare=args.compare, output_dir=args.output_dir,
    )
    if args.zookeeper:
        return _run_external(args, settings)
    return _run_embedded(args, settings)


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def _run_embedded(args: argparse.Namespace, settings: DemoSettings) -> int:
    env = LocalEnvironment(args.run_dir)
    endpoints = env.up()
    root, bootstrap = endpoints["zookeeper"], endpoints["bootstrap_servers"]
    print(f"embedded environment: ZooKeeper {root}, broker {bootstrap} (stop it with: zkconsumer local down)")
    return _report(play_in_own_chroot(root, bootstrap, settings))


def _run_external(args: argparse.Namespace, settings: DemoSettings) -> int:
    return _report(play_against(args.zookeeper, args.bootstrap_server, settings))


def _report(result: DemoResult) -> int:
    settings = result.settings
    print()
    print(f"events (JSON lines):  {result.events_path}")
    if result.timeline_path is not None:
        print(f"timeline (HTML):      {result.timeline_path}")
    print(f"replay on a terminal: zkconsumer trace show {result.events_path}")
    print(f"the group's znodes:   zkconsumer groups describe --group {settings.group} --zookeeper {settings.zookeeper}")
    return 0  # a scene that never verifies is a DemoError (it did not settle), not a result
