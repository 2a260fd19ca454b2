"""The README's examples run as written: three consumers share a topic, a third of the partitions each; a Spark query
streams a topic to Parquet as a member of a group whose lag it watches fall to zero."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support import REPO, SPARK_JAVA_OPTIONS
from time_scale import bounded

EXAMPLE = REPO / "examples" / "three_consumers.py"


def test_three_consumers_share_a_topic(kafka_zk, bootstrap_servers, topic_name):
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--zookeeper", kafka_zk, "--bootstrap-server", bootstrap_servers,
         "--topic", topic_name], capture_output=True, text=True, timeout=bounded(90),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = re.findall(r"^example_consumer(\d): owns partitions \[(.*)\], got (\d+) messages", done.stdout, re.M)
    assert sorted(n for n, _, _ in lines) == ["1", "2", "3"], done.stdout
    owned = {n: [int(p) for p in parts.split(", ")] for n, parts, _ in lines}
    assert owned == {"1": [0, 1], "2": [2, 3], "3": [4, 5]}  # range over consumer1-0, consumer2-0, consumer3-0
    assert sum(int(count) for _, _, count in lines) >= 60


SPARK_EXAMPLE = REPO / "examples" / "spark_stream.py"


# Not marked spark: its Spark session is the example's own process, not the Spark run's session, and in the main
# run it waits (on the producer's ten seconds, on triggers) beside the other workers' tests instead of last in the
# Spark run, which it made the longest pass by over a minute (docs/development.md, run 54).
@pytest.mark.timeout(450)  # the example's 400 s end before it
def test_spark_stream_writes_every_message_and_the_group_catches_up(kafka_zk, bootstrap_servers, topic_name, tmp_path):
    # the example as printed; its JVMs with the suite's Spark options (support.SPARK_JAVA_OPTIONS), through the
    # variable every java launcher reads (it says so on stderr), as the suite's own Spark JVMs: the test took 37
    # CPU-seconds against 44 with HotSpot's defaults (docs/development.md, session 25)
    done = subprocess.run(
        [sys.executable, str(SPARK_EXAMPLE), "--zookeeper", kafka_zk, "--bootstrap-server", bootstrap_servers,
         "--topic", topic_name, "--messages", "300", "--out", str(tmp_path)], capture_output=True, text=True,
        timeout=bounded(400), env={**os.environ, "JDK_JAVA_OPTIONS": SPARK_JAVA_OPTIONS},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    lags = re.findall(r"^\s*[\d.]+ s  lag (\d+|unknown)  \((.*); members (\d+)\)$", done.stdout, re.M)
    assert lags, done.stdout
    assert lags[-1][0] == "0" and lags[-1][1] == "p0 0, p1 0, p2 0" and lags[-1][2] == "1"  # one member: the query
    assert f"wrote 300 rows to {tmp_path / 'data'}; the group caught up" in done.stdout


def test_three_consumers_use_the_partitions_an_existing_topic_has(kafka_zk, bootstrap_servers, topic_name):
    """A topic made earlier with 3 partitions (the README's `orders`): every message still arrives, one partition
    each, instead of the 30 sent to partitions 3-5 vanishing."""
    from zkconsumer.kafka.topics import create_topic

    create_topic(bootstrap_servers, topic_name, 3)
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--zookeeper", kafka_zk, "--bootstrap-server", bootstrap_servers,
         "--topic", topic_name], capture_output=True, text=True, timeout=bounded(90),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    lines = re.findall(r"^example_consumer(\d): owns partitions \[(.*)\], got (\d+) messages", done.stdout, re.M)
    assert {n: parts for n, parts, _ in lines} == {"1": "0", "2": "1", "3": "2"}
    assert sum(int(count) for _, _, count in lines) == 60


def quick_start_lines() -> list[str]:
    """The commands of the README's quick start, as printed (comments left to the shell)."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Quick start", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


@pytest.mark.servers
@pytest.mark.timeout(240)  # its waits, summed: 150 s for the quick start, 60 s for `local down`
def test_the_readme_quick_start_runs_as_printed(tmp_path):
    """Pasted into a shell at the top of the checkout, as a new user would (its own run directory, so it meets no
    other environment): local up, a topic, three keyed lines produced, consumed, the group described, local down."""
    import os

    lines = quick_start_lines()
    assert lines[0] == "source .venv/bin/activate" or lines[0].startswith("source .venv/bin/activate ")
    assert [line.split()[:3] for line in lines if line.startswith("zkconsumer local")] == [
        ["zkconsumer", "local", "up"], ["zkconsumer", "local", "down"]]
    script = "set -eo pipefail\n" + "".join(
        f"echo '### {n}'; echo '### {n}' >&2\n{line}\n" for n, line in enumerate(lines))
    env = {k: v for k, v in os.environ.items() if k not in ("ZK_CONNECT", "KAFKA_BOOTSTRAP", "ZK_AUTH")}
    env.update({"ZKCONSUMER_RUN_DIR": str(tmp_path / "run"), "ZKCONSUMER_LOG_FILE": str(tmp_path / "cli.log")})
    try:
        done = subprocess.run(["bash", "-c", script], cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=bounded(150))
    finally:
        subprocess.run([sys.executable, "-m", "zkconsumer", "local", "down"], env=env, capture_output=True,
                       timeout=bounded(60))

    def output(stream: str, command: str) -> str:
        n = next(i for i, line in enumerate(lines) if command in line)
        return stream.split(f"### {n}\n", 1)[1].split(f"### {n + 1}\n", 1)[0]

    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert output(done.stderr, "zkconsumer produce").splitlines() == ["delivered 3 messages to quickstart"]
    assert sorted(output(done.stdout, "zkconsumer consume").splitlines()) == ["order-1", "order-2", "order-3"]
    assert output(done.stderr, "zkconsumer consume").splitlines() == ["Processed a total of 3 messages"]
    described = output(done.stdout, "zkconsumer groups describe").splitlines()
    rows = [row.split() for row in described[1:]]
    assert [row[:2] for row in rows] == [["quickstart", "quickstart"]] * 3, described
    assert sum(int(row[3]) for row in rows) == 3 and {row[5] for row in rows} == {"0"}, described  # offsets, lag
    assert done.stdout.rstrip().splitlines()[-1].startswith("stopped ")


@pytest.mark.timeout(140)  # the section's 120 s end before it
def test_the_readme_consumer_in_twenty_lines(zk, kafka_zk, bootstrap_servers, topic_name, tmp_path):
    """The section's commands and its file as printed, against the test servers in place of `local up`'s fixed
    ports (`local up` and `local down` are the quick start's, run above), with this test's own topic and group for
    `orders` and `readme`: ten keyed messages produced, each printed once, the offsets committed where Kafka's tools
    read them."""
    import os

    def adapt(text: str) -> str:
        text = text.replace("127.0.0.1:2181", kafka_zk).replace("127.0.0.1:9092", bootstrap_servers)
        return re.sub(r"\b(orders|readme)\b", topic_name, text.replace(".venv/bin/", ""))

    section = (REPO / "README.md").read_text().split("## The consumer in twenty lines", 1)[1]
    commands = section.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    program = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert program.startswith("# consume_orders.py\n")
    (tmp_path / "consume_orders.py").write_text(adapt(program))
    script = "set -eo pipefail\n" + "\n".join(adapt(line) for line in commands if " local " not in line)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "ZK_CONNECT": kafka_zk,
           "KAFKA_BOOTSTRAP": bootstrap_servers, "ZKCONSUMER_LOG_FILE": str(tmp_path / "cli.log")}
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=bounded(120))
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    printed = re.findall(r"^(\d) (\d+) b'(customer-\d)' b'(order-\d)'$", done.stdout, re.M)
    assert sorted(value for *_, value in printed) == [f"order-{i}" for i in range(10)]
    assert all(key == f"customer-{int(value[-1]) % 3}" for _, _, key, value in printed)
    committed = sum(int(zk.get(f"/consumers/{topic_name}/offsets/{topic_name}/{p}")[0]) for p in range(3))
    assert committed == 10
