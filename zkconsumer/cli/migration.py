"""``zkconsumer migration compare``: the legacy ZooKeeper group and modern broker-side groups on one membership
script (:mod:`zkconsumer.migration`), measured side by side.

Without ``--zookeeper`` it runs on the embedded environment, started for the run and stopped after it (one that
was already running is used and left running). Its modern groups bootstrap from a front (``--coordinator front``, the
default: :mod:`zkconsumer.front`) the run starts before the environment's broker (:func:`run_front`: its KIP-848
groups get the classic members' session), whose coordinator's events for each protocol's group are added to that
protocol's ``events.jsonl`` (the page's coordinator lane); ``--coordinator broker`` sends them to the broker itself
and its own coordinator, so the two can be compared. With ``--zookeeper`` the brokers given (or
registered) are used as they are, and ``--coordinator`` says whose coordinator that is (default: the broker's).
Everything it creates (topics, groups, a ZooKeeper chroot) is named after the run and removed at the end, except the
output directory, which must be new or empty.

The KIP-848 protocols (``consumer-uniform``, ``consumer-range``) need a group coordinator that answers
ConsumerGroupHeartbeat, which the embedded broker's own does not: at the broker's coordinator the default protocols
leave them out in one line; named in ``--protocols`` there, their run stops at the first scene, saying so.

Exit status: 0 when every protocol played the script to the end and delivered every message; 1 when a message was
lost, a run stopped early (a KIP-848 protocol whose coordinator cannot run it, too) or a member process exited
without being told to (the report lists it under member
failures: its partitions waited for a session expiry the script did not ask for); 2 for bad input; 130 after
Ctrl-C or SIGTERM, with every member process stopped and everything the run created removed.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from zkconsumer.cli import COMMANDS, options
from zkconsumer.errors import UsageError
from zkconsumer.log import configure_logging
from zkconsumer.migration.report import problems, read_verdict, write_report
from zkconsumer.migration.run import MAX_TOTAL_RATE, CompareSettings, collect, compare_protocols, member_settings
from zkconsumer.migration.scenes import (
    DEFAULT_SCENARIO,
    KIP848_PROTOCOLS,
    KNOWN,
    Protocol,
    Scene,
    check_playable,
    legacy_only,
    parse_protocols,
)
from zkconsumer.scenarios.model import MAX_REVOKE_MS, Scenario
from zkconsumer.scenarios.parse import load, shipped

if TYPE_CHECKING:
    from zkconsumer.embedded.front_process import FrontProcess

MAX_PARTITIONS = 64  # the page draws a row per partition and per protocol
COORDINATORS = ("front", "broker")


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
                         "default without --zookeeper) or the broker's own (the default with --zookeeper)")
    compare.add_argument("--protocols", default=None,
                         help=f"comma-separated, from {', '.join(KNOWN)} (default: all of them; "
                         f"{' and '.join(KIP848_PROTOCOLS)} are KIP-848's consumer protocol with that server-side "
                         f"assignor, and need a coordinator that runs it: the default leaves them out at the "
                         f"broker's own)")
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
    compare.add_argument("--output-dir", type=Path, required=True, metavar="DIR",
                         help="new or empty: report.json, report.html, <protocol>/events.jsonl, deliveries")
    options.add_json(compare, help="print report.json on stdout instead of the table")
    compare.set_defaults(handler=run)


def validate(args: argparse.Namespace) -> CompareSettings:
    """Every refusal, before anything starts."""
    from dataclasses import replace

    protocols = parse_protocols(args.protocols or ",".join(KNOWN))
    scenario = load(getattr(args, "scenario", None) or DEFAULT_SCENARIO)
    partitions = scenario.topic.partitions if args.partitions is None else args.partitions
    rate = scenario.production.rate if args.rate is None else args.rate
    if not 1 <= partitions <= MAX_PARTITIONS:
        raise UsageError(f"--partitions must be between 1 and {MAX_PARTITIONS}")
    if partitions + scenario.grown > MAX_PARTITIONS:
        raise UsageError(f"{scenario.source} grows the topic by {scenario.grown}: --partitions {partitions} would "
                         f"end above {MAX_PARTITIONS}")
    if args.protocols is None:  # every protocol by default: those that cannot play the scenario are left out
        protocols = without_unplayable(scenario, protocols)
    check_playable(scenario, protocols)
    args = argparse.Namespace(**{**vars(args), "partitions": partitions, "rate": rate})
    if not args.rate > 0:
        raise UsageError("--rate must be more than 0 messages a second")
    if args.rate * len(protocols) > MAX_TOTAL_RATE:
        raise UsageError(f"--rate {args.rate:g} for {len(protocols)} protocols is {args.rate * len(protocols):g} "
                         f"messages a second, more than the {MAX_TOTAL_RATE} the comparison produces and counts "
                         f"reliably (every delivery report is kept)")
    if args.pace < 0:
        raise UsageError("--pace must not be negative")
    revoke_ms = getattr(args, "revoke_ms", None)
    if revoke_ms is not None and not 0 <= revoke_ms <= MAX_REVOKE_MS:
        raise UsageError(f"--revoke-ms must be from 0 to {MAX_REVOKE_MS} ms, not {revoke_ms}")
    if args.bootstrap_server and not args.zookeeper:
        raise UsageError("--bootstrap-server needs --zookeeper (without them the embedded environment is used)")
    out: Path = args.output_dir
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--output-dir {out} exists and is not an empty directory; give a new one")
    settings = CompareSettings("", "", protocols, out, partitions=args.partitions, rate=args.rate, pace=args.pace,
                               scenario=scenario, revoke_ms=revoke_ms)
    if scenario.session_timeout_ms is not None:
        settings = replace(settings, session_timeout_ms=scenario.session_timeout_ms)
    return settings


def without_unplayable(scenario: Scenario, protocols: tuple[Protocol, ...]) -> tuple[Protocol, ...]:
    """The default protocols for a scenario only legacy members can play here (it grows the topic, expires a session
    or sets members' settings): the legacy ones, with one line saying which were left out and why (named in
    ``--protocols``, a modern one is refused instead)."""
    if not legacy_only(scenario):
        return protocols
    kept = tuple(p for p in protocols if p.family == "legacy")
    left = [p.name for p in protocols if p.family != "legacy"]
    print(f"zkconsumer migration: {', '.join(left)} left out: {scenario.source} grows the topic, expires a session "
          f"or sets members' settings, which only the legacy groups can play here (name them in --protocols to see "
          f"why)", file=sys.stderr)
    return kept


def run(args: argparse.Namespace) -> int:
    from dataclasses import replace

    settings = validate(args)
    signal.signal(signal.SIGTERM, _interrupt)  # as Ctrl-C: the members leave, the servers stop
    if args.log_level is None:
        configure_logging(json=args.log_json, level="warning", force=True)
    if args.zookeeper:
        bootstrap = args.bootstrap_server or registered_broker(args.zookeeper)
        settings = replace(settings, zookeeper=args.zookeeper, bootstrap=bootstrap,
                           coordinator=args.coordinator or "broker")
        return _compare(without_kip848_at_broker(settings, args.protocols is None), args.json, f"broker {bootstrap}")
    from zkconsumer.embedded.environment import LocalEnvironment
    from zkconsumer.embedded.front import front_coordinates_groups

    env = LocalEnvironment(args.run_dir)
    started = env.endpoints() is None
    endpoints = env.up()
    own_front = None
    try:
        broker = endpoints.get("broker", endpoints["bootstrap_servers"])
        front_log = env.front_log() if args.coordinator != "broker" else None
        if front_log is None:  # the broker itself: asked for, or an environment started with --direct-broker
            settings = replace(settings, bootstrap=broker, coordinator="broker")
        elif front_coordinates_groups(front_log):
            own_front = run_front(broker, settings)
            settings = replace(settings, bootstrap=own_front.address, coordinator_events=own_front.log_path,
                               coordinator="front")
        else:  # a front relaying the group APIs still leaves the groups to the broker's coordinator
            settings = replace(settings, bootstrap=endpoints["bootstrap_servers"], coordinator_events=front_log,
                               coordinator="broker")
        settings = without_kip848_at_broker(settings, args.protocols is None)
        front = settings.bootstrap if settings.bootstrap != broker else None
        through = "" if front is None else f" through the front at {front}"
        print(f"embedded environment: ZooKeeper {endpoints['zookeeper']}, broker {broker}{through}"
              + (" (started for this run)" if started else " (already running, left running)"), file=sys.stderr)
        return _compare(replace(settings, zookeeper=endpoints["zookeeper"]), args.json,
                        f"embedded environment (Tansu broker {broker}{through})")
    finally:
        if own_front is not None:
            own_front.stop()
        if started:
            env.down()


def run_front(broker: str, settings: CompareSettings) -> FrontProcess:
    """A front of the run's own before the environment's broker, its KIP-848 groups' session and heartbeat derived
    from the classic members' session (:func:`~zkconsumer.members.modern_member.consumer_group_timeouts_ms`): under
    KIP-848 they are the coordinator's settings, and Kafka's defaults (45 s) against the classic members' 4 s would
    make a SIGKILLed member's partitions wait eleven times longer for a setting, not for the protocol. Kafka sets them
    per group (``consumer.session.timeout.ms``); this front sets them for its groups, which are only this run's."""
    from zkconsumer.embedded.front_process import FrontProcess
    from zkconsumer.members.modern_member import consumer_group_timeouts_ms

    session_ms, heartbeat_ms = consumer_group_timeouts_ms(settings.session_timeout_ms)
    front = FrontProcess(broker, settings.output_dir / "front", options=(
        "--group-consumer-session-timeout-ms", str(session_ms),
        "--group-consumer-heartbeat-interval-ms", str(heartbeat_ms)))
    return front.start()


def without_kip848_at_broker(settings: CompareSettings, default_protocols: bool) -> CompareSettings:
    """The default protocols at the broker's own coordinator, which does not run KIP-848: its protocols left out, in
    one line (named with ``--protocols``, they are tried, and their run stops at the first scene, saying why)."""
    from dataclasses import replace

    if not default_protocols or settings.coordinator != "broker":
        return settings
    kept = tuple(p for p in settings.protocols if p.group_protocol != "consumer")
    if len(kept) < len(settings.protocols):
        print(f"zkconsumer migration: {', '.join(KIP848_PROTOCOLS)} left out: the broker's own group coordinator "
              f"does not run KIP-848 (name them in --protocols to try)", file=sys.stderr)
    return replace(settings, protocols=kept)


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


def registered_broker(connect: str) -> str:
    """The bootstrap of the brokers registered in ZooKeeper at ``connect``; one line when there is none."""
    from zkconsumer.tools.offset_checker import registered_bootstrap
    from zkconsumer.zk.client import zookeeper

    with zookeeper(connect, quiet=True) as zk:
        bootstrap = registered_bootstrap(zk)
    if bootstrap is None:
        raise UsageError(f"no broker is registered in ZooKeeper at {connect}; give --bootstrap-server")
    return bootstrap


def _progress(protocol: str, scene: Scene, settled: bool, seconds: float) -> None:
    state = "settled" if settled else "did NOT settle"
    print(f"  {protocol:<19} scene {scene.label}: {state} in {seconds:.1f} s", file=sys.stderr)


def _compare(settings: CompareSettings, as_json: bool, where: str) -> int:
    settings.output_dir.mkdir(parents=True, exist_ok=True)
    scenario = settings.scenario
    print(f"playing {len(scenario.scenes)} scenes of {scenario.name!r} for "
          f"{', '.join(p.name for p in settings.protocols)} ({settings.partitions} partitions, "
          f"{settings.rate:g} msg/s each, pace {settings.pace:g} s)", file=sys.stderr)
    runs = compare_protocols(settings, on_scene=_progress)
    results = collect(runs, settings.output_dir)
    meta = (f"run {settings.run_id} of scenario {settings.scenario.name!r} on the {where}: {settings.partitions} "
            f"partitions per topic (at the start), "
            f"{settings.rate:g} messages a second to each, {settings.pace:g} s of steady production after each "
            f"scene (the scenes begin together for every protocol), member session timeout "
            f"{settings.session_timeout_ms} ms, the members' revoke cost {settings.revoke_costs()}, modern groups at "
            + ("the broker's own group coordinator" if settings.coordinator == "broker"
               else f"the {settings.coordinator}'s group coordinator"))
    json_path, html_path = write_report(settings.output_dir, results, {
        "run_id": settings.run_id, "partitions": settings.partitions, "rate": settings.rate,
        "pace": settings.pace, "session_timeout_ms": settings.session_timeout_ms,
        "coordinator": settings.coordinator, "scenario": settings.scenario.name,
        "revoke_ms": {m.name: settings.member_revoke_ms(m.name) for m in settings.scenario.members}},
        meta, member_settings(settings))
    if as_json:
        print(json_path.read_text(encoding="utf-8"), end="")
    else:
        header = (f"{'protocol':<19} {'produced':>8} {'lost':>5} {'dup':>5} {'rebal':>5} {'paused p-s':>10} "
                  f"{'max pause ms':>12} {'moved':>5}")
        print(header)
        for r in results:
            t = r.measures.total
            print(f"{r.protocol.name:<19} {t.produced:>8} {t.lost:>5} {t.duplicates:>5} {t.rebalances:>5} "
                  f"{t.partition_seconds_paused:>10.2f} {t.max_pause_ms:>12.0f} {t.moved_partitions:>5}")
        for sentence in read_verdict(json.loads(json_path.read_text(encoding="utf-8"))).overall:
            print(sentence)
        print(f"report: {json_path}  page: {html_path}")
    found = problems(results)  # a member that died on its own makes the figures not the script's: exit 1 too
    for problem in found:
        print(f"zkconsumer migration: {problem}", file=sys.stderr)
    return 1 if found else 0
