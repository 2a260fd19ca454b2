"""One member of a modern, broker-side consumer group as its own process: the migration comparison's counterpart of
:mod:`zkconsumer.members.legacy_member`.

``python -m zkconsumer.members.modern_member --bootstrap B --group G --topic T --consumer-id ID --strategy S
[--group-protocol classic|consumer]``

A confluent-kafka ``Consumer`` that ``subscribe()``s and lets the broker's group coordinator run the group. Under
the classic protocol (the default) ``--strategy`` is its ``partition.assignment.strategy`` (``range``,
``roundrobin``: eager; ``cooperative-sticky``: incremental cooperative, KIP-429); under KIP-848's consumer
protocol (``--group-protocol consumer``) it is the server-side assignor the member asks for
(``group.remote.assignor``: ``uniform`` or ``range``), and librdkafka reconciles incrementally: its rebalance
callbacks hand over only what moves, and are answered with ``incremental_assign`` / ``incremental_unassign``, as
under cooperative-sticky. Its rebalance callbacks are written as the legacy connector's events
(``docs/events.md``), so that the trace tools draw both kinds of member alike and the comparison measures them
with one rule: ``rebalance.stop_fetchers`` stops everything the member fetched (eager), ``rebalance.release``
stops the partitions it names (what a cooperative revocation gives up), ``rebalance.completed``'s ``owned`` is
what the member fetches from then on. A rebalance here runs from the first callback of a generation to
``on_assign`` (under cooperative-sticky possibly empty: the follow-up round completes it); under KIP-848 each
callback is a rebalance of its own (a reconciliation step: a revocation needs no assignment after it).

``--revoke-ms N`` gives it an application that spends N ms in ``on_revoke``, after committing and before giving
the partitions up, whenever it gives up at least one (:mod:`zkconsumer.members.revoke_cost`): written as the legacy
listener's step, ``rebalance.listener_before_release``, whose ``kept`` names what an incremental member goes on
fetching once it returns (``poll()`` delivers nothing meanwhile).

``--app MODULE:CALLABLE`` runs the user's application on each message (:mod:`zkconsumer.members.application`), its
``on_revoke`` hook after the commit (and before the revoke cost) and its ``on_assign`` hook once the partitions are
assigned; a message is written to ``--output`` once the application took it.

Every message delivered is appended to ``--output`` as ``partition offset value`` (or, with ``--delivery-format
timed``, ``time topic partition offset value``; flushed at once, so a SIGKILL loses nothing written), the same
formats as the legacy member's; ``--fetch-after-revoke-ms`` is a fault for tests (:class:`KeepFetching`); SIGTERM
(or stdin closing, with ``--stop-at-stdin-eof``) closes the consumer, which revokes and leaves the group.

Settings (:func:`consumer_config`), chosen to match the legacy member's (:func:`zkconsumer.members.legacy_member.
member_config`: ZooKeeper session timeout, ``rebalance.backoff.ms`` 300, ``consumer.timeout.ms`` 200, auto-commit
every 200 ms), so that neither side waits on a setting the other does not have: the same ``session.timeout.ms``
(4 s in the comparison) bounds how long a SIGKILLed member's partitions wait; a heartbeat every sixth of it
(666 ms) tells a member of a rebalance within that time; ``poll()`` returns at least every ``POLL_TIMEOUT_S``
(0.1 s), so the rebalance callbacks, which librdkafka runs inside ``poll()``, run within 0.1 s of the SyncGroup
answer that asks for them; ``max.poll.interval.ms`` stays librdkafka's 300 s (it is the JoinGroup's rebalance
timeout, which Tansu does not wait on). Measured with librdkafka's ``cgrp,protocol`` debug log: the callbacks
run within 2 ms of the SyncGroup answer; the seconds a modern rebalance takes on Tansu are spent inside its
group coordinator, which holds JoinGroup and SyncGroup requests (:func:`zkconsumer.migration.report.
coordinator_note`), not in this process.

A coordinator that does not run KIP-848 (no ConsumerGroupHeartbeat) is said only in librdkafka's ``cgrp`` debug
log, after which librdkafka asks for a coordinator again, forever; so under KIP-848 the member reads that log
(:class:`UnsupportedWatch`), reports ``consumer.group_protocol_unsupported`` with librdkafka's line and exits
with status ``UNSUPPORTED_EXIT``, instead of waiting for an assignment that cannot come. A fatal error of
librdkafka's (under KIP-848, GROUP_ID_NOT_FOUND or UNSUPPORTED_ASSIGNOR in a heartbeat's answer) comes out of
``poll()`` once, as an error any other would look like; the consumer is dead after it, so the member reports
``consumer.fatal_error`` and exits with status ``FATAL_EXIT``.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TextIO

from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import elapsed_ms
from zkconsumer.kafka.client_config import with_client_settings
from zkconsumer.log import configure_logging, get_logger
from zkconsumer.members.application import Application, ApplicationOptions, Message, Runner, delivery_line
from zkconsumer.members.application import load as load_application
from zkconsumer.members.command_line import MemberOptions
from zkconsumer.members.command_line import parser as options_parser
from zkconsumer.members.option_field import option
from zkconsumer.members.revoke_cost import RevokeCost
from zkconsumer.members.stop_signals import stacks_on_request, stop_event

MODULE = "zkconsumer.members.modern_member"
CLASSIC_STRATEGIES = ("range", "roundrobin", "cooperative-sticky")  # partition.assignment.strategy
CONSUMER_ASSIGNORS = ("uniform", "range")  # group.remote.assignor: Kafka's server-side assignors
STRATEGIES = tuple(dict.fromkeys(CLASSIC_STRATEGIES + CONSUMER_ASSIGNORS))
GROUP_PROTOCOLS = ("classic", "consumer")
AUTO_OFFSET_RESETS = ("earliest", "latest")
POLL_TIMEOUT_S = 0.1
UNSUPPORTED_EVENT = ev.CONSUMER_GROUP_PROTOCOL_UNSUPPORTED
UNSUPPORTED_EXIT = 3  # the member's exit status when the broker cannot run its group protocol
FATAL_EXIT = 4  # the member's exit status after a fatal error of librdkafka's (``consumer.fatal_error``)
# What librdkafka's cgrp debug log says when the coordinator does not answer ConsumerGroupHeartbeat (2.16: "Required
# feature not supported by broker: ConsumerGroupHeartbeatRequest not supported by broker"). librdkafka reports it
# nowhere else: no error callback, no consumer error; it marks the coordinator dead and asks again, forever.
_UNSUPPORTED_LOG = "ConsumerGroupHeartbeatRequest not supported by broker"


@dataclass(frozen=True, kw_only=True)
class ModernOptions(MemberOptions, ApplicationOptions):
    """The modern member's command line (:mod:`zkconsumer.members.command_line`)."""

    MODULE: ClassVar[str] = MODULE

    bootstrap: str = option(help="HOST:PORT of a broker")
    strategy: str = option("range", choices=STRATEGIES)
    group_protocol: str = option("classic", choices=GROUP_PROTOCOLS,
                                 help="classic (JoinGroup/SyncGroup) or consumer (KIP-848); default classic")
    heartbeat_interval_ms: int = option(0, metavar="MS", help="a classic member's heartbeat.interval.ms (default 0: "
                                        "a sixth of the session timeout)")
    fetch_after_revoke_ms: int = option(0, metavar="MS", help="a fault, for tests of the comparison's assertions: "
                                        "go on fetching the partitions given up, and handing their messages to the "
                                        "application, for MS after each revocation (default 0: never)")
    group_instance_id: str = option("", metavar="ID", help="group.instance.id: a static member (KIP-345), which "
                                    "keeps its place in the group across a restart within its session")
    auto_offset_reset: str = option("earliest", choices=AUTO_OFFSET_RESETS,
                                    help="where a partition without a committed offset starts (default earliest: the "
                                    "comparison's own groups; latest is Kafka's default, what a moved group meets)")


def build_parser() -> argparse.ArgumentParser:
    return options_parser(ModernOptions, __doc__.splitlines()[0])


def command(*, bootstrap: str, group: str, topic: str, consumer_id: str, strategy: str = "range",
            session_timeout_ms: int = 6000, output: Path | None = None, stop_at_stdin_eof: bool = False,
            group_protocol: str = "classic", revoke_ms: int = 0, app: Application | None = None,
            heartbeat_interval_ms: int = 0, delivery_format: str = "plain",
            fetch_after_revoke_ms: int = 0, auto_offset_reset: str = "earliest",
            group_instance_id: str = "") -> list[str]:
    """The command line that starts this member process with these settings (see :func:`build_parser`)."""
    return ModernOptions(**(app.options() if app is not None else {}),
                         bootstrap=bootstrap, group=group, topic=topic, consumer_id=consumer_id, strategy=strategy,
                         session_timeout_ms=session_timeout_ms, output=output, stop_at_stdin_eof=stop_at_stdin_eof,
                         group_protocol=group_protocol, revoke_ms=revoke_ms,
                         heartbeat_interval_ms=heartbeat_interval_ms, delivery_format=delivery_format,
                         fetch_after_revoke_ms=fetch_after_revoke_ms, auto_offset_reset=auto_offset_reset,
                         group_instance_id=group_instance_id).argv()


def incremental(strategy: str, group_protocol: str = "classic") -> bool:
    """Whether the rebalance callbacks hand over only what moves (``incremental_assign`` / ``incremental_unassign``):
    cooperative-sticky under the classic protocol, and every assignor under KIP-848, whose reconciliation librdkafka
    runs as a cooperative rebalance (``rd_kafka_rebalance_protocol()`` says ``COOPERATIVE``)."""
    return group_protocol == "consumer" or strategy == "cooperative-sticky"


def _refs(partitions: Any, consumer_id: str) -> list[dict[str, object]]:
    return sorted(({"topic": p.topic, "partition": p.partition, "thread": consumer_id} for p in partitions),
                  key=lambda r: (str(r["topic"]), str(r["partition"]).zfill(10)))


class KeepFetching:
    """The fault ``--fetch-after-revoke-ms``: a member that ignores its revocations for a while, as one whose worker
    goes on with what it was given. Each time the member gives partitions up, a consumer of its own, outside the
    group (``assign()``, no commits), goes on reading them from where the member stood, for ``ms``; the member hands
    what it reads to the application as any other message. Another member then holds those partitions too: what the
    comparison's ``assert_no_double_ownership`` exists to catch."""

    def __init__(self, config: dict[str, object], ms: int) -> None:
        self.config = {key: value for key, value in config.items()
                       if key in ("bootstrap.servers", "group.id", "client.id", "log_level")}
        self.ms = ms
        self.consumer: Any = None
        self.until = 0.0

    def revoked(self, consumer: Any, partitions: list) -> None:
        if self.ms <= 0 or not partitions:
            return
        from confluent_kafka import Consumer

        positions = [p for p in consumer.position(partitions) if p.offset >= 0]
        self.close()
        if not positions:
            return
        self.consumer = Consumer(with_client_settings({**self.config, "enable.auto.commit": False,
                                                       "auto.offset.reset": "earliest"}))
        self.consumer.assign(positions)
        self.until = time.monotonic() + self.ms / 1000

    def poll(self) -> list[Any]:
        """What it read since it was last asked (nothing once its time is over)."""
        if self.consumer is None:
            return []
        if time.monotonic() >= self.until:
            self.close()
            return []
        return [m for m in self.consumer.consume(100, 0) if m.error() is None]

    def close(self) -> None:
        if self.consumer is not None:
            self.consumer.close()
            self.consumer = None


class RebalanceEvents:
    """The callbacks: each one does what the protocol asks (assign or unassign, all or incrementally) and says so
    in the legacy rebalance steps' words, timed with a monotonic clock."""

    def __init__(self, consumer_id: str, group: str, strategy: str, group_protocol: str = "classic",
                 revoke_ms: int = 0, app: Runner | None = None) -> None:
        self.app = app
        self.base = get_logger("zkconsumer.migration.member").bind(consumer_id=consumer_id, group=group)
        self.log = self.base
        self.consumer_id = consumer_id
        self.strategy = strategy
        self.cooperative = incremental(strategy, group_protocol)
        # KIP-848 reconciles one step at a time, each acknowledged on its own heartbeat: a revocation is complete
        # once the partitions are given up, whether or not an assignment follows (there is no follow-up round to
        # wait for, as under cooperative-sticky), so every callback completes its rebalance
        self.steps_complete_alone = group_protocol == "consumer"
        self.rebalance_id = 0
        self.started_at: float | None = None
        self.owned: set[tuple[str, int]] = set()
        self.consumer: Any = None
        self.revoke_cost = RevokeCost(revoke_ms)
        self.closing = False  # the member is leaving: no revoke cost (see zkconsumer.members.revoke_cost)
        self.keep_fetching: KeepFetching | None = None

    def _start(self, cause: str) -> None:
        if self.started_at is None:
            self.rebalance_id += 1
            self.started_at = time.monotonic()
            self.log = self.base.bind(rebalance_id=self.rebalance_id)
            self.log.emit(ev.REBALANCE_STARTED, cause=cause, strategy=self.strategy)

    def _commit(self) -> None:
        from confluent_kafka import KafkaException

        begun = time.monotonic()
        error = None
        try:
            self.consumer.commit(asynchronous=False)
        except KafkaException as exc:  # nothing consumed yet since the last commit: nothing to commit
            error = str(exc)
        self.log.info(ev.REBALANCE_COMMIT_OFFSETS, step=2, attempt=1, auto_commit=True, duration_ms=elapsed_ms(begun),
                      store="kafka",
                      **({"note": error} if error else {}))

    def on_revoke(self, consumer: Any, partitions: list) -> None:
        self._start("revoke")
        if not self.cooperative:
            begun = time.monotonic()
            self.log.info(ev.REBALANCE_STOP_FETCHERS, step=2, attempt=1, chunks_dropped=0,
                          duration_ms=elapsed_ms(begun))
        self._commit()
        gone = {(p.topic, p.partition) for p in partitions}
        kept = set() if not self.cooperative else self.owned - gone
        if self.app is not None and not self.closing:
            self.app.revoked(gone)
        self._spend_revoke_cost(partitions, kept)
        if self.keep_fetching is not None and not self.closing:
            self.keep_fetching.revoked(consumer, partitions)
        begun = time.monotonic()
        if self.cooperative:
            consumer.incremental_unassign(partitions)
        else:
            consumer.unassign()
        self.owned = kept
        self.log.info(ev.REBALANCE_RELEASE, step=4, attempt=1, released=_refs(partitions, self.consumer_id),
                      batches=0, duration_ms=elapsed_ms(begun))
        if self.steps_complete_alone:
            self._complete()

    def _spend_revoke_cost(self, partitions: list, kept: set[tuple[str, int]]) -> None:
        """The application's work before it gives ``partitions`` up, as the legacy listener's step 3; ``kept``:
        what the member fetches again once it returns (nothing, under an eager protocol)."""
        if self.revoke_cost.ms <= 0:
            return
        begun = time.monotonic()
        spent = self.revoke_cost.spend(0 if self.closing else len(partitions))
        self.log.info(ev.REBALANCE_LISTENER_BEFORE_RELEASE, step=3, attempt=1, revoke_ms=self.revoke_cost.ms,
                      spent=spent, revoked=_refs(partitions, self.consumer_id),
                      kept=[{"topic": t, "partition": p, "thread": self.consumer_id} for t, p in sorted(kept)],
                      duration_ms=elapsed_ms(begun))

    def on_lost(self, consumer: Any, partitions: list) -> None:
        """The member's session ended without it: nothing to commit (the partitions may be someone else's)."""
        self._start("lost")
        self.log.emit(ev.SESSION_EXPIRED, dropped=_refs(partitions, self.consumer_id))
        if self.cooperative:
            consumer.incremental_unassign(partitions)
        else:
            consumer.unassign()
        self.owned -= {(p.topic, p.partition) for p in partitions}
        if self.steps_complete_alone:
            self._complete()

    def on_assign(self, consumer: Any, partitions: list) -> None:
        self._start("assign")
        begun = time.monotonic()
        added = _refs(partitions, self.consumer_id)
        self.log.info(ev.REBALANCE_ASSIGN, step=5, attempt=1, strategy=self.strategy, members=[], assignment=added,
                      partitions={}, duration_ms=0.0)
        if self.cooperative:
            consumer.incremental_assign(partitions)
        else:
            consumer.assign(partitions)
            self.owned = set()
        self.owned |= {(p.topic, p.partition) for p in partitions}
        if self.app is not None:
            self.app.assigned((p.topic, p.partition) for p in partitions)
        self.log.info(ev.REBALANCE_START_FETCHERS, step=9, attempt=1, partitions=len(self.owned), fetching=True,
                      duration_ms=elapsed_ms(begun))
        self._complete()

    def _complete(self) -> None:
        owned = [{"topic": t, "partition": p, "thread": self.consumer_id} for t, p in sorted(self.owned)]
        assert self.started_at is not None
        self.log.emit(ev.REBALANCE_COMPLETED, attempts=1, owned=owned, duration_ms=elapsed_ms(self.started_at))
        self.started_at = None
        self.log = self.base


def check_strategy(strategy: str, group_protocol: str) -> None:
    """ValueError unless ``strategy`` is one of ``group_protocol``'s assignors."""
    if group_protocol not in GROUP_PROTOCOLS:
        raise ValueError(f"unknown group protocol {group_protocol!r} (known: {', '.join(GROUP_PROTOCOLS)})")
    known = CONSUMER_ASSIGNORS if group_protocol == "consumer" else CLASSIC_STRATEGIES
    if strategy not in known:
        raise ValueError(f"--strategy {strategy} is not an assignor of the {group_protocol} protocol "
                         f"(known: {', '.join(known)})")


def consumer_config(*, bootstrap: str, group: str, consumer_id: str, strategy: str = "range",
                    session_timeout_ms: int = 6000, group_protocol: str = "classic",
                    heartbeat_interval_ms: int = 0, auto_offset_reset: str = "earliest",
                    group_instance_id: str = "") -> dict[str, object]:
    """Short intervals, as the legacy member's, so that each change shows within a second or two (the module's
    docstring says why each).

    Under KIP-848 (``group_protocol="consumer"``) the session timeout, the heartbeat interval and the assignor are
    the coordinator's (``group.consumer.session.timeout.ms``, ``group.consumer.heartbeat.interval.ms``; the member
    only asks for an assignor by name, ``group.remote.assignor``): librdkafka refuses to create a consumer given
    ``session.timeout.ms``, ``heartbeat.interval.ms``, ``partition.assignment.strategy`` or
    ``group.protocol.type`` with ``group.protocol=consumer``, so they are left out and ``session_timeout_ms`` is not
    used. A classic member heartbeats every ``heartbeat_interval_ms``, or every sixth of its session when it is 0.
    Raises ValueError for a strategy the protocol does not have (:func:`check_strategy`)."""
    check_strategy(strategy, group_protocol)
    config: dict[str, object] = {
        "bootstrap.servers": bootstrap, "group.id": group, "client.id": consumer_id,
        "auto.offset.reset": auto_offset_reset,
        "enable.auto.commit": True, "auto.commit.interval.ms": 200, "topic.metadata.refresh.interval.ms": 1000,
        "log_level": 3, **({"group.instance.id": group_instance_id} if group_instance_id else {}),
    }
    if group_protocol == "consumer":
        return {**config, "group.protocol": "consumer", "group.remote.assignor": strategy}
    return {**config, "partition.assignment.strategy": strategy, "session.timeout.ms": session_timeout_ms,
            "heartbeat.interval.ms": heartbeat_interval_ms or classic_heartbeat_interval_ms(session_timeout_ms)}


def classic_heartbeat_interval_ms(session_timeout_ms: int) -> int:
    """A sixth of the session: a member learns of a rebalance within that, and a missed heartbeat or two does not
    expire it."""
    return max(100, session_timeout_ms // 6)


def consumer_group_timeouts_ms(session_timeout_ms: int) -> tuple[int, int]:
    """The KIP-848 group's ``(group.consumer.session.timeout.ms, group.consumer.heartbeat.interval.ms)`` for classic
    members that run with ``session_timeout_ms``: the same session, so that a SIGKILLed member's partitions wait as
    long under either protocol, and a heartbeat interval 5/3 of the classic one, as Kafka's defaults relate
    (``group.consumer.heartbeat.interval.ms`` 5000 against the classic ``heartbeat.interval.ms`` 3000). Under KIP-848
    these are the coordinator's settings, not the member's."""
    return session_timeout_ms, classic_heartbeat_interval_ms(session_timeout_ms) * 5 // 3


class UnsupportedWatch(logging.Handler):
    """Reads librdkafka's ``cgrp`` debug log (asked for under KIP-848 only) for the one line that says the
    coordinator cannot run the group: without it, a KIP-848 member of a broker that lacks ConsumerGroupHeartbeat
    would wait for an assignment forever. Every other line is dropped (a member's stdout carries events only, and
    its stderr log would fill with heartbeats)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.reason: str | None = None

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if self.reason is None and _UNSUPPORTED_LOG in message:
            self.reason = message.split("]: ", 1)[-1]


def watched(config: dict[str, object], watch: UnsupportedWatch) -> dict[str, object]:
    """``config`` with librdkafka's group debug log sent to ``watch`` (served by ``poll()``)."""
    logger = logging.Logger(f"{MODULE}.librdkafka")
    logger.addHandler(watch)
    return {**config, "debug": "cgrp", "logger": logger}


def consume(args: argparse.Namespace, stop: threading.Event, output: TextIO | None) -> None:
    from confluent_kafka import Consumer, KafkaError

    app = load_application(args, args.consumer_id, get_logger("zkconsumer.migration.member").error)
    events = RebalanceEvents(args.consumer_id, args.group, args.strategy, args.group_protocol, args.revoke_ms, app)
    config = consumer_config(bootstrap=args.bootstrap, group=args.group, consumer_id=args.consumer_id,
                             strategy=args.strategy, session_timeout_ms=args.session_timeout_ms,
                             group_protocol=args.group_protocol, heartbeat_interval_ms=args.heartbeat_interval_ms,
                             auto_offset_reset=args.auto_offset_reset, group_instance_id=args.group_instance_id)
    watch = UnsupportedWatch()
    if args.group_protocol == "consumer":
        config = watched(config, watch)
    consumer = Consumer(with_client_settings(config))
    events.consumer = consumer
    if args.fetch_after_revoke_ms > 0:
        events.keep_fetching = KeepFetching(config, args.fetch_after_revoke_ms)
    events.log.emit(ev.CONSUMER_SUBSCRIBED, topic=args.topic, strategy=args.strategy,
                    protocol="cooperative" if events.cooperative else "eager", group_protocol=args.group_protocol)
    consumer.subscribe([args.topic], on_assign=events.on_assign, on_revoke=events.on_revoke, on_lost=events.on_lost)

    def deliver(message: Any) -> None:
        """To the application, then (once it took the message) to ``--output``."""
        value = message.value() or b""
        if app is not None and not app.deliver(Message(message.topic() or "", message.partition() or 0,
                                                       message.offset() or 0, message.key(), value)):
            return
        if output is not None:
            output.write(delivery_line(message.topic() or "", message.partition() or 0, message.offset() or 0,
                                       value, args.delivery_format))

    try:
        while not stop.is_set():
            message = consumer.poll(POLL_TIMEOUT_S)
            for late in events.keep_fetching.poll() if events.keep_fetching is not None else ():
                deliver(late)
            if watch.reason is not None:
                events.log.error(UNSUPPORTED_EVENT, group_protocol=args.group_protocol, bootstrap=args.bootstrap,
                                 reason=watch.reason)
                raise GroupProtocolUnsupported(watch.reason)
            if message is None:
                continue
            error = message.error()
            if error is not None:
                if error.fatal() or error.code() == KafkaError._FATAL:  # dead: say why and stop, not poll for ever
                    events.log.error(ev.CONSUMER_FATAL_ERROR, group_protocol=args.group_protocol,
                                     bootstrap=args.bootstrap, code=error.name(), reason=error.str())
                    raise ConsumerFatal(error.str())
                continue
            deliver(message)
    finally:
        begun = time.monotonic()
        events.log.emit(ev.CONSUMER_SHUTTING_DOWN)
        events.closing = True
        if events.keep_fetching is not None:
            events.keep_fetching.close()
        consumer.close()  # revokes (the callbacks run), commits, leaves the group
        events.log.emit(ev.CONSUMER_SHUTDOWN, duration_ms=elapsed_ms(begun))


class GroupProtocolUnsupported(Exception):
    """The broker's coordinator cannot run this member's group protocol: the member exits (``UNSUPPORTED_EXIT``)."""


class ConsumerFatal(Exception):
    """librdkafka raised a fatal error: the member exits (``FATAL_EXIT``)."""


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        check_strategy(args.strategy, args.group_protocol)
    except ValueError as exc:
        parser.error(str(exc))
    configure_logging(json=True, level="info", stream=sys.stdout, force=True)  # what the starter reads, at any level
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, force=True)  # stdout carries events only
    stop = stop_event(stop_at_stdin_eof=args.stop_at_stdin_eof)
    stacks_on_request()
    output = open(args.output, "a", buffering=1) if args.output else None  # noqa: SIM115 - closed below
    try:
        consume(args, stop, output)
    except GroupProtocolUnsupported:
        return UNSUPPORTED_EXIT
    except ConsumerFatal:
        return FATAL_EXIT
    finally:
        if output is not None:
            output.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
