"""``zkconsumer local up|down|status``: the embedded default environment (see zkconsumer.embedded.environment).

``up`` on a run directory where processes died starts them again where they were (zkconsumer.embedded.healing): one
line on stderr says what it restarted and what it left running, the addresses line begins ``healed in``.

SIGTERM while ``up`` starts the environment ends it as Ctrl-C does: the processes it has started are stopped, and it
exits with status 130 after one line. The processes it leaves running stop on ``down``'s SIGTERM, each within a bound
of its own (the bridge's is its ZooKeeper session timeout, :mod:`zkconsumer.cli.bridge`), and are killed after it.
"""

from __future__ import annotations

import argparse
import json
import sys

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.stopping import sigterm_as_ctrl_c
from zkconsumer.embedded.broker_kinds import BROKER_KINDS, DEFAULT_BROKER, KAFKA_SETTINGS_NOTE, KINDS
from zkconsumer.embedded.environment import LocalEnvironment
from zkconsumer.embedded.front import SHORT_SETTINGS_NOTE


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "local", help=COMMANDS["local"]
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    up = actions.add_parser("up", help="start ZooKeeper, a broker (Tansu with the front, or --broker "
                                       "kafka-4|kafka-3.9) and the bridge in the background")
    up.add_argument("--broker", choices=BROKER_KINDS, default=None,
                    help="; ".join(f"{name}: {kind.help}" for name, kind in KINDS.items())
                    + f". Default: the kind the run directory was started with, else {DEFAULT_BROKER}")
    up.add_argument("--zookeeper-port", type=int, default=None, help="default: a free port")
    up.add_argument("--broker-port", type=int, default=None, help="default: a free port")
    up.add_argument("--zookeeper-servers", type=int, default=1, metavar="N",
                    help="an ensemble of N ZooKeeper servers (3 survives losing one), the connect string lists all; "
                         "with --zookeeper-port P they listen on P, P+1...; default: 1")
    up.add_argument("--direct-broker", action="store_true",
                    help="start no front: clients are given the broker itself, with its own group coordinator")
    options.add_json(up, help='print {"zookeeper": ..., "bootstrap_servers": ..., "broker": ...}')
    up.set_defaults(handler=run_up)
    down = actions.add_parser("down", help="stop exactly the processes `local up` started")
    down.set_defaults(handler=run_down)
    status = actions.add_parser("status", help="show the processes, their health and what ZooKeeper holds")
    options.add_json(status, help="print the status as one JSON object (exit status as without)")
    status.set_defaults(handler=run_status)
    for sub in (up, down, status):
        options.add_run_dir(sub)


def run_up(args: argparse.Namespace) -> int:
    sigterm_as_ctrl_c()
    env = LocalEnvironment(args.run_dir)
    already = env.endpoints() is not None
    endpoints = env.up(args.zookeeper_port, args.broker_port, direct_broker=args.direct_broker,
                       zookeeper_servers=args.zookeeper_servers, broker=args.broker)
    if env.healed is not None:
        print(f"zkconsumer local: {env.healed.summary()}", file=sys.stderr)
    reconciled = env.reconciled.summary()
    if reconciled is not None:
        print(f"zkconsumer local: {reconciled}", file=sys.stderr)
    if args.json:
        print(json.dumps(endpoints))
    else:
        said = "already running" if already else "healed" if env.healed is not None else "up"
        print(f"{said} in {env.run_dir}: zookeeper {endpoints['zookeeper']}, "
              f"bootstrap servers {endpoints['bootstrap_servers']}{_through(endpoints, *env.broker_run())}; "
              f"stop it with: zkconsumer local down")
    return 0


def run_down(args: argparse.Namespace) -> int:
    env = LocalEnvironment(args.run_dir)
    stopped = env.down()
    if stopped:
        print(f"stopped {', '.join(stopped)} (ZooKeeper's data and the logs kept in {env.run_dir})")
    else:
        print(f"no local environment was running in {env.run_dir}")
    return 0


def run_status(args: argparse.Namespace) -> int:
    env = LocalEnvironment(args.run_dir)
    status = env.status()
    if args.json:
        print(json.dumps(status.to_json()))
        return 0 if status.running else 1
    if not status.processes:
        print(f"no local environment in {status.run_dir} ({env.run_dir_origin}; start one with: zkconsumer local up)")
        return 1
    print(f"run directory      {status.run_dir}  ({env.run_dir_origin})")
    print(f"zookeeper          {status.zookeeper}  {'imok' if status.zookeeper_ok else 'NOT ANSWERING'}")
    for address, mode in status.zookeeper_servers:
        print(f"  {address:<21} {mode}")
    print(f"bootstrap servers  {status.bootstrap_servers}  {'ok' if status.broker_ok else 'NOT ANSWERING'}"
          f"{'  (the front)' if status.broker != status.bootstrap_servers else ''}")
    print(f"broker software    {status.broker_software or '(not recorded)'}  (--broker {status.broker_kind})")
    if status.broker != status.bootstrap_servers:
        print(f"broker             {status.broker}  {'ok' if status.direct_broker_ok else 'NOT ANSWERING'}"
              f"  (direct: the broker's own coordinator)")
    for proc in status.processes:
        print(f"  {proc.name:<10} pid {proc.pid:<8} {'running' if proc.alive else 'GONE'}  log {proc.log}")
    print(f"/brokers/ids       {', '.join(status.registered_brokers) or '(none)'}")
    print(f"/brokers/topics    {', '.join(status.topics) or '(none)'}")
    return 0 if status.running else 1


def _through(endpoints: dict[str, str], kind: str, software: str | None) -> str:
    broker = endpoints.get("broker", endpoints["bootstrap_servers"])
    running = f"{software}, " if software else ""
    if broker == endpoints["bootstrap_servers"]:
        # a Kafka broker is given the setting the front is given, and wider KIP-848 bounds (KAFKA_SETTINGS)
        settings = "" if KINDS[kind].fronted else f"; its group settings {KAFKA_SETTINGS_NOTE}"
        return f" (the broker itself, {running}with its own group coordinator{settings})"
    return f" (the front, in front of the broker at {broker}, {running}its group settings {SHORT_SETTINGS_NOTE})"
