"""Where the test processes' own CPU goes, test by test: a pytest plugin that records, for each test (its setup, call
and teardown), the CPU its process spent (every thread: ``time.process_time``) and the CPU of the children it reaped
meanwhile, one JSON line a test into DIR/<worker>.jsonl; run as a script, the totals by module. Beside
``cpu_sample.py``, which sees every process but not which test it served (docs/development.md, run 62):

    ZKCONSUMER_CPU_PER_TEST=cpu PYTHONPATH=scripts scripts/run_tests.sh .venv -p cpu_per_test
    python3 scripts/cpu_per_test.py cpu

Given as an argument rather than in ``PYTEST_ADDOPTS``, the plugin stays out of the nested pytest sessions some
tests start (their virtual environments lack it). A module or session fixture's CPU goes to the test that sets it up
or tears it down; a child's CPU is counted when it is reaped, so a session server's whole CPU goes to the test that
ends its worker: the children figure names no module. Standard library and pytest only.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

_out: list[IO[str]] = []  # this process's file, opened at its first test


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    if not _out:
        directory = Path(os.environ.get("ZKCONSUMER_CPU_PER_TEST", "cpu-per-test"))
        directory.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        _out.append(open(directory / f"{worker}-{os.getpid()}.jsonl", "a"))  # noqa: SIM115 (open for the session)
    cpu, children, began = time.process_time(), _children_cpu(), time.monotonic()
    yield
    record = {"id": item.nodeid, "cpu": time.process_time() - cpu, "children": _children_cpu() - children,
              "wall": time.monotonic() - began}
    _out[0].write(json.dumps(record) + "\n")
    _out[0].flush()


def by_module(records: list[dict[str, Any]]) -> tuple[Counter[str], Counter[str]]:
    """The tests' own CPU and their children's, summed by test module."""
    own: Counter[str] = Counter()
    children: Counter[str] = Counter()
    for record in records:
        module = record["id"].split("::", 1)[0]
        own[module] += record["cpu"]
        children[module] += record["children"]
    return own, children


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: cpu_per_test.py DIR", file=sys.stderr)
        return 2
    records = [json.loads(line) for path in sorted(Path(argv[0]).glob("*.jsonl")) for line in path.open()]
    own, children = by_module(records)
    print(f"{len(records)} tests: {sum(own.values()):.1f} CPU-s in their processes, "
          f"{sum(children.values()):.1f} in children reaped")
    for module, seconds in own.most_common(20):
        print(f"{seconds:7.1f} {children[module]:7.1f}  {module}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
