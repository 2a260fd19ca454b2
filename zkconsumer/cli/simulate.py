"""``zkconsumer simulate connect``: Kafka Connect's eager and incremental cooperative rebalancing replayed on a
simulated clock (:mod:`zkconsumer.connect.simulation`), as a table per phase and protocol, ``--json`` for
scripts, ``--html`` for the page with the charts.

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

PROTOCOL_CHOICES = (*PROTOCOLS, "both")


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
