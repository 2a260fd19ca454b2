"""``zkconsumer topics create|alter``: set up topics for a demo without other tools."""

from __future__ import annotations

import argparse

from zkconsumer.cli import COMMANDS, options
from zkconsumer.kafka import topics


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("topics", help=COMMANDS["topics"])
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a topic")
    create.add_argument("name")
    create.add_argument("--partitions", type=int, required=True)
    create.add_argument("--replication-factor", type=int, default=1)
    alter = actions.add_parser("alter", help="add partitions to a topic")
    alter.add_argument("name")
    alter.add_argument("--partitions", type=int, required=True, help="the new, larger partition count")
    for sub in (create, alter):
        options.add_bootstrap(sub)
        options.add_run_dir(sub)
    create.set_defaults(handler=run_create)
    alter.set_defaults(handler=run_alter)


def run_create(args: argparse.Namespace) -> int:
    bootstrap = options.bootstrap(args)
    topics.create_topic(bootstrap, args.name, args.partitions, args.replication_factor)
    print(f"created topic {args.name} with {args.partitions} partitions at {bootstrap}")
    return 0


def run_alter(args: argparse.Namespace) -> int:
    bootstrap = options.bootstrap(args)
    topics.alter_partitions(bootstrap, args.name, args.partitions)
    print(f"topic {args.name} now has {args.partitions} partitions at {bootstrap}")
    return 0
