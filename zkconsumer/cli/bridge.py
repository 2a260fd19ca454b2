"""``zkconsumer bridge``: mirror a Kafka-protocol cluster's metadata into ZooKeeper (see
:mod:`zkconsumer.bridge.metadata_bridge`).

It runs until SIGTERM or SIGINT, then closes its session, which removes its broker registrations at once, as a
broker's clean stop does, and exits with status 0. A ZooKeeper that does not answer is waited for at most the
bridge's session timeout, whatever the bridge was doing (:mod:`zkconsumer.cli.stopping`); the bridge then stops without
closing the session, saying so in one line, and its registrations go when the session expires.
"""

from __future__ import annotations

import argparse

from zkconsumer.bridge.metadata_bridge import DEFAULT_BROKER_TIMEOUT_MS, DEFAULT_INTERVAL_MS, MetadataBridge
from zkconsumer.cli import COMMANDS, options, stopping
from zkconsumer.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bridge",
        help=COMMANDS["bridge"],
        description="Reads brokers, topics, partitions and leaders through the Metadata API and keeps "
        "/brokers in ZooKeeper exactly as a ZooKeeper-mode broker and controller would, writing a znode "
        "only when its content changes.",
    )
    options.add_zookeeper(parser)
    options.add_bootstrap(parser)
    options.add_run_dir(parser)
    parser.add_argument("--interval-ms", type=int, default=DEFAULT_INTERVAL_MS, metavar="MS",
                        help="metadata poll interval (default: %(default)s)")
    parser.add_argument(
        "--broker-timeout-ms", type=int, default=DEFAULT_BROKER_TIMEOUT_MS, metavar="MS",
        help="unregister brokers after the cluster has been unreachable this long",
    )
    parser.add_argument("--once", action="store_true", help="sync once and exit")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.interval_ms <= 0 or args.broker_timeout_ms <= 0:
        raise UsageError("--interval-ms and --broker-timeout-ms must be positive")
    zookeeper = options.zookeeper(args)
    # before the bridge starts a thread (librdkafka's, for its admin client; kazoo's)
    stop = None if args.once else stopping.stop_on_signals()
    bridge = MetadataBridge(zookeeper, options.bootstrap(args), args.interval_ms, args.broker_timeout_ms,
                            auth=options.zookeeper_auth(args))
    if stop is None:
        with bridge:
            bridge.sync_once()
        return 0
    bridge.start()
    passes = stopping.Work(lambda: bridge.run(stop), "bridge")
    stop.wait()  # no timeout: the bridge runs until SIGINT or SIGTERM sets its stop event
    stopping.quiet_kazoo()
    deadline = stopping.Deadline(bridge.connect_timeout)  # the session timeout the bridge asks for
    # A pass still waiting on ZooKeeper holds what close() needs: the close waits for it, within the same bound.
    if not (passes.wait(deadline.left()) and stopping.Work(bridge.close, "bridge-close").wait(deadline.left())):
        stopping.gave_up("bridge", zookeeper, deadline,
                         "closing its session (its broker registrations go when the session expires)")
    return 0
