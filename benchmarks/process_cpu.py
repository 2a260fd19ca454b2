"""CPU-seconds of a process and its descendants, from ``/proc`` (Linux): what a benchmark's peer on a shared machine
is compared by when the wall time says more about the other users' load than about the code."""

from __future__ import annotations

import os
from pathlib import Path


def process_table() -> dict[int, tuple[int, str, float, float]]:
    """pid -> (parent pid, command name, own CPU-seconds, CPU-seconds of its reaped children)."""
    tick = os.sysconf("SC_CLK_TCK")
    procs = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        comm, rest = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        procs[int(entry)] = (int(rest[1]), comm, (int(rest[11]) + int(rest[12])) / tick,
                             (int(rest[13]) + int(rest[14])) / tick)
    return procs


def descends(procs: dict[int, tuple[int, str, float, float]], pid: int, root: int) -> bool:
    while pid in procs and pid != root:
        pid = procs[pid][0]
    return pid == root


def tree_cpu(root: int) -> float:
    """CPU-seconds of ``root`` and every process below it (with what they reaped of their own children)."""
    procs = process_table()
    return sum(own + reaped for pid, (_parent, _comm, own, reaped) in procs.items() if descends(procs, pid, root))
