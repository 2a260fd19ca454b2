"""``analyze fleet`` and ``analyze events`` on Spark ``local[2]``, next to a plain single-process loop of the same
pure functions on the same input, in the same run.

Run: ``.venv/bin/python benchmarks/fleet.py [--groups N] [--events N] [--repeat N]``. No server: the fleet is
``zkconsumer snapshot --synthetic`` (default 10,000 groups, seed 1; :mod:`zkconsumer.fleet.synthetic`), the events
are generated here (default 1,000,000 lines: members of groups of 3 to 6 going through complete rebalances, one in
eight with an ownership conflict and a second attempt, and some fetcher events).

* fleet loop: read the snapshot, ``analyze_group(decode(line))`` per line, keep the rows (what a script would do);
* fleet Spark: ``run_fleet_job`` (the command's job: analysis on the executors, the two Parquet tables, the page's
  aggregates and the page) on a session started and warmed beforehand (Spark's start-up is printed, not counted);
* events loop: read the files, group the lines by ``consumer_id`` in a dict, ``member_figures`` per member;
* events Spark: ``run_events_job``.

The Spark jobs do more than the loops (they also write Parquet and the page), so the ratio is, if anything, unfair
to Spark. The results are checked to agree (groups, strategies' moved partitions; rebalances, steps) before the
times are printed. Driver memory: the driver's Python RSS and the JVM's after the fleet job on a tenth of the groups
and on all of them; the job collects only aggregates, so the Python driver's stays flat (in local mode the JVM is
driver and executors at once, so its figure includes the executors' work). Best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

from zkconsumer.fleet.analysis import analyze_group
from zkconsumer.fleet.events import member_figures
from zkconsumer.fleet.snapshot import decode, encode
from zkconsumer.fleet.synthetic import synthetic_groups

STEPS = ("read_cluster", "stop_fetchers", "commit_offsets", "release", "assign", "fetch_offsets", "build_registry",
         "claim", "start_fetchers")
NUMBERS = {"read_cluster": 1, "stop_fetchers": 2, "commit_offsets": 2, "release": 4, "assign": 5,
           "fetch_offsets": 6, "build_registry": 7, "claim": 8, "start_fetchers": 9}


def rss_kb(pid: int | str = "self") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def write_events(path: Path, count: int, seed: int = 1) -> None:
    """``count`` event lines, members in groups of 3-6, rebalancing together round after round."""
    rng = random.Random(seed)
    clock = datetime(2026, 1, 1, tzinfo=timezone.utc)
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


def best(repeat: int, run) -> tuple[float, object]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    return min(times), result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F  # noqa: N812

    from zkconsumer.spark.events_job import run_events_job
    from zkconsumer.spark.fleet_job import run_fleet_job

    work = Path(tempfile.mkdtemp(prefix="zkconsumer-fleet-bench-"))
    try:
        small, big, events = work / "small.jsonl", work / "fleet.jsonl", work / "events.jsonl"
        with open(big, "w") as out:
            out.writelines(encode(r) + "\n" for r in synthetic_groups(args.groups, seed=1))
        with open(big) as f, open(small, "w") as out:
            out.writelines(itertools.islice(f, max(args.groups // 10, 1)))
        write_events(events, args.events)
        print(f"python {platform.python_version()}, {os.cpu_count()} cores; {args.groups} groups "
              f"({big.stat().st_size / 1e6:.1f} MB), {args.events} events ({events.stat().st_size / 1e6:.1f} MB)")

        started = time.perf_counter()
        spark = (SparkSession.builder.master("local[2]").appName("zkconsumer-fleet-bench")
                 .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
                 .config("spark.sql.shuffle.partitions", "8").config("spark.local.dir", str(work / "spark"))
                 .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        jvm_pid = spark.sparkContext._gateway.proc.pid
        spark.read.text(str(small)).repartition(2).count()  # warm the Python workers
        print(f"Spark session start-up {time.perf_counter() - started:.1f} s (not counted below)")

        runs = iter(range(10**6))
        def spark_fleet(path: Path):
            return run_fleet_job(spark, [str(path)], str(work / f"fleet-out-{next(runs)}"))

        spark_fleet(small)
        rss_small, jvm_small = rss_kb(), rss_kb(jvm_pid)
        spark_time, summary = best(args.repeat, lambda: spark_fleet(big))
        rss_big, jvm_big = rss_kb(), rss_kb(jvm_pid)
        out_dirs = sorted(work.glob("fleet-out-*"))
        moved_spark = out_dirs and spark.read.parquet(str(out_dirs[-1] / "strategies")).agg(
            F.sum("moved_partitions")).first()[0]
        loop_time, (groups, moved) = best(args.repeat, lambda: fleet_loop(big))
        assert summary.totals.groups == groups == args.groups and moved_spark == moved, (summary.totals, moved_spark)
        print(f"analyze fleet, {groups} groups: loop {loop_time:.1f} s, Spark local[2] {spark_time:.1f} s: "
              f"{loop_time / spark_time:.2f}x")
        print(f"  driver RSS after {args.groups // 10} groups {rss_small / 1024:.0f} MB, after {args.groups} "
              f"{rss_big / 1024:.0f} MB (JVM, driver and executors in local mode: {jvm_small / 1024:.0f} MB, "
              f"{jvm_big / 1024:.0f} MB)")

        runs_e = iter(range(10**6))
        spark_e, esummary = best(args.repeat, lambda: run_events_job(spark, [str(events)],
                                                                     str(work / f"events-out-{next(runs_e)}")))
        loop_e, (rebalances, steps) = best(args.repeat, lambda: events_loop(events))
        assert esummary.totals.rebalances == rebalances, (esummary.totals, rebalances)
        print(f"analyze events, {args.events} events ({rebalances} rebalances, {steps} steps): loop {loop_e:.1f} s, "
              f"Spark local[2] {spark_e:.1f} s: {loop_e / spark_e:.2f}x")
        spark.stop()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
