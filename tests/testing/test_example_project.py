"""examples/migration_testing as an outside project runs it: a fresh virtual environment with the wheel and its
``testing`` extra (tests/fresh_install.py, as tests/test_install.py makes one), the
example copied out of the repository, its tests run by its own ``make test`` through the installed plugin and the
embedded environment (the servers the plugin starts in that session). Every process of those sessions carries a
marker in its environment, so that what any of them left behind is found, also after an interrupt. What the example's
assertions say of an application that loses messages is shown in the test's own process (tests/testing/test_plugin.py):
each session here costs a minute of servers and members."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from fresh_install import REPO, FreshEnvironment, fresh_environment
from support import wait_for
from time_scale import bounded

from zkconsumer.embedded.kafka_artifacts import KAFKA_DIR_ENV, kafka_dir

pytestmark = [pytest.mark.migration, pytest.mark.spark_run, pytest.mark.timeout(900)]
EXAMPLE = REPO / "examples" / "migration_testing"
MARK = "ZKCONSUMER_EXAMPLE_RUN"
@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> FreshEnvironment:
    return fresh_environment(tmp_path_factory.mktemp("example-install"), extras="testing")


def copy_of_example(root: Path) -> Path:
    project = root / "migration_testing"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache"))
    return project


def marked_processes(mark: str) -> list[str]:
    """The command lines of the processes whose environment carries ``MARK=mark``."""
    found = []
    needle = f"{MARK}={mark}".encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            if needle in (proc / "environ").read_bytes().split(b"\0"):
                found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
        except OSError:  # gone meanwhile, or not ours to read
            continue
    return found


def make_test(fresh: FreshEnvironment, project: Path, mark: str, *pytest_args: str) -> subprocess.CompletedProcess:
    # the Java consumer's test compiles it against the Kafka 4 jars this checkout installed
    return fresh.run("make", "test", f"PYTHON={fresh.python}", f"PYTEST_ARGS={' '.join(pytest_args)}",
                     cwd=project, env={MARK: mark, KAFKA_DIR_ENV: str(kafka_dir())}, timeout=300)


def test_the_example_passes_in_two_workers_and_leaves_no_process(fresh, tmp_path):
    project, mark = copy_of_example(tmp_path), uuid.uuid4().hex
    began = time.monotonic()
    done = make_test(fresh, project, mark, "-n", "2", "-p", "no:cacheprovider")
    took = time.monotonic() - began
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert re.search(r"\b4 passed\b", done.stdout), done.stdout[-2000:]  # the Java consumer's test not skipped
    assert "created: 2/2 workers" in done.stdout  # pytest-xdist's two workers, each with its own servers
    print(f"the example's tests in two workers: {took:.0f} s")
    wait_for(lambda: not marked_processes(mark), timeout=10)


def take_ctrl_c() -> None:
    """In the session's process before it runs Python: SIGINT as a terminal's Ctrl-C sends it, whatever this test's
    own process inherited (an xdist worker, or a command started with & by a shell, ignores it, and Python keeps an
    inherited SIG_IGN instead of raising KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_an_interrupted_session_leaves_no_process_behind(fresh, tmp_path):
    project, mark = copy_of_example(tmp_path), uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    session = subprocess.Popen([fresh.python, "-m", "pytest", "-p", "no:cacheprovider", "-k", "zookeeper"],
                               cwd=project, env={**env, MARK: mark}, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, preexec_fn=take_ctrl_c)
    try:
        # interrupted once its members run: ZooKeeper, the broker, the front, the comparison's front and members
        wait_for(lambda: any("legacy_member" in c or "modern_member" in c for c in marked_processes(mark)),
                 timeout=120)
        session.send_signal(signal.SIGINT)
        output, _ = session.communicate(timeout=bounded(120))
    finally:
        if session.poll() is None:
            session.kill()
            session.wait()  # no timeout: SIGKILL cannot be caught or ignored
    assert "KeyboardInterrupt" in output, output[-2000:]
    wait_for(lambda: not marked_processes(mark), timeout=30)
