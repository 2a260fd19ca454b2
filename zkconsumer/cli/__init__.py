"""The ``zkconsumer`` command.

Each subcommand lives in a module of this package named after it and exposes
``register(subparsers)``, which adds its parser and sets ``handler`` to a function
``(args) -> int``. Adding a command is adding a module here and its name to ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from zkconsumer import __version__
from zkconsumer.errors import ZkConsumerError
from zkconsumer.log import configure_logging

COMMANDS = ["local", "topics", "bridge", "demo", "assign", "compare", "consume", "groups", "offsets", "trace"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zkconsumer",
        description="Kafka's legacy ZooKeeper-coordinated high-level consumer, in Python.",
    )
    parser.add_argument("--version", action="version", version=f"zkconsumer {__version__}")
    parser.add_argument(
        "--log-json", action="store_true", default=None,
        help="write events as JSON lines on stderr (also: ZKCONSUMER_LOG_JSON=1)",
    )
    parser.add_argument("--log-level", default=None, help="debug, info (default), warning or error")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"zkconsumer.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    try:
        configure_logging(json=args.log_json, level=args.log_level)
        return int(handler(args) or 0)
    except ZkConsumerError as exc:
        print(f"zkconsumer {args.command}: {exc}", file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        print(f"zkconsumer {args.command}: interrupted", file=sys.stderr)
        return 130
