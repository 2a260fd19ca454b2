"""``zkconsumer analyze`` and ``simulate sweep`` on a cluster master, as the README promises: a Spark standalone master
and a worker started from PySpark's own ``spark-class``, the command run as a user runs it with ``--master
spark://...``. The executor is a JVM of its own, started by the worker, with Python workers of its own; the tasks
write their files into the output directory on the file system they share with the driver. The tables are checked
against the same hand-made fleet's figures as on ``local[2]`` (tests/spark/test_fleet_job.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hand_made_fleet import FLEET
from support import SPARK_JAVA_OPTIONS, wait_for, zkconsumer_cli
from time_scale import bounded

from zkconsumer.embedded.process import free_port
from zkconsumer.fleet.snapshot import encode


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[tuple[str, Path, dict[str, str]]]:
    """A standalone master with one worker of 2 cores, for the module's tests (a cluster's start is some ten seconds);
    its URL, the worker's directory, where each application's executors log, and the environment a command is run
    in (its Spark configuration directory). Both are killed with their executors after."""
    tmp_path = tmp_path_factory.mktemp("cluster")
    import pyspark

    home = Path(pyspark.__file__).parent
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(f"spark.driver.defaultJavaOptions {SPARK_JAVA_OPTIONS}\n"
                                              f"spark.executor.defaultJavaOptions {SPARK_JAVA_OPTIONS}\n")
    env = {**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_NO_DAEMONIZE": "1",
           "SPARK_CONF_DIR": str(conf), "SPARK_DAEMON_JAVA_OPTS": SPARK_JAVA_OPTIONS}
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    logs = {name: tmp_path / f"{name}.log" for name in ("master", "worker")}
    commands = {
        "master": ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                   "--webui-port", str(free_port())],
        "worker": ["org.apache.spark.deploy.worker.Worker", "--cores", "2", "--memory", "1g", "--webui-port",
                   str(free_port()), "--work-dir", str(tmp_path / "work"), url],
    }
    started = []
    try:
        for name in ("master", "worker"):
            with open(logs[name], "w") as log:
                started.append(subprocess.Popen([str(home / "bin" / "spark-class"), *commands[name]], env=env,
                                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True))
            if name == "master":
                wait_for(lambda: "ALIVE" in logs["master"].read_text(), timeout=60, interval=0.2)
        wait_for(lambda: "Registering worker" in logs["master"].read_text(), timeout=60, interval=0.2)
        yield url, tmp_path / "work", {"SPARK_CONF_DIR": str(conf)}
    finally:
        for process in reversed(started):  # the worker's process group holds its executors
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=bounded(30))


def ran_in_an_executor(cluster: tuple[str, Path, dict[str, str]], before: set[Path]) -> None:
    """The tasks of the application the test started ran in an executor the worker started, not in the command's
    own JVM."""
    apps = set(cluster[1].glob("app-*")) - before
    executors = [p for app in apps for p in app.glob("*/stderr")]
    assert executors and any("Running task" in p.read_text() for p in executors), (apps, executors)


@pytest.mark.timeout(450)  # its waits: 60 + 60 s for the cluster, 240 s for the command, 30 s to end it
def test_analyze_fleet_on_a_standalone_master(cluster, tmp_path):
    master, before = cluster[0], set(cluster[1].glob("app-*"))
    snapshot = tmp_path / "fleet.jsonl"
    snapshot.write_text("".join(encode(g) + "\n" for g in FLEET) + "not a record\n")
    out = tmp_path / "out"

    done = zkconsumer_cli("analyze", "fleet", str(snapshot), "--output", str(out), "--master", master, env=cluster[2],
                          timeout=240)

    assert done.returncode == 0, done.stderr[-3000:]
    assert "analysed 3 groups (2 needing attention, 1 broken lines skipped)" in done.stderr, done.stderr[-3000:]
    import pyarrow.parquet as pq

    groups = {r["group"]: r for r in pq.read_table(out / "groups").to_pylist()}
    assert (groups["broken"]["unowned"], groups["broken"]["dead_owners"], groups["broken"]["owned_twice"]) == (1, 1, 1)
    strategies = {(r["group"], r["strategy"]): r for r in pq.read_table(out / "strategies").to_pylist()}
    assert len(strategies) == 15 and strategies[("settled", "roundrobin")]["moved_partitions"] == 2
    assert sorted(p.name for p in out.iterdir()) == ["groups", "strategies", "summary.html"]
    ran_in_an_executor(cluster, before)


@pytest.mark.timeout(450)  # as above
def test_simulate_sweep_on_a_standalone_master(cluster, tmp_path):
    master, before = cluster[0], set(cluster[1].glob("app-*"))
    out = tmp_path / "sweep"

    done = zkconsumer_cli("simulate", "sweep", "--members", "2,3", "--partitions", "10", "--protocols",
                          "legacy-range,kip848-uniform", "--out", str(out), "--master", master, env=cluster[2],
                          timeout=240)

    assert done.returncode == 0, done.stderr[-3000:]
    import pyarrow.parquet as pq

    runs = pq.read_table(out / "runs").to_pylist()
    assert sorted((r["protocol"], r["members"]) for r in runs) == [("kip848-uniform", 2), ("kip848-uniform", 3),
                                                                   ("legacy-range", 2), ("legacy-range", 3)]
    assert all(r["time_to_stable_s"] > 0 for r in runs)
    assert sorted(p.name for p in out.iterdir()) == ["runs", "sweep.html"]
    assert "wrote" in done.stdout and "legacy-range" in done.stdout
    ran_in_an_executor(cluster, before)
