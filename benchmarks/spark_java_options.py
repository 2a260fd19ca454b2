"""A small local Spark job's CPU under two sets of JVM options, in the same run: the commands' local sessions' own
(``LOCAL_JAVA_OPTIONS``: C1 alone, the default collector, G1) against the test suite's (``tests/support.py``'s
``SPARK_JAVA_OPTIONS``: C1 and the serial collector).

Run: ``.venv/bin/python benchmarks/spark_java_options.py [--rounds N] [--rows N]``. No server. Each round runs each
set once, alternating, every job in a fresh process with a session of its own (class archive off, so neither maps
classes the other recorded): a group-by over ``--rows`` rows and a JSON read of a thousand lines, the size of the
suite's Spark tests' jobs. Measured: the CPU-seconds of the process and its JVM (``/proc``, read just before the
session stops); the whole machine's busy CPU-seconds from the process's start to its end (``/proc/stat``: the JVM's
exit and its launcher included, and anything else running, so read it on a quiet machine: the load average is
printed); and the wall time from the session's start. The medians of the rounds, and their ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERIAL = "-XX:+UseSerialGC"

JOB = """
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
os.environ["ZKCONSUMER_SPARK_CLASS_ARCHIVE"] = "off"
from process_cpu import tree_cpu
from zkconsumer.fleet.spark_session import spark_session
began = time.monotonic()
spark = spark_session("local[2]", "java-options", {"spark.driver.defaultJavaOptions": sys.argv[2]})
rows = spark.range(int(sys.argv[3])).selectExpr("id % 7 as k").groupBy("k").count().collect()
lines = spark.sparkContext.parallelize(['{"a": %d}' % i for i in range(1000)])
assert len(rows) == 7 and spark.read.json(lines).count() == 1000
print(json.dumps({"cpu": tree_cpu(os.getpid()), "wall": time.monotonic() - began}))
spark.stop()
"""


def machine_busy_s() -> float:
    """CPU-seconds the machine has spent busy since boot (user, nice, system, irq, softirq)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    return sum(int(fields[i]) for i in (0, 1, 2, 5, 6)) / os.sysconf("SC_CLK_TCK")


def job(options: str, rows: int) -> dict[str, float]:
    before = machine_busy_s()
    done = subprocess.run([sys.executable, "-c", JOB, str(HERE), options, str(rows)], capture_output=True, text=True,
                          timeout=600, check=True)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return {**figures, "machine": machine_busy_s() - before}


def main() -> int:
    from zkconsumer.fleet.spark_session import LOCAL_JAVA_OPTIONS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rows", type=int, default=200_000)
    args = parser.parse_args()
    sets = {"commands' (G1)": LOCAL_JAVA_OPTIONS, "suite's (serial)": f"{LOCAL_JAVA_OPTIONS} {SERIAL}"}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in sets}
    for _ in range(args.rounds):
        for name, options in sets.items():
            runs[name].append(job(options, args.rows))
    print(f"load average {os.getloadavg()[0]:.2f} at the end; {args.rounds} rounds, medians")
    medians = {name: {key: statistics.median(r[key] for r in results) for key in ("cpu", "machine", "wall")}
               for name, results in runs.items()}
    for name, options in sets.items():
        m = medians[name]
        print(f"{name:18} {options:42} CPU {m['cpu']:6.2f} s   machine {m['machine']:6.2f} s   wall {m['wall']:6.2f} s")
    base, serial = medians["commands' (G1)"], medians["suite's (serial)"]
    print(f"serial / G1: CPU {serial['cpu'] / base['cpu']:.2f}x, machine {serial['machine'] / base['machine']:.2f}x, "
          f"wall {serial['wall'] / base['wall']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
