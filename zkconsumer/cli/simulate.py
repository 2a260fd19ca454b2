"""``zkconsumer simulate connect``: Kafka Connect's eager and incremental cooperative rebalancing replayed on a
simulated clock (:mod:`zkconsumer.connect.simulation`), as a table per phase and protocol, ``--json`` for
scripts, ``--html`` for the page with the charts. ``zkconsumer simulate storm``: a consumer group's rebalances
under each protocol (:mod:`zkconsumer.storm`), the predicted figures per scene and protocol.

Nothing runs before every argument is checked: the parameters are validated when they are built, and the
simulation is pure, so a bad argument leaves nothing behind.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.output_file import written_whole
from zkconsumer.connect.simulation import (
    DEFAULT_CONNECTORS,
    DEFAULT_MAX_DELAY_MS,
    DEFAULT_REBALANCE_MS,
    DEFAULT_TASK_START_MS,
    DEFAULT_TASK_STOP_MS,
    DEFAULT_TASKS_PER_CONNECTOR,
    DEFAULT_WORKERS,
    PHASES,
    PROTOCOLS,
    SimulationParameters,
    SimulationResult,
    simulate,
)
from zkconsumer.errors import UsageError
from zkconsumer.scenarios.parse import load
from zkconsumer.storm import simulation as storm

PROTOCOL_CHOICES = (*PROTOCOLS, "both")
STORM_FIGURES = (("time_to_stable_s", "time to stable"), ("partition_seconds_paused", "partition-s paused"),
                 ("zookeeper_requests", "ZK requests"), ("conflicts", "conflicts"), ("rebalances", "rebalances"),
                 ("retries_exhausted", "retries exhausted"), ("session_expiries", "session expiries"),
                 ("request_timeouts", "requests timed out"))


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("simulate", help=COMMANDS["simulate"], description=COMMANDS["simulate"] + ".")
    kinds = parser.add_subparsers(dest="simulation", metavar="WHAT", required=True)
    connect = kinds.add_parser(
        "connect", help="a Connect cluster: connectors started and stopped one at a time, a worker bouncing, one lost",
        description="Replay Kafka Connect's rebalances on a simulated clock: C connectors started one at a time, "
        "then stopped one at a time, then (all running again) a worker that leaves and returns within the delay, "
        "then a worker lost for good. Per rebalance: tasks stopped and started, task-seconds not running, time "
        "until the cluster is stable. The defaults are Kafka's published comparison (90 connectors of 10 tasks).",
    )
    connect.add_argument("--workers", type=int, default=DEFAULT_WORKERS, metavar="W",
                         help=f"Connect workers (default {DEFAULT_WORKERS})")
    connect.add_argument("--connectors", type=int, default=DEFAULT_CONNECTORS, metavar="C",
                         help=f"connectors started then stopped (default {DEFAULT_CONNECTORS})")
    connect.add_argument("--tasks-per-connector", type=int, default=DEFAULT_TASKS_PER_CONNECTOR, metavar="T",
                         help=f"tasks of each connector (default {DEFAULT_TASKS_PER_CONNECTOR})")
    connect.add_argument("--protocol", choices=PROTOCOL_CHOICES, default="both",
                         help="eager (connect.protocol=default), cooperative (compatible/sessioned) or both (default)")
    connect.add_argument("--task-start-ms", type=float, default=DEFAULT_TASK_START_MS, metavar="X",
                         help=f"time to start one task or connector (default {DEFAULT_TASK_START_MS:g})")
    connect.add_argument("--task-stop-ms", type=float, default=DEFAULT_TASK_STOP_MS, metavar="Y",
                         help=f"time to stop one task or connector (default {DEFAULT_TASK_STOP_MS:g})")
    connect.add_argument("--rebalance-ms", type=float, default=DEFAULT_REBALANCE_MS, metavar="R",
                         help=f"one JoinGroup/SyncGroup round (default {DEFAULT_REBALANCE_MS:g})")
    connect.add_argument("--delay-ms", type=float, default=DEFAULT_MAX_DELAY_MS, metavar="D",
                         help=f"scheduled.rebalance.max.delay.ms (default {DEFAULT_MAX_DELAY_MS})")
    options.add_json(connect, help="print JSON instead of a table")
    connect.add_argument("--html", metavar="OUT.html", help="also write the page with the charts")
    connect.set_defaults(handler=run)
    register_storm(kinds)


def register_storm(kinds: argparse._SubParsersAction) -> None:
    parser = kinds.add_parser(
        "storm", help="a consumer group's rebalances under each protocol: time to stable, partitions paused",
        description="Simulate a consumer group's rebalances under each protocol on a simulated clock: the legacy "
        "ZooKeeper flow (one ZooKeeper server, its watches, the nine rebalance steps, ownership conflicts) and the "
        "modern protocols through the front's own group coordinators. Without --scenario: M members start at once "
        "on P partitions, as after a deploy. Prints per scene and protocol the time until the group is stable, the "
        "partition-seconds paused, ZooKeeper requests, conflicts and rebalances.",
    )
    parser.add_argument("--members", type=int, default=None, metavar="M",
                        help=f"members starting at once (default {DEFAULT_STORM_MEMBERS}; not with --scenario)")
    parser.add_argument("--partitions", type=int, default=None, metavar="P",
                        help=f"partitions of the topic (default {DEFAULT_STORM_PARTITIONS}, or the scenario's)")
    parser.add_argument("--protocols", default=",".join(storm.DEFAULT_PROTOCOLS), metavar="LIST",
                        help=f"comma-separated, of {', '.join(storm.PROTOCOLS)} "
                        f"(default {','.join(storm.DEFAULT_PROTOCOLS)})")
    parser.add_argument("--scenario", metavar="NAME|FILE.toml",
                        help="a shipped scenario by name or a scenario file: its members and scenes")
    parser.add_argument("--settle-limit-s", type=float, default=storm.DEFAULT_SETTLE_LIMIT_S, metavar="S",
                        help="give up on a scene not stable after this many simulated seconds "
                        f"(default {storm.DEFAULT_SETTLE_LIMIT_S:g})")
    options.add_json(parser, help="print JSON instead of a table")
    parser.set_defaults(handler=run_storm)


DEFAULT_STORM_MEMBERS = 10
DEFAULT_STORM_PARTITIONS = 1_000


def run_storm(args: argparse.Namespace) -> int:
    if args.scenario and args.members is not None:
        raise UsageError("--members and --scenario: the scenario names its members; give one or the other")
    if args.scenario:
        scenario = load(args.scenario)
        if args.partitions is not None:
            scenario = storm.with_partitions(scenario, args.partitions)
    else:
        scenario = storm.storm_scenario(DEFAULT_STORM_MEMBERS if args.members is None else args.members,
                                        DEFAULT_STORM_PARTITIONS if args.partitions is None else args.partitions)
    protocols = tuple(p.strip() for p in args.protocols.split(",") if p.strip())
    result = storm.simulate(scenario, protocols, settle_limit_s=args.settle_limit_s)
    print(json.dumps(storm_json(result)) if args.json else render_storm(result))
    return 0


def storm_json(result: storm.StormResult) -> dict:
    return {
        "scenario": result.scenario.name, "partitions": result.scenario.topic.partitions,
        "members": len(result.scenario.members), "parameters": asdict(result.parameters),
        "protocols": {p.protocol: {"scenes": [asdict(s) for s in p.scenes], "time_to_stable_s": p.time_to_stable_s,
                                   "simulated_events": p.events_run} for p in result.protocols},
    }


def render_storm(result: storm.StormResult) -> str:
    rows = [["scene", "protocol", *(title for _, title in STORM_FIGURES)]]
    for index, scene in enumerate(result.scenario.scenes):
        for p in result.protocols:
            figures = p.scenes[index]
            rows.append([scene.label, p.protocol, *(_shown(getattr(figures, name)) for name, _ in STORM_FIGURES)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    scenario = result.scenario
    lines = [f"{scenario.title}: {len(scenario.members)} members, {scenario.topic.partitions} partitions "
             "(simulated; time to stable: '-' = not within the limit)", ""]
    lines += ["  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
              .rstrip() for row in rows]
    return "\n".join(lines)


def _shown(value: float | int | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.2f}" if isinstance(value, float) else f"{value:,}"


def parameters(args: argparse.Namespace) -> SimulationParameters:
    protocols = PROTOCOLS if args.protocol == "both" else (args.protocol,)
    return SimulationParameters(
        workers=args.workers, connectors=args.connectors, tasks_per_connector=args.tasks_per_connector,
        task_start_ms=args.task_start_ms, task_stop_ms=args.task_stop_ms, rebalance_ms=args.rebalance_ms,
        delay_ms=args.delay_ms, protocols=protocols,
    )


def run(args: argparse.Namespace) -> int:
    result = simulate(parameters(args))
    if args.html:
        from zkconsumer.connect.page import simulation_page

        page = simulation_page(result)
        with written_whole(args.html, prefix=".zkconsumer-connect-") as f:
            f.write(page)
    print(json.dumps(to_json(result)) if args.json else render_table(result))
    return 0


def to_json(result: SimulationResult) -> dict:
    parameters = asdict(result.parameters)
    parameters["protocols"] = list(result.parameters.protocols)
    return {
        "parameters": parameters,
        "protocols": {
            p.protocol: {
                "rebalances": [asdict(r) for r in p.rebalances],
                "task_seconds_stopped": {ph.phase: ph.task_seconds_stopped for ph in p.phases},
                "time_to_stable_s": {ph.phase: ph.time_to_stable_s for ph in p.phases},
                "phases": {ph.phase: asdict(ph) for ph in p.phases},
            }
            for p in result.protocols
        },
    }


def render_table(result: SimulationResult) -> str:
    from zkconsumer.connect.page import PHASE_TITLES, describe, format_duration

    rows = [["phase", "protocol", "changes", "rounds", "tasks stopped", "tasks started", "task-seconds stopped",
             "time to stable"]]
    for phase in PHASES:
        for p in result.protocols:
            r = p.phase(phase)
            rows.append([phase, p.protocol, str(r.changes), str(r.rounds), str(r.tasks_stopped), str(r.tasks_started),
                         f"{r.task_seconds_stopped:.0f}", format_duration(r.time_to_stable_s)])
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = [describe(result), ""]
    lines += ["  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
              .rstrip() for row in rows]
    lines += ["", "phases: " + "; ".join(f"{name}: {text}" for name, text in PHASE_TITLES.items()), ""]
    lines.append("one rebalance's time until stable, with the fewest and with the most tasks running:")
    for phase in ("start", "stop"):
        for p in result.protocols:
            records = sorted(p.records(phase), key=lambda r: r.tasks_running)
            low, high = records[0], records[-1]
            lines.append(f"  {phase:5} {p.protocol:11} {low.time_to_stable_s:6.1f} s with {low.tasks_running} tasks, "
                         f"{high.time_to_stable_s:6.1f} s with {high.tasks_running}")
    return "\n".join(lines)
