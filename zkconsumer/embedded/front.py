"""The address Kafka clients bootstrap from: the front (:mod:`zkconsumer.front`) in front of the project's broker.

The front exists to give the embedded broker a group coordinator that behaves as Apache Kafka's; so whatever broker the
project starts itself (a local Tansu, or a Kafka container) gets a front, and clients are handed the front's address.
A broker the user names in ``KAFKA_BOOTSTRAP`` is used as it is: a user's own Kafka has its own coordinator, and the
front is not put in front of it. The broker's direct address stays known beside the front's (:class:`BrokerAddresses`),
for what must reach the broker's own coordinator or measures the front.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.embedded.broker import KAFKA_BOOTSTRAP_ENV, provide_broker
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


def front_options(group_coordinator: str = "front") -> tuple[str, ...]:
    """The front's command-line options: whose coordinator answers the group APIs (``front``: the front's own;
    ``broker``: relayed to the broker's)."""
    return ("--group-coordinator", group_coordinator)


def fronted(broker: str, workdir: Path, group_coordinator: str = "front") -> contextlib.AbstractContextManager[str]:
    """A front in front of ``broker`` for the block, its events in ``workdir/front.log``; yields its address."""
    from zkconsumer.embedded.front_process import FrontProcess

    @contextlib.contextmanager
    def running() -> Iterator[str]:
        with FrontProcess(broker, workdir, options=front_options(group_coordinator)) as front:
            yield front.address

    return running()


@contextlib.contextmanager
def provide_addresses(workdir: Path, front: bool = True,
                      group_coordinator: str = "front") -> Iterator[BrokerAddresses]:
    """A broker as :func:`provide_broker` provides it, with a front in front of it unless ``front`` is false or the
    broker is the user's (``KAFKA_BOOTSTRAP``); ``group_coordinator`` as :func:`front_options` takes it."""
    users = bool(os.environ.get(KAFKA_BOOTSTRAP_ENV))
    with provide_broker(Path(workdir) / "broker") as broker:
        if users or not front:
            yield BrokerAddresses(broker, broker)
            return
        with fronted(broker, Path(workdir) / "front", group_coordinator) as address:
            yield BrokerAddresses(address, broker)


#: JoinGroup: the front answers the classic group APIs itself once its coordinator is wired in
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
