"""A legacy group on 10,000 partitions, two versions of the package side by side: one member taking the whole topic,
then nineteen joining it (tests/consumer/test_large_group.py's group), timed on the same servers in one run.

Run: ``.venv/bin/python benchmarks/large_group_join.py --before DIR [--repeat 3] [--partitions 10000]``, where
``DIR`` holds another checkout of the project (``git worktree add /tmp/before <commit>``). ZooKeeper, the broker and
the metadata bridge are started once (``bench_support.servers``) and the topic is written to ZooKeeper the ZooKeeper
way, as in ``benchmarks/rebalance.py``, whose ``join`` every run uses. Each join runs in a fresh Python process
whose ``PYTHONPATH`` is the version's checkout, so the two versions alternate on the same warm server (``before``
first in odd rounds, ``after`` first in even ones), and load from elsewhere on the machine falls on both alike:

* ``1 alone``: one member's ``create_message_streams`` until it owns all the partitions (one owner znode each);
* ``19 into 1``: one member owns everything, nineteen more call ``create_message_streams`` at once, and the clock
  runs until the twenty hold their range shares and ZooKeeper has one owner znode per partition.

Printed per scenario and version: the median wall time and the member process's CPU (all its threads, over the same
interval), the ZooKeeper requests (the server's ``zk_packets_received``, ``mntr``) and the failed attempts; then
after / before for each. The load average before and after the run is printed with it. This is a benchmark, not a
test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIOS = {"1 alone": (1, False), "19 into 1": (20, True)}


def child(args: argparse.Namespace) -> None:
    """One join against running servers, with whatever ``zkconsumer`` the ``PYTHONPATH`` gives; one JSON line out."""
    import structlog
    from rebalance import EventTally, join

    from zkconsumer.zk.client import close_client, open_client

    tally = EventTally()
    structlog.configure(processors=[tally])
    root, zk = open_client(args.root), open_client(args.connect)
    try:
        members, into_one = SCENARIOS[args.scenario]
        result = join(args.connect, root, zk, args.topic, args.partitions, members, "batched", tally, into_one,
                      args.max_seconds)
    finally:
        close_client(zk)
        close_client(root)
    print(json.dumps(asdict(result)), flush=True)


def run_child(tree: Path, servers, topic: str, partitions: int, scenario: str, max_seconds: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", "--scenario", scenario, "--root",
            servers.zookeeper, "--connect", servers.connect, "--topic", topic, "--partitions", str(partitions),
            "--max-seconds", str(max_seconds)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=max_seconds + 120, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree} {scenario}: exit status {done.returncode}\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    return " ".join(f"{n:.2f}" for n in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the version to compare with (git worktree add)")
    parser.add_argument("--after", type=Path, default=HERE.parent, help="the checkout measured against it (this one)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of every join, medians kept (default 3)")
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated, of: " + ", ".join(SCENARIOS))
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--connect", help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.before is None:
        parser.error("--before DIR is needed: a checkout of the version to compare with")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwind the servers' context managers
    from bench_support import machine, servers

    from zkconsumer.admin import zk_topics
    from zkconsumer.admin.topic_plans import CreateRequest
    from zkconsumer.zk import paths
    from zkconsumer.zk.client import zookeeper
    from zkconsumer.zk.reads import children

    versions = {"before": args.before.resolve(), "after": args.after.resolve()}
    scenarios = args.scenarios.split(",")
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}; load average {load()}")
    print("; ".join(f"{name}: {tree} ({_commit(tree)})" for name, tree in versions.items()))
    runs: dict[tuple[str, str], list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="zkconsumer-bench-") as tmp, servers(Path(tmp)) as run_servers:
        topic = f"bench-{args.partitions}"
        with zookeeper(run_servers.connect) as zk:
            while not children(zk, paths.BROKER_IDS_PATH):
                time.sleep(0.1)
            zk_topics.write_creation(zk, zk_topics.prepare_creation(zk, CreateRequest(topic, args.partitions, 1)))
        # One unmeasured join first: the server's JIT warms up on neither version's account.
        run_child(versions["after"], run_servers, topic, args.partitions, scenarios[0], args.max_seconds)
        for round_ in range(args.repeat):
            order = list(versions) if round_ % 2 == 0 else list(reversed(versions))
            for scenario in scenarios:
                for name in order:
                    result = run_child(versions[name], run_servers, topic, args.partitions, scenario,
                                       args.max_seconds)
                    runs.setdefault((scenario, name), []).append(result)
                    print(f"  round {round_ + 1} {scenario:9} {name:6}: {result['seconds']:6.2f} s, "
                          f"CPU {result['cpu_seconds']:5.2f} s, {result['zk_requests']:,} ZK requests, "
                          f"{result['failed_attempts']} failed attempts (load {load()})", flush=True)
    print(f"medians of {args.repeat}; load average at the end {load()}")
    print(f"{'scenario':10} {'version':7} {'join s':>7} {'CPU s':>6} {'ZK requests':>11} {'failed':>6}   "
          f"{'after/before: join, CPU, requests':>34}")
    for scenario in scenarios:
        medians = {name: {key: statistics.median(r[key] for r in runs[(scenario, name)])
                          for key in ("seconds", "cpu_seconds", "zk_requests", "failed_attempts")}
                   for name in versions}
        for name, m in medians.items():
            ratio = ""
            if name == "after":
                b = medians["before"]
                ratio = (f"{m['seconds'] / b['seconds']:.2f}x  {m['cpu_seconds'] / b['cpu_seconds']:.2f}x  "
                         f"{m['zk_requests'] / max(b['zk_requests'], 1):.2f}x")
            print(f"{scenario:10} {name:7} {m['seconds']:7.2f} {m['cpu_seconds']:6.2f} {m['zk_requests']:>11,.0f} "
                  f"{m['failed_attempts']:>6.0f}   {ratio:>34}")


def _commit(tree: Path) -> str:
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=False)
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no", "zkconsumer"],
                           capture_output=True, text=True, check=False).stdout.strip()
    return (done.stdout.strip() or "not a git checkout") + (" with uncommitted changes" if dirty else "")


if __name__ == "__main__":
    main()
