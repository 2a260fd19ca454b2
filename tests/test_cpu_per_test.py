"""scripts/cpu_per_test.py, the per-test CPU record behind docs/development.md's run 62: run in pytest's own
session (``pytester``), it writes one line a test, and its summary sums them by module."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
_spec = importlib.util.spec_from_file_location("cpu_per_test", SCRIPTS / "cpu_per_test.py")
assert _spec is not None and _spec.loader is not None
cpu_per_test = importlib.util.module_from_spec(_spec)  # a script, loaded without putting scripts/ on sys.path
_spec.loader.exec_module(cpu_per_test)

pytest_plugins = ["pytester"]


def test_each_test_gets_a_line_with_its_cpu_and_the_summary_sums_them_by_module(pytester, monkeypatch, capsys):
    out = pytester.path / "cpu"
    monkeypatch.setenv("ZKCONSUMER_CPU_PER_TEST", str(out))
    pytester.syspathinsert(SCRIPTS)
    pytester.makepyfile(test_busy="""
        import subprocess, sys, time

        def test_spins():
            end = time.process_time() + 0.2
            while time.process_time() < end:
                pass

        def test_a_child_spins():
            subprocess.run([sys.executable, "-c", "import time\\nend = time.process_time() + 0.2\\n"
                            "while time.process_time() < end: pass"], check=True)
        """)
    result = pytester.runpytest("-p", "cpu_per_test", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)

    records = {r["id"]: r for path in out.glob("*.jsonl") for r in map(json.loads, path.read_text().splitlines())}
    assert set(records) == {"test_busy.py::test_spins", "test_busy.py::test_a_child_spins"}
    assert records["test_busy.py::test_spins"]["cpu"] >= 0.2
    assert records["test_busy.py::test_a_child_spins"]["children"] >= 0.2
    capsys.readouterr()  # the nested session's own output
    assert cpu_per_test.main([str(out)]) == 0
    summary = capsys.readouterr().out
    assert summary.startswith("2 tests: ") and summary.splitlines()[1].endswith("  test_busy.py")
    own, children = cpu_per_test.by_module(list(records.values()))
    assert list(own) == ["test_busy.py"] and own["test_busy.py"] >= 0.2 and children["test_busy.py"] >= 0.2
