"""Twenty members joining a 10,000-partition group as a user runs them, beside ``large_group_join.py``'s shape, on the
same servers in one run.

Run: ``.venv/bin/python benchmarks/user_group_join.py [--before DIR] [--repeat 3] [--stagger-ms 100] [--events DIR]``
(``--shapes``, ``--partitions``, ``--members``, ``--front``, ``--trace DIR``, ``--profile DIR``: see ``--help``).
Every round starts ZooKeeper, the broker (Tansu, no front unless ``--front``: the consumers fetch from the broker
itself) and the metadata bridge with the project's launchers (``bench_support.servers``), and makes two topics of
``--partitions`` partitions: one written to ZooKeeper only (no leader anywhere, ``large_group_join.py``'s), one created
on the broker too (``memory.create_topic_both_ways``), whose partitions have a leader, so that the members' fetchers
start. Then, on those servers and in this order:

* ``fresh``: the user's shape, first on the servers just started (as a user who starts the embedded environment and
  then the application): twenty threads in one new Python process, each ``create_connector`` (its ZooKeeper session)
  then ``create_message_streams`` on the topic with leaders, the threads started one after the other (``--stagger-ms``
  apart: members that come up one after another), ``rebalance.backoff.ms`` 500, every other setting Kafka's default,
  and no ``consumer.id`` (Kafka's host-time-uuid ids);
* ``peer``: ``large_group_join.py``'s ``19 into 1`` (``rebalance.join``, by that script's child): one member owns the
  ZooKeeper-only topic, nineteen more, their sessions set up before the clock starts, call ``create_message_streams``
  at once with ``rebalance.backoff.ms`` 200; the clock stops when the process's own connectors hold their range
  shares and ZooKeeper has one owner znode per partition;
* ``warm``: the user's shape again, on servers that have served the two joins before.

With ``--before`` each round does that for both versions (each on servers of its own, ``before`` first in odd rounds),
every join in a fresh process whose ``PYTHONPATH`` is the version's checkout. The user's shares are watched from
another process (``--watch``), with a ZooKeeper session of its own: a children watch on the topic's owners; whenever
all the owner znodes exist it reads those of the first and last partition of every member's range share (string
order of the registered members' threads: the range assignor's), and when every call has returned and the shares
stayed so ``--settle`` seconds (2), every owner znode once, unchanged since. Printed: when the last
``create_message_streams`` returned, and when the shares were held: when the last of the owner znodes was made (the
greatest ``ctime``, ZooKeeper's clock on this machine), which no lag of the watcher's looks can move.

CPU, sampled from ``/proc`` every 100 ms, over the join until the shares were held: the members' process (all its
threads) and, as ``servers``, ZooKeeper and the broker. ZooKeeper's requests (the server's ``zk_packets_received``),
and its round trip as the watcher measured it (an ``exists`` every 100 ms from outside the members' process). The
members' events are counted by kind (rebalances, attempts, ownership conflicts, backoffs, fetcher starts, session
set-up): a structlog processor keeps the time and a few small fields of some and drops the event, at info level, as an
application that keeps info events would; ``--events DIR`` writes those of each user join as JSON lines (with the
watcher's looks and round trips), ``--trace DIR`` every event rendered as ``--log-json`` writes it, for ``zkconsumer
trace show`` (rendering costs the members' CPU: such a run's figures are not comparable).

Speed is read as ratios in one run: user / peer of the same version, and after / before of the same shape. The load
average is printed with every join. This is a benchmark, not a test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from large_group_join import _commit, load

HERE = Path(__file__).resolve().parent
SHAPES = ("fresh", "peer", "warm")
#: events whose time and a few fields the user join keeps (every other event is only counted)
TIMED = {"consumer.connected", "consumer.registered", "rebalance.started", "rebalance.attempt_failed",
         "rebalance.completed", "rebalance.failed", "rebalance.claim", "rebalance.release", "rebalance.assign",
         "rebalance.fetch_offsets", "rebalance.start_fetchers", "rebalance.triggered",
         "fetcher_manager.connections_started", "leader_finder.leaders_found", "fetcher.started",
         "offsets.committed", "rebalance.stop_fetchers", "rebalance.commit_offsets", "rebalance.read_cluster",
         "rebalance.build_registry"}
#: small fields worth keeping of those events (lists of partitions are kept as their length)
KEPT = ("cause", "attempt", "attempts", "reason", "backoff_ms", "duration_ms", "rebalance_id", "batches", "reason",
        "store", "members")


# --- the members' process (user shape) ----------------------------------------------------------------------------

class EventRecorder:
    """A structlog processor: every event counted by name, the :data:`TIMED` ones kept with the monotonic clock and
    their small fields; the event is then dropped (nothing is rendered)."""

    def __init__(self, drop: bool = True) -> None:
        self.counts: Counter[str] = Counter()
        self.timed: list[dict] = []
        self.drop = drop  # False: the event goes on to the processors after this one (--trace)
        self._lock = threading.Lock()

    def __call__(self, _logger, method: str, event: dict) -> dict:
        import structlog

        name = event.get("event")
        at = time.monotonic()
        with self._lock:
            self.counts[name] += 1
            if name in TIMED:
                kept = {"t": at, "event": name, "level": method, "consumer_id": event.get("consumer_id")}
                for key in KEPT:
                    if key in event:
                        kept[key] = event[key]
                for key in ("claimed", "conflicts", "released", "partitions", "offsets", "already_ours"):
                    value = event.get(key)
                    if isinstance(value, list | dict):
                        kept[key] = len(value)
                self.timed.append(kept)
        if self.drop:
            raise structlog.DropEvent
        return event


def user_child(args: argparse.Namespace) -> None:
    """Twenty threads, each ``create_connector`` then ``create_message_streams``; one JSON line when every call
    returned, then, at a line on stdin, everyone shut down and a last JSON line with the events."""
    import structlog

    from zkconsumer import ConsumerConfig, create_connector

    if args.trace_file:  # every event rendered as JSON lines, as --log-json writes them, for zkconsumer trace
        from zkconsumer.log import configure_logging

        configure_logging(json=True, level="info", stream=open(os.devnull, "w"), file=Path(args.trace_file))  # noqa: SIM115
        recorder = EventRecorder(drop=False)
        structlog.configure(processors=[recorder, *structlog.get_config()["processors"]])
    else:
        recorder = EventRecorder()
        structlog.configure(processors=[recorder], wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
    props = {"zookeeper.connect": args.connect, "group.id": args.group, "rebalance.backoff.ms": 500}
    connectors: list = [None] * args.members
    created: list[float | None] = [None] * args.members
    returned: list[float | None] = [None] * args.members
    errors: list[str] = []

    def member(n: int) -> None:
        try:
            connector = connectors[n] = create_connector(ConsumerConfig(props))
            created[n] = time.monotonic()
            connector.create_message_streams({args.topic: 1})
            returned[n] = time.monotonic()
        except Exception as exc:  # noqa: BLE001 - reported, and the run is shown as failed
            errors.append(f"{type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=member, args=(n,), name=f"member-{n:02d}") for n in range(args.members)]
    started, started_wall = time.monotonic(), time.time()
    for n, thread in enumerate(threads):
        if args.stagger_ms:
            time.sleep(max(0.0, started + n * args.stagger_ms / 1000 - time.monotonic()))
        thread.start()
    for thread in threads:
        thread.join(args.max_seconds)
    print(json.dumps({"started": started, "started_wall": started_wall, "created": created, "returned": returned,
                      "errors": errors}), flush=True)
    sys.stdin.readline()  # the parent has seen the shares held (or given up)
    stoppers = [threading.Thread(target=c.shutdown) for c in connectors if c is not None]
    for thread in stoppers:
        thread.start()
    for thread in stoppers:
        thread.join(60)
    print(json.dumps({"counts": recorder.counts, "events": recorder.timed}), flush=True)


# --- the watching process ----------------------------------------------------------------------------------------

def watch_child(args: argparse.Namespace) -> None:
    """Watch ``/consumers/<group>/owners/<topic>`` from a ZooKeeper session of this process: a line ``ready``, then a
    JSON line each time the shares start or stop being held; at a line on stdin, a last JSON line with every look."""
    from kazoo.exceptions import NoNodeError

    from zkconsumer.zk import paths
    from zkconsumer.zk.client import close_client, open_client
    from zkconsumer.zk.reads import pipelined_get

    zk = open_client(args.connect)
    dirs = paths.GroupTopicDirs(args.group, args.topic)
    ids_dir = paths.GroupDirs(args.group).registry_dir
    changed = threading.Event()
    stop = threading.Event()
    looks: list[dict] = []
    notified: list[float] = []  # when each watch fired

    def watch(_event: object) -> None:
        notified.append(time.monotonic())
        changed.set()

    def stdin_closed() -> None:
        sys.stdin.readline()
        stop.set()
        changed.set()

    threading.Thread(target=stdin_closed, daemon=True).start()
    latencies: list[tuple[float, float]] = []

    def probe() -> None:
        """ZooKeeper's round trip as a client outside the members' process sees it, every 100 ms."""
        while not stop.wait(0.1):
            sent = time.monotonic()
            zk.exists("/")
            latencies.append((sent, time.monotonic() - sent))

    threading.Thread(target=probe, daemon=True).start()

    def owners(names: list[int]) -> dict[int, str | None]:
        data = pipelined_get(zk, ((p, f"{dirs.owner_dir}/{p}") for p in names))
        return {p: None if value is None else value[0].decode() for p, value in data.items()}

    def expected() -> dict[int, str] | None:
        """Partition -> its owner under the registered members' range shares (partition ``p`` to thread ``p //
        share`` in string order), if the members are all there."""
        members = sorted(zk.get_children(ids_dir))
        if len(members) != args.members or args.partitions % args.members:
            return None
        share = args.partitions // args.members
        return {p: f"{members[p // share]}-0" for p in range(args.partitions)}

    def look() -> tuple[float, int, bool]:
        """(when the listing came back, how many owner znodes, whether the owners of the first and last partition of
        every share are that share's member). Reading every owner znode costs seconds of this process on a loaded
        machine, so it is done once, at the end, when nothing changed since the last look found the edges right:
        each member claims and releases its share in one transaction."""
        try:
            names = zk.get_children(dirs.owner_dir, watch=watch)
        except NoNodeError:
            zk.exists(dirs.owner_dir, watch=watch)
            return time.monotonic(), 0, False
        at = time.monotonic()
        wanted = expected() if len(names) == args.partitions else None
        if wanted is None:
            return at, len(names), False
        share = args.partitions // args.members
        edges = sorted({p for n in range(args.members) for p in (n * share, (n + 1) * share - 1)})
        sample = owners(edges)
        return at, len(names), all(sample[p] == wanted[p] for p in edges)

    print("ready", flush=True)
    was_held = False
    seen = 0  # notifications before the last listing: any later one is a change since
    while not stop.is_set():
        changed.clear()
        seen = len(notified)
        at, count, held = look()
        looks.append({"t": at, "owners": count, "held": held})
        if held != was_held:
            print(json.dumps({"t": at, "held": held}), flush=True)
            was_held = held
        changed.wait()  # no timeout: a change, or the parent's line on stdin, wakes it
    # Verified: every owner znode as the shares say, and no change since the look that found the edges right. Held
    # since the last of them was made (its ctime, the server's clock: a look may come after a later release and
    # claim of the same share, which a one-shot watch fired during an earlier look does not tell).
    wanted = expected() if was_held else None
    final = pipelined_get(zk, ((p, f"{dirs.owner_dir}/{p}") for p in range(args.partitions))) if wanted else {}
    verified = (wanted is not None and len(notified) == seen and None not in final.values()
                and {p: value[0].decode() for p, value in final.items() if value is not None} == wanted)
    since = max(value[1].ctime for value in final.values() if value is not None) / 1000 if verified else None
    close_client(zk)
    print(json.dumps({"looks": looks, "latencies": latencies, "verified": verified, "held_since": since}), flush=True)


# --- the parent --------------------------------------------------------------------------------------------------

@dataclass
class UserJoin:
    held_s: float | None  # since the threads started until ZooKeeper last started showing the shares held
    returned_s: float | None  # until the last create_message_streams returned
    created_s: float  # until the last create_connector returned
    cpu_s: float | None  # the members' process until held
    servers_cpu_s: float | None  # ZooKeeper's and the broker's over the same interval
    errors: list[str]
    counts: dict[str, int]
    cpu_by_role: dict[str, float] = field(default_factory=dict)
    zk_requests: int = 0  # the server's zk_packets_received over the join and the --settle after it
    zk_latency_ms: list[float] = field(default_factory=list)  # the watcher's probes until held
    summary: dict[str, float] = field(default_factory=dict)
    events: list[dict] = field(default_factory=list)


def _readline(proc: subprocess.Popen, timeout: float) -> str:
    """A line of ``proc``'s stdout within ``timeout`` seconds, or SystemExit."""
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], timeout)
    if not ready:
        raise SystemExit(f"no answer from {proc.args[-1] if proc.args else proc} within {timeout:g} s")
    line = proc.stdout.readline()
    if not line:
        raise SystemExit(f"child exited ({proc.wait()}): {proc.stderr.read()[-2000:] if proc.stderr else ''}")
    return line


def _spawn(tree: Path, argv: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *argv], env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


class CpuSampler(threading.Thread):
    """Every 100 ms, the CPU-seconds of each of this process's descendants (and what they reaped), by role: the members'
    process, the watcher, ZooKeeper, the broker, and whatever else by its command (the front, with ``--front``)."""

    def __init__(self, roles: dict[int, str]) -> None:
        super().__init__(daemon=True, name="cpu-sampler")
        self.roles = roles
        self.samples: list[tuple[float, dict[str, float]]] = []
        self.stop = threading.Event()
        self._java: dict[int, str] = {}

    def run(self) -> None:
        while True:
            self.samples.append((time.monotonic(), self.sample()))
            if self.stop.wait(0.1):
                return

    def sample(self) -> dict[str, float]:
        from process_cpu import descends, process_table

        procs, me = process_table(), os.getpid()
        cpu: dict[str, float] = {}
        for pid, (_parent, comm, own, reaped) in procs.items():
            if pid == me or not descends(procs, pid, me):
                continue
            role = next((r for root, r in self.roles.items() if descends(procs, pid, root)), None)
            role = role or self._server_role(pid, comm)
            cpu[role] = cpu.get(role, 0.0) + own + reaped
        return cpu

    def _server_role(self, pid: int, comm: str) -> str:
        """``zookeeper`` or ``broker`` (Tansu, or a Kafka JVM), by the command line of a JVM, else the command."""
        if comm.startswith("tansu"):
            return "broker"
        if comm != "java":
            return comm
        if pid not in self._java:
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                cmdline = b""
            self._java[pid] = "zookeeper" if b"org.apache.zookeeper" in cmdline else "broker"
        return self._java[pid]

    def between(self, start: float, end: float) -> dict[str, float]:
        """CPU-seconds by role from the last sample at or before ``start`` to the first at or after ``end``."""
        first = next((c for t, c in reversed(self.samples) if t <= start), self.samples[0][1])
        last = next((c for t, c in self.samples if t >= end), self.samples[-1][1])
        return {role: last.get(role, 0.0) - first.get(role, 0.0) for role in last}


def _stop_watcher(watcher: subprocess.Popen) -> dict:
    """Its last line: every look, the round trips it measured, whether every owner znode was checked right."""
    assert watcher.stdin is not None
    watcher.stdin.write("stop\n")
    watcher.stdin.flush()
    final = json.loads(_readline(watcher, 120))
    while "looks" not in final:  # a change seen after the parent stopped listening
        final = json.loads(_readline(watcher, 120))
    watcher.wait(30)
    return final


def run_user(tree: Path, watcher_tree: Path, connect: str, topic: str, args: argparse.Namespace, label: str,
             events_dir: Path | None) -> UserJoin:
    import uuid

    from rebalance import packets_received

    from zkconsumer.zk.client import zookeeper

    group = f"user-{uuid.uuid4().hex[:8]}"
    common = ["--connect", connect, "--topic", topic, "--group", group, "--partitions", str(args.partitions),
              "--members", str(args.members), "--max-seconds", str(args.max_seconds),
              "--stagger-ms", str(args.stagger_ms)]
    watcher = _spawn(watcher_tree, ["--watch", *common])
    members = None
    try:
        if _readline(watcher, 60).strip() != "ready":
            raise SystemExit("the watcher did not start")
        with zookeeper(connect) as zk:
            requests_before = packets_received(zk)
        trace = []
        if args.trace is not None:
            args.trace.mkdir(parents=True, exist_ok=True)
            trace = ["--trace-file", str(args.trace / f"{label}.jsonl")]
        members = _spawn(tree, ["--user", *common, *trace])
        sampler = CpuSampler({members.pid: "members", watcher.pid: "watcher"})
        sampler.start()
        spy = None
        if args.profile is not None:  # py-spy, if installed: where the members' threads spend the join
            args.profile.mkdir(parents=True, exist_ok=True)
            spy = subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid", str(members.pid),
                                    "--rate", "50", "--nonblocking", "--format", "raw", "--threads",
                                    *args.profile_options, "--output", str(args.profile / f"{label}.txt")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        first = json.loads(_readline(members, args.max_seconds + 60))
        started = first["started"]
        last_returned = max((t for t in first["returned"] if t is not None), default=None)
        # Held: the last time the watcher saw the shares become held, still so --settle s after every call returned
        # (or after the shares were held, if later).
        held_at: float | None = None
        deadline = started + args.max_seconds
        quiet_until = time.monotonic() + args.settle
        while time.monotonic() < max(deadline if held_at is None else 0, quiet_until):
            left = (quiet_until if held_at is not None else deadline) - time.monotonic()
            ready, _, _ = select.select([watcher.stdout], [], [], max(0.0, left))
            if not ready:
                if held_at is not None:
                    break
                continue
            change = json.loads(_readline(watcher, 1))
            held_at = change["t"] if change["held"] else None
            quiet_until = time.monotonic() + args.settle
        sampler.stop.set()
        sampler.join()
        with zookeeper(connect) as zk:
            requests = packets_received(zk) - requests_before
        if spy is not None:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
        final = _stop_watcher(watcher)  # first: it checks every owner znode while the members still hold them
        watcher = None
        assert members.stdin is not None
        members.stdin.write("stop\n")
        members.stdin.flush()
        last = json.loads(_readline(members, 120))
        members.wait(60)
        members = None
    finally:
        if members is not None:
            members.kill()
            members.wait()
        if watcher is not None:
            _stop_watcher(watcher)
    looks, latencies = final["looks"], final["latencies"]
    if held_at is not None and not final["verified"]:
        print(f"  {label}: the edges of the shares looked right at {held_at - started:.2f} s, but not every owner "
              f"znode: counted as never held", flush=True)
        held_at = None
    if held_at is not None:  # from the owner znodes' creation times: the wall clock, the same machine's
        held_at = started + (final["held_since"] - first["started_wall"])
    cpu = sampler.between(started, held_at) if held_at is not None else {}
    events = sorted(last["events"], key=lambda e: e["t"])
    for event in events:
        event["t"] = round(event["t"] - started, 4)
    if events_dir is not None:
        events_dir.mkdir(parents=True, exist_ok=True)
        path = events_dir / f"{label}-{group}.jsonl"
        with path.open("w", encoding="utf-8") as out:
            for event in events:
                out.write(json.dumps(event) + "\n")
            for sent, latency in latencies:
                out.write(json.dumps({"t": round(sent - started, 4), "event": "watcher.zk_latency",
                                      "ms": round(latency * 1000, 2)}) + "\n")
            for look in looks:
                out.write(json.dumps({"t": round(look["t"] - started, 4), "event": "watcher.look",
                                      "owners": look["owners"], "held": look["held"]}) + "\n")
    created = [t for t in first["created"] if t is not None]
    return UserJoin(
        held_s=None if held_at is None else held_at - started,
        returned_s=None if last_returned is None else last_returned - started,
        created_s=(max(created) - started) if created else float("nan"),
        cpu_s=cpu.get("members"), servers_cpu_s=(cpu.get("zookeeper", 0.0) + cpu.get("broker", 0.0)) if cpu else None,
        cpu_by_role=cpu, zk_requests=requests,
        zk_latency_ms=[ms * 1000 for t, ms in latencies if held_at is None or t <= held_at],
        errors=first["errors"], counts=last["counts"], summary=summarise(events), events=events)


def summarise(events: list[dict]) -> dict[str, float]:
    """Per join: attempts, conflicts and backoffs, the times of the milestones (seconds since the threads started)."""
    def times(name: str, **match) -> list[float]:
        return [e["t"] for e in events if e["event"] == name and all(e.get(k) == v for k, v in match.items())]

    failed = [e for e in events if e["event"] == "rebalance.attempt_failed"]
    completed = times("rebalance.completed")
    return {
        "sessions_up": max(times("consumer.connected"), default=float("nan")),
        "registered": max(times("consumer.registered"), default=float("nan")),
        "rebalances": len(times("rebalance.started")),
        "attempts": len(times("rebalance.read_cluster")),
        "conflicts": sum(1 for e in failed if e.get("reason") == "ownership conflict"),
        "other_failures": sum(1 for e in failed if e.get("reason") != "ownership conflict"),
        "backoff_s": sum(e.get("backoff_ms", 0) for e in failed) / 1000,
        "fetcher_starts": len(times("fetcher_manager.connections_started")),
        "last_completed": max(completed, default=float("nan")),
        "last_fetching": max(times("fetcher.started"), default=float("nan")),
    }


def run_peer(tree: Path, servers, topic: str, args: argparse.Namespace) -> dict:
    """``large_group_join.py``'s ``19 into 1``, run by that script's child in the version's checkout."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    argv = [sys.executable, str(HERE / "large_group_join.py"), "--child", "--scenario", "19 into 1", "--root",
            servers.zookeeper, "--connect", servers.connect, "--topic", topic, "--partitions", str(args.partitions),
            "--max-seconds", str(args.max_seconds)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=args.max_seconds + 120, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree} peer: exit status {done.returncode}\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of another version, measured alternately")
    parser.add_argument("--after", type=Path, default=HERE.parent, help="the checkout measured (this one)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds, medians kept (default 3)")
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--members", type=int, default=20)
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated, of: " + ", ".join(SHAPES))
    parser.add_argument("--settle", type=float, default=2.0,
                        help="seconds the shares must stay held after the last call returned (default 2)")
    parser.add_argument("--events", type=Path, help="write each user join's events here as JSON lines")
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--front", action="store_true",
                        help="register the front in front of the broker, as the embedded environment does")
    parser.add_argument("--stagger-ms", type=float, default=0.0,
                        help="start member n's thread n times this after the first (default 0: one after the other)")
    parser.add_argument("--profile", type=Path, help="py-spy record the members' process into this folder")
    parser.add_argument("--profile-options", type=str.split, default=[],
                        help="more py-spy options, in one argument (e.g. '--gil --idle')")
    parser.add_argument("--trace", type=Path,
                        help="also write every event of each user join as JSON lines (zkconsumer trace show FILE) into "
                             "this folder: rendering them costs the members' process CPU, so figures of such a run are "
                             "not comparable")
    parser.add_argument("--trace-file", help=argparse.SUPPRESS)
    parser.add_argument("--user", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--watch", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--connect", help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    parser.add_argument("--group", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.user:
        user_child(args)
        return
    if args.watch:
        watch_child(args)
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind the servers' context managers
    from bench_support import machine

    versions = {"after": args.after.resolve()}
    if args.before is not None:
        versions = {"before": args.before.resolve(), **versions}
    shapes = [shape for shape in SHAPES if shape in args.shapes.split(",")]
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}; load average {load()}")
    print("; ".join(f"{name}: {tree} ({_commit(tree)})" for name, tree in versions.items()))
    runs: dict[tuple[str, str], list] = {}
    for round_ in range(args.repeat):
        order = list(versions) if round_ % 2 == 0 else list(reversed(versions))
        for name in order:
            for shape, result in one_round(versions[name], shapes, args, f"{name}-{round_ + 1}"):
                runs.setdefault((shape, name), []).append(result)
                shown = _shown(result) if isinstance(result, UserJoin) else (
                    f"shares held {result['seconds']:.2f} s, CPU {result['cpu_seconds']:.2f} s, "
                    f"{result['failed_attempts']} failed attempts")
                print(f"  round {round_ + 1} {name:6} {shape:5}: {shown} (load {load()})", flush=True)
    print(f"medians of {args.repeat}; load average at the end {load()}")
    report(versions, shapes, runs)


def one_round(tree: Path, shapes: list[str], args: argparse.Namespace, label: str) -> Iterator[tuple[str, object]]:
    """Servers of their own, both topics, then each shape once on them, in :data:`SHAPES`' order."""
    from bench_support import servers
    from memory import create_topic_both_ways

    from zkconsumer.admin import zk_topics
    from zkconsumer.admin.topic_plans import CreateRequest
    from zkconsumer.zk.client import zookeeper

    with tempfile.TemporaryDirectory(prefix="zkconsumer-bench-") as tmp, \
            servers(Path(tmp), front=args.front) as run_servers:
        peer_topic, user_topic = f"zk-only-{args.partitions}", f"with-leaders-{args.partitions}"
        create_topic_both_ways(run_servers.connect, run_servers.broker, user_topic, args.partitions)
        with zookeeper(run_servers.connect) as zk:
            zk_topics.write_creation(zk, zk_topics.prepare_creation(zk, CreateRequest(peer_topic, args.partitions, 1)))
        for shape in shapes:
            if shape == "peer":
                yield shape, run_peer(tree, run_servers, peer_topic, args)
            else:
                yield shape, run_user(tree, HERE.parent, run_servers.connect, user_topic, args, f"{label}-{shape}",
                                      args.events)


def _s(value: float | None) -> str:
    return "never" if value is None else f"{value:.2f} s"


def _shown(user: UserJoin) -> str:
    s = user.summary
    text = (f"sessions up {s['sessions_up']:.2f} s, streams returned {_s(user.returned_s)}, shares held "
            f"{_s(user.held_s)}, CPU {_s(user.cpu_s)} (" + ", ".join(f"{k} {v:.2f}" for k, v in
            sorted(user.cpu_by_role.items()) if k != "members") + f"); {s['rebalances']:.0f} "
            f"rebalances, {s['attempts']:.0f} attempts, {s['conflicts']:.0f} conflicts, "
            f"{s['other_failures']:.0f} other failures, {s['backoff_s']:.1f} s of backoff, "
            f"{s['fetcher_starts']:.0f} fetcher starts")
    if user.zk_latency_ms:
        lat = sorted(user.zk_latency_ms)
        text += (f"; ZooKeeper {user.zk_requests:,} requests, round trip median "
                 f"{statistics.median(lat):.0f} ms, 90th {lat[int(len(lat) * 0.9)]:.0f} ms")
    if user.errors:
        text += f"; {len(user.errors)} members failed: {user.errors[0]}"
    return text


def _median(values: list[float | None]) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if len(known) == len(values) and known else None


def report(versions: dict[str, Path], shapes: list[str], runs: dict[tuple[str, str], list]) -> None:
    """Medians per version: each shape's time and CPU, user / peer of the same version, after / before."""
    rows: dict[str, dict[str, float | None]] = {}
    for name in versions:
        row: dict[str, float | None] = {}
        for shape in shapes:
            results = runs[(shape, name)]
            if shape == "peer":
                row["peer s"] = _median([r["seconds"] for r in results])
                row["peer CPU"] = _median([r["cpu_seconds"] for r in results])
                continue
            row[f"{shape} returned"] = _median([r.returned_s for r in results])
            row[f"{shape} s"] = _median([r.held_s for r in results])
            row[f"{shape} CPU"] = _median([r.cpu_s for r in results])
            row[f"{shape} servers"] = _median([r.servers_cpu_s for r in results])
        for shape in ("fresh", "warm"):
            if row.get("peer s") and row.get(f"{shape} s"):
                row[f"{shape}/peer"] = row[f"{shape} s"] / row["peer s"]  # type: ignore[operator]
        rows[name] = row
    keys = list(next(iter(rows.values())))
    print(f"{'version':8}" + "".join(f"{k:>15}" for k in keys))
    for name, row in rows.items():
        print(f"{name:8}" + "".join(f"{'-' if v is None else f'{v:.2f}':>15}" for v in row.values()))
    if "before" in rows:
        before, after = rows["before"], rows["after"]
        ratios = {k: after[k] / before[k] for k in keys  # type: ignore[operator]
                  if before.get(k) and after.get(k) is not None}
        print(f"{'after/before':12} " + ", ".join(f"{k} {v:.2f}x" for k, v in ratios.items()))


if __name__ == "__main__":
    main()
