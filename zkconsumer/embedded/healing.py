"""``zkconsumer local up`` on a run directory where some of the recorded processes died: each dead one is started again
as it was started, where it was, and the others are left running as they are.

Kafka's equivalent is invisible to a group: the coordinator's broker restarts on its log, reloads its groups from
``__consumer_offsets``, and the clients reconnect to the address they know. So here ZooKeeper restarts on its data
directory, the broker on its storage, the bridge as it was, and the front on the port its clients were given, where
it replays its groups from the broker's groups topic (:mod:`zkconsumer.front.proxy.group_store`; it keys them by its
advertised address, which is why the port must be the same): a classic group keeps its generation and assignment, a
KIP-848 group its epochs, and no member sees a rebalance. Starting afresh instead, on new ports, would leave the
clients dialling the old addresses and recreate every topic empty.

A process is started again from its record in ``state.json``: its command line (a front's with its port pinned, as it
was started on a free one: :func:`~zkconsumer.embedded.front_process.on_port`), in its log's directory, with the
environment it was given, and is ready when it answers as at its first start. What its storage cannot keep is lost
all the same: Tansu on memory storage restarts empty (:func:`~zkconsumer.embedded.broker.loses_its_log`), and, as
after ``local down`` / ``local up``, the topics ZooKeeper records are created again in it before the front and the
bridge are restarted (:mod:`.reconciliation`).

:func:`heal` runs the steps:

1. plan (pure, :func:`plan`): the dead processes in start order, each with the address it must be found at again;
   a process of a kind not known here, or an address not recorded, refuses the heal;
2. check that every address to listen on again is free: one taken by another program since refuses the heal;
3. start them, a kind at a time (every dead server of a ZooKeeper ensemble at once, as none serves without a quorum),
   each waited for until it answers; any failure stops what this heal started;
4. after a broker that lost its log: the topics ZooKeeper records, created again in it. A bridge still running is
   stopped before step 1 and started again after them: mirroring the empty broker, it would delete them from
   ZooKeeper first.

A refusal (:class:`HealRefused`) starts, stops and removes nothing: the survivors run on and ``state.json`` stays, so
that the user can free the port and run ``local up`` again, or end the environment with ``local down``.
"""

from __future__ import annotations

import asyncio
import functools
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from zkconsumer.embedded.broker import LocalTansu, loses_its_log
from zkconsumer.embedded.ensemble import SERVING_MODES, server_mode
from zkconsumer.embedded.front import BrokerAddresses
from zkconsumer.embedded.front_process import ENVIRONMENT as FRONT_ENVIRONMENT
from zkconsumer.embedded.front_process import on_port
from zkconsumer.embedded.kafka_broker import LocalKafka
from zkconsumer.embedded.process import ProcessRecord, port_in_use, spawn, wait_until_ready
from zkconsumer.embedded.reconciliation import Reconciliation, reconcile
from zkconsumer.errors import EnvironmentSetupError
from zkconsumer.kafka.metadata import broker_answers
from zkconsumer.zk import paths
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.reads import children

#: how long a restarted process of each kind may take to answer (a ZooKeeper server of an ensemble waits for a quorum;
#: a broker may be a Kafka JVM, :mod:`.broker_kinds`)
START_TIMEOUTS = {"zookeeper": 60.0, "broker": max(LocalTansu.start_timeout, LocalKafka.start_timeout),
                  "front": 30.0, "bridge": 30.0}
#: the front's option naming its groups topic (``zkconsumer.front.command_line``)
GROUP_STORE_OPTION = "--group-store-topic"
#: how long an address of a process that just died may stay in use (its sockets close after its command line goes)
PORT_GRACE_S = 2.0
#: what starting afresh means, for the lines that say what to do
START_AFRESH = "`zkconsumer local down`, then `zkconsumer local up` starts a new environment on new ports"


class HealRefused(EnvironmentSetupError):
    """The run directory's dead processes cannot be started again where they were; nothing was changed."""


def role(name: str) -> str:
    """What a recorded process is: ``zookeeper`` for every server of an ensemble (``zookeeper-1``...), else its
    name."""
    return name.split("-", 1)[0]


def bridge_registered(zookeeper_connect: str) -> bool:
    """Whether a broker is registered in ZooKeeper (``/brokers/ids``): the bridge has written what it mirrors."""
    with zookeeper(zookeeper_connect, quiet=True) as client:
        return bool(children(client, paths.BROKER_IDS_PATH))


#: whether a process of each kind answers, asked of where it is found (:attr:`Restart.address`)
READY: dict[str, Callable[[str], bool]] = {
    "zookeeper": lambda address: server_mode(address) in SERVING_MODES,
    "broker": lambda address: broker_answers(address, timeout=1.0),
    "front": lambda address: _front_answers(address),
    "bridge": bridge_registered,
}


def _front_answers(address: str) -> bool:
    from zkconsumer.front.proxy.client import answers_api_versions  # the front's wire needs the embedded extra's kio

    return answers_api_versions(address)


@dataclass(frozen=True)
class Restart:
    """A dead process to start again."""

    name: str
    #: where it answers: the address it listens on, or, for the bridge, the ZooKeeper it registers the brokers in
    address: str
    #: whether :attr:`address` is its own, to be free before it starts
    listens: bool = True

    @property
    def role(self) -> str:
        return role(self.name)


def where(name: str, zookeeper_connect: str, addresses: BrokerAddresses) -> Restart | None:
    """Where the process recorded as ``name`` is found, from the addresses ``state.json`` records; None for a kind
    of process not known here."""
    servers = zookeeper_connect.split(",")
    kind = role(name)
    if kind == "zookeeper":
        sid = name.partition("-")[2]
        if not sid:
            return Restart(name, servers[0])
        return Restart(name, servers[int(sid) - 1]) if sid.isdigit() and 0 < int(sid) <= len(servers) else None
    if kind == "broker":
        return Restart(name, addresses.broker)
    if kind == "front" and addresses.fronted:
        return Restart(name, addresses.bootstrap)
    if kind == "bridge":
        return Restart(name, zookeeper_connect, listens=False)
    return None


def plan(dead: Sequence[str], zookeeper_connect: str, addresses: BrokerAddresses) -> list[Restart]:
    """The restarts of the ``dead`` processes (in start order, as given).

    :raises HealRefused: a process of a kind not known here.
    """
    restarts = []
    for name in dead:
        found = where(name, zookeeper_connect, addresses)
        if found is None or role(name) not in READY:
            raise HealRefused(f"no way known to start {name} again where it was; {START_AFRESH}")
        restarts.append(found)
    return restarts


def port_of(address: str) -> tuple[str, int]:
    host, port = address.rsplit(":", 1)
    return host, int(port)


def taken(restarts: Sequence[Restart], in_use: Callable[[int, str], bool] = port_in_use,
          grace: float = 0.0) -> list[Restart]:
    """The restarts whose address another program listens on, asked again for up to ``grace`` seconds: a process
    gives up its command line (what says it is gone) a moment before its sockets close."""
    deadline = time.monotonic() + grace
    while True:
        busy = [r for r in restarts if r.listens and in_use(port_of(r.address)[1], port_of(r.address)[0])]
        if not busy or time.monotonic() >= deadline:
            return busy
        time.sleep(0.1)


def check_ports_kept(dead: Sequence[str], zookeeper_connect: str, addresses: BrokerAddresses,
                     zookeeper_port: int | None = None, broker_port: int | None = None) -> None:
    """A heal keeps the environment's ports: ``local up`` asked for others refuses it, naming them.

    :raises HealRefused:
    """
    recorded = {"--zookeeper-port": (zookeeper_port, port_of(zookeeper_connect.split(",")[0])[1]),
                "--broker-port": (broker_port, port_of(addresses.broker)[1])}
    other = [f"{option} {asked} (it is on {kept})" for option, (asked, kept) in recorded.items()
             if asked is not None and asked != kept]
    if other:
        raise HealRefused(f"this run directory's environment lost {', '.join(dead)}, which `local up` starts again "
                          f"on the ports they had, not on {', '.join(other)}: run `zkconsumer local up` "
                          f"without them, or {START_AFRESH.replace('on new ports', 'on the ports you give')}")


def waves(restarts: Sequence[Restart]) -> list[list[Restart]]:
    """The restarts grouped by kind, in their order: the servers of an ensemble start together, since none of them
    serves before a quorum of them runs."""
    grouped: list[list[Restart]] = []
    for restart in restarts:
        if grouped and grouped[-1][0].role == restart.role:
            grouped[-1].append(restart)
        else:
            grouped.append([restart])
    return grouped


def command_line(restart: Restart, record: ProcessRecord) -> list[str]:
    """The command line to start ``restart`` with: its recorded one, a front's pinned to its port."""
    if restart.role == "front":
        return on_port(record.argv, port_of(restart.address)[1])
    return list(record.argv)


def extra_environment(name: str) -> dict[str, str]:
    """What the process was given beyond its parent's environment."""
    return dict(FRONT_ENVIRONMENT) if role(name) == "front" else {}


def groups_topic(front_argv: Sequence[str]) -> str | None:
    """The topic a front started with ``front_argv`` keeps its groups in (its ``--group-store-topic``, else the
    default); None when it keeps them in memory only."""
    from zkconsumer.front.groups.group_records import GROUPS_TOPIC

    topic = GROUPS_TOPIC
    for flag, value in zip(front_argv, front_argv[1:], strict=False):
        if flag == GROUP_STORE_OPTION:
            topic = value
    return topic or None


def create_groups_topic(topic: str, broker: str) -> None:
    """Create the groups topic of a running front in a broker that restarted empty, as the front creates it at its
    start, so that its next write of each group is kept. (Tansu answers a produce to a topic it does not have with no
    error and keeps nothing, so the front would not know.)

    :raises EnvironmentSetupError: the broker did not create it.
    """
    from zkconsumer.front.proxy.config import FrontConfig  # the front's wire needs the embedded extra's kio
    from zkconsumer.front.proxy.group_store import GroupStore, StoreFailed

    async def create() -> None:
        store = GroupStore(FrontConfig.of(broker), topic)
        try:
            await store.read()  # creates the topic first; new, it holds nothing to read
        finally:
            await store.close()

    try:
        asyncio.run(create())
    except StoreFailed as exc:
        raise EnvironmentSetupError(f"the front's groups topic {topic} could not be created again in the broker at "
                                    f"{broker}: {exc}") from None


@dataclass(frozen=True)
class Healing:
    """What :func:`heal` did."""

    #: the processes started again, in start order
    restarted: tuple[Restart, ...]
    #: the processes that were running and left alone
    kept: tuple[str, ...]
    #: every process's record after the heal: the kept ones' as they were, the restarted ones' new
    records: dict[str, ProcessRecord]
    #: the restarted processes whose storage did not outlive them
    data_lost: tuple[str, ...] = ()
    #: what was done to make ZooKeeper and a broker that lost its log agree
    reconciled: Reconciliation = field(default_factory=Reconciliation)

    def summary(self) -> str:
        """One line for the user."""
        started = ", ".join(f"{r.name} on {r.address}" if r.listens else r.name for r in self.restarted)
        parts = [f"restarted {started} in place"]
        if self.kept:
            parts.append(f"left running: {', '.join(self.kept)}")
        if "front" in self.kept:
            held = " (the running front holds its groups on, and stores each again at its next change)"
        elif any(r.role == "front" for r in self.restarted):
            held = " (the front, started again after it, starts without them: their members join again)"
        else:
            held = ""
        for name in self.data_lost:
            parts.append(f"{name} kept its log in memory (Tansu's memory storage), so it restarted empty: its "
                         f"messages, the offsets committed to it and the groups the front stored in it are gone{held}")
        return "; ".join(parts)


def heal(records: Mapping[str, ProcessRecord], order: Sequence[str], zookeeper_connect: str,
         addresses: BrokerAddresses, stop: Callable[[dict[str, ProcessRecord]], object],
         alive: Callable[[ProcessRecord], bool] = ProcessRecord.is_alive) -> Healing:
    """Start again the dead processes of ``records`` (``order``: their names in start order), where they were.
    ``stop`` stops records, as ``local down`` does (used on what this heal started when it fails).

    :raises HealRefused: they cannot be started where they were; nothing was started.
    :raises EnvironmentSetupError: one did not start or answer; what this heal started is stopped.
    """
    dead = [name for name in order if not alive(records[name])]
    # a bridge left running beside a broker that restarts empty would mirror its empty metadata into ZooKeeper,
    # deleting the topics ZooKeeper records before step 4 creates them in it: it is stopped, and started after them
    restarts_empty = any(role(name) == "broker" and loses_its_log(records[name].argv) for name in dead)
    bridges = [name for name in order if role(name) == "bridge" and name not in dead] if restarts_empty else []
    dead = [name for name in order if name in dead or name in bridges]
    kept = tuple(name for name in order if name not in dead)
    # 1. plan
    restarts = plan(dead, zookeeper_connect, addresses)
    # 2. check the addresses
    busy = taken(restarts, grace=PORT_GRACE_S)
    if busy:
        listed = ", ".join(f"{r.name}'s address {r.address}" for r in busy)
        raise HealRefused(f"cannot restart {', '.join(dead)} where {'they were' if len(dead) > 1 else 'it was'}: "
                          f"{listed} {'are' if len(busy) > 1 else 'is'} now in use by another program; stop that "
                          f"program and run `zkconsumer local up` again, or {START_AFRESH}")
    if bridges:  # the refusals are behind: a refused heal stops nothing
        stop({name: records[name] for name in bridges})
    # 3. start them
    started: dict[str, ProcessRecord] = {}
    data_lost: list[str] = []
    reconciled = Reconciliation()
    try:
        for wave in waves(restarts):
            spawned = []
            for restart in wave:
                record = records[restart.name]
                env = extra_environment(restart.name)
                new, proc = spawn(command_line(restart, record), Path(record.log),
                                  env={**os.environ, **env} if env else None, cwd=Path(record.log).parent)
                started[restart.name] = new
                spawned.append((restart, new, proc))
            for restart, new, proc in spawned:
                wait_until_ready(new, proc, functools.partial(READY[restart.role], restart.address),
                                 f"{restart.name} on {restart.address}", START_TIMEOUTS[restart.role])
            # 4. a broker that lost its log: the topics ZooKeeper records, before the front and the bridge; the
            # groups topic of a front that runs on (a front started again creates it itself)
            if wave[0].role == "broker" and loses_its_log(records[wave[0].name].argv):
                data_lost.append(wave[0].name)
                reconciled = reconcile(zookeeper_connect, addresses.broker)
                topic = groups_topic(records["front"].argv) if "front" in kept else None
                if topic is not None:
                    create_groups_topic(topic, addresses.broker)
    except BaseException:
        stop(started)
        raise
    return Healing(tuple(restarts), kept, {**records, **started}, tuple(data_lost), reconciled)
