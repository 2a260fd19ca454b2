"""The embedded default environment behind ``zkconsumer local up|down|status``.

A ZooKeeper server (or an ensemble of N on loopback ports, ``up(zookeeper_servers=N)``: records ``zookeeper-1``...,
files in ``zookeeper/1/``..., a connect string listing every server), a Tansu broker, the front
(:mod:`zkconsumer.front`, the group coordinator in front of the broker) and a metadata bridge, started in the background
with their state and logs in one run directory the user can look into (``state.json``, ``zookeeper/``, ``broker/``,
``front/front.log``, ``bridge.log``). Clients are given the front's address, and the bridge mirrors the brokers as the
front advertises them, so the legacy consumers that find their brokers in ZooKeeper fetch through the front too.
``up(direct_broker=True)`` starts no front: clients are given the broker itself and its own coordinator.
``up(broker="kafka-4"|"kafka-3.9")`` runs Apache Kafka instead of Tansu, its own coordinator (:mod:`.broker_kinds`:
what each kind needs around it, and why a run directory keeps its kind). ``down`` stops
exactly the processes recorded there: each record keeps the pid with its exact command line, and a pid that now runs
something else is left alone.

Its events (``local.*``) are declared once in :mod:`zkconsumer.events.embedded` and listed on the events page
(``docs/events.md``). All are at info level: what the operator must read (processes restarted in place, topics
recreated, offsets past the log end), the command line prints itself, once, so the events belong in the log file.

``local down`` keeps the run directory: ZooKeeper's data (topics, groups, committed offsets) and the logs. The broker
(Tansu on memory storage) starts empty, so ``up`` makes the two agree first (:mod:`.reconciliation`). ``up`` on a run
directory whose processes died in part or in whole starts those again where they were, the others left running
(:mod:`.healing`): the clients keep their addresses, the groups their generations.
"""

from __future__ import annotations

import functools
import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from kazoo.exceptions import KazooException

from zkconsumer.embedded import broker_kinds
from zkconsumer.embedded.broker import LocalTansu
from zkconsumer.embedded.ensemble import LocalZooKeepers, server_mode
from zkconsumer.embedded.front import SHORT_CLASSIC_SESSIONS, BrokerAddresses
from zkconsumer.embedded.front_process import STOP_TIMEOUT as FRONT_STOP_TIMEOUT
from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.embedded.healing import Healing, HealRefused, bridge_registered, check_ports_kept, heal
from zkconsumer.embedded.process import ProcessRecord, check_port_free, spawn, wait_until_ready
from zkconsumer.embedded.reconciliation import Reconciliation, reconcile
from zkconsumer.embedded.run_dir import default_run_dir_and_origin
from zkconsumer.embedded.zookeeper import LocalZooKeeper
from zkconsumer.errors import EnvironmentSetupError, ZkConsumerError
from zkconsumer.events import catalogue as ev
from zkconsumer.kafka.metadata import broker_answers
from zkconsumer.log import get_logger
from zkconsumer.zk import paths
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.reads import children

PROCESS_ORDER = ("zookeeper", "broker", "front", "bridge")
STOP_TIMEOUTS = {"zookeeper": LocalZooKeeper.stop_timeout, "broker": LocalTansu.stop_timeout,
                 "front": FRONT_STOP_TIMEOUT}


def stop_all(records: dict[str, ProcessRecord], broker_kind: str | None = None) -> list[str]:
    """Stop in reverse start order (bridge first, so it never reports the servers' shutdown as an outage; the front
    before the broker, so its clients lose the front rather than see it report the broker gone); the broker given
    its kind's time to shut down (Tansu's when the kind is not known)."""
    timeouts = dict(STOP_TIMEOUTS)
    if broker_kind in broker_kinds.KINDS:
        timeouts["broker"] = broker_kinds.KINDS[broker_kind].stop_timeout
    stopped = []
    for name in sorted(records, key=_start_rank, reverse=True):
        if records[name].stop(timeouts.get(_role(name), 10.0)):
            stopped.append(name)
    return stopped


def _role(name: str) -> str:
    """``zookeeper`` for every server of an ensemble (records ``zookeeper-1``...), the name itself otherwise."""
    return name.split("-", 1)[0]


def _start_rank(name: str) -> tuple[int, str]:
    role = _role(name)
    return (PROCESS_ORDER.index(role) if role in PROCESS_ORDER else len(PROCESS_ORDER), name)


@dataclass(frozen=True)
class ProcessStatus:
    name: str
    pid: int
    alive: bool
    log: str


@dataclass(frozen=True)
class EnvironmentStatus:
    run_dir: str
    running: bool
    zookeeper: str | None
    #: what clients are given: the front's address (the broker's with ``--direct-broker``)
    bootstrap_servers: str | None
    processes: tuple[ProcessStatus, ...]
    zookeeper_ok: bool = False
    #: an answer to Metadata at ``bootstrap_servers`` (through the front, when there is one)
    broker_ok: bool = False
    #: the broker's own address, the same as ``bootstrap_servers`` without a front
    broker: str | None = None
    #: whether the broker answers at its own address
    direct_broker_ok: bool = False
    registered_brokers: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    #: each server of an ensemble (``local up --zookeeper-servers N``) and its ``srvr`` Mode (``down``: no answer)
    zookeeper_servers: tuple[tuple[str, str], ...] = ()
    #: ``local up --broker``'s kind (``tansu``, ``kafka-4``, ``kafka-3.9``) and what it runs (``Apache Kafka 4.1.0``)
    broker_kind: str | None = None
    broker_software: str | None = None

    def to_json(self) -> dict:
        return asdict(self)


class LocalEnvironment:
    def __init__(self, run_dir: str | Path | None = None) -> None:
        self.run_dir, self.run_dir_origin = (Path(run_dir), "--run-dir") if run_dir else default_run_dir_and_origin()
        self.state_path = self.run_dir / "state.json"
        self.log = get_logger("zkconsumer.local").bind(run_dir=str(self.run_dir))
        #: what the last ``up`` that started the servers did to make ZooKeeper and the broker agree
        self.reconciled = Reconciliation()
        #: what the last ``up`` that found processes of the run directory dead started again
        self.healed: Healing | None = None

    # -- state file ----------------------------------------------------------------------------

    def _read_state(self) -> dict | None:
        try:
            state = json.loads(self.state_path.read_text())
            state["records"] = {
                name: ProcessRecord(rec["pid"], tuple(rec["argv"]), rec["log"])
                for name, rec in state["processes"].items()
            }
            return state
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EnvironmentSetupError(
                f"the state file {self.state_path} is unreadable ({exc}); stop any processes it named by hand "
                f"and remove it"
            ) from None

    def _write_state(self, zk: str, addresses: BrokerAddresses, records: dict[str, ProcessRecord],
                     broker_kind: str, broker_software: str) -> None:
        state = {
            "zookeeper": zk,
            "bootstrap_servers": addresses.bootstrap,
            "broker": addresses.broker,
            "broker_kind": broker_kind,
            "broker_software": broker_software,
            "processes": {name: {"pid": r.pid, "argv": list(r.argv), "log": r.log} for name, r in records.items()},
        }
        tmp = self.state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2))
        tmp.replace(self.state_path)

    def endpoints(self) -> dict[str, str] | None:
        """The connect strings of a running environment, None when there is none: ``zookeeper``,
        ``bootstrap_servers`` (what clients are given) and ``broker`` (the broker's own address)."""
        state = self._read_state()
        if state is None or not all(r.is_alive() for r in state["records"].values()):
            return None
        return _endpoints(state["zookeeper"], self._addresses(state))

    @staticmethod
    def _addresses(state: dict) -> BrokerAddresses:
        bootstrap = state["bootstrap_servers"]
        return BrokerAddresses(bootstrap, state.get("broker") or bootstrap)

    def broker_run(self) -> tuple[str, str | None]:
        """The kind of broker of the environment (``kafka-4``; Tansu where the state does not say) and what it runs
        (``Apache Kafka 4.1.0``; None when not recorded)."""
        state = self._read_state() or {}
        return state.get("broker_kind", broker_kinds.TANSU), state.get("broker_software")

    def recorded_broker(self) -> tuple[str, str | None] | None:
        """The broker's own address as the environment recorded it, and what it runs (``Apache Kafka 4.4.0``; None
        when not recorded); None when the run directory records no environment. Read only: whether it runs is not
        asked."""
        state = self._readable_state()
        if state is None:
            return None
        return self._addresses(state).broker, state.get("broker_software") or None

    def _readable_state(self) -> dict | None:
        """The state, None where there is none or it cannot be read (which :meth:`_clear_stale` says)."""
        try:
            return self._read_state()
        except EnvironmentSetupError:
            return None

    def recorded(self) -> dict[str, ProcessRecord]:
        """The environment's processes by name (``zookeeper``, ``broker``, ``front``, ``bridge``), as its state
        records them; none where it has no readable state."""
        state = self._readable_state()
        return {} if state is None else dict(state["records"])

    def front_log(self) -> Path | None:
        """The front's events (JSON lines) of a running environment that has a front."""
        state = self._read_state()
        record = None if state is None else state["records"].get("front")
        return Path(record.log) if record is not None and record.is_alive() else None

    # -- commands ------------------------------------------------------------------------------

    def up(self, zookeeper_port: int | None = None, broker_port: int | None = None,
           bridge_interval_ms: int = 500, direct_broker: bool = False, zookeeper_servers: int = 1,
           broker: str | None = None) -> dict[str, str]:
        """Start the environment, or find the one running (as it was started, with or without its front); ``broker``:
        a kind of :data:`~.broker_kinds.BROKER_KINDS`, by default the run directory's, else Tansu."""
        kind = broker_kinds.choose(self.run_dir, broker)
        running = self.endpoints()
        if running is not None:
            self.log.emit(ev.LOCAL_ALREADY_RUNNING, **running)
            return running
        healed = self._heal(zookeeper_port, broker_port)
        if healed is not None:
            return healed
        self._clear_stale()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        for port, what in ((zookeeper_port, "ZooKeeper"), (broker_port, "the broker")):
            if port is not None:
                check_port_free(port, what)
        broker_kinds.check_installed(kind)  # a missing broker is reported before ZooKeeper starts, not after
        records: dict[str, ProcessRecord] = {}
        try:
            zk_server = LocalZooKeepers(self.run_dir / "zookeeper", zookeeper_port, zookeeper_servers)
            records.update(zk_server.start())
            broker_kinds.record_kind(self.run_dir, kind)
            server = broker_kinds.broker_server(kind, self.run_dir / "broker", broker_port, zk_server.connect)
            records["broker"] = server.start()
            if kind.bridged:
                self.reconciled = reconcile(zk_server.connect, server.bootstrap)
            addresses = BrokerAddresses(server.bootstrap, server.bootstrap)
            if kind.fronted and not direct_broker:
                records["front"], front = self._start_front(server.bootstrap, zk_server.connect)
                addresses = BrokerAddresses(front, server.bootstrap)
            if kind.bridged:
                records["bridge"] = self._start_bridge(zk_server.connect, addresses.bootstrap, bridge_interval_ms)
        except BaseException:
            stop_all(records, kind.name)
            raise
        software = broker_kinds.software(server)
        self._write_state(zk_server.connect, addresses, records, kind.name, software)
        endpoints = _endpoints(zk_server.connect, addresses)
        self.log.emit(ev.LOCAL_STARTED, **endpoints, broker_software=software)
        self._log_reconciled()
        return endpoints

    def _log_reconciled(self) -> None:
        if self.reconciled.summary() is not None:
            self.log.emit(ev.LOCAL_RECONCILED, recreated=[t.name for t in self.reconciled.recreated],
                          offsets_past_end=[str(o) for o in self.reconciled.past_end],
                          skipped=list(self.reconciled.skipped))

    def _heal(self, zookeeper_port: int | None, broker_port: int | None) -> dict[str, str] | None:
        """Start again, where they were, the processes of the run directory that died (:mod:`.healing`); None when
        it records none (an unreadable state file is :meth:`_clear_stale`'s).

        :raises HealRefused: they cannot be started where they were; nothing was started, stopped or removed.
        """
        state = self._readable_state()
        if state is None:
            return None
        records: dict[str, ProcessRecord] = state["records"]
        zk, addresses = state["zookeeper"], self._addresses(state)
        kind, software = state.get("broker_kind", broker_kinds.TANSU), state.get("broker_software")
        dead = [name for name, record in records.items() if not record.is_alive()]
        try:
            check_ports_kept(dead, zk, addresses, zookeeper_port, broker_port)
            self.healed = heal(records, sorted(records, key=_start_rank), zk, addresses,
                               functools.partial(stop_all, broker_kind=kind))
        except HealRefused as refused:
            self.log.emit(ev.LOCAL_HEAL_REFUSED, dead=dead, error=str(refused))
            raise
        self._write_state(zk, addresses, self.healed.records, kind, software or "")
        self.reconciled = self.healed.reconciled
        self.log.emit(ev.LOCAL_HEALED, restarted=[r.name for r in self.healed.restarted], kept=list(self.healed.kept),
                      data_lost=list(self.healed.data_lost))
        self._log_reconciled()
        return _endpoints(zk, addresses)

    def _start_front(self, broker: str, zookeeper: str) -> tuple[ProcessRecord, str]:
        """The front as a recorded process of its own session, left running when ``up`` returns; it keeps the
        version-0 offset commits of ZooKeeper-era clients in the environment's ZooKeeper, as Kafka 0.10 did, and
        takes the short classic sessions of :data:`~zkconsumer.embedded.front.SHORT_CLASSIC_SESSIONS` (its other
        group settings Kafka's)."""
        front = FrontProcess(broker, self.run_dir / "front",
                             options=("--zookeeper", zookeeper, *SHORT_CLASSIC_SESSIONS)).start()
        assert front.record is not None  # started
        return front.record, front.address

    def _start_bridge(self, zk: str, bootstrap: str, interval_ms: int) -> ProcessRecord:
        argv = [sys.executable, "-m", "zkconsumer", "--log-json", "bridge", "--zookeeper", zk,
                "--bootstrap-server", bootstrap, "--interval-ms", str(interval_ms)]
        record, proc = spawn(argv, self.run_dir / "bridge.log")
        wait_until_ready(record, proc, functools.partial(bridge_registered, zk), "the metadata bridge", timeout=30.0)
        return record

    def _clear_stale(self) -> None:
        """A state file that cannot be read names no process to heal or stop: it is said, removed, and the
        environment starts afresh."""
        try:
            self._read_state()
        except EnvironmentSetupError as exc:
            self.log.emit(ev.LOCAL_STALE_STATE, dead=["unreadable state.json"])
            print(f"zkconsumer local: {exc}; starting afresh", file=sys.stderr)
            self.state_path.unlink()

    def down(self) -> list[str]:
        state = self._read_state()
        if state is None:
            return []
        stopped = stop_all(state["records"], state.get("broker_kind"))
        self.state_path.unlink()
        self.log.emit(ev.LOCAL_STOPPED, processes=stopped)
        return stopped

    def status(self) -> EnvironmentStatus:
        state = self._read_state()
        if state is None:
            return EnvironmentStatus(str(self.run_dir), False, None, None, ())
        processes = tuple(
            ProcessStatus(name, r.pid, r.is_alive(), r.log) for name, r in state["records"].items()
        )
        zk, addresses = state["zookeeper"], self._addresses(state)
        bootstrap = addresses.bootstrap
        zk_ok = False
        brokers: tuple[str, ...] = ()
        topic_names: tuple[str, ...] = ()
        try:  # one connection answers both "is it alive" and "what does it hold"
            with zookeeper(zk, timeout=2.0, quiet=True) as client:
                zk_ok = client.command(b"ruok") == "imok"
                brokers = tuple(children(client, paths.BROKER_IDS_PATH))
                topic_names = tuple(children(client, paths.BROKER_TOPICS_PATH))
        except (ZkConsumerError, KazooException, OSError):
            zk_ok = False
        answers = broker_answers(bootstrap, timeout=2.0)
        return EnvironmentStatus(
            str(self.run_dir), all(p.alive for p in processes), zk, bootstrap, processes,
            zookeeper_ok=zk_ok, broker_ok=answers, registered_brokers=brokers, topics=topic_names,
            broker=addresses.broker,
            zookeeper_servers=tuple((a, server_mode(a)) for a in zk.split(",")) if "," in zk else (),
            direct_broker_ok=broker_answers(addresses.broker, timeout=2.0) if addresses.fronted else answers,
            broker_kind=state.get("broker_kind", broker_kinds.TANSU),
            broker_software=state.get("broker_software"),
        )


def _endpoints(zookeeper_connect: str, addresses: BrokerAddresses) -> dict[str, str]:
    return {"zookeeper": zookeeper_connect, "bootstrap_servers": addresses.bootstrap, "broker": addresses.broker}

