"""How long ``zkconsumer simulate storm`` takes, on one core, for a fleet-sized group: 1,000 members starting at once
on 100,000 partitions by default, each protocol in a process of its own pinned to one core, beside the same
simulation at a tenth of the size (100 members on 10,000 partitions) in the same run, so that the ratio says how the
simulation's cost grows.

Run: ``.venv/bin/python benchmarks/storm.py [--members 1000] [--partitions 100000] [--protocols ...]
[--max-seconds 1800] [--before DIR]``. ``--before DIR``: a copy of the package as it was before a change
(``git archive REV zkconsumer | tar -x -C DIR``), each size run with it too, beside the code of this tree.

Per protocol and size: the simulation's predicted figures (time to stable, partition-seconds
paused, ZooKeeper requests, conflicts, member rebalances, ZooKeeper answers timed out, members out of retries), the
events it ran, and its own runtime: wall time and CPU (the child process's user + system). A run past
``--max-seconds`` is shown as ``>N s`` and its figures as missing. This is a benchmark, not a test: nothing here
fails on slowness.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

from bench_support import machine

from zkconsumer.storm.simulation import DEFAULT_PROTOCOLS

CHILD = """
import json, sys
from zkconsumer.storm.simulation import play, storm_scenario
from zkconsumer.storm.parameters import StormParameters
members, partitions, protocol = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
figures = play(storm_scenario(members, partitions), protocol, StormParameters())
scene = figures.scenes[0]
print(json.dumps({"time_to_stable_s": scene.time_to_stable_s, "paused": scene.partition_seconds_paused,
                  "zk": scene.zookeeper_requests, "conflicts": scene.conflicts, "rebalances": scene.rebalances,
                  "timeouts": scene.request_timeouts, "exhausted": scene.retries_exhausted,
                  "events": figures.events_run}))
"""


def one(members: int, partitions: int, protocol: str, max_seconds: float,
        code: str | None = None) -> tuple[dict | None, float, float]:
    """The figures (None past the limit), wall seconds, CPU seconds of one simulation in a child on one core;
    ``code``: a directory whose ``zkconsumer`` the child imports instead of this tree's."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    core = sorted(os.sched_getaffinity(0))[0]
    env = {**os.environ, "PYTHONPATH": code} if code else None
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(members), str(partitions), protocol],
                              capture_output=True, text=True, timeout=max_seconds, check=True, env=env,
                              cwd=code, preexec_fn=lambda: os.sched_setaffinity(0, {core}))
        figures = json.loads(done.stdout)
    except subprocess.TimeoutExpired:
        figures = None
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return figures, wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--members", type=int, default=1_000, help="members starting at once (1000)")
    parser.add_argument("--partitions", type=int, default=100_000, help="partitions (100000)")
    parser.add_argument("--protocols", default=",".join(DEFAULT_PROTOCOLS), help="comma-separated protocols")
    parser.add_argument("--max-seconds", type=float, default=1_800.0, help="give up on one simulation after (1800)")
    parser.add_argument("--before", metavar="DIR", help="a copy of the package before a change, run beside this tree")
    args = parser.parse_args()
    codes = [("this tree", None), *([("before", os.path.abspath(args.before))] if args.before else [])]
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}, one core per simulation, "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'protocol':20} {'code':9} {'members':>7} {'partitions':>10} {'stable':>9} {'part-s paused':>13} "
          f"{'ZK requests':>11} {'conflicts':>9} {'rebalances':>10} {'timeouts':>8} {'gave up':>7} {'events':>10} "
          f"{'wall':>9} {'CPU':>9} {'CPU / tenth':>11}")
    for protocol, (label, code) in ((p, c) for p in args.protocols.split(",") for c in codes):
        tenth_cpu = 0.0
        for members, partitions in ((max(1, args.members // 10), max(1, args.partitions // 10)),
                                    (args.members, args.partitions)):
            figures, wall, cpu = one(members, partitions, protocol, args.max_seconds, code)
            ratio = f"{cpu / tenth_cpu:10.0f}x" if tenth_cpu and members == args.members else ""
            tenth_cpu = tenth_cpu or cpu
            if figures is None:
                print(f"{protocol:20} {label:9} {members:>7,} {partitions:>10,} {'':>9} {'':>13} {'':>11} {'':>9} "
                      f"{'':>10} {'':>8} {'':>7} {'':>10} {'>' + format(wall, '.0f') + ' s':>9} {cpu:8.1f}s "
                      f"{ratio:>11}",
                      flush=True)
                continue
            stable = "-" if figures["time_to_stable_s"] is None else f"{figures['time_to_stable_s']:.2f} s"
            print(f"{protocol:20} {label:9} {members:>7,} {partitions:>10,} {stable:>9} {figures['paused']:>13,.0f} "
                  f"{figures['zk']:>11,} {figures['conflicts']:>9} {figures['rebalances']:>10} "
                  f"{figures['timeouts']:>8} {figures['exhausted']:>7} {figures['events']:>10,} {wall:8.1f}s "
                  f"{cpu:8.1f}s {ratio:>11}", flush=True)


if __name__ == "__main__":
    main()
