"""``zkconsumer consume``: the console consumer of the ZooKeeper era (``kafka-console-consumer.sh --zookeeper``).

It is a real group member: it registers, rebalances with the group's other members and commits to ZooKeeper, so
operators can watch it with the group tools. As in Kafka, without ``--group`` it joins a fresh
``console-consumer-<n>`` group; ``--from-beginning`` means ``auto.offset.reset=smallest``, which only matters
for partitions the group has not committed yet; so, as Kafka 0.10's tool did, ``--from-beginning`` with a group that
has offsets in ZooKeeper is refused in one line naming ``--delete-consumer-offsets``, which deletes the group's
directory (``/consumers/<group>``) before the start, and is itself refused while the group has live members.
Ctrl-C or SIGTERM (or ``--max-messages``, or ``--timeout-ms`` without a message) leaves the group cleanly with the
consumed offsets committed, and prints how many messages were processed, as Kafka's tool did; the exit status is 0.
A ZooKeeper that does not answer is waited for at most the session timeout (``zookeeper.session.timeout.ms``),
whatever the consumer was doing (:mod:`zkconsumer.cli.stopping`): it then stops without committing, saying so in
one line, and its registration goes when the session expires.

A ``--property`` is the user's: an option that sets the same key (``--group`` and ``group.id``, ``--zookeeper`` and
``zookeeper.connect``, ``--from-beginning`` and ``auto.offset.reset``, ``--metrics-port``, ``--zookeeper-auth``) must
agree with it, else the command refuses, naming both. ``consumer.timeout.ms`` means what it meant to Kafka's console
consumer, the idle time after which the run ends (``--timeout-ms``; a negative value waits for ever); it is checked
like every key (``consumer.timeout.ms=abc`` is refused naming the key), while the connector itself polls its streams
every 100 ms so that one thread can serve them all.

``--metrics-port`` serves the consumer's metrics for Prometheus while it runs (the ``metrics.http.port`` property;
``docs/metrics.md``); the address is printed on stderr when it starts, which matters with ``--metrics-port 0``.
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError

from zkconsumer.cli import COMMANDS, options, stopping
from zkconsumer.cli.zookeeper_session import zookeeper_failure
from zkconsumer.config import ConsumerConfig, parse_value
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.errors import UsageError
from zkconsumer.tools.console_consumer import Count, Subscription, check_start, consume

_POLL_MS = 100  # how long one stream is waited for before the next one gets its turn


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "consume", help=COMMANDS["consume"],
        description="Consume as a member of a ZooKeeper-coordinated group and print each message.",
    )
    options.add_zookeeper(parser)
    options.add_run_dir(parser)
    parser.add_argument("--group", help="group id (default: a new console-consumer-<n> group)")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--topic", metavar="TOPIC[:STREAMS]", help="a topic, and how many streams to read it with")
    which.add_argument("--whitelist", metavar="REGEX", help="every topic matching REGEX")
    which.add_argument("--blacklist", metavar="REGEX", help="every topic not matching REGEX")
    parser.add_argument("--streams", type=int, default=1, help="streams for --whitelist/--blacklist (default 1)")
    parser.add_argument("--from-beginning", action="store_true",
                        help="start partitions the group never committed at the earliest offset")
    parser.add_argument("--delete-consumer-offsets", action="store_true",
                        help="delete the group's offsets (its /consumers/<group> directory) before starting, so that "
                             "--from-beginning reads from the beginning; refused while the group has live members")
    parser.add_argument("--max-messages", type=int, metavar="N", help="exit after N messages")
    parser.add_argument("--timeout-ms", type=int, metavar="MS", help="exit after MS milliseconds without a message")
    output = parser.add_mutually_exclusive_group()
    options.add_json(output, help="a JSON object per message: topic, partition, offset, key, value (default: the "
                     "value alone, as text)")
    output.add_argument("--format", choices=("text", "json"), default=None,
                        help="the older spelling, kept as an alias: --format json is --json, text the default")
    parser.add_argument("--metrics-port", type=int, metavar="PORT",
                        help="serve Prometheus metrics on http://0.0.0.0:PORT/metrics (0: any free port; the "
                        "metrics.http.port property)")
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="a consumer config property (repeatable), as in consumer.properties")
    parser.set_defaults(handler=run)


def _properties(args: argparse.Namespace) -> tuple[dict[str, Any], int | None]:
    """The connector's properties, and how long the run may stay idle (ms; None: for ever)."""
    props: dict[str, Any] = {}
    for item in args.property:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--property {item!r}: expected KEY=VALUE")
        props[key.strip()] = value.strip()

    def from_option(key: str, flag: str, value: Any, secret: bool = False) -> None:
        if key in props and str(props[key]) != str(value):
            shown = "" if secret else f"={props[key]}"
            raise UsageError(f"--property {key}{shown} and {flag} disagree; give one of them")
        props[key] = value

    if args.zookeeper or "zookeeper.connect" not in props:
        from_option("zookeeper.connect", "--zookeeper", options.zookeeper(args))
    auth = options.zookeeper_auth(args)
    if auth is not None:
        from_option("zookeeper.auth", "--zookeeper-auth", f"{auth.scheme}:{auth.credentials}", secret=True)
    if args.group:
        from_option("group.id", "--group", args.group)
    props.setdefault("group.id", f"console-consumer-{random.randint(0, 99999)}")
    if args.from_beginning:
        from_option("auto.offset.reset", "--from-beginning", "smallest")
    if args.metrics_port is not None:
        from_option("metrics.http.port", "--metrics-port", args.metrics_port)
    idle_ms = args.timeout_ms
    if "consumer.timeout.ms" in props:
        given = parse_value("consumer.timeout.ms", props["consumer.timeout.ms"])
        if args.timeout_ms is not None and given != args.timeout_ms:
            raise UsageError(f"--property consumer.timeout.ms={given} and --timeout-ms {args.timeout_ms} disagree; "
                             f"give one of them")
        idle_ms = given if given >= 0 else None
    props["consumer.timeout.ms"] = _POLL_MS
    return props, idle_ms


def run(args: argparse.Namespace) -> int:
    for name in ("max_messages", "timeout_ms"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise UsageError(f"--{name.replace('_', '-')} must be at least 1")
    fmt = "json" if args.json or args.format == "json" else "text"
    properties, idle_ms = _properties(args)
    config = ConsumerConfig(properties)
    subscription = Subscription(args.topic, args.whitelist, args.blacklist, args.streams)
    # Ctrl-C during the check is an interruption (exit 130): nothing has joined the group yet
    check_start(config, subscription, args.from_beginning, args.delete_consumer_offsets)
    stop = stopping.stop_on_signals()  # the check's client has stopped its threads, the connector starts its own
    connector = ZookeeperConsumerConnector(config)
    if connector.metrics_endpoint is not None:
        print(f"metrics: {connector.metrics_endpoint.url}", file=sys.stderr, flush=True)
    processed = Count()
    consuming = stopping.Work(lambda: consume(connector, subscription, lambda line: print(line, flush=True), fmt,
                                              args.max_messages, idle_ms, stop, processed), "consume")
    try:
        stopped = not consuming.wait_unless(stop)
        if stopped:
            stopping.quiet_kazoo()
        deadline = stopping.Deadline(config.zookeeper_session_timeout_ms / 1000)
        # After a signal the loop ends between two messages; a join still waiting on ZooKeeper is waited for within the
        # bound, then the shutdown (the last commit, the registration deleted, the session closed).
        ended = consuming.wait(deadline.left())
        if not (ended and stopping.Work(connector.shutdown, "consumer-shutdown").wait(deadline.left())):
            stopping.gave_up("consume", config.zookeeper_connect, deadline,
                             "leaving the group cleanly (the offsets consumed since its last commit may not be "
                             "committed; its registration goes when the session expires)")
        if ended and not stopped:
            try:
                consuming.result()  # what the join or the loop raised; after a signal, a join cut short was asked for
            except (KazooException, KazooTimeoutError) as exc:
                raise zookeeper_failure(config.zookeeper_connect, exc) from None
    finally:
        print(f"Processed a total of {processed.value} messages", file=sys.stderr)
    return 0
