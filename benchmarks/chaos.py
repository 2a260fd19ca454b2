"""The chaos run: ten member processes of one group on two topics, a steady producer, seeded random faults, and the
group's invariants checked while it runs and at the end.

    python benchmarks/chaos.py --duration-s 180 --seed 1 --zookeeper-servers 3 --report chaos.json

Faults (``--faults``, default every one that can run here): ``kill`` (SIGKILL, restarted after 1-3 s), ``pause``
(SIGSTOP for longer than the session timeout, then SIGCONT: a GC pause; the member must stop delivering what it no
longer owns and rejoin), ``expire`` (a second client on the member's session id and password, closed: the session
is gone), ``zk-short`` / ``zk-long`` (ZooKeeper, every server of it, killed and restarted on the same ports and data
directories, within and beyond the session timeout), ``rolling`` (every member restarted cleanly, one after another),
``leave`` (a member leaves cleanly, and comes back later), ``broker`` (the broker killed and restarted on the same port
after 1-4 s; its log and committed offsets live in a local S3 server, SeaweedFS, extra ``broker-storage``: the Tansu
build here has memory and S3 storage only; with ``--broker-storage memory`` asking for it is refused before anything
starts). Before each broker restart the run commits offsets to the broker itself, and reads them back after it
(``broker_restarts`` in the report: what the broker had acknowledged before, and whether its offsets were kept).

On an ensemble (``--zookeeper-servers 3``, or more) four more: ``zk-leader`` (the leader, found through ``srvr``'s
Mode, killed and restarted after 2-6 s: an election), ``zk-follower`` (the follower with the most client connections,
by ``cons``, killed and restarted: its clients move to another server within their sessions), ``zk-rolling`` (every
server restarted, one after another, the leader last, as operators roll an ensemble) and ``zk-cutoff`` (the server
with the most client connections cut off from its peers for 3 s to twice the session timeout while its clients still
reach it: every server reaches every other through a relay on loopback, :mod:`zkconsumer.embedded.relay`, and the
cut server's relays are cut both ways; it leaves the quorum, drops its clients, and they reconnect elsewhere).

Invariants: no two members delivering one partition beyond ``--overlap-limit-ms`` (the window in which an old owner
is still stopping; its maximum is reported as ``max_overlap_ms``), and no member delivering a partition later than
that after its own ownership ended; no member woken from a pause beyond its session handing out anything of a
partition another member claimed meanwhile (its streams fence such chunks: ``fenced_chunks`` counts them;
``stale_after_pause`` lists what was handed out, ``--stale-after-pause-ms`` tolerates some, 0 by default); committed
offsets never move backwards; every produced message delivered at least once; every duplicate delivered after some
fault (charged to the earliest one under way around it); no partition unfetched for longer than
``--unowned-limit-s`` with ZooKeeper up; at the end no member process and no znode of the group left. The report
(``--report``) is JSON; the last line printed is the verdict;
the exit status is 0 only when every invariant held (1 with the first violation explained, 2 for a refusal).

Ownership is read from each member's own events (``<member>.events``, JSON lines at info): a tenure of a member on
a partition runs from its ``rebalance.claim`` that took it to the first of its next ``rebalance.stop_fetchers``,
``rebalance.attempt_failed``, ``session.expired``, ``consumer.shutdown`` or the death of its process. Two numbers
come from them: ``max_overlap_ms``, from the deliveries, is how long an old owner still delivered after the new
owner's first delivery inside the new owner's tenure; ``max_event_overlap_ms``, from the events alone, is how long
an old owner's tenure outlasted the new owner's claim (only a member whose session died without it noticing,
paused or cut off, can have one: otherwise the claim waits for the release, which follows the fetchers' stop).

The analysis of what the run recorded is :mod:`zkconsumer.chaos` (pure, tested on hand-made timelines); this script
drives the run: the servers, the members, the producer, the watcher of the znodes, and one function per fault kind.
Each member is a :mod:`zkconsumer.members.legacy_member` process, started and stopped through
:class:`zkconsumer.members.group.MemberGroup`: it writes ``time topic partition offset value`` per message delivered
(flushed at once, so a SIGKILL loses nothing written), its events, and its session id and password, for ``expire``.
Loopback only; bounded in time (the duration, or ``--max-duration-s`` for a run that must show ``--min-fault-kinds``
kinds of fault, plus a drain of at most ``--drain-s``) and in count (ten members).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from zkconsumer.chaos.analysis import Limits, RunRecord, analyse
from zkconsumer.chaos.records import Delivery, FaultSpan, Pause, parse_deliveries
from zkconsumer.chaos.report import Report, verdict
from zkconsumer.embedded.process import LocalServer
from zkconsumer.embedded.relay import Relay
from zkconsumer.members import faults, legacy_member
from zkconsumer.members.group import MemberGroup
from zkconsumer.trace.timeline import Event, read_events
from zkconsumer.zk.paths import GroupDirs

if TYPE_CHECKING:
    from zkconsumer.embedded.ensemble import LocalEnsemble
    from zkconsumer.embedded.zookeeper import LocalZooKeeper

ENSEMBLE_FAULTS = ("zk-leader", "zk-follower", "zk-rolling", "zk-cutoff")  # need three servers or more
ALL_FAULTS = ("kill", "pause", "expire", "zk-short", "zk-long", "rolling", "leave", "broker", *ENSEMBLE_FAULTS)
PROBE_GROUP = "chaos-broker-probe"  # the group whose offsets the run commits to the broker across its restarts
# Enough partitions for every member to own one (the range assignor gives chaos-a's 12 to 12 of its 13 threads): a
# fault on a member that owns nothing tests nothing.
TOPICS = {"chaos-a": 12, "chaos-b": 8}
STREAMS = ["chaos-a:1,chaos-b:1", "chaos-a:2,chaos-b:1", "chaos-a:1,chaos-b:2"]
GROUP = "chaos"
GROUP_DIRS = GroupDirs(GROUP)
FORMING_S = 5.0  # the group forms before the first fault
CHROOT = "/zkconsumer-chaos"
LEAVE_S = 30.0  # for a member told to leave (SIGTERM): one still there after it hangs


# --- the run --------------------------------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str
    time_s: float  # since the start of the run
    member: str | None = None
    duration_s: float = 0.0
    detail: str = ""  # what a fault on a server hit: which server, in which mode


class Refused(Exception):
    pass


class Chaos:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.storage = args.broker_storage
        self.ensemble = args.zookeeper_servers > 1
        default = tuple(f for f in ALL_FAULTS if (f != "broker" or self.storage == "s3")
                        and (f not in ENSEMBLE_FAULTS or args.zookeeper_servers >= 3))
        self.faults_allowed = tuple(args.faults.split(",")) if args.faults else default
        self.relays: dict[tuple[int, int, str], Relay] = {}  # (viewer, peer, quorum|election): between two servers
        self.acked_before_restart: list[frozenset[str]] = []  # what the broker had acknowledged, at each restart
        self.report = Report(args.seed, args.duration_s, args.members, args.session_timeout_ms,
                             broker_storage=self.storage, zookeeper_servers=args.zookeeper_servers)
        self.deaths: dict[str, list[float]] = defaultdict(list)  # wall times a member's process died
        self.pauses: list[Pause] = []
        self.leaving_at = 0.0
        self.workdir = Path()  # made by run(), once the checks passed: a refusal leaves nothing behind
        self.group = MemberGroup(self.workdir)
        self.servers = contextlib.ExitStack()  # what start_servers() keeps running (the bridge's thread)
        self.paused: set[str] = set()
        self.produced: set[str] = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.zk_down = threading.Event()
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        self.committed: dict[str, int] = {}
        self.load_samples: list[float] = []

    def now(self) -> float:
        return time.monotonic() - self.t0

    def violation(self, text: str) -> None:
        with self.lock:
            self.report.violations.append(f"{self.now():.1f}s {text}")

    # -- set-up --------------------------------------------------------------------------------------------

    def check(self) -> None:
        unknown = [f for f in self.faults_allowed if f not in ALL_FAULTS]
        if unknown:
            raise Refused(f"unknown fault kinds {', '.join(unknown)} (known: {', '.join(ALL_FAULTS)})")
        if "broker" in self.faults_allowed and self.storage != "s3":
            raise Refused("fault 'broker' needs a broker with persistent storage (--broker-storage s3, the default): "
                          "the Tansu here has memory and S3 storage only, and a restart with memory storage would "
                          "lose every message")
        on_ensemble = [f for f in self.faults_allowed if f in ENSEMBLE_FAULTS]
        if on_ensemble and self.args.zookeeper_servers < 3:
            raise Refused(f"faults {', '.join(on_ensemble)} need an ensemble of three servers or more "
                          f"(--zookeeper-servers 3), not {self.args.zookeeper_servers}")
        from zkconsumer.embedded.broker import tansu_binary
        from zkconsumer.embedded.object_store import weed_binary
        from zkconsumer.embedded.zookeeper import find_classpath, find_java

        find_java(), find_classpath(), tansu_binary()  # a missing binary is refused before anything starts
        if self.storage == "s3":
            weed_binary()
        if self.args.members < 2 or self.args.duration_s <= 0:
            raise Refused("--members must be at least 2 and --duration-s positive")
        if self.args.min_fault_kinds > len(set(self.faults_allowed)):
            raise Refused(f"--min-fault-kinds {self.args.min_fault_kinds}: only {len(set(self.faults_allowed))} "
                          f"fault kinds can run ({', '.join(self.faults_allowed)})")

    def start_servers(self) -> None:
        from zkconsumer.bridge.metadata_bridge import MetadataBridge
        from zkconsumer.embedded.broker import STORAGE_BUCKET, LocalTansu
        from zkconsumer.embedded.ensemble import LocalEnsemble
        from zkconsumer.embedded.front import fronted
        from zkconsumer.embedded.object_store import LocalObjectStore
        from zkconsumer.embedded.zookeeper import LocalZooKeeper
        from zkconsumer.kafka.topics import create_topic
        from zkconsumer.zk.client import zookeeper

        self.zk_server: LocalZooKeeper | LocalEnsemble
        if self.ensemble:
            self.zk_server = LocalEnsemble(self.workdir / "zookeeper", self.args.zookeeper_servers)
            self._put_relays_between(self.zk_server)
        else:
            self.zk_server = LocalZooKeeper(self.workdir / "zookeeper")
        self.zk_server.start()
        if self.storage == "s3":
            self.s3 = LocalObjectStore(self.workdir / "s3", buckets=(STORAGE_BUCKET,))
            self.s3.start()
            self.broker = LocalTansu.on_object_store(self.workdir / "broker", self.s3)
        else:
            self.broker = LocalTansu(self.workdir / "broker")
        self.broker.start()
        # Clients (and, through the bridge's registration, the members) reach the broker through the front, as in the
        # embedded environment; the front outlives the broker's restarts (it refuses clients while the broker is down).
        self.bootstrap = self.broker.bootstrap
        if not self.args.direct_broker:
            self.bootstrap = self.servers.enter_context(fronted(self.broker.bootstrap, self.workdir / "front"))
        with zookeeper(self.zk_server.connect) as zk:
            zk.ensure_path(CHROOT)
        self.connect = self.zk_server.connect + CHROOT
        for topic, partitions in TOPICS.items():
            create_topic(self.bootstrap, topic, partitions)
        self.bridge = self.servers.enter_context(
            MetadataBridge(self.connect, self.bootstrap, interval_ms=500).running(join_timeout=5.0))

    def _put_relays_between(self, ensemble: LocalEnsemble) -> None:
        """Every server reaches every other through a relay of its own (quorum and election ports), so that one server
        can be cut off from its peers while its clients still reach it."""
        for viewer in ensemble.servers:
            for peer in ensemble.servers:
                if viewer.sid == peer.sid:
                    continue
                quorum = Relay(("127.0.0.1", peer.quorum_port))
                election = Relay(("127.0.0.1", peer.election_port))
                self.relays[(viewer.sid, peer.sid, "quorum")] = quorum
                self.relays[(viewer.sid, peer.sid, "election")] = election
                ensemble.peer_ports[(viewer.sid, peer.sid)] = (quorum.port, election.port)

    @property
    def quorum(self) -> LocalEnsemble:
        """The ensemble, for its faults (refused before the run without one)."""
        from zkconsumer.embedded.ensemble import LocalEnsemble

        assert isinstance(self.zk_server, LocalEnsemble)
        return self.zk_server

    def zookeeper_running(self) -> bool:
        if self.ensemble:
            return bool(self.quorum.records())
        return getattr(self.zk_server, "record", None) is not None

    def start_member(self, member: str) -> None:
        """Start ``member`` (again: its files go on), on its share of :data:`STREAMS`; its deliveries, events and
        session go to ``<member>.deliveries``, ``.events`` and ``.session`` in the working directory."""
        argv = legacy_member.command(
            zookeeper=self.connect, group=GROUP, topic=STREAMS[int(member[1:]) % len(STREAMS)], consumer_id=member,
            session_timeout_ms=self.args.session_timeout_ms,
            config={"auto.commit.interval.ms": 500, "rebalance.backoff.jitter.ms": 300},
            output=self.workdir / f"{member}.deliveries", delivery_format="timed",
            events_file=self.workdir / f"{member}.events", session_file=self.workdir / f"{member}.session")
        self.group.start(member, f"{GROUP}_{member}", argv, follow=False)

    # -- background loops ----------------------------------------------------------------------------------

    def produce(self) -> None:
        from confluent_kafka import Producer

        # Batches of several messages (a topic's messages of 100 ms go to one partition together): the broker on its
        # object store keeps a batch per object and answers a fetch with one of them, so a member behind after a fault
        # catches up a batch per round trip.
        producer = Producer({"bootstrap.servers": self.bootstrap, "linger.ms": 100,
                             "sticky.partitioning.linger.ms": 100, "message.timeout.ms": 60000, "log_level": 0})

        def acked(err, msg) -> None:
            if err is None:
                with self.lock:
                    self.produced.add(msg.value().decode())

        n, interval = 0, 1.0 / self.args.rate
        next_at = time.monotonic()
        while not self.stop.is_set():
            topic = "chaos-a" if n % 2 == 0 else "chaos-b"
            producer.produce(topic, value=f"m{n}".encode(), on_delivery=acked)
            n += 1
            producer.poll(0)
            next_at += interval
            time.sleep(max(0.0, next_at - time.monotonic()))
        producer.flush(30)

    def watch(self) -> None:
        """Every 0.5 s: committed offsets never backwards; no partition long unowned while a member owns nothing."""
        from zkconsumer.zk.client import close_client, open_client

        zk = None
        unowned_since: dict[str, float] = {}
        while not self.stop.wait(0.5):
            self.load_samples.append(os.getloadavg()[0])
            if self.zk_down.is_set():
                unowned_since.clear()
                continue
            try:
                if zk is None:
                    zk = open_client(self.connect, timeout=5.0, quiet=True, session_timeout=15.0)
                self._watch_once(zk, unowned_since)
            except Exception as exc:  # ZooKeeper restarting: look again next time
                self.report.watch_errors += 1
                self.report.last_watch_error = f"{type(exc).__name__}: {exc}"[:200]
                if zk is not None:
                    close_client(zk)
                zk = None
                unowned_since.clear()
        if zk is not None:
            close_client(zk)

    def _watch_once(self, zk, unowned_since: dict[str, float]) -> None:
        from zkconsumer.zk.reads import children, value_or_none

        dirs = {f"{topic}/{p}": (GROUP_DIRS.topic_dirs(topic), p)
                for topic, partitions in TOPICS.items() for p in range(partitions)}
        keys = list(dirs)
        offset_calls = {k: zk.get_async(d.offset_path(p)) for k, (d, p) in dirs.items()}  # pipelined: one round trip
        owner_calls = {k: zk.get_async(d.owner_path(p)) for k, (d, p) in dirs.items()}
        ids = set(children(zk, GROUP_DIRS.registry_dir))
        owners: dict[str, str] = {}
        for key in keys:
            got = value_or_none(offset_calls[key])
            if got is not None and got[0].strip().isdigit():
                value = int(got[0])
                if value < self.committed.get(key, -1):
                    self.violation(f"committed offset of {key} moved back from {self.committed[key]} to {value}")
                self.committed[key] = max(value, self.committed.get(key, -1))
                self.report.offsets_checked += 1
            owner = value_or_none(owner_calls[key])
            if owner is not None:
                owners[key] = owner[0].decode()
        owning = {o.rsplit("-", 1)[0] for o in owners.values()}
        live_ids = {i for i in ids if i.removeprefix(f"{GROUP}_") not in self.paused}
        idle = live_ids - owning
        now = self.now()
        for topic, partitions in TOPICS.items():
            for p in range(partitions):
                key = f"{topic}/{p}"
                if key in owners or not idle:
                    unowned_since.pop(key, None)
                    continue
                since = unowned_since.setdefault(key, now)
                self.report.max_unowned_s = max(self.report.max_unowned_s, now - since)
                if now - since > self.args.unowned_limit_s:
                    self.violation(f"{key} unowned for {now - since:.1f} s while {sorted(idle)[0]} owns nothing")
                    unowned_since[key] = now

    # -- faults --------------------------------------------------------------------------------------------

    def live(self) -> list[str]:
        return sorted(m.name for m in self.group.members.values()
                      if m.process.poll() is None and m.name not in self.paused)

    @property
    def session_s(self) -> float:
        return self.args.session_timeout_ms / 1000

    def fault(self, kind: str) -> Fault:
        """One fault of ``kind``, run until it is over (the member or server back). A fault on a member hits one of
        the live members, drawn by the seeded random; with none live it does nothing."""
        member = self.rng.choice(self.live()) if self.live() else None
        fault = Fault(kind, round(self.now(), 2))
        started = time.monotonic()
        if kind in GROUP_FAULTS:
            fault.detail = GROUP_FAULTS[kind](self) or ""
        elif member is not None:
            fault.member = member
            MEMBER_FAULTS[kind](self, member)
        fault.duration_s = round(time.monotonic() - started, 2)
        return fault

    def _terminate(self, member: str) -> None:
        """A clean leave: SIGTERM, and :data:`LEAVE_S` to go. One that hangs is a violation; its threads' stacks go
        to its log before it is killed."""
        process = self.group.members[member]
        self.group.stop(process, timeout=LEAVE_S)
        self._left(process.name, process.hung)

    def _left(self, member: str, hung: bool) -> None:
        if hung:
            self.violation(f"{member} did not leave within {LEAVE_S:.0f} s of SIGTERM (stacks in {member}.log)")
        self.deaths[member].append(time.time())

    # -- the run -------------------------------------------------------------------------------------------

    def run(self) -> Report:
        self.check()
        self.workdir = Path(tempfile.mkdtemp(prefix="zkconsumer-chaos-"))
        self.group.log_dir = self.workdir
        self.report.load_avg["start"] = os.getloadavg()[0]
        try:
            self.start_servers()
            # Fault times count from here, and wall0 is the same instant: the analysis places the faults on the
            # wall clock of the deliveries, and a gap between the two would charge a repeat to a later fault.
            self.t0, self.wall0 = time.monotonic(), time.time()
            self.report.started_at = self.wall0
            for i in range(self.args.members):
                self.start_member(f"m{i}")
            loops = [threading.Thread(target=self.produce, daemon=True),
                     threading.Thread(target=self.watch, daemon=True)]
            for t in loops:
                t.start()
            time.sleep(min(FORMING_S, self.args.duration_s / 4))  # the group forms
            # Every kind once before any comes again: the first round in the order of --faults when given, every
            # other in a seeded order.
            # A run that must show some kinds (--min-fault-kinds) goes on past its duration until it has, within
            # --max-duration-s: how many faults fit in a duration depends on the machine's speed.
            kinds = list(self.faults_allowed) if self.args.faults else []
            while self.now() < self.args.duration_s or (
                    len({f["kind"] for f in self.report.faults}) < self.args.min_fault_kinds
                    and self.now() < self.args.max_duration_s):
                if not kinds:
                    kinds = self.rng.sample(self.faults_allowed, len(self.faults_allowed))
                self.report.faults.append(asdict(self.fault(kinds.pop(0))))
                time.sleep(self.rng.uniform(1, self.args.fault_gap_s))
            self.stop.set()
            loops[0].join(40)
            self._drain()
            self.leaving_at = time.time()
            loops[1].join(5)
            self._leave_all()
        finally:
            self._teardown()
        self.report.load_avg.update(max=max(self.load_samples, default=0.0), end=os.getloadavg()[0])
        self._analyse()
        if not self.report.held or self.args.keep_workdir:
            self.report.workdir = str(self.workdir)
        else:
            shutil.rmtree(self.workdir, ignore_errors=True)
        return self.report

    def _drain(self) -> None:
        deadline = time.monotonic() + self.args.drain_s
        while time.monotonic() < deadline:
            if self.produced <= self._delivered_values():
                return
            time.sleep(0.5)

    def _delivered_values(self) -> set[str]:
        return {d.value for d in self._deliveries()}

    def _deliveries(self) -> list[Delivery]:
        return [d for path in self.workdir.glob("*.deliveries")
                for d in parse_deliveries(path.stem, path.read_text().splitlines())]

    def _leave_all(self) -> None:
        for member in self.group.members.values():
            if member.process.poll() is None:
                member.process.send_signal(signal.SIGCONT)  # a paused member leaves too
        self.group.stop_all(timeout=LEAVE_S)
        for member in self.group.members.values():
            self._left(member.name, member.hung)
        from zkconsumer.zk.client import zookeeper
        from zkconsumer.zk.reads import children

        time.sleep(0.5)
        with zookeeper(self.connect) as zk:
            ids = children(zk, GROUP_DIRS.registry_dir)
            deadline = time.monotonic() + self.args.session_timeout_ms / 1000 + 5
            while ids and time.monotonic() < deadline:  # a SIGKILLed member's last session may still be expiring
                time.sleep(0.5)
                ids = children(zk, GROUP_DIRS.registry_dir)
            if ids:
                self.violation(f"registrations left behind: {ids}")
            owners = [f"{t}/{p}" for t in children(zk, GROUP_DIRS.owners_dir)
                      for p in children(zk, GROUP_DIRS.topic_dirs(t).owner_dir)]
            if owners:
                self.violation(f"owner znodes left behind: {owners}")

    def _teardown(self) -> None:
        for member in self.group.members.values():
            if member.process.poll() is None:
                self.group.kill(member)
        self.group.close(0)
        self.servers.close()
        if hasattr(self, "zk_server") and self.zookeeper_running():
            from zkconsumer.zk.client import zookeeper

            try:
                with zookeeper(self.zk_server.connect) as zk:
                    zk.delete(CHROOT, recursive=True)
            except Exception as exc:
                self.violation(f"could not remove {CHROOT}: {exc}")
        for server in ("broker", "s3", "zk_server"):
            if hasattr(self, server):
                getattr(self, server).stop()
        for relay in self.relays.values():
            relay.close()
        self.report.wall_s = round(time.monotonic() - self.t0, 1)
        alive = [m.name for m in self.group.members.values() if m.process.poll() is None]
        if alive:
            self.violation(f"member processes left behind: {alive}")

    def _analyse(self) -> None:
        """What the run recorded, judged by :func:`zkconsumer.chaos.analysis.analyse`."""

        def events(member: str) -> list[Event]:
            path = self.workdir / f"{member}.events"
            return list(read_events(path.read_text().splitlines()).events) if path.exists() else []

        faults = [FaultSpan(f["kind"], self.wall0 + f["time_s"], self.wall0 + f["time_s"] + f["duration_s"])
                  for f in self.report.faults]
        deliveries = self._deliveries()
        delivered = {d.value for d in deliveries}
        for restart, acked in zip(self.report.broker_restarts, self.acked_before_restart, strict=True):
            restart["acknowledged_before_delivered"] = len(acked & delivered)
        record = RunRecord(
            started=self.wall0, produced=frozenset(self.produced), deliveries=deliveries,
            events={m: events(m) for m in self.group.members}, deaths=self.deaths, pauses=self.pauses, faults=faults,
            zookeeper_down=[f for f in faults if f.kind in ZOOKEEPER_DOWN],
            partitions=[(topic, p) for topic, n in TOPICS.items() for p in range(n)],
            formed_at=self.wall0 + FORMING_S, leaving_at=self.leaving_at, ended=time.time())
        self.report.findings = analyse(record, Limits(self.args.overlap_limit_ms, self.args.unowned_limit_s,
                                                      self.args.stale_after_pause_ms))


# --- the faults: one function per kind ------------------------------------------------------------------------


def kill_member(chaos: Chaos, member: str) -> None:
    """SIGKILL, and the member started again 1-3 s later."""
    chaos.group.kill(chaos.group.members[member])
    chaos.deaths[member].append(time.time())
    time.sleep(chaos.rng.uniform(1, 3))
    chaos.start_member(member)


def pause_member(chaos: Chaos, member: str) -> None:
    """SIGSTOP for longer than the session timeout, then SIGCONT: a GC pause its session does not survive. The
    member must stop delivering what it no longer owns, and rejoin."""
    process = chaos.group.members[member].process
    chaos.paused.add(member)
    process.send_signal(signal.SIGSTOP)
    stopped = time.time()
    time.sleep(chaos.session_s + chaos.rng.uniform(2, 4))
    resumed = time.time()  # just before: a delivery stamped after it came after the SIGCONT
    process.send_signal(signal.SIGCONT)
    chaos.pauses.append(Pause(member, stopped, resumed))
    chaos.paused.discard(member)


def expire_session(chaos: Chaos, member: str) -> None:
    """A second client on the member's session (id and password from ``<member>.session``), closed: that closes the
    session, which the member finds expired. A member that has not written its session yet is left alone."""
    faults.expire_session(chaos.connect, chaos.workdir / f"{member}.session")


def leave_and_return(chaos: Chaos, member: str) -> None:
    """A clean leave (SIGTERM), and the member back 2-5 s later."""
    chaos._terminate(member)
    time.sleep(chaos.rng.uniform(2, 5))
    chaos.start_member(member)


def zookeeper_down_within_session(chaos: Chaos) -> None:
    """ZooKeeper down for less than half the session timeout: the sessions ride it out."""
    _zookeeper_down(chaos, chaos.rng.uniform(0.5, chaos.session_s * 0.5))


def zookeeper_down_beyond_session(chaos: Chaos) -> None:
    """ZooKeeper down for longer than the session timeout."""
    _zookeeper_down(chaos, chaos.session_s + chaos.rng.uniform(1, 3))


def _zookeeper_down(chaos: Chaos, down_s: float) -> None:
    chaos.zk_down.set()  # the watcher neither reads nor judges meanwhile
    if chaos.ensemble:
        ensemble = chaos.quorum
        for server in ensemble.servers:
            ensemble.kill_server(server.sid)
        time.sleep(down_s)
        for server in ensemble.servers:  # none serves before a quorum of them runs
            ensemble.start_server(server.sid, wait=False)
        ensemble.wait_for_quorum(60)
    else:
        assert isinstance(chaos.zk_server, LocalServer)
        _crash_and_restart(chaos.zk_server, down_s)
    chaos.zk_down.clear()


def kill_leader(chaos: Chaos) -> str:
    """The ensemble's leader (``srvr``'s Mode) killed, and started again 2-6 s later: the others elect a new one, and
    the clients connected to it move to another server within their sessions."""
    leader = chaos.quorum.leader()
    if leader is None:
        return "no leader (an election under way)"
    return _kill_server(chaos, leader, chaos.rng.uniform(2, 6))


def kill_follower(chaos: Chaos) -> str:
    """The follower with the most client connections (the members', mostly) killed, and started again 2-6 s later."""
    followers = chaos.quorum.followers()
    if not followers:
        return "no follower"
    return _kill_server(chaos, max(followers, key=lambda sid: (_client_connections(chaos, sid), -sid)),
                        chaos.rng.uniform(2, 6))


def _kill_server(chaos: Chaos, sid: int, down_s: float) -> str:
    mode, clients = chaos.quorum.modes()[sid], _client_connections(chaos, sid)
    chaos.quorum.kill_server(sid)
    chaos.report.zookeeper_servers_killed.append(sid)
    time.sleep(down_s)
    chaos.quorum.start_server(sid, timeout=60)
    return f"server {sid} ({mode}, {clients} clients) down {down_s:.1f} s, back as {chaos.quorum.modes()[sid]}"


def _client_connections(chaos: Chaos, sid: int) -> int:
    """How many clients a server holds, by ``cons`` (one line per connection, this one's included)."""
    from zkconsumer.embedded.ensemble import four_letter_word

    try:
        answer = four_letter_word(chaos.quorum.server(sid).address, b"cons")
    except OSError:
        return 0
    return max(sum(1 for line in answer.splitlines() if "queued=" in line) - 1, 0)


def roll_ensemble(chaos: Chaos) -> str:
    """Every server of the ensemble restarted, one after another, each back in the quorum before the next goes, the
    leader last."""
    return "servers " + ", ".join(map(str, chaos.quorum.rolling_restart(timeout=60)))


def cut_off_server(chaos: Chaos) -> str:
    """The server with the most client connections cut off from its peers (its relays to them and theirs to it) for 3
    s to twice the session timeout, its client port still open: it leaves the quorum and drops its clients, which
    reconnect to the others; then it is let back in."""
    from zkconsumer.embedded.ensemble import server_mode

    running = [s.sid for s in chaos.quorum.servers if s.pid is not None]
    if not running:
        return "no server running"
    sid = max(running, key=lambda i: (_client_connections(chaos, i), -i))
    mode, clients = chaos.quorum.modes()[sid], _client_connections(chaos, sid)
    relays = [r for (viewer, peer, _), r in chaos.relays.items() if sid in (viewer, peer)]
    for relay in relays:
        relay.cut()
    cut_s = chaos.rng.uniform(3, 2 * chaos.session_s)
    time.sleep(cut_s)
    while_cut = server_mode(chaos.quorum.server(sid).address)
    for relay in relays:
        relay.restore()
    chaos.quorum.wait_for_quorum(60)
    return (f"server {sid} ({mode}, {clients} clients) cut off {cut_s:.1f} s: {while_cut} at its end, "
            f"{_client_connections(chaos, sid)} clients")


def rolling_restart(chaos: Chaos) -> None:
    """Every member restarted cleanly, one after another."""
    for member in sorted(chaos.group.members):
        if chaos.stop.is_set():
            break
        chaos._terminate(member)
        chaos.start_member(member)
        time.sleep(0.3)


def restart_broker(chaos: Chaos) -> str:
    """The broker down for 1-4 s; its storage (S3) outlives it. Offsets committed to the broker itself (not through
    the front, whose coordinator is its own) before the crash must read back the same after it."""
    index = len(chaos.report.broker_restarts)
    probe = {p: 1000 * (index + 1) + p for p in range(TOPICS["chaos-a"])}
    with chaos.lock:
        acked = frozenset(chaos.produced)
    committed_before = _probe_offsets(chaos.broker.bootstrap, probe)
    _crash_and_restart(chaos.broker, chaos.rng.uniform(1, 4))
    committed_after = _probe_offsets(chaos.broker.bootstrap)
    chaos.acked_before_restart.append(acked)
    # A probe that got no answer ({}) tells nothing either way: recorded as unknown, not as a loss.
    kept: bool | None = None if not committed_before or not committed_after else (
        committed_before == committed_after == probe)
    chaos.report.broker_restarts.append({"at_s": round(chaos.now(), 2), "acknowledged_before": len(acked),
                                  "committed_offsets_kept": kept})
    if kept is False:
        chaos.violation(f"the broker's committed offsets of {PROBE_GROUP} were {committed_before} before its restart "
                        f"and {committed_after} after it (committed: {probe})")
    verdict = {True: "kept", False: "LOST", None: "not known (a probe got no answer)"}[kept]
    return f"{len(acked)} messages acknowledged before; committed offsets {verdict}"


def _probe_offsets(bootstrap: str, commit: dict[int, int] | None = None) -> dict[int, int]:
    """Commit ``commit`` (when given) for :data:`PROBE_GROUP` on chaos-a, and read back what the broker holds."""
    from confluent_kafka import Consumer, KafkaException, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": PROBE_GROUP, "enable.auto.commit": False,
                         "log_level": 0})
    try:
        for _ in range(3):  # a broker just back may not answer its first request yet
            try:
                if commit:
                    consumer.commit(offsets=[TopicPartition("chaos-a", p, o) for p, o in commit.items()],
                                    asynchronous=False)
                wanted = [TopicPartition("chaos-a", p) for p in range(TOPICS["chaos-a"])]
                return {tp.partition: tp.offset for tp in consumer.committed(wanted, timeout=10)}
            except KafkaException:
                time.sleep(1)
        return {}
    finally:
        consumer.close()


def _crash_and_restart(server: LocalServer, down_s: float) -> None:
    """SIGTERM then SIGKILL 0.1 s later (a crash, near enough), and the server started again on the same port and
    data after ``down_s``; a start that fails (the port not free yet) is tried again for about 10 s."""
    if server.record is not None:
        server.record.stop(0.1)
    server.record = None
    time.sleep(down_s)
    for _ in range(50):
        try:
            server.start()
            return
        except Exception:
            time.sleep(0.2)


MEMBER_FAULTS: dict[str, Callable[[Chaos, str], None]] = {
    "kill": kill_member, "pause": pause_member, "expire": expire_session, "leave": leave_and_return,
}
GROUP_FAULTS: dict[str, Callable[[Chaos], str | None]] = {
    "zk-short": zookeeper_down_within_session, "zk-long": zookeeper_down_beyond_session, "rolling": rolling_restart,
    "broker": restart_broker, "zk-leader": kill_leader, "zk-follower": kill_follower, "zk-rolling": roll_ensemble,
    "zk-cutoff": cut_off_server,
}
ZOOKEEPER_DOWN = ("zk-short", "zk-long")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchmarks/chaos.py", description=__doc__.splitlines()[0])
    parser.add_argument("--duration-s", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--rate", type=float, default=100.0, help="messages a second (default 100)")
    parser.add_argument("--session-timeout-ms", type=int, default=4000)
    parser.add_argument("--faults", default="", help=f"comma separated, of {', '.join(ALL_FAULTS)} "
                        f"(default: all, without broker when the storage is memory)")
    parser.add_argument("--fault-gap-s", type=float, default=6.0, help="at most this long between faults")
    parser.add_argument("--min-fault-kinds", type=int, default=0,
                        help="go on past --duration-s until this many kinds of fault have run (the first round "
                        "takes --faults in their order), up to --max-duration-s")
    parser.add_argument("--max-duration-s", type=float, default=0.0,
                        help="with --min-fault-kinds: the longest the faults may go on (default: twice --duration-s)")
    parser.add_argument("--overlap-limit-ms", type=float, default=1500.0)
    parser.add_argument("--unowned-limit-s", type=float, default=20.0)
    parser.add_argument("--stale-after-pause-ms", type=float, default=0.0,
                        help="how long a member woken from a pause may hand out what others claimed meanwhile "
                        "(default 0: nothing)")
    parser.add_argument("--drain-s", type=float, default=60.0)
    parser.add_argument("--keep-workdir", action="store_true",
                        help="keep the members' deliveries, events and logs even when every invariant held")
    parser.add_argument("--broker-storage", choices=("s3", "memory"), default="s3",
                        help="the broker's storage: s3 (the default) runs a local S3 server, SeaweedFS, for it, which "
                        "the broker fault needs; memory leaves that fault out")
    parser.add_argument("--zookeeper-servers", type=int, default=1,
                        help=f"ZooKeeper servers: 3 or more make an ensemble and add {', '.join(ENSEMBLE_FAULTS)}")
    parser.add_argument("--direct-broker", action="store_true",
                        help="no front: the members and the producer reach the broker itself")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    args.max_duration_s = args.max_duration_s or 2 * args.duration_s
    import logging

    logging.basicConfig(level=logging.ERROR)  # kazoo's reconnection lines while ZooKeeper is down are expected
    chaos = Chaos(args)
    # SIGTERM (and SIGINT, which a shell ignores in background jobs) end the run through its teardown: members,
    # servers and the chroot are removed as at its normal end.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        report = chaos.run()
    except Refused as exc:
        print(f"chaos refused: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a set-up failure (EnvironmentSetupError...) is one line
        from zkconsumer.errors import ZkConsumerError

        if isinstance(exc, ZkConsumerError):
            print(f"chaos refused: {exc}", file=sys.stderr)
            return 2
        raise
    if args.report:
        args.report.write_text(json.dumps(report.as_json(), indent=2) + "\n")
    print(verdict(report))
    return 0 if report.held else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
