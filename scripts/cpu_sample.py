"""Where a run's CPU goes: every process's CPU time, read from ``/proc`` every two seconds for SECONDS, summed by
kind (the Spark, ZooKeeper and Kafka JVMs, the xdist workers, the fronts, Tansu, the member processes...) and written
to OUT as JSON, largest first; the 200 processes that spent most, each with its command line, to OUT.processes.
Run it beside ``make test`` (docs/development.md):

    python3 scripts/cpu_sample.py 900 cpu.json & make test

A process that starts and ends between two readings is missed, and one that ends is counted up to its last reading:
the figures are a lower bound. Linux only; standard library only.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter

TICKS_PER_S = os.sysconf("SC_CLK_TCK")
JVM_MAINS = ("QuorumPeerMain", "KafkaRaftServer", "kafka.Kafka", "SparkSubmit", "spark")
PYTHON_ROLES = (("-c import sys;exec(eval(sys.stdin.readline()))", "pytest (an xdist worker)"),
                ("pytest", "pytest"), ("zkconsumer.front", "front"), ("modern_member", "modern member"),
                ("legacy_member", "legacy member"), ("pyspark", "Spark's Python workers"))


def kind(command: str) -> str:
    """What a process is, from its command line."""
    program = command.split(" ", 1)[0]
    if program.endswith("java"):
        return "java " + next((main for main in JVM_MAINS if main in command), "other")
    if "tansu" in program:
        return "tansu"
    if "python" in program:
        return "python " + next((role for marker, role in PYTHON_ROLES if marker in command), "other")
    return os.path.basename(program)


def sample(seconds: float) -> tuple[Counter[str], Counter[str]]:
    """CPU seconds by kind, and by process (its command line, cut short)."""
    seen: dict[tuple[str, str], list] = {}  # (pid, start time) -> [kind, CPU ticks counted, command]
    spent: Counter[str] = Counter()
    by_process: Counter[str] = Counter()
    end = time.monotonic() + seconds
    first = True  # what the processes already running had spent before the sampling began is not counted
    while time.monotonic() < end:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
                ticks, started = int(fields[11]) + int(fields[12]), fields[19]  # utime + stime, starttime
                if (pid, started) not in seen:
                    with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                        command = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
                    if not command:
                        continue
                    seen[(pid, started)] = [kind(command), ticks if first else 0, f"{pid} {command[:300]}"]
                entry = seen[(pid, started)]
                spent[entry[0]] += (ticks - entry[1]) / TICKS_PER_S
                by_process[entry[2]] += (ticks - entry[1]) / TICKS_PER_S
                entry[1] = ticks
            except (OSError, IndexError, ValueError):
                continue  # gone meanwhile
        first = False
        time.sleep(2)
    return spent, by_process


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: cpu_sample.py SECONDS OUT.json", file=sys.stderr)
        return 2
    spent, by_process = sample(float(argv[0]))
    with open(argv[1], "w") as out:
        json.dump([[k, round(v, 1)] for k, v in spent.most_common()], out, indent=0)
    with open(argv[1] + ".processes", "w") as out:  # the 200 that spent most, each with its command line
        json.dump([[k, round(v, 1)] for k, v in by_process.most_common(200)], out, indent=0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
