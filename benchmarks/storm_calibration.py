"""The storm model calibrated on real runs and checked against held-back ones: real legacy groups (this project's
connector against a real ZooKeeper) and real modern groups (librdkafka members through the front's coordinators:
eager ``range``, ``cooperative-sticky``, KIP-848 ``uniform``) are played, the model's parameters are fitted from the
calibration runs' events, and every run is predicted by ``zkconsumer.storm`` and compared on the four figures.

Run: ``.venv/bin/python benchmarks/storm_calibration.py [--out DIR] [--legacy-partitions 1000,10000]
[--modern-partitions 200] [--large 40] [--repeat 1] [--quick]``; ``--replay RECORD.json`` fits and predicts again
from a calibration record (no servers started). With ``--repeat N`` every run is played N times, in rounds, and each
figure's median is compared (the spread is written beside it). Writes ``DIR/calibration.json`` (every run: spec, real
figures, steps, CPU, load; the measurements; the fitted parameters; every prediction), ``DIR/record.json`` (the
calibration record, :class:`zkconsumer.storm.calibration.CalibrationRecord`: each run's median figures and spread,
the step samples the fit takes, the measurements: small, to be committed in ``benchmarks/data/storm/``, from which
``benchmarks/storm_tables.py`` makes docs/storm.md's tables) and ``DIR/calibration.md``; ``DIR`` is
``storm-calibration`` by default.

Servers: ZooKeeper, the broker and the front with the project's launchers (``bench_support.servers``). The runs are
played in one process, calibration and held-back runs interleaved, so that both see the same load; each records
``os.getloadavg()`` as it begins, this process's CPU and the front's over its measured scene.

* **Legacy** (``rebalance.backoff.ms`` 200, ``rebalance.max.retries`` 100, ``zookeeper.session.timeout.ms`` 30 s, one
  ZooKeeper server and new groups: the model is given the same, :func:`zkconsumer.storm.calibration.run_settings`):
  connectors constructed (sessions open) first; then the measured scene, its members started by a loop of threads,
  how far apart measured (each thread's start, first to last, over the members: the model's
  ``start_interval_ms``). Time to stable: from
  the scene's start to the last ``rebalance.completed`` after which every partition is owned once, in range shares,
  with one owner znode each, and nothing rebalances for half a second. Partition-seconds paused: from the members'
  ``rebalance.stop_fetchers`` / ``rebalance.start_fetchers`` (and a leaving member's ``consumer.shutting_down``)
  events. ZooKeeper requests: every request the members' own kazoo clients sent over the scene (counted at kazoo's
  ``_call``; no pings, no other client, none of the leader finder's reads of the brokers, which the topics only
  ZooKeeper knows keep going), operations counting each inside a multi-op. Conflicts: the members'
  ``rebalance.attempt_failed`` for an ownership conflict.
* **Modern** (confluent-kafka members polled by threads of this process, ``benchmarks/group_join.Member``; classic
  members at librdkafka's defaults, 45 s session and 3 s heartbeats, KIP-848 members at the front's 5 s): time to
  stable from the scene's start to the last rebalance callback after which every partition is owned once in even
  shares and no callback comes for a heartbeat interval and a half; partition-seconds paused from the callbacks.
  The topics are smaller (``--modern-partitions``, 200) than the legacy ones: Tansu creates a topic of thousands of
  partitions slowly, and the modern figures depend on partitions only through CPU costs that are small here.

Also measured before the runs, as parameters the fit takes as given: ZooKeeper's read service time and the client's
own work per request (the server's process CPU and this process's over a burst of pipelined ``getData`` from one
client, per read), the loopback round trip (sequential ``getData``, less both) and the log's force (sequential
``create``, less a read's round trip); one unmeasured join of each topic size warms the server up first;
ZooKeeper's own ``mntr`` latencies over the largest legacy join are recorded beside them. This is a benchmark, not a
test: nothing fails on disagreement.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import structlog
from bench_support import machine, servers, wait_for_brokers
from front_fetch import process_cpu
from group_join import Member, settled
from process_cpu import process_table

from zkconsumer.storm import calibration as cal
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.rendering import agreement_markdown, agreement_summary, calibration_markdown
from zkconsumer.storm.simulation import play

HERE = Path(__file__).resolve().parent
LEGACY_SETTINGS = cal.LEGACY_SETTINGS
CLASSIC_SESSION_MS, CLASSIC_HEARTBEAT_MS = 45_000, 3_000
KIP848_HEARTBEAT_MS = 5_000  # the front's group.consumer.heartbeat.interval.ms (Kafka's default)
LEGACY_QUIET_S = 0.5
MAX_SECONDS = 300.0


# --- what the members' events and kazoo clients say ---------------------------------------------------------------

class Recorder:
    """Every legacy member's rebalance and shutdown events, per group, with the time they were emitted (a structlog
    processor that keeps what the figures need and drops the event)."""

    KEPT = ("rebalance.", "consumer.shutting_down")

    def __init__(self) -> None:
        self.events: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def __call__(self, _logger: object, _name: str, event: dict) -> dict:
        name, group = event.get("event", ""), event.get("group")
        if group is not None and name.startswith(self.KEPT):
            kept = {"t": time.monotonic(), "event": name, "consumer": event.get("consumer_id"),
                    "duration_ms": event.get("duration_ms"), "reason": event.get("reason", ""),
                    "batches": event.get("batches", 0), "partitions": event.get("partitions"),
                    "members": len(event.get("members") or ()), "claimed": len(event.get("claimed") or ()),
                    "conflicts": len(event.get("conflicts") or ())}
            with self._lock:
                self.events.setdefault(group, []).append(kept)
        raise structlog.DropEvent


class RequestCounter:
    """Requests (and operations inside multi-ops) sent by chosen kazoo clients, counted at ``KazooClient._call``."""

    def __init__(self) -> None:
        from kazoo.client import KazooClient

        self.tracked: set[int] = set()
        self.requests = 0
        self.operations = 0
        self._lock = threading.Lock()
        original = KazooClient._call
        counter = self

        def counting(client: Any, request: Any, async_object: Any) -> Any:
            # the leader finder's reads of the brokers (it waits for leaders of topics only ZooKeeper knows) are
            # no part of a rebalance
            if id(client) in counter.tracked and "leader-finder" not in threading.current_thread().name:
                with counter._lock:
                    counter.requests += 1
                    counter.operations += len(getattr(request, "operations", None) or ()) or 1
            return original(client, request, async_object)

        KazooClient._call = counting  # type: ignore[method-assign]

    def snapshot(self) -> tuple[int, int]:
        with self._lock:
            return self.requests, self.operations


def mntr(client: Any) -> dict[str, str]:
    return dict(line.split("\t", 1) for line in client.command(b"mntr").splitlines() if "\t" in line)


def latencies(client: Any) -> dict[str, float]:
    return {k: float(v) for k, v in mntr(client).items() if "latency" in k and v.replace(".", "", 1).isdigit()}


def measure_zookeeper(client: Any, path: str, server_pid: int | None, burst: int = 4_000,
                      sequential: int = 300, writes: int = 100) -> dict[str, Any]:
    """A burst of pipelined reads from one client: ZooKeeper's CPU per read (its service time) and this process's
    (the client's own work per request); one read at a time, whose round trip less both is the network's; one create
    at a time, whose round trip beyond a read's is the log's force."""
    for _ in range(50):  # warm the server's and the client's paths
        client.get(path)
    began = time.perf_counter()
    for _ in range(sequential):
        client.get(path)
    one_ms = (time.perf_counter() - began) * 1000 / sequential
    before = latencies(client)
    cpu, server = time.process_time(), process_cpu(server_pid) if server_pid else 0.0
    began = time.perf_counter()
    pending = [client.get_async(path) for _ in range(burst)]
    for p in pending:
        p.get(timeout=60)
    pipelined_ms = (time.perf_counter() - began) * 1000 / burst
    client_ms = (time.process_time() - cpu) * 1000 / burst
    server_ms = (process_cpu(server_pid) - server) * 1000 / burst if server_pid else pipelined_ms
    # writes one at a time: each waits for its own log force, the round trip beyond a read's
    scratch = f"/storm-calibration-{uuid.uuid4().hex[:6]}"
    client.create(scratch)
    began = time.perf_counter()
    for i in range(writes):
        client.create(f"{scratch}/{i}")
    write_ms = (time.perf_counter() - began) * 1000 / writes
    client.delete(scratch, recursive=True)
    return {"zk_read_ms": server_ms, "zk_client_ms": client_ms, "zk_write_ms": max(0.0, write_ms - one_ms),
            "sequential_write_ms": write_ms,
            "network_rtt_ms": max(0.0, one_ms - server_ms - client_ms), "sequential_read_ms": one_ms,
            "pipelined_read_ms": pipelined_ms, "mntr_before": before, "mntr_after": latencies(client),
            "burst": burst, "server_cpu_measured": bool(server_pid)}


# --- legacy runs --------------------------------------------------------------------------------------------------

class LegacyBench:
    def __init__(self, run_servers: Any, recorder: Recorder, counter: RequestCounter) -> None:
        from zkconsumer.zk.client import open_client

        self.connect = run_servers.connect
        self.root = open_client(run_servers.zookeeper)
        self.zk = open_client(self.connect)
        self.recorder = recorder
        self.counter = counter
        self.topics: set[int] = set()
        self.mntr_largest: dict[str, Any] = {}

    def close(self) -> None:
        from zkconsumer.zk.client import close_client

        close_client(self.zk)
        close_client(self.root)

    def topic(self, partitions: int) -> str:
        from zkconsumer.admin import zk_topics
        from zkconsumer.admin.topic_plans import CreateRequest

        name = f"storm-{partitions}"
        if partitions not in self.topics:
            zk_topics.write_creation(self.zk, zk_topics.prepare_creation(self.zk, CreateRequest(name, partitions, 1)))
            self.topics.add(partitions)
        return name

    def run(self, spec: cal.RunSpec) -> cal.RealRun:
        from rebalance import shared_evenly, start_streams

        from zkconsumer import ConsumerConfig, create_connector
        from zkconsumer.types import TopicPartition
        from zkconsumer.zk import paths

        began_wall = time.monotonic()
        load = os.getloadavg()
        topic = self.topic(spec.partitions)
        group = f"storm-{spec.shape}-{spec.members}-{uuid.uuid4().hex[:6]}"
        props = {"zookeeper.connect": self.connect, "group.id": group, **LEGACY_SETTINGS}
        names = spec.member_names()
        connectors = {n: create_connector(ConsumerConfig({**props, "consumer.id": n})) for n in names}
        self.counter.tracked.update(id(c.zk) for c in connectors.values())
        everything = {TopicPartition(topic, p) for p in range(spec.partitions)}
        owners_dir = paths.GroupTopicDirs(group, topic).owner_dir
        errors: list[BaseException] = []

        def shared(members: list[str]) -> bool:
            return shared_evenly(self.zk, [connectors[n] for n in members], everything, owners_dir)

        def events() -> list[dict[str, Any]]:
            return list(self.recorder.events.get(group, ()))

        def settle(members: list[str], since: float) -> float:
            """Until quiet and shared; the time of the last rebalance completed (or ``since``). Quiet is checked
            first: the shares' check builds every member's partitions and lists the owner znodes, milliseconds of
            this process's one interpreter that the members rebalancing would otherwise wait for."""
            deadline = since + MAX_SECONDS
            while time.monotonic() < deadline and not errors:
                busy = [e["t"] for e in events() if e["t"] >= since]
                if (not busy or time.monotonic() - max(busy) >= LEGACY_QUIET_S) and shared(members):
                    done = [e["t"] for e in events() if e["t"] >= since and e["event"] == "rebalance.completed"]
                    return max(done, default=since)
                time.sleep(0.01)
            raise SystemExit(f"{spec.name}: not stable within {MAX_SECONDS:.0f} s ({errors[:1]})")

        started: list[float] = []

        def start_all(members: list[str]) -> None:
            started.clear()

            def member(name: str) -> None:
                started.append(time.monotonic())
                start_streams(connectors[name], topic, errors)

            for thread in [threading.Thread(target=member, args=(n,)) for n in members]:
                thread.start()

        try:
            remaining = names
            if spec.shape == cal.JOIN_RUNNING:
                first = names[:spec.members - spec.changing]
                start_all(first)
                formed = settle(first, time.monotonic())

                def measured() -> None:
                    start_all(names[len(first):])
            elif spec.shape == cal.LEAVE:
                start_all(names)
                formed = settle(names, time.monotonic())
                leaving, remaining = names[-spec.changing:], names[:-spec.changing]

                def measured() -> None:
                    for thread in [threading.Thread(target=connectors[n].shutdown) for n in leaving]:
                        thread.start()
            else:
                formed = 0.0

                def measured() -> None:
                    start_all(names)
            large = spec.members >= 20 and spec.shape != cal.LEAVE
            before_mntr = latencies(self.root) if large else {}
            requests, operations = self.counter.snapshot()
            cpu = time.process_time()
            t0 = time.monotonic()
            measured()
            stable = settle(remaining, t0)
            cpu = time.process_time() - cpu
            after = self.counter.snapshot()
            if large and spec.members >= self.mntr_largest.get("members", 0):
                self.mntr_largest = {"run": spec.name, "members": spec.members, "before": before_mntr,
                                     "after": latencies(self.root)}
        finally:
            stoppers = [threading.Thread(target=c.shutdown) for c in connectors.values()]
            for thread in stoppers:
                thread.start()
            for thread in stoppers:
                thread.join()
            self.counter.tracked.difference_update(id(c.zk) for c in connectors.values())
        recorded = events()
        figures = cal.Figures(
            stable - t0, self._paused(recorded, spec, t0, stable), after[0] - requests,
            sum(1 for e in recorded if t0 <= e["t"] <= stable and e["event"] == "rebalance.attempt_failed"
                and "conflict" in str(e["reason"])),
            sum(1 for e in recorded if t0 <= e["t"] <= stable and e["event"] == "rebalance.completed"),
            after[1] - operations)
        lead = replace(spec, lead_s=t0 - formed if formed else 0.0, start_interval_ms=interval_ms(started))
        return cal.RealRun(lead, figures, self._steps(recorded, spec), cpu, 0.0, load, time.monotonic() - began_wall)

    @staticmethod
    def _paused(recorded: list[dict[str, Any]], spec: cal.RunSpec, t0: float, end: float) -> float:
        owned: dict[str, int] = {}
        changes: list[tuple[float, int]] = []
        for e in recorded:
            who = e["consumer"]
            if e["event"] in ("rebalance.stop_fetchers", "consumer.shutting_down"):
                changes.append((e["t"], -owned.get(who, 0)))
                owned[who] = 0
            elif e["event"] == "rebalance.start_fetchers":
                owned[who] = int(e["partitions"] or 0)
                changes.append((e["t"], owned[who]))
        at_start = sum(d for t, d in changes if t < t0)
        return cal.paused_partition_seconds(changes, spec.partitions, at_start, t0, end)

    @staticmethod
    def _steps(recorded: list[dict[str, Any]], spec: cal.RunSpec) -> tuple[cal.StepSample, ...]:
        samples = []
        owned: dict[str, int] = {}
        fetch_ms: dict[str, float] = {}
        members = spec.members
        for e in recorded:
            who, name, ms = e["consumer"], e["event"].removeprefix("rebalance."), e["duration_ms"]
            if name == "assign":
                members = e["members"] or members
            if ms is None:
                continue
            if name == "stop_fetchers":
                samples.append(cal.StepSample(name, ms, spec.partitions, members, owned.get(who, 0)))
                owned[who] = 0
            elif name == "assign":
                samples.append(cal.StepSample(name, ms, spec.partitions, members, 0))
            elif name == "fetch_offsets":
                fetch_ms[who] = ms
            elif name == "build_registry":
                count = int(e["partitions"] or 0)
                samples.append(cal.StepSample("registry", fetch_ms.pop(who, 0.0) + ms, spec.partitions, members,
                                              count))
            elif name == "claim" and not e["conflicts"]:
                samples.append(cal.StepSample(name, ms, spec.partitions, members, e["claimed"], e["batches"]))
            elif name == "start_fetchers":
                owned[who] = int(e["partitions"] or 0)
                samples.append(cal.StepSample(name, ms, spec.partitions, members, owned[who]))
        return tuple(samples)


def interval_ms(starts: list[float]) -> float | None:
    """How far apart members started (first to last, over the gaps); None for fewer than two."""
    return (max(starts) - min(starts)) * 1000 / (len(starts) - 1) if len(starts) > 1 else None


# --- modern runs --------------------------------------------------------------------------------------------------

MODERN = {"eager-range": ("range", "classic"), "cooperative-sticky": ("cooperative-sticky", "classic"),
          "kip848-uniform": ("uniform", "consumer"), "kip848-range": ("range", "consumer")}


def run_modern(bootstrap: str, front_pid: int, spec: cal.RunSpec) -> cal.RealRun:
    from zkconsumer.kafka.topics import create_topic

    began_wall = time.monotonic()
    load = os.getloadavg()
    strategy, protocol = MODERN[spec.protocol]
    quiet_s = 1.5 * (KIP848_HEARTBEAT_MS if protocol == "consumer" else CLASSIC_HEARTBEAT_MS) / 1000
    run = uuid.uuid4().hex[:6]
    topic = group = f"storm-{spec.protocol}-{run}"
    create_topic(bootstrap, topic, spec.partitions)
    members = {n: Member(n, bootstrap, group, topic, strategy, CLASSIC_SESSION_MS, CLASSIC_HEARTBEAT_MS, protocol)
               for n in spec.member_names()}

    def settle(who: list[str]) -> float:
        group_members = [members[n] for n in who]
        deadline = time.monotonic() + MAX_SECONDS
        while not settled(group_members, spec.partitions, quiet_s):
            if time.monotonic() > deadline:
                raise SystemExit(f"{spec.name}: not stable within {MAX_SECONDS:.0f} s")
            time.sleep(0.05)
        return max(m.last_callback for m in group_members)

    names = spec.member_names()
    remaining = names
    try:
        if spec.shape == cal.JOIN_RUNNING:
            first = names[:spec.members - spec.changing]
            for n in first:
                members[n].start()
            formed = settle(first)

            def measured() -> None:
                for n in names[len(first):]:
                    members[n].start()
        elif spec.shape == cal.LEAVE:
            for n in names:
                members[n].start()
            formed = settle(names)
            remaining = names[:-spec.changing]

            def measured() -> None:
                for thread in [threading.Thread(target=members[n].close) for n in names[-spec.changing:]]:
                    thread.start()
        else:
            formed = 0.0

            def measured() -> None:
                for n in names:
                    members[n].start()
        cpu, front = time.process_time(), process_cpu(front_pid)
        t0 = time.monotonic()
        measured()
        started_s = time.monotonic() - t0  # the members' starts, one after another
        stable = settle(remaining)
        cpu, front = time.process_time() - cpu, process_cpu(front_pid) - front
    finally:
        for m in members.values():
            if m.thread.is_alive():
                m.close()
    changes = [c for m in members.values() for c in m.changes]
    at_start = sum(d for t, d in changes if t < t0)
    paused = cal.paused_partition_seconds(changes, spec.partitions, at_start, t0, stable)
    rebalances = sum(1 for t, _ in changes if t0 <= t <= stable)
    figures = cal.Figures(stable - t0, paused, 0, 0, rebalances)
    changing = spec.changing or spec.members
    interval = started_s * 1000 / (changing - 1) if changing > 1 else None
    lead = replace(spec, lead_s=t0 - formed if formed else 0.0,
                   start_interval_ms=None if spec.shape == cal.LEAVE else interval)
    return cal.RealRun(lead, figures, (), cpu, front, load, time.monotonic() - began_wall)


# --- the plan, the fit, the tables --------------------------------------------------------------------------------

def plan(args: argparse.Namespace) -> list[cal.RunSpec]:
    small, big = args.legacy_partitions[0], args.legacy_partitions[-1]
    q = args.modern_partitions
    C, H = cal.CALIBRATION, cal.HELD_BACK
    calibration = [
        cal.RunSpec("legacy-range", cal.AT_ONCE, 1, small, C),
        cal.RunSpec("legacy-range", cal.AT_ONCE, 1, big, C),
        cal.RunSpec("legacy-range", cal.AT_ONCE, 10, small, C),
        cal.RunSpec("legacy-range", cal.JOIN_RUNNING, 10, big, C, changing=9),
        cal.RunSpec("eager-range", cal.AT_ONCE, 10, q, C),
        cal.RunSpec("cooperative-sticky", cal.AT_ONCE, 10, q, C),
        cal.RunSpec("kip848-uniform", cal.AT_ONCE, 10, q, C),
    ]
    held_back = [
        cal.RunSpec("legacy-range", cal.AT_ONCE, 20, big, H),
        cal.RunSpec("legacy-range", cal.JOIN_RUNNING, 20, big, H, changing=19),
        cal.RunSpec("legacy-range", cal.LEAVE, 10, (small + big) // 2, H, changing=5),
        cal.RunSpec("eager-range", cal.AT_ONCE, 20, q, H),
        cal.RunSpec("cooperative-sticky", cal.JOIN_RUNNING, 20, q, H, changing=10),
        cal.RunSpec("kip848-uniform", cal.AT_ONCE, 20, q, H),
        cal.RunSpec("kip848-uniform", cal.JOIN_RUNNING, 20, q, H, changing=10),
    ]
    if args.large:
        held_back.insert(3, cal.RunSpec("legacy-range", cal.AT_ONCE, args.large, small * 2, H))
    if args.quick:
        held_back = [s for s in held_back if s.legacy or s.shape == cal.AT_ONCE]
    runs: list[cal.RunSpec] = []
    for i in range(max(len(calibration), len(held_back))):  # interleaved: both sets under the same conditions
        runs += calibration[i:i + 1] + held_back[i:i + 1]
    return runs * args.repeat  # in rounds: every run once, then again


def coordinator_cpu_ms(specs: list[cal.RunSpec]) -> tuple[float, int]:
    """The front's coordinators' own CPU per request, measured on this machine: the real state machines
    (``handle``, ``heartbeat``, ``tick``) timed while the simulation drives them through ``specs``."""
    from zkconsumer.front.groups.classic_group import ClassicGroupCoordinator
    from zkconsumer.front.groups.consumer_group import ConsumerGroupCoordinator

    spent = [0.0, 0]
    originals = [(cls, name, getattr(cls, name)) for cls, name in (
        (ClassicGroupCoordinator, "handle"), (ClassicGroupCoordinator, "tick"),
        (ConsumerGroupCoordinator, "heartbeat"), (ConsumerGroupCoordinator, "tick"))]

    def timed(original: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            began = time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                spent[0] += time.process_time() - began
                spent[1] += 1
        return call

    try:
        for cls, name, original in originals:
            setattr(cls, name, timed(original))
        for spec in specs:
            play(cal.scenario_for(spec), spec.protocol, StormParameters())
    finally:
        for cls, name, original in originals:
            setattr(cls, name, original)
    return spent[0] * 1000 / max(spent[1], 1), int(spent[1])


def record_of(played: list[cal.RealRun], measured: dict[str, Any], header: dict[str, Any]) -> cal.CalibrationRecord:
    """The runs' record: measured parameters (with the coordinators' CPU per request, measured here by driving the
    real coordinators through the modern calibration runs), each run's median figures and spread, the fit's step
    samples."""
    specs = list(dict.fromkeys(replace(r.spec, lead_s=0.0, start_interval_ms=None) for r in played))
    per_request, calls = coordinator_cpu_ms([s for s in specs if s.role == cal.CALIBRATION and not s.legacy])
    measured["coordinator_request_ms"] = per_request
    measured["sources"]["coordinator_request_ms"] = (
        f"the front's coordinators' own CPU per call ({calls:,} calls: handle, heartbeat, tick) as the simulation "
        "drove them through the modern calibration runs, this machine")
    fits = [cal.ParameterFit(k, measured[k], measured["sources"][k]) for k in measured["sources"]]
    return cal.record_of(played, fits, header["started"], header["command"], header["machine"],
                         f"Played by the command on {header['machine']}, {header['runtime_s']:.0f} s; the load "
                         "average as each run began is in its record.")


def write(out: Path, played: list[cal.RealRun], record: cal.CalibrationRecord, measured: dict[str, Any],
          header: dict[str, Any]) -> None:
    """``calibration.json`` (every repeat as played, the replay's fit and predictions), ``record.json`` (what to
    commit) and ``calibration.md``."""
    out.mkdir(parents=True, exist_ok=True)
    replayed = cal.replay(record)
    rows = list(replayed.rows)
    fitted = replayed.calibration
    doc = {**header, "measured": measured, "runs": [asdict(r) for r in played],
           "parameters": asdict(fitted.parameters), "fits": [asdict(f) for f in fitted.fits],
           "predictions": [{"run": r.run.spec.name, "role": r.run.spec.role, "predicted": asdict(r.predicted),
                            "within": r.within, "in_spread": r.in_spread, "figures": [asdict(a) for a in r.figures]}
                           for r in rows]}
    (out / "calibration.json").write_text(json.dumps(doc, indent=1, default=str), encoding="utf-8")
    (out / "record.json").write_text(cal.record_json(record), encoding="utf-8")
    write_report(out, record, replayed)


def write_report(out: Path, record: cal.CalibrationRecord, replayed: cal.Replay) -> None:
    rows = list(replayed.rows)
    conditions = "\n".join(f"| {r.spec.name} | {r.spec.role} | {r.wall_s:.1f} | {r.cpu_s:.2f} | {r.front_cpu_s:.2f} "
                           f"| {' '.join(f'{x:.1f}' for x in r.load)} |" for r in record.runs)
    md = (f"# Storm model: calibration and agreement\n\n{record.machine}; {record.started}\n\n"
          "## Calibration\n\n" + calibration_markdown(replayed.calibration, StormParameters())
          + "\n\n## Agreement\n\n" + agreement_markdown(rows) + "\n\n" + agreement_summary(rows)
          + spread_markdown(record.spreads)
          + "\n\n## Conditions\n\n| run | set | wall s | CPU s (harness) | CPU s (front) | load |\n"
          + "|---|---|---|---|---|---|\n" + conditions + "\n")
    (out / "calibration.md").write_text(md, encoding="utf-8")
    print(md)


def spread_markdown(spreads: Mapping[str, Mapping[str, tuple[float, float]]]) -> str:
    """The repeats' lowest and highest real figures, where runs were repeated (the table above gives medians)."""
    if not spreads:
        return ""
    lines = ["", "", "Real figures' spread over the repeats (lowest - highest; the table above compares medians):",
             "", "| run | time to stable s | partition-s paused | ZK requests | conflicts |", "|---|---|---|---|---|"]
    for name, figures in spreads.items():
        cells = [f"{figures[f][0]:,.2f} - {figures[f][1]:,.2f}" if f in figures else "-" for f in cal.COMPARED]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def child_pid(marker: bytes) -> int | None:
    """A descendant of this process whose command line holds ``marker`` (the front, ZooKeeper), if any."""
    mine = os.getpid()
    procs = process_table()
    for pid in procs:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        parent = pid
        while parent in procs and parent != mine:
            parent = procs[parent][0]
        if parent == mine and pid != mine and marker in cmdline:
            return pid
    return None


def numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("storm-calibration"),
                        help="where to write (storm-calibration)")
    parser.add_argument("--legacy-partitions", type=numbers, default=[1_000, 10_000],
                        help="the legacy runs' small and large topics (1000,10000)")
    parser.add_argument("--modern-partitions", type=int, default=200, help="the modern runs' topic (200)")
    parser.add_argument("--large", type=int, default=40,
                        help="a held-back legacy run of this many members at once (40; 0: none)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="play every run this many times, in rounds, and compare the medians (1)")
    parser.add_argument("--quick", action="store_true", help="leave out the modern held-back runs that join or leave")
    parser.add_argument("--replay", type=Path,
                        help="a calibration record (record.json): fit and predict again from its real runs")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind the servers' context managers
    if args.replay:
        record = cal.load_record(args.replay.read_text(encoding="utf-8"))
        args.out.mkdir(parents=True, exist_ok=True)
        write_report(args.out, record, cal.replay(record))
        return
    started = time.monotonic()
    header = {"machine": f"{platform.python_implementation()} {platform.python_version()} on {machine()}",
              "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), "command": " ".join(sys.argv)}
    print(header["machine"], flush=True)
    recorder, counter = Recorder(), RequestCounter()
    structlog.configure(processors=[recorder])
    runs: list[cal.RealRun] = []
    with tempfile.TemporaryDirectory(prefix="zkconsumer-bench-") as tmp, servers(Path(tmp)) as run_servers:
        from zkconsumer.zk import paths

        legacy = LegacyBench(run_servers, recorder, counter)
        try:
            wait_for_brokers(legacy.zk)
            measured = measure_zookeeper(legacy.zk, paths.BROKER_IDS_PATH, child_pid(b"org.apache.zookeeper"))
            burst = f"a burst of {measured['burst']:,} pipelined getData from one kazoo client"
            measured["sources"] = {
                "zk_read_ms": f"ZooKeeper's CPU per read over {burst}, this run" if measured["server_cpu_measured"]
                              else f"{burst} (ZooKeeper's process not found: its time and the client's), this run",
                "zk_client_ms": f"this process's CPU per read over {burst}, this run",
                "network_rtt_ms": f"one getData at a time ({measured['sequential_read_ms']:.3f} ms each) less "
                                  "zk_read_ms and zk_client_ms, this run",
                "zk_write_ms": f"one create at a time ({measured['sequential_write_ms']:.3f} ms each) less a getData's "
                               "round trip, this run"}
            print(f"ZooKeeper: {measured['zk_read_ms']:.4f} ms of its CPU a read, {measured['zk_client_ms']:.4f} ms "
                  f"of the client's, {measured['pipelined_read_ms']:.4f} ms a read pipelined, "
                  f"{measured['sequential_read_ms']:.3f} ms one at a time", flush=True)
            pid = child_pid(b"zkconsumer.front")
            if pid is None:
                raise SystemExit("the front's process was not found among this run's children")
            # unmeasured joins first, of every topic size: ZooKeeper's JIT, its log's first large transactions and
            # this process's imports warm up on no run's account (a first claim of 1,000 owner znodes can take ten
            # times the next one's)
            for partitions in args.legacy_partitions:
                legacy.run(cal.RunSpec("legacy-range", cal.AT_ONCE, 1, partitions, "warm-up"))
            for spec in plan(args):
                run = legacy.run(spec) if spec.legacy else run_modern(run_servers.bootstrap, pid, spec)
                runs.append(run)
                f = run.figures
                print(f"  {spec.role:11} {spec.name:55} {f.time_to_stable_s:6.2f} s, {f.partition_seconds_paused:9.0f} "
                      f"partition-s, {f.zookeeper_requests:6} ZK requests, {f.conflicts} conflicts, "
                      f"{f.rebalances} rebalances (CPU {run.cpu_s:.1f} s, load {run.load[0]:.1f})", flush=True)
            measured["mntr_join"] = legacy.mntr_largest
        finally:
            legacy.close()
    header["runtime_s"] = time.monotonic() - started
    write(args.out, runs, record_of(runs, measured, header), measured, header)


if __name__ == "__main__":
    main()
