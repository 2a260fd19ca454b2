"""One member of a consumer group as its own process: what the demo starts, kills and watches.

``python -m zkconsumer.demo.group_member --zookeeper Z --group G --topic T[:STREAMS] --consumer-id ID``

A real process is the point: SIGKILL leaves its ephemeral znodes behind until ZooKeeper expires the session,
exactly the failure the legacy consumer had to survive, which a thread in the demo's own process cannot show.
The member consumes every stream (one thread each), writes its events as JSON lines on stdout (the demo
narrates and records them), optionally appends ``partition offset value`` per message to ``--output``
(flushed at once, so a SIGKILL loses nothing already written), and leaves the group cleanly on SIGTERM.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from typing import TextIO

from zkconsumer.consumer.consumer_iterator import ConsumerTimeoutException
from zkconsumer.consumer.kafka_stream import KafkaStream
from zkconsumer.consumer.zookeeper_consumer_connector import create_connector
from zkconsumer.demo.stop_signals import stop_event
from zkconsumer.group.topic_count import parse_topic_streams
from zkconsumer.log import configure_logging


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m zkconsumer.demo.group_member", description=__doc__.splitlines()[0])
    parser.add_argument("--zookeeper", required=True, help="HOST:PORT[/chroot]")
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", required=True, metavar="TOPIC[:STREAMS]")
    parser.add_argument("--consumer-id", required=True)
    parser.add_argument("--strategy", default="range", choices=("range", "roundrobin"))
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    parser.add_argument("--output", help="append 'partition offset value' per message to this file")
    parser.add_argument("--events", choices=("json", "none"), default="json",
                        help="json: the connector's events as JSON lines on stdout (default)")
    parser.add_argument("--stop-at-stdin-eof", action="store_true",
                        help="leave the group when stdin closes: the member cannot outlive the process that "
                        "started it, whatever way that one ended")
    return parser


def member_config(args: argparse.Namespace) -> dict[str, object]:
    """Short intervals, so that a demo or a test sees each change within a second or two."""
    return {
        "zookeeper.connect": args.zookeeper, "group.id": args.group, "consumer.id": args.consumer_id,
        "partition.assignment.strategy": args.strategy, "auto.offset.reset": "smallest",
        "consumer.timeout.ms": 200, "auto.commit.interval.ms": 200,
        "zookeeper.session.timeout.ms": args.session_timeout_ms, "rebalance.backoff.ms": 300,
        "rebalance.max.retries": 10, "refresh.leader.backoff.ms": 100,
    }


def consume(stream: KafkaStream, stop: threading.Event, output: TextIO | None, lock: threading.Lock) -> None:
    while not stop.is_set():
        try:
            for message in stream:
                if output is not None:
                    with lock:
                        output.write(f"{message.partition} {message.offset} {message.message.decode()}\n")
                if stop.is_set():
                    return
        except ConsumerTimeoutException:
            continue


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.events == "json":
        configure_logging(json=True, stream=sys.stdout, force=True)
        # stdout is for events only: kazoo's and librdkafka's own log lines go to stderr.
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)
    topic, streams = parse_topic_streams(args.topic)
    stop = stop_event(stop_at_stdin_eof=args.stop_at_stdin_eof)
    connector = create_connector(member_config(args))
    output = open(args.output, "a", buffering=1) if args.output else None  # noqa: SIM115 - closed below
    try:
        lock = threading.Lock()
        threads = [
            threading.Thread(target=consume, args=(stream, stop, output, lock), daemon=True)
            for stream in connector.create_message_streams({topic: streams})[topic]
        ]
        for thread in threads:
            thread.start()
        stop.wait()
        for thread in threads:
            thread.join(2)
    finally:
        connector.shutdown()
        if output is not None:
            output.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
