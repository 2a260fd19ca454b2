"""The chaos run: ten member processes of one group on two topics, a steady producer, seeded random faults, and the
group's invariants checked while it runs and at the end.

    python benchmarks/chaos.py --duration-s 180 --seed 1 --report chaos.json

Faults (``--faults``, default every one that can run here): ``kill`` (SIGKILL, restarted after 1-3 s), ``pause``
(SIGSTOP for longer than the session timeout, then SIGCONT: a GC pause; the member must stop delivering what it no
longer owns and rejoin), ``expire`` (a second client on the member's session id and password, closed: the session
is gone), ``zk-short`` / ``zk-long`` (ZooKeeper killed and restarted on the same port and data directory, within and
beyond the session timeout), ``rolling`` (every member restarted cleanly, one after another), ``leave`` (a member
leaves cleanly, and comes back later), ``broker`` (the broker killed and restarted on the same port after 1-4 s; it
needs storage that outlives it: the Tansu build here has memory and S3 storage only, so ``--broker-storage s3``
runs an S3 server (moto's, ``python -m moto.server``, from whichever interpreter has it) beside it, and the broker
fault joins the default faults; with memory storage, the default, asking for it is refused before anything starts).
Tansu on that S3 server reads at 50-100 messages a second on a busy two-core machine (an object per batch, listed
and read per fetch): give such a run ``--rate 30``, or the members trail the producer and the drain ends first.

Invariants: no two members delivering one partition beyond ``--overlap-limit-ms`` (the window in which an old owner
is still stopping; its maximum is reported as ``max_overlap_ms``), and no member delivering a partition later than
that after its own ownership ended, nor, woken from a pause beyond its session, later than that after its SIGCONT
(``stale_after_pause`` lists what it handed out meanwhile, ``max_stale_after_pause_ms`` the longest); committed
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

Each member is this file run as ``chaos.py member ...``: it writes ``time topic partition offset value`` per message
delivered (flushed at once, so a SIGKILL loses nothing written), its events, and its session id and password, for
``expire``.
Loopback only; bounded in time (the duration plus a drain of at most ``--drain-s``) and in count (ten members).
"""

from __future__ import annotations

import argparse
import faulthandler
import itertools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

ALL_FAULTS = ("kill", "pause", "expire", "zk-short", "zk-long", "rolling", "leave", "broker")
WITHOUT_BROKER = tuple(f for f in ALL_FAULTS if f != "broker")
S3_BUCKET = "tansu"
# Enough partitions for every member to own one (the range assignor gives chaos-a's 12 to 12 of its 13 threads): with
# 6 and 4, half the members owned nothing, and a fault that hit one of them tested nothing.
TOPICS = {"chaos-a": 12, "chaos-b": 8}
STREAMS = ["chaos-a:1,chaos-b:1", "chaos-a:2,chaos-b:1", "chaos-a:1,chaos-b:2"]
GROUP = "chaos"
FORMING_S = 5.0  # the group forms before the first fault
BURST_GAP_S = 2.0  # re-deliveries of one partition by one member this close together are one burst
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

    # Every event at info, as JSON lines: the run reads each member's fetcher starts and stops from them.
    events = open(args.dir / f"{args.consumer_id}.events", "a", buffering=1)  # noqa: SIM115 - the process's life
    configure_logging(json=True, level="info", stream=events, force=True)
    stop = threading.Event()
    # SIGTERM is taken by sigwait below, not by a handler: a handler calling stop.set() can deadlock on the
    # event's lock when the signal lands while the main thread holds it (in the rolling restarts of one run a
    # member never began its shutdown). Blocked here, before any thread starts, so every thread inherits it.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    faulthandler.register(signal.SIGUSR1, all_threads=True)  # the run asks for stacks before killing a hung member
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
        signal.sigwait({signal.SIGTERM})
        stop.set()
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
    # re-deliveries of one partition by one member within 2 s of each other: where each came from
    duplicate_bursts: list[dict] = field(default_factory=list)
    faults: list[dict] = field(default_factory=list)
    broker_storage: str = "memory"
    max_overlap_ms: float = 0.0  # from the deliveries: an old owner still delivering after the new one began
    max_overlap_at: str = ""
    max_event_overlap_ms: float = 0.0  # from the events: the new owner's claim to the old owner's fetcher stop
    max_event_overlap_at: str = ""
    handovers: int = 0  # a partition's tenure followed by another member's
    max_late_ms: float = 0.0  # a delivery after the end of its member's own tenure of the partition
    deliveries_outside_tenure: int = 0
    # a member woken from a pause, delivering partitions others claimed meanwhile (see stale_wakes)
    stale_after_pause: list[dict] = field(default_factory=list)
    max_stale_after_pause_ms: float = 0.0
    max_unowned_s: float = 0.0
    max_unfetched_s: float = 0.0  # longest span a partition had no member fetching it (ZooKeeper down excepted)
    offsets_checked: int = 0
    watch_errors: int = 0
    last_watch_error: str = ""
    violations: list[str] = field(default_factory=list)
    started_at: float = 0.0  # wall clock of time 0 of the faults' times
    load_avg: dict[str, float] = field(default_factory=dict)  # 1-minute load average: start, max, end
    workdir: str = ""  # kept when an invariant broke (deliveries, events, logs), removed otherwise
    wall_s: float = 0.0


# --- ownership read from the members' events, and the overlaps measured against it (pure) ---------------------


@dataclass(frozen=True)
class Delivery:
    at: float  # wall clock, seconds
    topic: str
    partition: int
    offset: int
    value: str
    member: str


@dataclass(frozen=True)
class Tenure:
    """A member owning a partition, from its claim to the first event (or death) that stopped its fetchers."""

    member: str
    topic: str
    partition: int
    start: float
    end: float
    ended_by: str


@dataclass(frozen=True)
class Overlap:
    topic: str
    partition: int
    old: str
    new: str
    claimed_at: float  # the new owner's claim
    event_ms: float  # the old tenure's end after the new claim
    delivery_ms: float  # the old owner's last delivery in the new tenure after the new owner's first


TENURE_ENDS = ("rebalance.stop_fetchers", "rebalance.attempt_failed", "session.expired", "consumer.shutdown")


def tenures(member: str, events: list[dict], deaths: list[float], end_of_run: float) -> list[Tenure]:
    """One member's tenures from its events, in order. A claim opens a tenure for each partition it took (claimed
    or already ours) unless it met conflicts; the tenure ends at the next fetcher stop, failed attempt, session
    expiry or shutdown, else at the death of its process (``deaths``: the times its processes were killed or
    exited), else at the end of the run."""
    out: list[Tenure] = []
    open_since: dict[tuple[str, int], float] = {}
    deaths = sorted(deaths)

    def close(at: float, why: str) -> None:
        for (topic, partition), start in open_since.items():
            out.append(Tenure(member, topic, partition, start, max(at, start), why))
        open_since.clear()

    for event in events:
        at, name = event["at"], event.get("event")
        if open_since and deaths and deaths[0] < at:  # the previous process died with partitions open
            close(deaths[0], "death")
        while deaths and deaths[0] < at:
            deaths.pop(0)
        if name == "rebalance.claim" and not event.get("conflicts") and "error" not in event:
            for row in event.get("claimed", []) + event.get("already_ours", []):
                open_since.setdefault((row["topic"], int(row["partition"])), at)
        elif name in TENURE_ENDS:
            close(at, name)
    if open_since:
        close(deaths[0] if deaths else end_of_run, "death" if deaths else "end of run")
    return out


@dataclass(frozen=True)
class Pause:
    member: str
    stopped: float  # SIGSTOP, wall clock
    resumed: float  # SIGCONT


@dataclass(frozen=True)
class StaleWake:
    """Deliveries of a member woken from a pause, of partitions another member had claimed meanwhile."""

    member: str
    resumed: float
    deliveries: int
    partitions: tuple[str, ...]
    last_ms: float  # the last of them, after SIGCONT


def overlaps(all_tenures: list[Tenure], deliveries: list[Delivery], pauses: Sequence[Pause] = ()) -> list[Overlap]:
    """Every new tenure that began while another member's tenure of the partition had not ended, with how long
    that lasted (events) and how long both delivered it (deliveries). Both deliver only while both are live: an
    old owner stopped (SIGSTOP) when the new one began counts from its SIGCONT (what it delivers then is
    :func:`stale_wakes`' to report)."""
    by_member_partition: dict[tuple[str, str, int], list[float]] = defaultdict(list)
    for d in deliveries:
        by_member_partition[(d.member, d.topic, d.partition)].append(d.at)
    by_partition: dict[tuple[str, int], list[Tenure]] = defaultdict(list)
    for t in all_tenures:
        by_partition[(t.topic, t.partition)].append(t)
    out = []
    for (topic, partition), ts in by_partition.items():
        ts.sort(key=lambda t: t.start)
        for i, new in enumerate(ts):
            for old in ts[:i]:
                if old.member == new.member or old.end <= new.start:
                    continue
                window_end = min(old.end, new.end)
                olds = [a for a in by_member_partition[(old.member, topic, partition)] if new.start <= a <= old.end]
                news = [a for a in by_member_partition[(new.member, topic, partition)] if new.start <= a <= window_end]
                both = 0.0
                if olds and news:
                    since = min(news)
                    for pause in pauses:
                        if pause.member == old.member and pause.stopped <= since <= pause.resumed:
                            since = pause.resumed
                    both = max(0.0, max(olds) - since)
                out.append(Overlap(topic, partition, old.member, new.member, new.start,
                                   (old.end - new.start) * 1000, both * 1000))
    return out


def stale_wakes(all_tenures: list[Tenure], deliveries: list[Delivery], pauses: Sequence[Pause]) -> list[StaleWake]:
    """For each pause: what the member delivered after SIGCONT, of partitions it held across the pause, that another
    member claimed while it was stopped. A member cannot notice a pause before it wakes; what it may not do is hand
    out, on waking, what it fetched before it, as the owner it no longer is."""
    out = []
    for pause in pauses:
        held = [t for t in all_tenures
                if t.member == pause.member and t.start < pause.stopped and t.end > pause.resumed]
        taken = {(t.topic, t.partition) for t in held for other in all_tenures
                 if other.member != pause.member and (other.topic, other.partition) == (t.topic, t.partition)
                 and pause.stopped <= other.start <= t.end}
        stale = [d for d in deliveries if d.member == pause.member and (d.topic, d.partition) in taken
                 and any(t.topic == d.topic and t.partition == d.partition and pause.resumed <= d.at <= t.end
                         for t in held)]
        if stale:
            out.append(StaleWake(pause.member, pause.resumed, len(stale),
                                 tuple(sorted({f"{d.topic}/{d.partition}" for d in stale})),
                                 (max(d.at for d in stale) - pause.resumed) * 1000))
    return out


@dataclass(frozen=True)
class FaultSpan:
    kind: str
    start: float  # wall clock
    end: float


def blame(faults: Sequence[FaultSpan], first: float, again: float) -> FaultSpan | None:
    """The fault a message delivered at ``first`` and again at ``again`` is charged to: the earliest under way
    between a second before the first delivery (what was consumed but not yet committed, auto-commit being 0.5 s)
    and the repeat; else the latest before the repeat; None when no fault came before it (a violation). The latest
    fault before the repeat alone blamed a rolling restart for what a kill 4 s earlier left uncommitted."""
    under_way = [f for f in faults if f.start <= again and f.end >= first - 1.0]
    if under_way:
        return min(under_way, key=lambda f: f.start)
    before = [f for f in faults if f.start <= again]
    return max(before, key=lambda f: f.start) if before else None


def unfetched_spans(all_tenures: list[Tenure], partitions: Sequence[tuple[str, int]], start: float, end: float,
                    excused: Sequence[FaultSpan]) -> list[tuple[str, int, float, float, float]]:
    """Spans of [start, end] in which no member had a tenure of a partition: (topic, partition, from, to, seconds
    not excused), where ``excused`` spans (ZooKeeper down: nobody can claim) do not count. The owner znodes alone
    cannot tell: a znode left by a failed attempt names a member that does not fetch the partition."""
    out = []
    for topic, partition in partitions:
        spans = sorted((t.start, t.end) for t in all_tenures if (t.topic, t.partition) == (topic, partition))
        cursor = start
        gaps = []
        for s, e in spans:
            if s > cursor:
                gaps.append((cursor, min(s, end)))
            cursor = max(cursor, e)
        if cursor < end:
            gaps.append((cursor, end))
        for a, b in gaps:
            if b <= a:
                continue
            excused_s = sum(max(0.0, min(b, f.end) - max(a, f.start)) for f in excused)
            out.append((topic, partition, a, b, (b - a) - excused_s))
    return out


def handovers(all_tenures: list[Tenure]) -> int:
    by_partition: dict[tuple[str, int], list[Tenure]] = defaultdict(list)
    for t in all_tenures:
        by_partition[(t.topic, t.partition)].append(t)
    count = 0
    for ts in by_partition.values():
        ordered = sorted(ts, key=lambda t: t.start)
        count += sum(1 for a, b in itertools.pairwise(ordered) if a.member != b.member)
    return count


def late_deliveries(all_tenures: list[Tenure], deliveries: list[Delivery]) -> list[tuple[Delivery, float]]:
    """Deliveries outside every tenure of their member on their partition, each with how late it came after the
    end of the member's last tenure before it (infinite when there was none)."""
    by_key: dict[tuple[str, str, int], list[Tenure]] = defaultdict(list)
    for t in all_tenures:
        by_key[(t.member, t.topic, t.partition)].append(t)
    out = []
    for d in deliveries:
        ts = by_key[(d.member, d.topic, d.partition)]
        if any(t.start <= d.at <= t.end for t in ts):
            continue
        before = [t.end for t in ts if t.end < d.at]
        out.append((d, (d.at - max(before)) * 1000 if before else float("inf")))
    return out


class Refused(Exception):
    pass


def moto_python() -> str | None:
    """An interpreter that can run moto's S3 server: this one, else the ``python3`` on the PATH."""
    import importlib.util
    import shutil

    if importlib.util.find_spec("moto") is not None and importlib.util.find_spec("flask") is not None:
        return sys.executable
    other = shutil.which("python3")
    if not other:
        return None
    # Its own sys.executable, not a shim's path (pyenv): the server is stopped by the command line it runs under.
    found = subprocess.run([other, "-c", "import moto.server, sys; print(sys.executable)"], capture_output=True,
                           text=True, timeout=60)
    return found.stdout.strip() or None if found.returncode == 0 else None


def local_s3_class():
    """moto's S3 server as a LocalServer (imported late: the member processes never need it)."""
    import urllib.request

    from zkconsumer.embedded.process import LocalServer

    class LocalS3(LocalServer):
        what = "S3 server"

        def __init__(self, workdir: Path, python: str) -> None:
            super().__init__(workdir)
            self.python = python

        def argv(self) -> list[str]:
            return [self.python, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)]

        def ready(self) -> bool:
            try:
                with urllib.request.urlopen(f"http://{self.address}/", timeout=1):
                    return True
            except OSError:
                return False

        def create_bucket(self, name: str) -> None:
            urllib.request.urlopen(urllib.request.Request(f"http://{self.address}/{name}", method="PUT"), timeout=10)

    return LocalS3


class Chaos:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.rng = random.Random(args.seed)
        self.s3_python = moto_python() if args.broker_storage == "s3" else None
        self.storage = args.broker_storage
        default = ALL_FAULTS if self.storage == "s3" else WITHOUT_BROKER
        self.faults_allowed = tuple(args.faults.split(",")) if args.faults else default
        self.report = Report(args.seed, args.duration_s, args.members, args.session_timeout_ms,
                             broker_storage=self.storage)
        self.deaths: dict[str, list[float]] = defaultdict(list)  # wall times a member's process died
        self.pauses: list[Pause] = []
        self.leaving_at = 0.0
        self.workdir = Path()  # made by run(), once the checks passed: a refusal leaves nothing behind
        self.members: dict[str, subprocess.Popen] = {}
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
        if self.args.broker_storage == "s3" and not self.s3_python:
            raise Refused("--broker-storage s3 needs moto's S3 server (pip install 'moto[server]'), "
                          "importable here or by the python3 on the PATH")
        if "broker" in self.faults_allowed and self.storage != "s3":
            raise Refused("fault 'broker' needs a broker with persistent storage (--broker-storage s3, with moto's "
                          "S3 server installed): the Tansu here has memory and S3 storage only, and a restart with "
                          "memory storage would lose every message")
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
        storage = "memory://tansu/"
        if self.storage == "s3":
            assert self.s3_python is not None
            self.s3 = local_s3_class()(self.workdir / "s3", self.s3_python)
            self.s3.start()
            self.s3.create_bucket(S3_BUCKET)
            # Tansu's S3 client reads these from the environment it inherits (moto checks no signature).
            os.environ.update(AWS_ENDPOINT=f"http://{self.s3.address}", AWS_ALLOW_HTTP="true",
                              AWS_ACCESS_KEY_ID="chaos", AWS_SECRET_ACCESS_KEY="chaos", AWS_DEFAULT_REGION="us-east-1")
            storage = f"s3://{S3_BUCKET}/"
        self.broker = LocalTansu(self.workdir / "broker", storage=storage)
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
            self.deaths[member].append(time.time())
            time.sleep(self.rng.uniform(1, 3))
            self.start_member(member)
        elif kind == "pause" and member:
            self.paused.add(member)
            self.members[member].send_signal(signal.SIGSTOP)
            stopped = time.time()
            time.sleep(session_s + self.rng.uniform(2, 4))
            resumed = time.time()  # just before: a delivery stamped after it came after the SIGCONT
            self.members[member].send_signal(signal.SIGCONT)
            self.pauses.append(Pause(member, stopped, resumed))
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
                self._terminate(m)
                self.start_member(m)
                time.sleep(0.3)
        elif kind == "broker":
            fault.member = None
            self.broker.record and self.broker.record.stop(0.1)  # SIGTERM then SIGKILL, as for ZooKeeper
            self.broker.record = None
            time.sleep(self.rng.uniform(1, 4))
            for _ in range(50):
                try:
                    self.broker.start()
                    break
                except Exception:
                    time.sleep(0.2)
        elif kind == "leave" and member:
            self._terminate(member)
            time.sleep(self.rng.uniform(2, 5))
            self.start_member(member)
        fault.duration_s = round(time.monotonic() - started, 2)
        return fault

    def _terminate(self, member: str) -> None:
        """A clean leave: SIGTERM, and 30 s to go. One that hangs is a violation; its threads' stacks go to its log
        (SIGUSR1, faulthandler) before it is killed."""
        self.members[member].terminate()
        self._await_leave(member)

    def _await_leave(self, member: str) -> None:
        """30 s for a member told to leave; one that hangs is a violation, its stacks dumped before it is killed."""
        proc = self.members[member]
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGUSR1)
            time.sleep(1)
            proc.kill()
            proc.wait()
            self.violation(f"{member} did not leave within 30 s of SIGTERM (stacks in {member}.log)")
        self.deaths[member].append(time.time())

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
        self.workdir = Path(tempfile.mkdtemp(prefix="zkconsumer-chaos-"))
        self.report.load_avg["start"] = os.getloadavg()[0]
        try:
            self.start_servers()
            # Fault times count from here; wall0 must be the same instant, or a duplicate is attributed to a fault
            # that came after it (the servers' start-up, seconds, lay between the two before).
            self.t0, self.wall0 = time.monotonic(), time.time()
            self.report.started_at = self.wall0
            for i in range(self.args.members):
                self.start_member(f"m{i}")
            loops = [threading.Thread(target=self.produce, daemon=True),
                     threading.Thread(target=self.watch, daemon=True)]
            for t in loops:
                t.start()
            time.sleep(min(FORMING_S, self.args.duration_s / 4))  # the group forms
            while self.now() < self.args.duration_s:
                kind = self.rng.choice(self.faults_allowed)
                self.report.faults.append(asdict(self.fault(kind)))
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
        if self.report.violations or self.args.keep_workdir:
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
        for member in self.members:
            self._await_leave(member)
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
        for server in ("broker", "s3", "zk_server"):
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
        seen: dict[str, tuple[float, str]] = {}
        faults = [FaultSpan(f["kind"], self.wall0 + f["time_s"], self.wall0 + f["time_s"] + f["duration_s"])
                  for f in report.faults]
        by_fault: dict[str, int] = defaultdict(int)
        bursts: dict[tuple[str, str, str], dict] = {}
        for t, topic, p, off, value, member in rows:
            if value in seen:
                report.duplicates += 1
                cause = blame(faults, seen[value][0], t)
                if cause is not None:
                    by_fault[cause.kind] += 1
                else:
                    self.violation(f"{value} delivered again at {t - self.wall0:.1f}s by {member}, before any fault")
                key = (topic, p, member)
                burst = bursts.get(key)
                if burst is None or t - burst["last"] > BURST_GAP_S:
                    burst = bursts[key] = {
                        "at_s": round(t - self.wall0, 2), "partition": f"{topic}/{p}", "member": member,
                        "first_by": seen[value][1], "first_at_s": round(seen[value][0] - self.wall0, 2),
                        "from_offset": off, "count": 0, "last": t,
                        "fault": f"{cause.kind} at {cause.start - self.wall0:.1f}s" if cause else None}
                    report.duplicate_bursts.append(burst)
                burst["count"] += 1
                burst["last"] = t
            else:
                seen[value] = (t, member)
        for burst in report.duplicate_bursts:
            burst.pop("last")
        report.duplicates_by_fault = dict(by_fault)
        report.delivered_distinct = len(seen)
        lost = sorted(self.produced - set(seen), key=lambda v: int(v[1:]))
        report.lost = len(lost)
        if lost:
            self.violation(f"{len(lost)} produced messages never delivered (first: {lost[:5]})")
        self._ownership([Delivery(t, topic, int(p), off, value, member)
                         for t, topic, p, off, value, member in rows])

    def _events(self, member: str) -> list[dict]:
        from datetime import datetime

        out = []
        path = self.workdir / f"{member}.events"
        for line in (path.read_text().splitlines() if path.exists() else []):
            try:
                event = json.loads(line)
                event["at"] = datetime.fromisoformat(event["timestamp"]).timestamp()
            except (ValueError, KeyError):
                continue  # a line cut by SIGKILL
            out.append(event)
        return out

    def _ownership(self, deliveries: list[Delivery]) -> None:
        """Both overlap measures and late deliveries, against the tenures the members' events describe."""
        report, limit = self.report, self.args.overlap_limit_ms
        end_of_run = time.time()
        all_tenures = [t for m in self.members for t in tenures(m, self._events(m), self.deaths[m], end_of_run)]
        report.handovers = handovers(all_tenures)
        for wake in stale_wakes(all_tenures, deliveries, self.pauses):
            report.stale_after_pause.append({
                "member": wake.member, "resumed_at_s": round(wake.resumed - self.wall0, 2),
                "deliveries": wake.deliveries, "partitions": list(wake.partitions),
                "last_ms_after_resume": round(wake.last_ms, 1)})
            report.max_stale_after_pause_ms = round(max(report.max_stale_after_pause_ms, wake.last_ms), 1)
            # The rule for an old owner: it may deliver only within the short window in which it is still
            # stopping. A member woken from a pause is such an owner from its SIGCONT: it cannot notice the expiry
            # before it runs again. So its stale deliveries get the same limit as any overlap; their count and
            # their window are reported. (Handing out nothing at all after waking would need a session lease
            # checked per message in the data path: not built.)
            if wake.last_ms > limit:
                self.violation(f"{wake.member}, woken from a pause at {wake.resumed - self.wall0:.1f}s, delivered "
                               f"{wake.deliveries} messages of {', '.join(wake.partitions)} (claimed by another "
                               f"member meanwhile) for {wake.last_ms:.0f} ms before it noticed its session was gone")
        for o in overlaps(all_tenures, deliveries, self.pauses):
            where = f"{o.topic}/{o.partition} {o.old}->{o.new} claimed at {o.claimed_at - self.wall0:.1f}s"
            if o.event_ms > report.max_event_overlap_ms:
                report.max_event_overlap_ms, report.max_event_overlap_at = round(o.event_ms, 1), where
            if o.delivery_ms > report.max_overlap_ms:
                report.max_overlap_ms, report.max_overlap_at = round(o.delivery_ms, 1), where
            if o.delivery_ms > limit:
                self.violation(f"{o.topic}/{o.partition}: {o.old} still delivered it {o.delivery_ms:.0f} ms after "
                               f"{o.new} began, from {o.claimed_at - self.wall0:.1f}s")
        zk_down = [FaultSpan(f["kind"], self.wall0 + f["time_s"], self.wall0 + f["time_s"] + f["duration_s"])
                   for f in report.faults if f["kind"] in ("zk-short", "zk-long")]
        partitions = [(topic, p) for topic, n in TOPICS.items() for p in range(n)]
        # From when the group has formed to when the members are told to leave.
        for topic, p, a, b, counted in unfetched_spans(all_tenures, partitions, self.wall0 + FORMING_S,
                                                       self.leaving_at, zk_down):
            report.max_unfetched_s = round(max(report.max_unfetched_s, counted), 1)
            if counted > self.args.unowned_limit_s:
                self.violation(f"{topic}/{p} fetched by no member from {a - self.wall0:.1f}s to "
                               f"{b - self.wall0:.1f}s ({counted:.0f} s with ZooKeeper up)")
        late = late_deliveries(all_tenures, deliveries)
        report.deliveries_outside_tenure = len(late)
        for d, late_ms in late:
            report.max_late_ms = round(max(report.max_late_ms, late_ms), 1)
            if late_ms > limit:
                self.violation(f"{d.member} delivered {d.topic}/{d.partition} offset {d.offset} at "
                               f"{d.at - self.wall0:.1f}s, {late_ms:.0f} ms after it last owned it")


def verdict(report: Report) -> str:
    held = not report.violations
    head = "HELD" if held else f"BROKEN ({len(report.violations)} violations; first: {report.violations[0]})"
    return (f"chaos {head}: {report.produced} produced, {report.delivered_distinct} delivered, {report.lost} lost, "
            f"{report.duplicates} duplicates, {len(report.faults)} faults in {report.duration_s:g} s, max overlap "
            f"{report.max_overlap_ms:g} ms (events: {report.max_event_overlap_ms:g} ms), seed {report.seed}, load "
            f"{report.load_avg.get('max', 0):.1f}")


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
    parser.add_argument("--overlap-limit-ms", type=float, default=1500.0)
    parser.add_argument("--unowned-limit-s", type=float, default=20.0)
    parser.add_argument("--drain-s", type=float, default=60.0)
    parser.add_argument("--keep-workdir", action="store_true",
                        help="keep the members' deliveries, events and logs even when every invariant held")
    parser.add_argument("--broker-storage", choices=("memory", "s3"), default="memory",
                        help="the broker's storage: s3 runs moto's S3 server for it, which the broker fault needs "
                        "(slower: give it --rate 30)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["member"]:
        return member_main(argv[1:])
    args = build_parser().parse_args(argv)
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
        args.report.write_text(json.dumps(asdict(report), indent=2) + "\n")
    print(verdict(report))
    return 0 if not report.violations else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
