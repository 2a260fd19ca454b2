"""A ZooKeeper ensemble on one machine: N servers of the installed distribution on loopback ports.

Production ZooKeeper is an ensemble, and what a group meets there (a leader election, its client moving to another
server within the session, a rolling restart) cannot happen with one server. Each server here has its own data
directory, ``myid``, client port and quorum and election ports; the ensemble is ready when every started server
says it is in a quorum (``srvr``'s ``Mode``: ``leader`` or ``follower``), exactly one is the leader, and a write
through the connect string (which lists every server) succeeds.

The API the fault harnesses drive: :attr:`LocalEnsemble.servers` (each server's id, ports, pid and whether it
runs), :meth:`LocalEnsemble.leader` and :meth:`LocalEnsemble.modes` (from ``srvr``), :meth:`LocalEnsemble.stop_server`
(SIGTERM), :meth:`LocalEnsemble.kill_server` (SIGKILL), :meth:`LocalEnsemble.start_server`,
:meth:`LocalEnsemble.rolling_restart` and :meth:`LocalEnsemble.wait_for_quorum`.

Its events (``ensemble.*``) are declared once in :mod:`zkconsumer.events.embedded` and listed on the events
page (``docs/events.md``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from kazoo.exceptions import KazooException

from zkconsumer.embedded.process import LOOPBACK, ProcessRecord, check_port_free, free_port, spawn, wait_until_ready
from zkconsumer.embedded.zookeeper import LocalZooKeeper
from zkconsumer.errors import EnvironmentSetupError, UsageError, ZkConsumerError
from zkconsumer.events import catalogue as ev
from zkconsumer.log import get_logger
from zkconsumer.zk.client import zookeeper

#: the size asked for where an ensemble is wanted without a number: the smallest that survives losing a server
DEFAULT_SIZE = 3
#: ``srvr`` modes of a server that serves clients
SERVING_MODES = frozenset({"leader", "follower", "standalone", "observer"})
#: a server left out of ``mode``'s answers: not running, or not answering on its client port
DOWN = "down"


def four_letter_word(address: str, word: bytes, timeout: float = 1.0) -> str:
    """A four-letter word's answer, over a plain connection: a server outside a quorum answers these too, while it
    refuses sessions (so a client library cannot ask it)."""
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(word)
        chunks = []
        while chunk := sock.recv(4096):
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


def server_mode(address: str, timeout: float = 1.0) -> str:
    """``srvr``'s ``Mode`` (``leader``, ``follower``, ``standalone``...), ``not serving`` when the server runs outside
    a quorum, :data:`DOWN` when it does not answer."""
    try:
        answer = four_letter_word(address, b"srvr", timeout)
    except OSError:
        return DOWN
    for line in answer.splitlines():
        if line.startswith("Mode:"):
            return line.split(":", 1)[1].strip()
    return "not serving"


@dataclass(frozen=True)
class ServerInfo:
    """One server of an ensemble, as a fault harness needs it."""

    sid: int
    client_port: int
    quorum_port: int
    election_port: int
    #: None while the server is not running
    pid: int | None
    workdir: str

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.client_port}"


class EnsembleServer(LocalZooKeeper):
    """One server of a :class:`LocalEnsemble`: its ``zoo.cfg`` names every server, its data directory its ``myid``."""

    def __init__(self, workdir: Path, sid: int, port: int | None, quorum_port: int, election_port: int,
                 peers: Callable[[], str]) -> None:
        super().__init__(workdir, port)
        self.sid = sid
        self.what = f"ZooKeeper server {sid}"
        self.quorum_port = quorum_port
        self.election_port = election_port
        self._peers = peers
        self.proc: subprocess.Popen | None = None

    @property
    def log_path(self) -> Path:
        return self.workdir / "zookeeper.log"

    def prepare(self) -> None:
        super().prepare()
        data_dir = self.workdir / "data"
        (data_dir / "myid").write_text(f"{self.sid}\n")
        with self.config_path.open("a") as config:
            config.write(self._peers())

    def spawn(self) -> None:
        """Start the process without waiting: a server of an ensemble serves only once a quorum of its peers runs."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.prepare()
        self.record, self.proc = spawn(self.argv(), self.log_path, cwd=self.workdir)

    def ready(self) -> bool:
        return server_mode(self.address) in SERVING_MODES

    def wait_ready(self, timeout: float) -> None:
        assert self.record is not None and self.proc is not None  # spawned
        wait_until_ready(self.record, self.proc, self.ready, f"{self.what} on {self.address}", timeout,
                         self.stop_timeout)

    def kill(self) -> None:
        """SIGKILL to the server's process group: no shutdown, as a crash or a lost machine."""
        if self.record is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.record.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(timeout=10)
        self.record = None
        self.proc = None

    def stop(self) -> None:
        super().stop()
        if self.proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=1)
            self.proc = None

    def info(self) -> ServerInfo:
        running = self.record is not None and self.record.is_alive()
        return ServerInfo(self.sid, self.port, self.quorum_port, self.election_port,
                          self.record.pid if running and self.record is not None else None, str(self.workdir))


class LocalEnsemble:
    """N ZooKeeper servers on loopback ports under ``workdir`` (``1/``, ``2/``...), started and stopped together, and
    each one on its own for faults.

    ``client_ports`` fixes the client ports (default: free ports). ``peer_ports`` lets a harness put something
    between two servers: ``peer_ports[(viewer, peer)] = (quorum_port, election_port)`` is where server ``viewer``
    reaches server ``peer`` (a relay it controls, forwarding to the peer's own ports), instead of the peer's own."""

    start_timeout = 60.0

    def __init__(self, workdir: str | Path, size: int = DEFAULT_SIZE, client_ports: Iterable[int | None] | None = None,
                 peer_ports: Mapping[tuple[int, int], tuple[int, int]] | None = None) -> None:
        if size < 1:
            raise EnvironmentSetupError(f"a ZooKeeper ensemble needs at least one server, not {size}")
        ports = list(client_ports) if client_ports is not None else [None] * size
        if len(ports) != size:
            raise EnvironmentSetupError(f"{len(ports)} client ports given for an ensemble of {size} servers")
        self.workdir = Path(workdir)
        self.peer_ports = dict(peer_ports or {})
        self.log = get_logger("zkconsumer.ensemble").bind(workdir=str(self.workdir))
        self._servers: dict[int, EnsembleServer] = {}
        for sid, port in enumerate(ports, start=1):
            self._servers[sid] = EnsembleServer(
                self.workdir / str(sid), sid, port, free_port(), free_port(),
                peers=functools.partial(self.peer_lines, sid))

    def peer_lines(self, viewer: int) -> str:
        """The ``server.N`` lines of server ``viewer``'s zoo.cfg: its own ports, and where it reaches each peer."""
        lines = []
        for sid, server in self._servers.items():
            quorum, election = (server.quorum_port, server.election_port) if sid == viewer else \
                self.peer_ports.get((viewer, sid), (server.quorum_port, server.election_port))
            lines.append(f"server.{sid}={LOOPBACK}:{quorum}:{election}")
        return "\n".join(lines) + "\n"

    # -- what it is ------------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return len(self._servers)

    @property
    def connect(self) -> str:
        """The connect string: every server, in id order."""
        return ",".join(server.address for server in self._servers.values())

    @property
    def address(self) -> str:
        return self.connect

    @property
    def servers(self) -> list[ServerInfo]:
        return [server.info() for server in self._servers.values()]

    def server(self, sid: int) -> ServerInfo:
        return self._server(sid).info()

    def records(self) -> dict[int, ProcessRecord]:
        """The running servers' process records, by id (what ``zkconsumer local`` keeps in its state file)."""
        return {sid: s.record for sid, s in self._servers.items() if s.record is not None}

    def _server(self, sid: int) -> EnsembleServer:
        try:
            return self._servers[sid]
        except KeyError:
            raise EnvironmentSetupError(
                f"the ensemble has no server {sid} (its servers: {', '.join(map(str, self._servers))})") from None

    def modes(self) -> dict[int, str]:
        """Each server's ``srvr`` Mode, :data:`DOWN` for a server not answering."""
        return {sid: server_mode(server.address) for sid, server in self._servers.items()}

    def leader(self) -> int | None:
        """The id of the server whose ``srvr`` says ``leader`` (``standalone`` for an ensemble of one), None during an
        election."""
        leaders = [sid for sid, mode in self.modes().items() if mode in ("leader", "standalone")]
        return leaders[0] if len(leaders) == 1 else None

    def followers(self) -> list[int]:
        return [sid for sid, mode in self.modes().items() if mode == "follower"]

    # -- the whole ensemble ----------------------------------------------------------------------

    def start(self) -> LocalEnsemble:
        self.workdir.mkdir(parents=True, exist_ok=True)
        try:
            for server in self._servers.values():
                server.spawn()
            deadline = time.monotonic() + self.start_timeout
            for server in self._servers.values():
                server.wait_ready(max(deadline - time.monotonic(), 1.0))
            self.wait_for_quorum(max(deadline - time.monotonic(), 1.0))
        except BaseException:
            self.stop()
            raise
        self.log.emit(ev.ENSEMBLE_STARTED, connect=self.connect, servers=self.size)
        return self

    def stop(self) -> None:
        stopped = [sid for sid, server in self._servers.items() if server.record is not None]
        for server in self._servers.values():
            server.stop()
        self.log.emit(ev.ENSEMBLE_STOPPED, servers=stopped)

    def __enter__(self) -> LocalEnsemble:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait_for_quorum(self, timeout: float = 30.0) -> None:
        """Wait until every running server serves, one of them leads, and a write through the connect string
        succeeds (an ephemeral znode of a session of its own, gone with it)."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            modes = self.modes()
            running = {sid: modes[sid] for sid, s in self._servers.items() if s.record is not None}
            leaders = [sid for sid, mode in running.items() if mode in ("leader", "standalone")]
            if running and all(m in SERVING_MODES for m in running.values()) and len(leaders) == 1:
                try:
                    with zookeeper(self.connect, timeout=max(min(deadline - time.monotonic(), 5.0), 1.0),
                                   quiet=True) as client:
                        client.create("/zkconsumer-ensemble-check-", ephemeral=True, sequence=True)
                    return
                except (ZkConsumerError, KazooException, OSError) as exc:
                    last = f"a write failed ({type(exc).__name__})"
            else:
                last = "modes " + ", ".join(f"{sid}: {mode}" for sid, mode in modes.items())
            time.sleep(0.1)
        raise EnvironmentSetupError(f"the ZooKeeper ensemble {self.connect} had no quorum within {timeout:.0f} s "
                                    f"({last}); logs in {self.workdir}/*/zookeeper.log")

    def rolling_restart(self, order: Iterable[int] | None = None, leader_last: bool = True,
                        timeout: float = 30.0) -> list[int]:
        """Restart every server, one at a time, each back in the quorum before the next goes (as operators roll an
        ensemble); by default the leader last, so there is one election. The order restarted is returned."""
        sids = list(order) if order is not None else list(self._servers)
        if order is None and leader_last:
            leader = self.leader()
            if leader is not None:
                sids = [sid for sid in sids if sid != leader] + [leader]
        for sid in sids:
            self.stop_server(sid)
            self.start_server(sid, timeout=timeout)
        return sids

    # -- one server ------------------------------------------------------------------------------

    def stop_server(self, sid: int) -> ServerInfo:
        """SIGTERM to one server (SIGKILL after its stop timeout)."""
        server = self._server(sid)
        server.stop()
        self.log.emit(ev.ENSEMBLE_SERVER_STOPPED, server=sid, how="stop")
        return server.info()

    def kill_server(self, sid: int) -> ServerInfo:
        """SIGKILL to one server."""
        server = self._server(sid)
        server.kill()
        self.log.emit(ev.ENSEMBLE_SERVER_STOPPED, server=sid, how="kill")
        return server.info()

    def start_server(self, sid: int, timeout: float = 30.0, wait: bool = True) -> ServerInfo:
        """Start a stopped server with its data directory as it was; with ``wait``, until it serves in the quorum
        (when the others are down too it cannot: start them with ``wait=False``, then :meth:`wait_for_quorum`)."""
        server = self._server(sid)
        if server.record is not None and server.record.is_alive():
            raise EnvironmentSetupError(f"ZooKeeper server {sid} is running already (pid {server.record.pid})")
        server.spawn()
        if wait:
            server.wait_ready(timeout)
        self.log.emit(ev.ENSEMBLE_SERVER_STARTED, server=sid, mode=server_mode(server.address))
        return server.info()


class LocalZooKeepers:
    """What ``zkconsumer local up --zookeeper-servers N`` starts: one standalone server (N = 1, its process record
    named ``zookeeper``, its files in ``workdir``) or an ensemble (records ``zookeeper-1``..., files in
    ``workdir/1``...). ``port`` is the first client port; an ensemble's servers take the ports after it."""

    def __init__(self, workdir: Path, port: int | None = None, servers: int = 1) -> None:
        if servers < 1:
            raise UsageError(f"--zookeeper-servers {servers}: a ZooKeeper ensemble needs at least one server")
        ports = [port + i if port is not None else None for i in range(servers)]
        for client_port in ports[1:]:
            if client_port is not None:
                check_port_free(client_port, "ZooKeeper")
        self.servers = servers
        self._one = LocalZooKeeper(workdir, port) if servers == 1 else None
        self._ensemble = LocalEnsemble(workdir, servers, ports) if servers > 1 else None

    @property
    def connect(self) -> str:
        server = self._one if self._one is not None else self._ensemble
        assert server is not None
        return server.connect

    def start(self) -> dict[str, ProcessRecord]:
        if self._one is not None:
            return {"zookeeper": self._one.start()}
        assert self._ensemble is not None
        self._ensemble.start()
        return {f"zookeeper-{sid}": record for sid, record in self._ensemble.records().items()}
