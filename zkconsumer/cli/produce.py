"""``zkconsumer produce``: the console producer (``kafka-console-producer.sh``), one message per line.

Lines come from stdin or ``--file``; every line is checked before anything is sent, then every delivery report is
waited for (:mod:`zkconsumer.kafka.console_producer`). A message the broker did not take is a line on stderr naming
its input line and why, and the exit status is 1; on success one line on stderr says how many were delivered, so
stdout stays empty for scripts.
"""

from __future__ import annotations

import argparse
import json
import sys

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.input_file import read_text
from zkconsumer.errors import UsageError
from zkconsumer.kafka.console_producer import (
    DEFAULT_DELIVERY_TIMEOUT_MS,
    ProduceError,
    parse_lines,
    produce_records,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "produce", help=COMMANDS["produce"],
        description="Send each input line as a message to a topic and check that the broker took every one.",
    )
    parser.add_argument("--topic", required=True, help="the topic to send to (it must exist)")
    parser.add_argument("--file", metavar="FILE", help="read the lines from FILE (default: stdin; '-' too)")
    parser.add_argument("--key-separator", metavar="SEP",
                        help="each line is KEY<SEP>VALUE, split at the first SEP (default: the line is the value, "
                        "no key)")
    parser.add_argument("--partition", type=int, metavar="N",
                        help="send every message to partition N (default: by key, or spread by librdkafka)")
    parser.add_argument("--delivery-timeout-ms", type=int, default=DEFAULT_DELIVERY_TIMEOUT_MS, metavar="MS",
                        help="how long a message may wait for the broker before it counts as lost "
                        "(default: %(default)s)")
    options.add_bootstrap(parser)
    options.add_run_dir(parser)
    options.add_json(parser, help='print {"topic": ..., "delivered": N, "failures": [...]} on stdout')
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    if args.delivery_timeout_ms < 1:
        raise UsageError("--delivery-timeout-ms must be at least 1")
    records = parse_lines(read_text(args.file).splitlines(), args.key_separator)
    bootstrap = options.bootstrap(args)
    delivery = produce_records(bootstrap, args.topic, records, args.partition, args.delivery_timeout_ms)
    if args.json:
        print(json.dumps({"topic": args.topic, "delivered": delivery.delivered, "failures": delivery.failures}))
    else:
        print(f"delivered {delivery.delivered} messages to {args.topic}", file=sys.stderr)
    if delivery.failures:
        shown = "; ".join(delivery.failures[:3]) + ("; ..." if len(delivery.failures) > 3 else "")
        raise ProduceError(f"{len(delivery.failures)} of {len(records)} messages not delivered: {shown}")
    return 0
