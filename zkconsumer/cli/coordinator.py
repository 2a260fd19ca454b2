"""``zkconsumer coordinator --group G``: the group's ``__consumer_offsets`` partition, its coordinator, and the
broker-side group (state, protocol, members and their assignments), beside what ``groups describe`` shows from
ZooKeeper. See :mod:`zkconsumer.tools.coordinator`.
"""

from __future__ import annotations

import argparse
import json

from zkconsumer.cli import COMMANDS, options
from zkconsumer.kafka.group_offsets import check_group_id
from zkconsumer.tools.coordinator import DEFAULT_OFFSETS_PARTITIONS, describe_coordinator, format_view, view_json


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "coordinator", help=COMMANDS["coordinator"],
        description="The __consumer_offsets partition Kafka 0.10 computes for the group "
        "(Utils.abs(groupId.hashCode) % offsets.topic.num.partitions), the broker the cluster names as its "
        "coordinator (FindCoordinator), and the group as that broker sees it (DescribeGroups): state, protocol, "
        "members and their assignments. Groups of the legacy consumer have no broker-side members.",
    )
    parser.add_argument("--group", required=True, help="the group whose coordinator and broker-side state to show")
    parser.add_argument("--offsets-partitions", type=int, default=DEFAULT_OFFSETS_PARTITIONS, metavar="N",
                        help="offsets.topic.num.partitions of the cluster (default: %(default)s)")
    parser.add_argument("--socket-timeout-ms", type=int, default=10000, metavar="MS",
                        help="how long to wait for each broker answer (default: %(default)s)")
    options.add_bootstrap(parser)
    options.add_run_dir(parser)
    options.add_json(parser, help="one JSON object instead of the text")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    group = check_group_id(args.group)
    view = describe_coordinator(options.bootstrap(args), group, args.offsets_partitions,
                                timeout=max(args.socket_timeout_ms, 1) / 1000)
    if args.json:
        print(json.dumps(view_json(view), indent=2))
    else:
        for line in format_view(view):
            print(line)
    return 0
