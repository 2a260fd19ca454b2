"""``zkconsumer front --bootstrap-server BROKER --port P``: the Kafka-protocol front of a broker, in the foreground
until Ctrl-C (SIGINT) or SIGTERM. See :mod:`zkconsumer.front` and docs/front.md."""

from __future__ import annotations

import argparse

from zkconsumer.cli import COMMANDS, options


def register(subparsers: argparse._SubParsersAction) -> None:
    from zkconsumer.front.command_line import add_front_options

    parser = subparsers.add_parser(
        "front", help=COMMANDS["front"],
        description="Listen on a port of its own and relay every Kafka request to the broker, rewriting the "
        "answers that name brokers (Metadata, FindCoordinator, DescribeCluster) so that clients keep talking to the "
        "front. The group APIs (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch, "
        "DescribeGroups, ListGroups, DeleteGroups, ConsumerGroupHeartbeat, ConsumerGroupDescribe) are answered by the "
        "front's own group coordinators, classic and KIP-848, offsets kept in the broker; --group-coordinator broker "
        "relays them to the broker's own.",
    )
    options.add_bootstrap(parser, help="the broker to relay to (default: $KAFKA_BOOTSTRAP, else the running "
                                       "`zkconsumer local` environment's)")
    options.add_run_dir(parser)
    add_front_options(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from zkconsumer.front.command_line import config_of, run_front

    return run_front(config_of(args, options.broker(args)), args.port_file, announce=True)
