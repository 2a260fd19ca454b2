"""The address Kafka clients bootstrap from: the front (:mod:`zkconsumer.front`) in front of the project's broker.

The front exists to give the embedded broker a group coordinator that behaves as Apache Kafka's; so whatever broker the
project starts itself (a local Tansu, or a Kafka container) gets a front, and clients are handed the front's address.
A broker the user names in ``KAFKA_BOOTSTRAP`` is used as it is: a user's own Kafka has its own coordinator, and the
front is not put in front of it (:mod:`.servers` provides the two). The broker's direct address stays known beside the
front's (:class:`BrokerAddresses`), for what must reach the broker's own coordinator or measures the front.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.events import catalogue as ev


@dataclass(frozen=True)
class BrokerAddresses:
    """Where clients bootstrap from, and the broker itself (the same address when there is no front)."""

    #: what clients are given: the front's address, or the broker's when there is no front
    bootstrap: str
    #: the broker, reached directly (its own group coordinator)
    broker: str

    @property
    def fronted(self) -> bool:
        return self.bootstrap != self.broker


#: the one setting below Kafka's defaults that the embedded environment's fronts are given (``local up``, the test
#: fixtures, the benchmarks, the chaos run): ``group.min.session.timeout.ms`` 1000, where Kafka's 6000 would refuse
#: (``INVALID_SESSION_TIMEOUT``) the classic members the demo, the comparison and the tests run with sessions of 2 to
#: 4 s so that faults show in seconds; the front's ``front.started`` event records every setting in force
SHORT_CLASSIC_SESSIONS = ("--group-min-session-timeout-ms", "1000")
#: :data:`SHORT_CLASSIC_SESSIONS` as ``local up`` says it
SHORT_SETTINGS_NOTE = "Kafka's but group.min.session.timeout.ms 1000 (Kafka's: 6000)"
#: Kafka's bounds of KIP-848's session and heartbeat interval (``GroupCoordinatorConfig``'s defaults)
CONSUMER_SESSION_BOUNDS_MS = (45_000, 60_000)
CONSUMER_HEARTBEAT_BOUNDS_MS = (5_000, 15_000)


def front_options(group_coordinator: str = "front") -> tuple[str, ...]:
    """The front's command-line options: whose coordinator answers the group APIs (``front``: the front's own;
    ``broker``: relayed to the broker's), and :data:`SHORT_CLASSIC_SESSIONS`."""
    return ("--group-coordinator", group_coordinator, *SHORT_CLASSIC_SESSIONS)


def consumer_group_options(session_timeout_ms: int, heartbeat_interval_ms: int) -> tuple[str, ...]:
    """The options of a front whose KIP-848 groups run ``group.consumer.session.timeout.ms`` and
    ``group.consumer.heartbeat.interval.ms`` as given, with their bounds widened to take them where Kafka's
    (:data:`CONSUMER_SESSION_BOUNDS_MS`, :data:`CONSUMER_HEARTBEAT_BOUNDS_MS`) would refuse them, as a Kafka broker
    given shorter ones must be."""
    session_min, session_max = CONSUMER_SESSION_BOUNDS_MS
    heartbeat_min, heartbeat_max = CONSUMER_HEARTBEAT_BOUNDS_MS
    return ("--group-consumer-session-timeout-ms", str(session_timeout_ms),
            "--group-consumer-min-session-timeout-ms", str(min(session_min, session_timeout_ms)),
            "--group-consumer-max-session-timeout-ms", str(max(session_max, session_timeout_ms)),
            "--group-consumer-heartbeat-interval-ms", str(heartbeat_interval_ms),
            "--group-consumer-min-heartbeat-interval-ms", str(min(heartbeat_min, heartbeat_interval_ms)),
            "--group-consumer-max-heartbeat-interval-ms", str(max(heartbeat_max, heartbeat_interval_ms)))


def fronted(broker: str, workdir: Path, group_coordinator: str = "front") -> contextlib.AbstractContextManager[str]:
    """A front in front of ``broker`` for the block, its events in ``workdir/front.log``; yields its address."""
    from zkconsumer.embedded.front_process import FrontProcess

    @contextlib.contextmanager
    def running() -> Iterator[str]:
        with FrontProcess(broker, workdir, options=front_options(group_coordinator)) as front:
            yield front.address

    return running()


#: JoinGroup: among the front's local APIs when its own coordinators answer the group APIs
JOIN_GROUP = 11


def front_coordinates_groups(log_path: Path) -> bool:
    """Whether the front writing ``log_path`` answers the group APIs itself (its last ``front.started`` names JoinGroup
    among its local APIs) rather than relaying them to the broker's own coordinator."""
    try:
        lines = Path(log_path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    for line in reversed(lines):
        if '"front.started"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == ev.FRONT_STARTED:
            return JOIN_GROUP in (event.get("local_apis") or ())
    return False
