"""``zkconsumer groups list|describe|verify``: the legacy group tools, reading the group from ZooKeeper.

* ``list``: the groups, children of ``/consumers``, one per line, sorted; with ``--bootstrap-server``, also the groups
  the broker's coordinators know (classic and KIP-848), each followed by where its offsets live (``zookeeper``,
  ``kafka``, ``both`` or ``none``; :mod:`zkconsumer.tools.offset_locations`), where the group lives, its type and
  state at the broker (:mod:`zkconsumer.tools.groups_listing`); ``--json`` as data.
* ``describe``: ConsumerOffsetChecker (:mod:`zkconsumer.tools.offset_checker`): per partition the committed offset,
  the log size from the brokers, the lag and the owner, in the tool's format or with ``--json`` as data;
  ``--offsets-storage kafka|both`` shows the group's offsets in Kafka instead, or beside ZooKeeper's.
* ``verify``: VerifyConsumerRebalance (:mod:`zkconsumer.tools.verify_rebalance`): every partition owned by a current
  thread of the group; each problem on a line, then the verdict (``--json``: one object); exits 1 when it failed.

Problems with single znodes are warnings on stderr (``warning: znode PATH ...``); the command still answers.
"""

from __future__ import annotations

import argparse
import json
import sys

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.zookeeper_session import zookeeper_session
from zkconsumer.errors import UsageError
from zkconsumer.kafka.log_end_offsets import DEFAULT_TIMEOUT
from zkconsumer.tools import groups_listing
from zkconsumer.tools.offset_checker import OFFSETS_STORAGES, describe_group, format_table, json_rows
from zkconsumer.tools.verify_rebalance import verify_rebalance


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("groups", help=COMMANDS["groups"])
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="the consumer groups in ZooKeeper (and at the broker), one per line")
    options.add_bootstrap(listing, help="also list the groups this broker's coordinators know (classic and KIP-848) "
                          "and show, per group, where its offsets live (zookeeper, kafka, both, none), where the "
                          "group lives (zookeeper, broker, zookeeper+broker), its type (classic, consumer) and state")
    options.add_json(listing, help="a JSON list of objects (group, offsets, lives_in, type, state) instead of lines")
    describe = actions.add_parser(
        "describe", help="each partition's offset, log size, lag and owner (ConsumerOffsetChecker)",
        description="ConsumerOffsetChecker: for every partition of the topics the group subscribes to, has offsets "
        "for or owns: the committed offset, the broker's latest offset (logSize), the lag and the owning thread.",
    )
    describe.add_argument("--group", required=True, help="the group to describe")
    options.add_bootstrap(describe, help="a broker to ask for log sizes (default: the brokers registered in ZooKeeper)")
    for sub in (listing, describe):
        sub.add_argument(
            "--socket-timeout-ms", type=int, default=int(DEFAULT_TIMEOUT * 1000), metavar="MS",
            help="how long to wait for a broker's answer (default: %(default)s)",
        )
    describe.add_argument(
        "--offsets-storage", default="zookeeper", metavar="STORE",
        help="whose offsets to show: zookeeper (default), kafka (the group's offsets in __consumer_offsets) or both "
        "(Kafka's offset and lag beside ZooKeeper's: kafka_offset, kafka_lag)",
    )
    options.add_json(describe, help="a JSON list of objects instead of the table")
    verify = actions.add_parser(
        "verify", help="is every partition owned by a current thread of the group (VerifyConsumerRebalance)",
    )
    verify.add_argument("--group", required=True, help="the group to verify")
    options.add_json(verify, help='one JSON object {"group", "ok", "problems": [...], "verdict"} instead of lines '
                     "(exit status as without)")
    for sub in (listing, describe, verify):
        options.add_zookeeper(sub)
        options.add_run_dir(sub)
    listing.set_defaults(handler=run_list)
    describe.set_defaults(handler=run_describe)
    verify.set_defaults(handler=run_verify)


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def run_list(args: argparse.Namespace) -> int:
    with zookeeper_session(args) as zk:
        listed = groups_listing.list_all_groups(zk, args.bootstrap_server,
                                                timeout=max(args.socket_timeout_ms, 1) / 1000)
    for problem in listed.warnings:
        warn(problem)
    if args.json:
        print(json.dumps(groups_listing.json_rows(listed.rows), indent=2))
    else:
        for line in groups_listing.format_rows(listed.rows):
            print(line)
    return 0


def run_describe(args: argparse.Namespace) -> int:
    storage = args.offsets_storage
    if storage not in OFFSETS_STORAGES:
        raise UsageError(f"--offsets-storage {storage!r} is not one of {', '.join(OFFSETS_STORAGES)}")
    with zookeeper_session(args) as zk:
        described = describe_group(zk, args.group, args.bootstrap_server,
                                   timeout=max(args.socket_timeout_ms, 1) / 1000, offsets_storage=storage)
    for problem in described.warnings:
        warn(problem)
    rows = described.offsets.rows
    if args.json:
        print(json.dumps(json_rows(rows, storage), indent=2))
    else:
        for line in format_table(rows, storage):
            print(line)
    return 0


def run_verify(args: argparse.Namespace) -> int:
    with zookeeper_session(args) as zk:
        check = verify_rebalance(zk, args.group)
    if args.json:
        print(json.dumps({"group": check.group, "ok": check.ok, "problems": list(check.problems),
                          "verdict": check.verdict}, indent=2))
    else:
        for problem in check.problems:
            print(problem)
        print(check.verdict)
    return 0 if check.ok else 1
