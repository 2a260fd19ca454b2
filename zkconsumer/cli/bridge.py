"""``zkconsumer bridge``: mirror a Kafka-protocol cluster's metadata into ZooKeeper (see
:mod:`zkconsumer.bridge.metadata_bridge`)."""

from __future__ import annotations

import argparse
import signal
import threading

from zkconsumer.bridge.metadata_bridge import DEFAULT_BROKER_TIMEOUT_MS, DEFAULT_INTERVAL_MS, MetadataBridge
from zkconsumer.cli import COMMANDS, options
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
    bridge = MetadataBridge(options.zookeeper(args), options.bootstrap(args), args.interval_ms, args.broker_timeout_ms,
                            auth=options.zookeeper_auth(args))
    with bridge:
        if args.once:
            bridge.sync_once()
            return 0
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        bridge.run(stop)
    return 0
