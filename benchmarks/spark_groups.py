"""How fast ``spark.read.format("zkconsumer_groups")`` reads a fleet of groups, next to the ``groups describe`` loop
on the same groups in the same run.

Run: ``.venv/bin/python benchmarks/spark_groups.py [--groups N] [--partitions P] [--repeat N]``. One ZooKeeper and
one broker are started with the project's launchers (or taken from ``ZK_CONNECT`` / ``KAFKA_BOOTSTRAP``); a topic of
P partitions (default 4) gets a few messages in each; N groups (default 1,000) are written into a chroot of their
own with kazoo transactions, each with an offset for every partition, one owner alive and one dead (every tenth group
has a registered member). Then:

* ``groups describe`` loop: the peer, what an operator's script does today: one process, one ZooKeeper session,
  ``describe_group`` (the offset checker: its ZooKeeper reads, then the brokers' log ends) once per group;
* the loop's ZooKeeper reads alone (``read_group_offsets`` per group, no log sizes), printed under it: most of the
  loop's time is its one log-end request per group, which the table makes once per distinct partition per task;
* ``zkconsumer_groups``: the Spark table on ``local[2]``, every group, ``collect()``ed. The session is started and
  its Python workers warmed by a one-group query first (a Spark job's cost, not the source's); with ``--repeat N``
  the best of N reads is kept.

Both are given the broker (``bootstrap.servers``). The two results are checked to agree (rows and total lag) before
the times are printed, with the ratio loop / Spark. This is a benchmark, not a test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

from kazoo.client import KazooClient

from zkconsumer.embedded.broker import provide_broker
from zkconsumer.embedded.zookeeper import provide_zookeeper
from zkconsumer.kafka.topics import create_topic
from zkconsumer.tools.offset_checker import describe_group, read_group_offsets
from zkconsumer.zk.client import close_client, open_client

CHROOT_BASE = "/zkconsumer-bench"
MESSAGES_PER_PARTITION = 50
GROUPS_PER_TRANSACTION = 50


def produce(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for partition in range(partitions):
        for i in range(MESSAGES_PER_PARTITION):
            producer.produce(topic, value=f"m{i}".encode(), partition=partition)
    assert producer.flush(30) == 0, "messages not delivered"


def group_name(i: int) -> str:
    return f"bench-{i:05d}"


def write_groups(zk: KazooClient, topic: str, groups: int, partitions: int) -> None:
    """Every group's znodes, ``GROUPS_PER_TRANSACTION`` groups per multi-op: thousands of groups in seconds."""
    zk.ensure_path("/consumers")
    # the topic as a ZooKeeper-mode broker registers it: its partitions are read from here
    assignment = {"version": 1, "partitions": {str(p): [0] for p in range(partitions)}}
    zk.create(f"/brokers/topics/{topic}", json.dumps(assignment).encode(), makepath=True)
    for first in range(0, groups, GROUPS_PER_TRANSACTION):
        tx = zk.transaction()
        for i in range(first, min(groups, first + GROUPS_PER_TRANSACTION)):
            g = f"/consumers/{group_name(i)}"
            for path in (g, f"{g}/ids", f"{g}/offsets", f"{g}/offsets/{topic}", f"{g}/owners", f"{g}/owners/{topic}"):
                tx.create(path)
            for p in range(partitions):
                tx.create(f"{g}/offsets/{topic}/{p}", str((i + p) % MESSAGES_PER_PARTITION).encode())
            tx.create(f"{g}/owners/{topic}/0", f"{group_name(i)}_alive-0".encode())
            tx.create(f"{g}/owners/{topic}/1", f"{group_name(i)}_dead-0".encode())
            if i % 10 == 0:
                registration = json.dumps({"version": 1, "subscription": {topic: 1}, "pattern": "static",
                                           "timestamp": "1"})
                tx.create(f"{g}/ids/{group_name(i)}_alive", registration.encode(), ephemeral=True)
        results = tx.commit()
        failed = [r for r in results if isinstance(r, Exception)]
        assert not failed, failed[:3]


def describe_loop(connect: str, bootstrap: str, groups: int) -> tuple[float, int, int]:
    """Seconds, rows and total lag of ``describe_group`` called once per group, as a loop over the CLI would."""
    zk = open_client(connect)
    try:
        started = time.perf_counter()
        rows = lag = 0
        for i in range(groups):
            described = describe_group(zk, group_name(i), bootstrap)
            rows += len(described.offsets.rows)
            lag += sum(r.lag or 0 for r in described.offsets.rows)
        return time.perf_counter() - started, rows, lag
    finally:
        close_client(zk)


def zookeeper_loop(connect: str, groups: int) -> float:
    """Seconds of the same loop's ZooKeeper reads alone (``read_group_offsets``, no log sizes): where its time goes."""
    zk = open_client(connect)
    try:
        started = time.perf_counter()
        for i in range(groups):
            read_group_offsets(zk, group_name(i))
        return time.perf_counter() - started
    finally:
        close_client(zk)


def spark_reads(connect: str, bootstrap: str, repeat: int, workdir: Path) -> tuple[float, float, int, int]:
    """Session start-up seconds, then the best of ``repeat`` full reads (seconds, rows, total lag)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import zkconsumer.spark

    started = time.perf_counter()
    spark = (SparkSession.builder.master("local[2]").appName("zkconsumer-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.local.dir", str(workdir)).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    zkconsumer.spark.register(spark)

    def table(**options: str):
        reader = spark.read.format("zkconsumer_groups").option("zookeeper.connect", connect) \
            .option("bootstrap.servers", bootstrap)
        for key, value in options.items():
            reader = reader.option(key, value)
        return reader.load()

    table(groups=group_name(0)).collect()  # JVM, planner and Python workers up
    startup = time.perf_counter() - started
    best, rows, lag = float("inf"), 0, 0
    try:
        for _ in range(repeat):
            begin = time.perf_counter()
            got = table().collect()
            best = min(best, time.perf_counter() - begin)
            rows, lag = len(got), sum(r["lag"] or 0 for r in got)
    finally:
        spark.stop()
    return startup, best, rows, lag


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=2, help="Spark reads; the best is kept (default: 2)")
    args = parser.parse_args()

    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zkc-bench-")))
        zk_connect = stack.enter_context(provide_zookeeper(workdir / "zookeeper"))
        bootstrap = stack.enter_context(provide_broker(workdir / "broker"))
        topic = f"bench-groups-{uuid.uuid4().hex[:6]}"
        create_topic(bootstrap, topic, args.partitions)
        produce(bootstrap, topic, args.partitions)
        chroot = f"{CHROOT_BASE}/{uuid.uuid4().hex[:8]}"
        root = open_client(zk_connect)
        stack.callback(close_client, root)
        root.ensure_path(chroot)
        stack.callback(root.delete, chroot, recursive=True)
        connect = zk_connect + chroot
        owner = open_client(connect)  # holds the live members' ephemeral registrations
        stack.callback(close_client, owner)
        began = time.perf_counter()
        write_groups(owner, topic, args.groups, args.partitions)
        print(f"{args.groups} groups x {args.partitions} partitions written in {time.perf_counter() - began:.1f} s "
              f"({platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} cores)")

        startup, spark_s, spark_rows, spark_lag = spark_reads(connect, bootstrap, args.repeat, workdir / "spark")
        loop_s, loop_rows, loop_lag = describe_loop(connect, bootstrap, args.groups)
        zk_s = zookeeper_loop(connect, args.groups)
        assert (spark_rows, spark_lag) == (loop_rows, loop_lag), (spark_rows, spark_lag, loop_rows, loop_lag)
        print(f"rows: {spark_rows}, total lag: {spark_lag} (both)")
        print(f"groups describe loop (1 process):      {loop_s:8.2f} s  {args.groups / loop_s:8.0f} groups/s")
        print(f"  of which ZooKeeper reads (alone):     {zk_s:8.2f} s  {args.groups / zk_s:8.0f} groups/s")
        print(f"zkconsumer_groups (local[2], best of {args.repeat}): {spark_s:8.2f} s  "
              f"{args.groups / spark_s:8.0f} groups/s   ratio loop/spark: {loop_s / spark_s:.1f}x")
        print(f"(Spark session start-up and a first one-group query, not counted: {startup:.1f} s)")


if __name__ == "__main__":
    main()
