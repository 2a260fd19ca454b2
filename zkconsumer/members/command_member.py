"""A member of a modern group written by the team, in any language: a command line run as one process per member,
told what to join through its environment and reporting on its standard output, in the JSON lines of the verifiable
consumer Kafka's system tests run for every client (``org.apache.kafka.tools.VerifiableConsumer``). The contract is
``docs/writing-a-member.md``; this module is the starter's half of it.

The starter gives the member its settings as environment variables (:func:`environment`), starts it like any member
(:class:`~zkconsumer.members.group.MemberGroup`) and reads its stdout through a :class:`ReportReader`, which turns
each report into what our own members say and write: the rebalance events :mod:`zkconsumer.members.settle` and the
comparison's measures read (``partitions_revoked`` is a ``rebalance.release``, ``partitions_assigned`` completes a
rebalance whose ``owned`` is what the member holds since, ``offsets_committed`` is ``offsets.committed``...), and
one line per ``record_data`` in the member's deliveries file (``time topic partition offset value``, as our members
write it).
So a command member is measured by exactly the rules that measure ours.

What the member holds is kept here, from its reports: an assignment adds to what it holds and a revocation takes
away, which reads an eager member (everything revoked, then the new assignment) and an incremental one (only what
moves) alike. Under KIP-848 every callback is a rebalance of its own, as :mod:`zkconsumer.members.modern_member`
counts them; under the classic protocol a rebalance runs from the first callback to the assignment that ends it.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from zkconsumer.errors import UsageError
from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import iso
from zkconsumer.members.application import delivery_line
from zkconsumer.members.inbox import MAX_LINE

LOGGER = "zkconsumer.migration.member"  # the logger our modern member's events carry

#: the environment a command member is started with, one variable per setting (``docs/writing-a-member.md``)
BOOTSTRAP_SERVERS = "ZKCONSUMER_BOOTSTRAP_SERVERS"
TOPIC = "ZKCONSUMER_TOPIC"
GROUP_ID = "ZKCONSUMER_GROUP_ID"
CLIENT_ID = "ZKCONSUMER_CLIENT_ID"
MEMBER = "ZKCONSUMER_MEMBER"
GROUP_PROTOCOL = "ZKCONSUMER_GROUP_PROTOCOL"
ASSIGNOR = "ZKCONSUMER_ASSIGNOR"
SESSION_TIMEOUT_MS = "ZKCONSUMER_SESSION_TIMEOUT_MS"
HEARTBEAT_INTERVAL_MS = "ZKCONSUMER_HEARTBEAT_INTERVAL_MS"
GROUP_INSTANCE_ID = "ZKCONSUMER_GROUP_INSTANCE_ID"
STATE_DIR = "ZKCONSUMER_STATE_DIR"  # the application's, as our members give it (zkconsumer.members.application)

#: the reports a member writes, named as the verifiable consumer names them (``partitions_lost`` is ours: the Java
#: listener's default reports a loss as a revocation, which reads the same)
STARTUP, SHUTDOWN = "startup_complete", "shutdown_complete"
ASSIGNED, REVOKED, LOST = "partitions_assigned", "partitions_revoked", "partitions_lost"
CONSUMED, RECORD, COMMITTED = "records_consumed", "record_data", "offsets_committed"
REPORTS = (STARTUP, SHUTDOWN, ASSIGNED, REVOKED, LOST, CONSUMED, RECORD, COMMITTED)


@dataclass(frozen=True, slots=True)
class CommandMember:
    """A command line to run as every member of the modern protocols, as given (``--member-command``): split as a
    POSIX shell would, without running one."""

    argv: tuple[str, ...]

    @staticmethod
    def of(command: str | Sequence[str]) -> CommandMember:
        """From a command line (``"java -cp app.jar Consumer"``) or its words; bad input is one line."""
        try:
            words = shlex.split(command) if isinstance(command, str) else [str(word) for word in command]
        except ValueError as exc:
            raise UsageError(f"--member-command {command!r}: {exc}") from None
        if not words:
            raise UsageError("--member-command is empty: give the command line that starts one member")
        return CommandMember(tuple(words))

    def __str__(self) -> str:
        return shlex.join(self.argv)


def environment(*, bootstrap: str, topic: str, group: str, client_id: str, member: str, group_protocol: str,
                assignor: str, session_timeout_ms: int | None = None, heartbeat_interval_ms: int | None = None,
                group_instance_id: str | None = None, state_dir: Path | None = None,
                base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The member's environment: ``base`` (this process's, by default) and its settings. The session and heartbeat
    are a classic member's only (under KIP-848 they are the coordinator's, and clients refuse them); an unset
    setting is left out, not given empty."""
    settings = {BOOTSTRAP_SERVERS: bootstrap, TOPIC: topic, GROUP_ID: group, CLIENT_ID: client_id, MEMBER: member,
                GROUP_PROTOCOL: group_protocol, ASSIGNOR: assignor}
    optional = {SESSION_TIMEOUT_MS: session_timeout_ms, HEARTBEAT_INTERVAL_MS: heartbeat_interval_ms,
                GROUP_INSTANCE_ID: group_instance_id, STATE_DIR: state_dir}
    if group_protocol == "consumer":
        optional[SESSION_TIMEOUT_MS] = optional[HEARTBEAT_INTERVAL_MS] = None
    ours = (*settings, *optional)
    inherited = {k: v for k, v in (os.environ if base is None else base).items() if k not in ours}
    return {**inherited, **settings, **{k: str(v) for k, v in optional.items() if v is not None}}


def _seconds(value: object) -> float:
    """A report's ``timestamp`` (milliseconds since the epoch, the verifiable consumer's) in seconds; now when it has
    none."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return value / 1000
    return time.time()


def _partitions(value: object) -> list[tuple[str, int]]:
    """``[{"topic": T, "partition": P}, ...]`` as pairs; anything malformed left out."""
    found = []
    for item in value if isinstance(value, list) else ():
        if isinstance(item, dict) and isinstance(item.get("topic"), str) and isinstance(item.get("partition"), int):
            found.append((item["topic"], item["partition"]))
    return found


class ReportReader:
    """Reads one command member's reports (a line at a time, :meth:`read`) as our members' events, and writes its
    deliveries file. Used from the member's reader thread alone (:class:`~zkconsumer.members.inbox.EventInbox`)."""

    def __init__(self, *, consumer_id: str, group: str, topic: str, group_protocol: str, strategy: str,
                 deliveries: Path | None) -> None:
        self.consumer_id = consumer_id
        self.group = group
        self.topic = topic
        self.group_protocol = group_protocol
        self.strategy = strategy
        self.incremental = group_protocol == "consumer" or strategy == "cooperative-sticky"
        self.owned: set[tuple[str, int]] = set()
        self.rebalance_id = 0
        self.rebalancing_since: float | None = None  # seconds since the epoch
        self.subscribed = False
        self._deliveries: TextIO | None = (open(deliveries, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
                                           if deliveries is not None else None)  # closed by end()

    def read(self, line: str) -> list[dict[str, Any]]:
        """One line of the member's stdout: the events it makes (a line that is no report is shown as the
        member's output, as a crash's traceback is for our members)."""
        text = line.strip()
        if not text:
            return []
        try:
            report = json.loads(text)
        except ValueError:
            report = None
        name = report.get("name") if isinstance(report, dict) else None
        if not isinstance(report, dict) or name not in REPORTS:
            return [{"event": ev.DEMO_MEMBER_OUTPUT, "level": "warning", "timestamp": iso(time.time()),
                     "consumer_id": self.consumer_id, "line": text[:MAX_LINE]}]
        at = _seconds(report.get("timestamp"))
        events = [] if self.subscribed or name == SHUTDOWN else [self._subscribed(at)]
        self.subscribed = True
        if name == REVOKED:
            events += self._revoked(_partitions(report.get("partitions")), at)
        elif name == LOST:
            events += self._lost(_partitions(report.get("partitions")), at)
        elif name == ASSIGNED:
            events += self._assigned(_partitions(report.get("partitions")), at)
        elif name == RECORD:
            self._delivered(report)
        elif name == COMMITTED:
            events.append(self._committed(report, at))
        elif name == SHUTDOWN:
            events.append(self._event(ev.CONSUMER_SHUTDOWN, at))
        return events

    def end(self) -> list[dict[str, Any]]:
        """The member's output ended: its deliveries file is closed."""
        if self._deliveries is not None:
            self._deliveries.close()
            self._deliveries = None
        return []

    # --- the reports --------------------------------------------------------------------------------------

    def _event(self, name: str, at: float, **fields: Any) -> dict[str, Any]:
        event = ev.BY_NAME[name]
        line = {"event": name, "level": event.level, "timestamp": iso(at), "logger": LOGGER,
                "consumer_id": self.consumer_id, "group": self.group, **fields}
        if self.rebalancing_since is not None and name.startswith("rebalance."):
            line["rebalance_id"] = self.rebalance_id
        return line

    def _subscribed(self, at: float) -> dict[str, Any]:
        return self._event(ev.CONSUMER_SUBSCRIBED, at, topic=self.topic, strategy=self.strategy,
                           protocol="cooperative" if self.incremental else "eager",
                           group_protocol=self.group_protocol)

    def _refs(self, partitions: Iterable[tuple[str, int]]) -> list[dict[str, object]]:
        return [{"topic": t, "partition": p, "thread": self.consumer_id} for t, p in sorted(partitions)]

    def _start(self, cause: str, at: float) -> list[dict[str, Any]]:
        if self.rebalancing_since is not None:
            return []
        self.rebalance_id += 1
        self.rebalancing_since = at
        return [self._event(ev.REBALANCE_STARTED, at, cause=cause, strategy=self.strategy)]

    def _complete(self, at: float) -> list[dict[str, Any]]:
        assert self.rebalancing_since is not None
        event = self._event(ev.REBALANCE_COMPLETED, at, attempts=1, owned=self._refs(self.owned),
                            duration_ms=round(max(at - self.rebalancing_since, 0.0) * 1000, 3))
        self.rebalancing_since = None
        return [event]

    def _revoked(self, partitions: list[tuple[str, int]], at: float) -> list[dict[str, Any]]:
        events = self._start("revoke", at)
        events.append(self._event(ev.REBALANCE_RELEASE, at, step=4, attempt=1, released=self._refs(partitions),
                                  batches=0, duration_ms=0.0))
        self.owned -= set(partitions)
        return events + (self._complete(at) if self.group_protocol == "consumer" else [])

    def _lost(self, partitions: list[tuple[str, int]], at: float) -> list[dict[str, Any]]:
        events = self._start("lost", at)
        events.append(self._event(ev.SESSION_EXPIRED, at, dropped=self._refs(partitions)))
        self.owned -= set(partitions)
        return events + (self._complete(at) if self.group_protocol == "consumer" else [])

    def _assigned(self, partitions: list[tuple[str, int]], at: float) -> list[dict[str, Any]]:
        events = self._start("assign", at)
        self.owned |= set(partitions)
        return events + self._complete(at)

    def _delivered(self, report: Mapping[str, Any]) -> None:
        partition, offset, value = report.get("partition"), report.get("offset"), report.get("value")
        if self._deliveries is None or report.get("topic", self.topic) != self.topic:
            return
        if isinstance(partition, int) and isinstance(offset, int) and isinstance(value, str):
            # timed as our members' lines are, at the report's reading (the order and double-ownership checks set
            # deliveries against the members' assignments)
            self._deliveries.write(delivery_line(self.topic, partition, offset, value.encode(), "timed"))

    def _committed(self, report: Mapping[str, Any], at: float) -> dict[str, Any]:
        offsets = [{"topic": o["topic"], "partition": o["partition"], "offset": o["offset"]}
                   for o in report.get("offsets") or () if isinstance(o, dict)
                   and {"topic", "partition", "offset"} <= o.keys()]
        if report.get("success", True) is False:
            return self._event(ev.OFFSETS_COMMIT_FAILED, at, reason="member", store="kafka", offsets=offsets,
                               error=str(report.get("error") or ""))
        return self._event(ev.OFFSETS_COMMITTED, at, reason="member", store="kafka", offsets=offsets)

