"""``analyze fleet`` and ``analyze events`` on Spark ``local[2]``, next to a plain single-process loop of the same
pure functions on the same input, in the same run.

Run: ``.venv/bin/python benchmarks/fleet.py [--groups N] [--events N] [--repeat N]``. No server: the fleet is
``zkconsumer snapshot --synthetic`` (default 10,000 groups, seed 1; :mod:`zkconsumer.fleet.synthetic`), the events
are generated here (default 1,000,000 lines: members of groups of 3 to 6 going through complete rebalances, one in
eight with an ownership conflict and a second attempt, and some fetcher events).

* fleet loop: read the snapshot, ``analyze_group(decode(line))`` per line, keep the figures (what a script would do);
* fleet Spark: what ``zkconsumer analyze fleet --master local[2]`` does, in a fresh process each time: the command's
  session (:func:`zkconsumer.fleet.spark_session.spark_session`), ``run_fleet_job`` (the analysis on the executors,
  the two Parquet tables, the page's aggregates and the page), the session stopped;
* events loop: read the files, group the lines by ``consumer_id`` in a dict, ``member_figures`` per member (the
  timeline's parsing and figures: the reference the job's tables are compared with);
* events Spark: the same for ``run_events_job``, whose tasks compute the members whose events have the regular shape
  over Arrow columns (:mod:`zkconsumer.fleet.event_columns`) and the others by ``member_figures``;
* events columns: what those tasks do, in one process (no Spark): how much of Spark's lead over the loop is the
  columns' rather than the two cores'.

Spark is timed three ways, every run in a fresh process with the command's session (a new JVM mapping Spark's classes
from the run's own class archive, :mod:`zkconsumer.fleet.class_archive`, which the first Spark run records and is
reported apart, as a user's first command would): end to end, session start-up included; without the
start-up (from the job's call to its return: reading, the Python workers' start, the JVM loading and compiling what
the job needs, the analysis, the writes, the page); and in a running session, where the same process has first run
the job on a tenth of the input, as a notebook, a long-lived driver or a cluster's executors have (classes loaded and
compiled, Python workers up). The events job is also run end to end with the archive off, in the same run, for what
the archive itself gains. The Spark jobs do more than the loops (they also write Parquet and the page), so the
ratio is, if anything, unfair to Spark. The results are checked to agree (groups, partitions moved; rebalances)
before the times are printed.

The machine is shared: every figure is printed with the load average and the kernel's CPU pressure (the share of
time something waited for a CPU, ``/proc/pressure/cpu``) around it, and with the CPU-seconds each side used (the
loop's process; Spark's Python workers, JVM and driver), which the other users' load does not change much: with two
free cores Spark's wall time can approach half its CPU-seconds, never less. Driver memory: the Python driver's peak
RSS and the JVM's, for the fleet job on a tenth of the groups and on all of them (in local mode the JVM is driver and
executors at once, so its figure includes the executors' work). Best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench_support import memory_kib
from process_cpu import descends, process_table

from zkconsumer.fleet.analysis import analyze_group
from zkconsumer.fleet.class_archive import ARCHIVE_ENV
from zkconsumer.fleet.event_columns import grouped_column_figures
from zkconsumer.fleet.events import member_figures
from zkconsumer.fleet.events_job import CONSUMER_ID_PATTERN
from zkconsumer.fleet.pages import FleetSummary
from zkconsumer.fleet.snapshot import decode, encode
from zkconsumer.fleet.synthetic import synthetic_groups

STEPS = ("read_cluster", "stop_fetchers", "commit_offsets", "release", "assign", "fetch_offsets", "build_registry",
         "claim", "start_fetchers")
NUMBERS = {"read_cluster": 1, "stop_fetchers": 2, "commit_offsets": 2, "release": 4, "assign": 5,
           "fetch_offsets": 6, "build_registry": 7, "claim": 8, "start_fetchers": 9}


def write_events(path: Path, count: int, seed: int = 1) -> None:
    """``count`` event lines, members in groups of 3-6, rebalancing together round after round."""
    rng = random.Random(seed)
    clock = datetime(2026, 1, 1, tzinfo=UTC)
    written = 0
    with open(path, "w") as out:
        def emit(fields: dict, when: datetime) -> None:
            nonlocal written
            fields["timestamp"] = when.isoformat().replace("+00:00", "Z")
            out.write(json.dumps(fields) + "\n")
            written += 1

        group_index = 0
        while written < count:
            group = f"bench{group_index}"
            group_index += 1
            members = [f"{group}_c{i}" for i in range(rng.randint(3, 6))]
            partitions = 12
            for rebalance in range(1, 41):
                if written >= count:
                    break
                start = clock = clock + timedelta(seconds=rng.uniform(1, 30))
                for index, cid in enumerate(members):
                    base = {"consumer_id": cid, "group": group, "rebalance_id": rebalance}
                    t = start + timedelta(milliseconds=rng.uniform(0, 20))
                    emit({**base, "event": "rebalance.started", "cause": "members_changed", "strategy": "range"}, t)
                    mine = [{"topic": "t", "partition": p, "thread": f"{cid}-0"}
                            for p in range(partitions) if p % len(members) == index]
                    attempts = 2 if rng.random() < 0.125 else 1
                    for attempt in range(1, attempts + 1):
                        for step in STEPS:
                            duration = rng.lognormvariate(0.5, 1.2)
                            t += timedelta(milliseconds=duration)
                            fields = {**base, "attempt": attempt, "step": NUMBERS[step], "duration_ms": duration,
                                      "event": f"rebalance.{step}"}
                            if step == "assign":
                                fields |= {"members": members, "assignment": mine, "partitions": {"t": partitions}}
                            if step == "claim":
                                conflicted = attempt < attempts
                                fields |= {"claimed": [] if conflicted else mine, "already_ours": [],
                                           "conflicts": mine[:1] if conflicted else []}
                            emit(fields, t)
                            if step == "claim" and attempt < attempts:
                                emit({**base, "attempt": attempt, "event": "rebalance.attempt_failed",
                                      "reason": "ownership conflict", "backoff_ms": 200}, t)
                                t += timedelta(milliseconds=200)
                                break
                    emit({**base, "event": "rebalance.completed", "attempts": attempts, "duration_ms": 50.0,
                          "owned": mine}, t)
                    emit({"consumer_id": cid, "group": group, "event": "fetcher.started"}, t)


def fleet_loop(snapshot: Path) -> tuple[int, int]:
    groups = moved = 0
    with open(snapshot) as f:
        for line in f:
            analysis = analyze_group(decode(line))
            groups += 1
            moved += sum(s.moved_partitions for s in analysis.strategies)
    return groups, moved


def events_loop(path: Path) -> tuple[int, int]:
    by_member: dict[str | None, list[str]] = defaultdict(list)
    with open(path) as f:
        for line in f:
            try:
                cid = json.loads(line).get("consumer_id")
            except ValueError:
                cid = None
            by_member[cid].append(line)
    rebalances = steps = 0
    for cid, lines in by_member.items():
        figures = member_figures(cid, lines)
        rebalances += len(figures.rebalances)
        steps += len(figures.steps)
    return rebalances, steps


def events_columns_loop(path: Path) -> tuple[int, int]:
    """What the job's tasks do, in one process: the lines grouped by the job's key, the regular members' figures over
    Arrow columns (:func:`grouped_column_figures`), the others by ``member_figures``."""
    key = re.compile(CONSUMER_ID_PATTERN)
    by_member: dict[str | None, list[str]] = defaultdict(list)
    with open(path) as f:
        for line in f:
            found = key.search(line)
            by_member[found[1] if found and found[1] else None].append(line.rstrip("\n"))
    figures = grouped_column_figures(by_member)
    rebalances, steps = figures.rebalances.num_rows, figures.steps.num_rows
    for cid in by_member:
        if cid is None or cid not in figures.members:
            other = member_figures(cid, by_member[cid])
            rebalances += len(other.rebalances)
            steps += len(other.steps)
    return rebalances, steps


def best(repeat: int, run):
    results = [run() for _ in range(repeat)]
    return min(results, key=lambda r: r["wall"])


def pressure() -> str:
    load = "load {:.1f}/{:.1f}/{:.1f}".format(*os.getloadavg())
    try:
        some = Path("/proc/pressure/cpu").read_text().split()[1].split("=")[1]
        return f"{load}, CPU pressure {some} %"
    except (OSError, IndexError):
        return load


def tree_cpu() -> dict[str, float]:
    """CPU-seconds of this process and its descendants (the JVM, the Python daemon and workers), from /proc."""
    procs = process_table()
    me = os.getpid()
    cpu = {"driver": procs[me][2], "jvm": 0.0, "python workers": 0.0}
    for pid, (_parent, comm, own, reaped) in procs.items():
        if pid != me and descends(procs, pid, me):
            kind = "jvm" if comm == "java" else "python workers"
            cpu[kind] += own + (reaped if kind != "jvm" else 0)
    return cpu


def child(job: str, path: str, output: str, warm_up: str) -> int:
    """One Spark measurement in this (fresh) process, as the command runs it: session start, the job (after the same
    job on ``warm_up`` unless it is ``-``: a running session), the session stopped (waiting for the JVM to write the
    class archive when this run records it); JSON out."""
    started, cpu0 = time.perf_counter(), tree_cpu()
    from zkconsumer.fleet.events_job import run_events_job
    from zkconsumer.fleet.fleet_job import run_fleet_job
    from zkconsumer.fleet.spark_session import command_session

    with command_session("local[2]", f"zkconsumer-bench-{job}") as spark:
        session = time.perf_counter() - started
        jvm_pid = spark.sparkContext._gateway.proc.pid
        run = run_fleet_job if job == "fleet" else run_events_job
        if warm_up != "-":
            run(spark, [warm_up], output)
            shutil.rmtree(output)
            session, cpu0 = time.perf_counter() - started, tree_cpu()
        summary = run(spark, [path], output)
        if isinstance(summary, FleetSummary):
            check = {"groups": summary.totals.groups, "moved": sum(s.moved_partitions for s in summary.strategies)}
        else:
            check = {"rebalances": summary.totals.rebalances}
        job_time = time.perf_counter() - started - session
        jvm_rss = memory_kib(pid=jvm_pid)
        cpu = tree_cpu()
    print(json.dumps({"wall": time.perf_counter() - started, "session": session, "job": job_time, "check": check,
                      "cpu": {k: round(cpu[k] - cpu0.get(k, 0.0), 1) for k in cpu},
                      "driver_peak_kb": memory_kib("VmHWM"), "jvm_kb": jvm_rss}))
    return 0


def spark_run(job: str, path: Path, output: Path, warm_up: Path | None = None, archive: bool = True) -> dict:
    """A child's measurement; its class archive (:mod:`zkconsumer.fleet.class_archive`) is the run's own, in the
    directory of ``output``: the first child records it, as a user's first command does, the others map it (unless
    ``archive`` is False: a JVM loading Spark's classes afresh, as without the archive)."""
    before = pressure()
    env = {**os.environ, ARCHIVE_ENV: str(output.parent / "class-archive") if archive else "off"}
    done = subprocess.run([sys.executable, __file__, "--child", job, str(path), str(output), str(warm_up or "-")],
                          check=True, capture_output=True, text=True, env=env)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["pressure"] = f"{before} -> {pressure()}"
    shutil.rmtree(output, ignore_errors=True)
    return result


def loop_run(run, path: Path) -> dict:
    before = pressure()
    started, cpu = time.perf_counter(), time.process_time()
    check = run(path)
    return {"wall": time.perf_counter() - started, "cpu": time.process_time() - cpu, "check": check,
            "pressure": f"{before} -> {pressure()}"}


def report(what: str, loop: dict, spark: dict, running: dict) -> None:
    def cpu(run: dict) -> str:
        figures = run["cpu"]
        return (f"{sum(figures.values()):.1f} CPU-s: Python workers {figures['python workers']:.1f}, JVM "
                f"{figures['jvm']:.1f}, driver {figures['driver']:.1f}; {run['pressure']}")

    print(f"{what}:\n  loop {loop['wall']:.1f} s ({loop['cpu']:.1f} CPU-s; {loop['pressure']})\n"
          f"  Spark local[2], a new session: {spark['wall']:.1f} s end to end = session start {spark['session']:.1f} s"
          f" + job {spark['job']:.1f} s ({cpu(spark)})\n"
          f"  Spark local[2], a running session (the same job on a tenth of the input first): job "
          f"{running['job']:.1f} s ({cpu(running)})\n"
          f"  loop / Spark: {loop['wall'] / spark['wall']:.2f}x end to end, {loop['wall'] / spark['job']:.2f}x "
          f"without the session start, {loop['wall'] / running['job']:.2f}x in a running session")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", choices=("fleet", "events"))
    parser.add_argument("--child", nargs=4, metavar=("JOB", "INPUT", "OUTPUT", "WARM_UP"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child)

    work = Path(tempfile.mkdtemp(prefix="zkconsumer-fleet-bench-"))
    try:
        small, big, events = work / "small.jsonl", work / "fleet.jsonl", work / "events.jsonl"
        events_tenth = work / "events-tenth.jsonl"
        with open(big, "w") as out:
            out.writelines(encode(r) + "\n" for r in synthetic_groups(args.groups, seed=1))
        with open(big) as f, open(small, "w") as out:
            out.writelines(itertools.islice(f, max(args.groups // 10, 1)))
        if args.only != "fleet":
            write_events(events, args.events)
            with open(events) as f, open(events_tenth, "w") as out:
                out.writelines(itertools.islice(f, max(args.events // 10, 1)))
        print(f"python {platform.python_version()}, {os.cpu_count()} cores; {args.groups} groups "
              f"({big.stat().st_size / 1e6:.1f} MB), {args.events} events"
              + (f" ({events.stat().st_size / 1e6:.1f} MB)" if events.exists() else ""))

        first = spark_run(args.only or "fleet", small if args.only != "events" else events_tenth, work / "out")
        print(f"  the first command ever (records the class archive): {first['wall']:.1f} s ({first['pressure']})")
        if args.only != "events":
            small_run = spark_run("fleet", small, work / "out")
            spark = best(args.repeat, lambda: spark_run("fleet", big, work / "out"))
            running = best(args.repeat, lambda: spark_run("fleet", big, work / "out", small))
            loop = best(args.repeat, lambda: loop_run(fleet_loop, big))
            groups, moved = loop["check"]
            for run in (spark, running):
                assert run["check"] == {"groups": groups, "moved": moved} and groups == args.groups, (run, loop)
            report(f"analyze fleet, {groups} groups", loop, spark, running)
            print(f"  driver: Python peak RSS {small_run['driver_peak_kb'] / 1024:.0f} MB for {args.groups // 10} "
                  f"groups, {spark['driver_peak_kb'] / 1024:.0f} MB for {args.groups}; JVM (driver and executors in "
                  f"local mode) {small_run['jvm_kb'] / 1024:.0f} MB, {spark['jvm_kb'] / 1024:.0f} MB")
        if args.only != "fleet":
            spark = best(args.repeat, lambda: spark_run("events", events, work / "out"))
            fresh = best(args.repeat, lambda: spark_run("events", events, work / "out", archive=False))
            running = best(args.repeat, lambda: spark_run("events", events, work / "out", events_tenth))
            loop = best(args.repeat, lambda: loop_run(events_loop, events))
            columns = best(args.repeat, lambda: loop_run(events_columns_loop, events))
            rebalances, steps = loop["check"]
            assert columns["check"] == loop["check"], (columns, loop)
            for run in (spark, fresh, running):
                assert run["check"] == {"rebalances": rebalances}, (run, loop)
            report(f"analyze events, {args.events} events ({rebalances} rebalances, {steps} steps)", loop, spark,
                   running)
            print(f"  without the class archive: {fresh['wall']:.1f} s end to end = session start "
                  f"{fresh['session']:.1f} s + job {fresh['job']:.1f} s ({sum(fresh['cpu'].values()):.1f} CPU-s, JVM "
                  f"{fresh['cpu']['jvm']:.1f}; {fresh['pressure']}): {loop['wall'] / fresh['wall']:.2f}x the loop; "
                  f"the archive's end to end {fresh['wall'] / spark['wall']:.2f}x as fast")
            print(f"  the tasks' column figures in one process: {columns['wall']:.1f} s ({columns['cpu']:.1f} CPU-s; "
                  f"{columns['pressure']}): {loop['wall'] / columns['wall']:.2f}x the loop, Spark end to end "
                  f"{columns['wall'] / spark['wall']:.2f}x it")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
