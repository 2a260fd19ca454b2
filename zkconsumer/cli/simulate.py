"""``zkconsumer simulate connect``: Kafka Connect's eager and incremental cooperative rebalancing replayed on a
simulated clock (:mod:`zkconsumer.connect.simulation`), as a table per phase and protocol, ``--json`` for
scripts, ``--html`` for the page with the charts. ``zkconsumer simulate storm``: a consumer group's rebalances
under each protocol (:mod:`zkconsumer.storm`), the predicted figures per scene and protocol. ``zkconsumer simulate
sweep``: a grid of storms as a Spark job (:mod:`zkconsumer.fleet.sweep_job`), a Parquet table and a page of curves.

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
                 ("request_timeouts", "requests timed out"), ("connection_drops", "connections dropped"))


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
    register_sweep(kinds)


def register_storm(kinds: argparse._SubParsersAction) -> None:
    parser = kinds.add_parser(
        "storm", help="a consumer group's rebalances under each protocol: time to stable, partitions paused",
        description="Simulate a consumer group's rebalances under each protocol on a simulated clock: the legacy "
        "ZooKeeper flow (a ZooKeeper ensemble, each member's kazoo connection, its watches, the nine rebalance steps, "
        "ownership conflicts) and the "
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


def register_sweep(kinds: argparse._SubParsersAction) -> None:
    from zkconsumer.storm import sweep

    parser = kinds.add_parser(
        "sweep", help="a grid of storm simulations on Spark: Parquet and a page of curves",
        description="Simulate a grid of storms (members x partitions x protocol x scenario x settings) as a Spark "
        "job, one simulation per task, on this machine or a cluster master: the figures of every point as Parquet "
        "(DIR/runs) and a page of curves (DIR/sweep.html): time to stable and partition-seconds paused against the "
        "members, a curve per protocol, a panel per partition count.",
    )
    parser.add_argument("--members", default=",".join(map(str, sweep.DEFAULT_MEMBERS)), metavar="LIST",
                        help="comma-separated member counts of the storm (default %(default)s)")
    parser.add_argument("--partitions", default=",".join(map(str, sweep.DEFAULT_PARTITIONS)), metavar="LIST",
                        help="comma-separated partition counts (default %(default)s)")
    parser.add_argument("--protocols", default=",".join(storm.DEFAULT_PROTOCOLS), metavar="LIST",
                        help=f"comma-separated, of {', '.join(storm.PROTOCOLS)} (default %(default)s)")
    parser.add_argument("--scenarios", default=sweep.STORM, metavar="LIST",
                        help="comma-separated: storm (the members start at once) and shipped scenario names or "
                        "scenario files, each played by its own members (default %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=V1,V2",
                        help="a simulation parameter (docs/storm.md's table, e.g. rebalance_backoff_ms=200,2000) "
                        "and its values to cross; repeatable")
    parser.add_argument("--settle-limit-s", type=float, default=storm.DEFAULT_SETTLE_LIMIT_S, metavar="S",
                        help="give up on a scene not stable after this many simulated seconds (default %(default)g)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output directory (must not exist)")
    parser.add_argument("--master", default="local[*]", metavar="URL",
                        help="Spark master (default: %(default)s, every core here; e.g. local[2], spark://host:7077)")
    parser.set_defaults(handler=run_sweep)


def run_sweep(args: argparse.Namespace) -> int:
    from zkconsumer.storm import sweep

    points = sweep.grid(_counts(args.members, "--members"), _counts(args.partitions, "--partitions"),
                        _names(args.protocols), [_scenario(name) for name in _names(args.scenarios)],
                        dict(_setting(given) for given in args.set))
    from zkconsumer.fleet.job_output import check_output
    from zkconsumer.fleet.spark_session import command_session
    from zkconsumer.fleet.sweep_job import PAGE, run_sweep_job

    check_output(args.out)  # before Spark's start, as every other argument

    meta = (f"{len(points)} simulations: members {args.members}, partitions {args.partitions}, scenarios "
            f"{args.scenarios}{''.join(' --set ' + s for s in args.set)}, settle limit {args.settle_limit_s:g} s")
    with command_session(args.master, "zkconsumer simulate sweep") as spark:
        rows = run_sweep_job(spark, points, args.out, meta, args.settle_limit_s)
    print(render_sweep(rows))
    print(f"\nwrote {args.out}/runs (Parquet, {len(rows)} rows) and {args.out}/{PAGE}")
    return 0


def render_sweep(rows: list) -> str:
    """Time to stable per scenario, settings, partitions and protocol (rows) and members (columns)."""
    members = sorted({r.members for r in rows})
    table = [["scenario", "settings", "partitions", "protocol", *(f"{m:,} members" for m in members)]]
    keys = list(dict.fromkeys((r.scenario, r.settings, r.partitions, r.protocol) for r in rows))
    for key in keys:
        by_members = {r.members: r.time_to_stable_s for r in rows if (r.scenario, r.settings, r.partitions,
                                                                      r.protocol) == key}
        table.append([key[0], key[1], f"{key[2]:,}", key[3],
                      *("" if m not in by_members else _shown(by_members[m]) for m in members)])
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    lines = ["time to stable, simulated seconds ('-': not within the limit)", ""]
    lines += ["  ".join(c.rjust(w) if i > 3 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
              .rstrip() for row in table]
    return "\n".join(lines)


def _names(given: str) -> list[str]:
    return [name.strip() for name in given.split(",") if name.strip()]


def _counts(given: str, option: str) -> list[int]:
    try:
        return [int(value) for value in _names(given)]
    except ValueError:
        raise UsageError(f"{option} {given!r}: comma-separated whole numbers expected") from None


def _setting(given: str) -> tuple[str, list[float]]:
    name, equals, values = given.partition("=")
    try:
        if not equals:
            raise ValueError
        return name.strip(), [float(value) for value in _names(values)]
    except ValueError:
        raise UsageError(f"--set {given!r}: NAME=V1,V2 expected, the values numbers") from None


def _scenario(name: str) -> tuple[str, str | None]:
    """(name, TOML text) of a scenario, ``None`` for the storm; a bad one refused here, before Spark starts."""
    from pathlib import Path

    from zkconsumer.scenarios.parse import shipped
    from zkconsumer.storm import sweep

    if name == sweep.STORM:
        return name, None
    scenario = load(name)
    return scenario.name, (shipped().get(name) or Path(name)).read_text(encoding="utf-8")


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
    unsettled = [f"{scene.label}, {p.protocol}: {p.scenes[index].unsettled}"
                 for index, scene in enumerate(scenario.scenes) for p in result.protocols if p.scenes[index].unsettled]
    if unsettled:
        lines += ["", "not stable within the limit, as it stood then:", *(f"  {line}" for line in unsettled)]
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
