"""One member of a legacy (ZooKeeper) consumer group as its own process: what the demo, the migration comparison and
the chaos run start, kill and watch.

``python -m zkconsumer.members.legacy_member --zookeeper Z --group G --topic T[:STREAMS][,...] --consumer-id ID``

A real process is the point: SIGKILL leaves its ephemeral znodes behind until ZooKeeper expires the session,
exactly the failure the legacy consumer had to survive, which a thread in the caller's own process cannot show.
The member consumes every stream (one thread each) and writes its events as JSON lines on stdout (or appended to
``--events-file``). With ``--output`` it appends one line per message delivered, ``partition offset value`` (or, with
``--delivery-format timed``, ``time topic partition offset value``), flushed at once, so a SIGKILL loses nothing
already written. ``--revoke-ms N`` gives it an application that spends N ms before releasing partitions
(:mod:`zkconsumer.members.revoke_cost`, in the connector's rebalance listener). ``--app MODULE:CALLABLE`` runs the
user's application on each message, with its hooks in the rebalance listener (:mod:`zkconsumer.members.application`):
a message is written to ``--output`` once the application took it.
``--session-file`` keeps its ZooKeeper session id and password there (``<id> <password hex>``), for a caller that
expires the session from outside. ``--step-gate FIFO`` stops it before each numbered step of its rebalances until the
demo's step mode says go on (:mod:`zkconsumer.members.step_control`). It leaves the group cleanly on SIGTERM or SIGINT
(:mod:`zkconsumer.members.stop_signals`), and dumps its threads' stacks to stderr on SIGUSR1, for a caller that is
about to kill it because it hangs.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, TextIO

from zkconsumer.config import ConsumerConfig
from zkconsumer.consumer.consumer_iterator import ConsumerTimeoutException
from zkconsumer.consumer.kafka_stream import KafkaStream
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.errors import UsageError
from zkconsumer.group.topic_count import parse_topic_streams
from zkconsumer.log import configure_logging, get_logger
from zkconsumer.members.application import Application, ApplicationOptions, Message, Runner, delivery_line
from zkconsumer.members.application import load as load_application
from zkconsumer.members.command_line import MemberOptions
from zkconsumer.members.command_line import parser as options_parser
from zkconsumer.members.option_field import option
from zkconsumer.members.revoke_cost import RevokeCost, RevokeListener
from zkconsumer.members.step_control import HeldSteps
from zkconsumer.members.stop_signals import stacks_on_request, stop_event

MODULE = "zkconsumer.members.legacy_member"


@dataclass(frozen=True, kw_only=True)
class LegacyOptions(MemberOptions, ApplicationOptions):
    """The legacy member's command line (:mod:`zkconsumer.members.command_line`)."""

    MODULE: ClassVar[str] = MODULE

    zookeeper: str = option(help="HOST:PORT[/chroot]")
    config: tuple[str, ...] = option((), metavar="KEY=VALUE",
                                     help="a consumer setting over the member's own (repeatable)")
    events: str = option("json", choices=("json", "none"),
                         help="json: the connector's events as JSON lines, on stdout or in --events-file (default)")
    events_file: Path | None = option(None, help="append the events to this file instead of writing them on stdout")
    session_file: Path | None = option(None, help="keep the ZooKeeper session's id and password in this file")
    step_gate: Path | None = option(None, metavar="FIFO",
                                    help="before each rebalance step, emit member.step_waiting and wait for a line "
                                    "on this FIFO (made if missing): 'go' runs the step, 'off' runs it and every later "
                                    "one")


def build_parser() -> argparse.ArgumentParser:
    return options_parser(LegacyOptions, __doc__.splitlines()[0])


def command(*, zookeeper: str, group: str, topic: str, consumer_id: str, strategy: str = "range",
            session_timeout_ms: int = 6000, config: Mapping[str, object] | None = None, output: Path | None = None,
            delivery_format: str = "plain", events_file: Path | None = None, session_file: Path | None = None,
            stop_at_stdin_eof: bool = False, revoke_ms: int = 0, step_gate: Path | None = None,
            app: Application | None = None) -> list[str]:
    """The command line that starts this member process with these settings (see :func:`build_parser`)."""
    return LegacyOptions(
        **(app.options() if app is not None else {}),
        zookeeper=zookeeper, group=group, topic=topic, consumer_id=consumer_id, strategy=strategy,
        session_timeout_ms=session_timeout_ms, config=tuple(f"{key}={value}" for key, value in (config or {}).items()),
        output=output, delivery_format=delivery_format, events_file=events_file, session_file=session_file,
        stop_at_stdin_eof=stop_at_stdin_eof, revoke_ms=revoke_ms, step_gate=step_gate).argv()


def member_config(*, zookeeper: str, group: str, consumer_id: str, strategy: str = "range",
                  session_timeout_ms: int = 6000, overrides: Mapping[str, object] | None = None) -> dict[str, object]:
    """Short intervals, so that a demo or a test sees each change within a second or two."""
    return {
        "zookeeper.connect": zookeeper, "group.id": group, "consumer.id": consumer_id,
        "partition.assignment.strategy": strategy, "auto.offset.reset": "smallest",
        "consumer.timeout.ms": 200, "auto.commit.interval.ms": 200,
        "zookeeper.session.timeout.ms": session_timeout_ms, "rebalance.backoff.ms": 300,
        "rebalance.max.retries": 10, "refresh.leader.backoff.ms": 100,
        **(overrides or {}),
    }


def parse_settings(items: list[str]) -> dict[str, str]:
    """``KEY=VALUE`` items (``--config``) as a mapping; the connector parses the values as its own settings."""
    settings = {}
    for number, item in enumerate(items, 1):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            # The item itself is not repeated: a value typed without its key may be a secret.
            raise UsageError(f"--config item {number}: expected KEY=VALUE")
        settings[key.strip()] = value.strip()
    return settings


def parse_topics(spec: str) -> dict[str, int]:
    """``TOPIC[:STREAMS],...``: streams per topic, one each when not given."""
    return dict(parse_topic_streams(item) for item in spec.split(","))


def consume(stream: KafkaStream, stop: threading.Event, output: TextIO | None, delivery_format: str,
            lock: threading.Lock, app: Runner | None = None) -> None:
    while not stop.is_set():
        try:
            for message in stream:
                if app is not None and not app.deliver(Message(message.topic, message.partition, message.offset,
                                                               message.raw_key, message.raw_message or b"")):
                    continue
                if output is not None:
                    with lock:
                        output.write(delivery_line(message.topic, message.partition, message.offset,
                                                   message.raw_message or b"", delivery_format))
                if stop.is_set():
                    return
        except ConsumerTimeoutException:
            continue


def keep_session(connector: ZookeeperConsumerConnector, path: Path, stop: threading.Event) -> None:
    """Write the session's id and password whenever they change (a new session after an expiry), atomically."""
    last = None
    while not stop.is_set():
        sid, password = connector.zk.client_id or (0, b"")
        if sid and (sid, password) != last:
            temporary = path.with_suffix(".tmp")
            temporary.unlink(missing_ok=True)
            # Owner-only: the session's password is enough to take the session over.
            with os.fdopen(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as out:
                out.write(f"{sid} {password.hex()}")
            temporary.replace(path)
            last = (sid, password)
        stop.wait(0.2)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.events == "json":
        # An events file stays open for the process's life: the log handlers write to it until the last event.
        events = open(args.events_file, "a", buffering=1) if args.events_file else sys.stdout  # noqa: SIM115
        # Info whatever the environment's log level: the starter reads the member's story from these events.
        configure_logging(json=True, level="info", stream=events, force=True)
        # The events' stream carries events only: kazoo's and librdkafka's own log lines go to stderr.
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)
    topics = parse_topics(args.topic)
    stop = stop_event(stop_at_stdin_eof=args.stop_at_stdin_eof)
    stacks_on_request()
    held = HeldSteps(Path(args.step_gate), stop) if args.step_gate else None
    connector = ZookeeperConsumerConnector(ConsumerConfig(member_config(
        zookeeper=args.zookeeper, group=args.group, consumer_id=args.consumer_id, strategy=args.strategy,
        session_timeout_ms=args.session_timeout_ms, overrides=parse_settings(args.config))), step_gate=held)
    app = load_application(args, args.consumer_id, get_logger("zkconsumer.migration.member").error)
    if args.revoke_ms or app is not None:
        connector.set_consumer_rebalance_listener(RevokeListener(RevokeCost(args.revoke_ms), app))
    output = open(args.output, "a", buffering=1) if args.output else None  # noqa: SIM115 - closed below
    try:
        if args.session_file:
            threading.Thread(target=keep_session, args=(connector, Path(args.session_file), stop),
                             name="session-file", daemon=True).start()
        lock = threading.Lock()
        threads = [
            threading.Thread(target=consume, args=(stream, stop, output, args.delivery_format, lock, app),
                             daemon=True)
            for streams in connector.create_message_streams(topics).values() for stream in streams
        ]
        for thread in threads:
            thread.start()
        stop.wait()  # no timeout: the member runs until told to leave (SIGTERM or SIGINT, or its stdin closing)
        for thread in threads:
            thread.join(2)
    finally:
        if held is not None:
            held.close()  # a held step goes on, so that the rebalance lets shutdown have its lock
        connector.shutdown()
        if output is not None:
            output.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
