"""The chaos run: ten member processes of one group on two topics, a steady producer, seeded random faults, and the
group's invariants checked while it runs and at the end.

    python benchmarks/chaos.py --duration-s 180 --seed 1 --report chaos.json

Faults (``--faults``, default every one that can run here): ``kill`` (SIGKILL, restarted after 1-3 s), ``pause``
(SIGSTOP for longer than the session timeout, then SIGCONT: a GC pause; the member must stop delivering what it no
longer owns and rejoin), ``expire`` (a second client on the member's session id and password, closed: the session
is gone), ``zk-short`` / ``zk-long`` (ZooKeeper killed and restarted on the same port and data directory, within and
beyond the session timeout), ``rolling`` (every member restarted cleanly, one after another), ``leave`` (a member
leaves cleanly, and comes back later), ``broker`` (the broker restarted; needs persistent storage, which the Tansu
build here lacks: asking for it without ``--broker-storage`` is refused before anything starts).

Invariants: no two live members delivering one partition beyond ``--overlap-limit-ms`` (the window in which an old
owner is still stopping; its maximum is reported); committed offsets never move backwards; every produced message
delivered at least once; every duplicate delivered after some fault (attributed to the latest one before it); no
partition unowned for longer than ``--unowned-limit-s`` while a registered member owns nothing; at the end no member
process and no znode of the group left. The report (``--report``) is JSON; the last line printed is the verdict;
the exit status is 0 only when every invariant held (1 with the first violation explained, 2 for a refusal).

Each member is this file run as ``chaos.py member ...``: it writes ``time topic partition offset value`` per message
delivered (flushed at once, so a SIGKILL loses nothing written) and its session id and password, for ``expire``.
Loopback only; bounded in time (the duration plus a drain of at most ``--drain-s``) and in count (ten members).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

ALL_FAULTS = ("kill", "pause", "expire", "zk-short", "zk-long", "rolling", "leave", "broker")
RUNNABLE_HERE = tuple(f for f in ALL_FAULTS if f != "broker")
TOPICS = {"chaos-a": 6, "chaos-b": 4}
STREAMS = ["chaos-a:1,chaos-b:1", "chaos-a:2,chaos-b:1", "chaos-a:1,chaos-b:2"]
GROUP = "chaos"
INTERLEAVE_S = 2.0
CHROOT = "/zkconsumer-chaos"


# --- the member process ---------------------------------------------------------------------------------------


def member_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="chaos.py member")
    parser.add_argument("--zookeeper", required=True)
    parser.add_argument("--consumer-id", required=True)
    parser.add_argument("--topics", required=True, help="TOPIC:STREAMS,...")
    parser.add_argument("--session-timeout-ms", type=int, required=True)
    parser.add_argument("--dir", type=Path, required=True)
    args = parser.parse_args(argv)

    from zkconsumer.consumer.consumer_iterator import ConsumerTimeoutException
    from zkconsumer.consumer.zookeeper_consumer_connector import create_connector
    from zkconsumer.log import configure_logging

    configure_logging(json=True, level="warning", force=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    counts = {t: int(n) for t, n in (item.split(":") for item in args.topics.split(","))}
    connector = create_connector({
        "zookeeper.connect": args.zookeeper, "group.id": GROUP, "consumer.id": args.consumer_id,
        "auto.offset.reset": "smallest", "consumer.timeout.ms": 200, "auto.commit.interval.ms": 500,
        "zookeeper.session.timeout.ms": args.session_timeout_ms, "rebalance.backoff.ms": 300,
        "rebalance.backoff.jitter.ms": 300, "rebalance.max.retries": 10, "refresh.leader.backoff.ms": 100,
    })
    out = open(args.dir / f"{args.consumer_id}.deliveries", "a", buffering=1)  # noqa: SIM115 - closed below
    lock = threading.Lock()

    def session_writer() -> None:
        last = None
        while not stop.is_set():
            sid, password = connector.zk.client_id or (0, b"")
            if sid and (sid, password) != last:
                path = args.dir / f"{args.consumer_id}.session"
                path.with_suffix(".tmp").write_text(f"{sid} {password.hex()}")
                path.with_suffix(".tmp").replace(path)
                last = (sid, password)
            stop.wait(0.2)

    def consume(stream) -> None:
        while not stop.is_set():
            try:
                for m in stream:
                    with lock:
                        out.write(f"{time.time():.3f} {m.topic} {m.partition} {m.offset} {m.message.decode()}\n")
                    if stop.is_set():
                        return
            except ConsumerTimeoutException:
                continue

    try:
        streams = connector.create_message_streams(counts)
        threading.Thread(target=session_writer, daemon=True).start()
        threads = [threading.Thread(target=consume, args=(s,), daemon=True) for ss in streams.values() for s in ss]
        for t in threads:
            t.start()
        stop.wait()
        for t in threads:
            t.join(2)
    finally:
        connector.shutdown()
        out.close()
    return 0


# --- the run --------------------------------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str
    time_s: float  # since the start of the run
    member: str | None = None
    duration_s: float = 0.0


@dataclass
class Report:
    seed: int
    duration_s: float
    members: int
    session_timeout_ms: int
    produced: int = 0
    delivered: int = 0
    delivered_distinct: int = 0
    lost: int = 0
    duplicates: int = 0
    duplicates_by_fault: dict[str, int] = field(default_factory=dict)
    faults: list[dict] = field(default_factory=list)
    max_overlap_ms: float = 0.0
    max_unowned_s: float = 0.0
    offsets_checked: int = 0
    watch_errors: int = 0
    last_watch_error: str = ""
    violations: list[str] = field(default_factory=list)
    wall_s: float = 0.0


class Refused(Exception):
    pass


class Chaos:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.faults_allowed = tuple(args.faults.split(",")) if args.faults else RUNNABLE_HERE
        self.report = Report(args.seed, args.duration_s, args.members, args.session_timeout_ms)
        self.workdir = Path(tempfile.mkdtemp(prefix="zkconsumer-chaos-"))
        self.members: dict[str, subprocess.Popen] = {}
        self.paused: set[str] = set()
        self.produced: set[str] = set()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.zk_down = threading.Event()
        self.t0 = time.monotonic()
        self.wall0 = time.time()
        self.committed: dict[str, int] = {}

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
        if "broker" in self.faults_allowed and not self.args.broker_storage:
            raise Refused("fault 'broker' needs a broker with persistent storage (--broker-storage postgres://...): "
                          "the Tansu here has memory storage only, a restart would lose every message")
        from zkconsumer.embedded.broker import tansu_binary
        from zkconsumer.embedded.zookeeper import find_classpath, find_java

        find_java(), find_classpath(), tansu_binary()  # a missing binary is refused before anything starts
        if self.args.members < 2 or self.args.duration_s <= 0:
            raise Refused("--members must be at least 2 and --duration-s positive")

    def start_servers(self) -> None:
        from zkconsumer.bridge.metadata_bridge import MetadataBridge
        from zkconsumer.embedded.broker import LocalTansu
        from zkconsumer.embedded.zookeeper import LocalZooKeeper
        from zkconsumer.kafka.topics import create_topic
        from zkconsumer.zk.client import zookeeper

        self.zk_server = LocalZooKeeper(self.workdir / "zookeeper")
        self.zk_server.start()
        self.broker = LocalTansu(self.workdir / "broker")
        self.broker.start()
        with zookeeper(self.zk_server.connect) as zk:
            zk.ensure_path(CHROOT)
        self.connect = self.zk_server.connect + CHROOT
        for topic, partitions in TOPICS.items():
            create_topic(self.broker.bootstrap, topic, partitions)
        self.bridge = MetadataBridge(self.connect, self.broker.bootstrap, interval_ms=500)
        self.bridge.start()
        self.bridge_stop = threading.Event()
        self.bridge_thread = threading.Thread(target=self.bridge.run, args=(self.bridge_stop,), daemon=True)
        self.bridge_thread.start()

    def start_member(self, member: str) -> None:
        index = int(member[1:])
        argv = [sys.executable, __file__, "member", "--zookeeper", self.connect, "--consumer-id", member,
                "--topics", STREAMS[index % len(STREAMS)], "--session-timeout-ms", str(self.args.session_timeout_ms),
                "--dir", str(self.workdir)]
        log = open(self.workdir / f"{member}.log", "ab")  # noqa: SIM115 - the child keeps it
        self.members[member] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        log.close()

    # -- background loops ----------------------------------------------------------------------------------

    def produce(self) -> None:
        from confluent_kafka import Producer

        producer = Producer({"bootstrap.servers": self.broker.bootstrap, "linger.ms": 5,
                             "message.timeout.ms": 60000, "log_level": 0})

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

        base = f"/consumers/{GROUP}"
        keys = [f"{topic}/{p}" for topic, partitions in TOPICS.items() for p in range(partitions)]
        offset_calls = {k: zk.get_async(f"{base}/offsets/{k}") for k in keys}  # pipelined: one round trip
        owner_calls = {k: zk.get_async(f"{base}/owners/{k}") for k in keys}
        ids = set(children(zk, f"{base}/ids"))
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
        return sorted(m for m, p in self.members.items() if p.poll() is None and m not in self.paused)

    def fault(self, kind: str) -> Fault:
        session_s = self.args.session_timeout_ms / 1000
        member = self.rng.choice(self.live()) if self.live() else None
        fault = Fault(kind, round(self.now(), 2), member)
        started = time.monotonic()
        if kind == "kill" and member:
            self.members[member].send_signal(signal.SIGKILL)
            self.members[member].wait()
            time.sleep(self.rng.uniform(1, 3))
            self.start_member(member)
        elif kind == "pause" and member:
            self.paused.add(member)
            self.members[member].send_signal(signal.SIGSTOP)
            time.sleep(session_s + self.rng.uniform(2, 4))
            self.members[member].send_signal(signal.SIGCONT)
            self.paused.discard(member)
        elif kind == "expire" and member:
            self._expire(member)
        elif kind in ("zk-short", "zk-long"):
            fault.member = None
            down = self.rng.uniform(0.5, session_s * 0.5) if kind == "zk-short" else session_s + self.rng.uniform(1, 3)
            self.zk_down.set()
            self.zk_server.record and self.zk_server.record.stop(0.1)  # SIGTERM then SIGKILL: a crash, near enough
            self.zk_server.record = None
            time.sleep(down)
            for _ in range(50):
                try:
                    self.zk_server.start()
                    break
                except Exception:
                    time.sleep(0.2)
            self.zk_down.clear()
        elif kind == "rolling":
            fault.member = None
            for m in sorted(self.members):
                if self.stop.is_set():
                    break
                self.members[m].terminate()
                self.members[m].wait(30)
                self.start_member(m)
                time.sleep(0.3)
        elif kind == "leave" and member:
            self.members[member].terminate()
            self.members[member].wait(30)
            time.sleep(self.rng.uniform(2, 5))
            self.start_member(member)
        fault.duration_s = round(time.monotonic() - started, 2)
        return fault

    def _expire(self, member: str) -> None:
        from kazoo.client import KazooClient

        try:
            sid, password = (self.workdir / f"{member}.session").read_text().split()
        except (OSError, ValueError):
            return
        other = KazooClient(hosts=self.connect, client_id=(int(sid), bytes.fromhex(password)), timeout=2.0)
        try:
            other.start(5)
        except Exception:
            pass
        finally:
            other.stop()
            other.close()

    # -- the run -------------------------------------------------------------------------------------------

    def run(self) -> Report:
        self.check()
        try:
            self.start_servers()
            self.t0 = time.monotonic()
            for i in range(self.args.members):
                self.start_member(f"m{i}")
            loops = [threading.Thread(target=self.produce, daemon=True),
                     threading.Thread(target=self.watch, daemon=True)]
            for t in loops:
                t.start()
            time.sleep(min(5.0, self.args.duration_s / 4))  # the group forms
            while self.now() < self.args.duration_s:
                kind = self.rng.choice(self.faults_allowed)
                self.report.faults.append(asdict(self.fault(kind)))
                time.sleep(self.rng.uniform(1, self.args.fault_gap_s))
            self.stop.set()
            loops[0].join(40)
            self._drain()
            loops[1].join(5)
            self._leave_all()
        finally:
            self._teardown()
        self._analyse()
        return self.report

    def _drain(self) -> None:
        deadline = time.monotonic() + self.args.drain_s
        while time.monotonic() < deadline:
            if self.produced <= self._delivered_values():
                return
            time.sleep(0.5)

    def _delivered_values(self) -> set[str]:
        return {d[4] for d in self._deliveries()}

    def _deliveries(self) -> list[tuple[float, str, str, int, str, str]]:
        rows = []
        for path in self.workdir.glob("*.deliveries"):
            member = path.stem
            for line in path.read_text().splitlines():
                parts = line.split()
                if len(parts) == 5:
                    rows.append((float(parts[0]), parts[1], parts[2], int(parts[3]), parts[4], member))
        return rows

    def _leave_all(self) -> None:
        for proc in self.members.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.terminate()
        for member, proc in self.members.items():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                self.violation(f"{member} did not leave within 30 s of SIGTERM")
        from zkconsumer.zk.client import zookeeper

        time.sleep(0.5)
        with zookeeper(self.connect) as zk:
            base = f"/consumers/{GROUP}"
            ids = zk.get_children(f"{base}/ids") if zk.exists(f"{base}/ids") else []
            deadline = time.monotonic() + self.args.session_timeout_ms / 1000 + 5
            while ids and time.monotonic() < deadline:  # a SIGKILLed member's last session may still be expiring
                time.sleep(0.5)
                ids = zk.get_children(f"{base}/ids")
            if ids:
                self.violation(f"registrations left behind: {ids}")
            owners = [f"{t}/{p}" for t in (zk.get_children(f"{base}/owners") if zk.exists(f"{base}/owners") else [])
                      for p in zk.get_children(f"{base}/owners/{t}")]
            if owners:
                self.violation(f"owner znodes left behind: {owners}")

    def _teardown(self) -> None:
        for proc in self.members.values():
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if hasattr(self, "bridge"):
            self.bridge_stop.set()
            self.bridge_thread.join(5)
            self.bridge.close()
        if hasattr(self, "zk_server") and self.zk_server.record is not None:
            from zkconsumer.zk.client import zookeeper

            try:
                with zookeeper(self.zk_server.connect) as zk:
                    zk.delete(CHROOT, recursive=True)
            except Exception as exc:
                self.violation(f"could not remove {CHROOT}: {exc}")
        for server in ("broker", "zk_server"):
            if hasattr(self, server):
                getattr(self, server).stop()
        self.report.wall_s = round(time.monotonic() - self.t0, 1)
        alive = [m for m, p in self.members.items() if p.poll() is None]
        if alive:
            self.violation(f"member processes left behind: {alive}")

    def _analyse(self) -> None:
        rows = sorted(self._deliveries())
        report = self.report
        report.produced = len(self.produced)
        report.delivered = len(rows)
        seen: dict[str, float] = {}
        faults = [(self.wall0 + f["time_s"], f["kind"]) for f in report.faults]
        by_fault: dict[str, int] = defaultdict(int)
        for t, _topic, _p, _off, value, member in rows:
            if value in seen:
                report.duplicates += 1
                before = [kind for at, kind in faults if at <= t]
                if before:
                    by_fault[before[-1]] += 1
                else:
                    self.violation(f"{value} delivered again at {t - self.wall0:.1f}s by {member}, before any fault")
            else:
                seen[value] = t
        report.duplicates_by_fault = dict(by_fault)
        report.delivered_distinct = len(seen)
        lost = sorted(self.produced - set(seen), key=lambda v: int(v[1:]))
        report.lost = len(lost)
        if lost:
            self.violation(f"{len(lost)} produced messages never delivered (first: {lost[:5]})")
        # Overlap, read from the deliveries: Y..X..Y on one partition within INTERLEAVE_S means X and Y were both
        # delivering it (a hand-over is X's last delivery before Y's first; nothing of X comes after). The overlap
        # is from X's first delivery inside Y's run to Y's delivery after it.
        per_partition: dict[tuple[str, str], list[tuple[float, str]]] = defaultdict(list)
        for t, topic, p, _off, _value, member in rows:
            per_partition[(topic, p)].append((t, member))
        for (topic, p), events in per_partition.items():
            last_at: dict[str, int] = {}
            for i, (t, member) in enumerate(events):
                j = last_at.get(member)
                if j is not None and j < i - 1 and t - events[j][0] <= INTERLEAVE_S:
                    intruder_at, intruder = events[j + 1]
                    if intruder != member:
                        self._overlap(topic, p, intruder, member, intruder_at, (t - intruder_at) * 1000)
                last_at[member] = i
        report.max_overlap_ms = round(report.max_overlap_ms, 1)

    def _overlap(self, topic: str, p: str, one: str, other: str, t: float, overlap_ms: float) -> None:
        self.report.max_overlap_ms = max(self.report.max_overlap_ms, overlap_ms)
        if overlap_ms > self.args.overlap_limit_ms:
            self.violation(f"{topic}/{p}: {one} and {other} both delivered it for {overlap_ms:.0f} ms from "
                           f"{t - self.wall0:.1f}s")


def verdict(report: Report) -> str:
    held = not report.violations
    head = "HELD" if held else f"BROKEN ({len(report.violations)} violations; first: {report.violations[0]})"
    return (f"chaos {head}: {report.produced} produced, {report.delivered_distinct} delivered, {report.lost} lost, "
            f"{report.duplicates} duplicates, {len(report.faults)} faults in {report.duration_s:g} s, max overlap "
            f"{report.max_overlap_ms:g} ms, seed {report.seed}")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="benchmarks/chaos.py", description=__doc__.splitlines()[0])
    parser.add_argument("--duration-s", type=float, default=180.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--report", type=Path)
    parser.add_argument("--members", type=int, default=10)
    parser.add_argument("--rate", type=float, default=100.0, help="messages a second (default 100)")
    parser.add_argument("--session-timeout-ms", type=int, default=4000)
    parser.add_argument("--faults", default="", help=f"comma separated, of {', '.join(ALL_FAULTS)} "
                        f"(default: {', '.join(RUNNABLE_HERE)})")
    parser.add_argument("--fault-gap-s", type=float, default=6.0, help="at most this long between faults")
    parser.add_argument("--overlap-limit-ms", type=float, default=1500.0)
    parser.add_argument("--unowned-limit-s", type=float, default=20.0)
    parser.add_argument("--drain-s", type=float, default=60.0)
    parser.add_argument("--broker-storage", default="", help="a persistent Tansu storage URL (postgres://...)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["member"]:
        return member_main(argv[1:])
    args = build_parser().parse_args(argv)
    import logging

    logging.basicConfig(level=logging.ERROR)  # kazoo's reconnection lines while ZooKeeper is down are expected
    chaos = Chaos(args)
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
        args.report.write_text(json.dumps(asdict(report), indent=2) + "\n")
    print(verdict(report))
    return 0 if not report.violations else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
