"""Stream a topic into Parquet with Spark as a member of a legacy ZooKeeper group, and watch the group's lag.

The query is ``spark.readStream.format("zkconsumer")``: it registers in ``/consumers/<group>/ids`` like any legacy
member, reads the partitions the group assigns it, and commits its offsets to ZooKeeper, so the group's lag is what
Burrow or ``groups describe`` would show. While it runs, this script reads that lag with
``spark.read.format("zkconsumer_groups")``, and prints it until the group has caught up with what was produced.

Run it on the embedded environment (`.venv/bin/zkconsumer local up` first), or point it anywhere:

    .venv/bin/python examples/spark_stream.py [--zookeeper HOST:PORT[/chroot]] [--bootstrap-server HOST:PORT]
        [--topic clicks] [--group spark-example] [--messages 3000] [--out DIR]

An existing topic is used with the partitions it has; every message sent is checked by its delivery report, and
one the broker did not take fails the run.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path

from confluent_kafka import Producer

from zkconsumer.cli import options
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk.client import zookeeper as zookeeper_client

PARTITIONS = 3
CATCH_UP_S = 180


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_zookeeper(parser)
    options.add_bootstrap(parser)
    options.add_run_dir(parser)
    parser.add_argument("--topic", default="clicks")
    parser.add_argument("--group", default="spark-example")
    parser.add_argument("--messages", type=int, default=3000, help="how many to produce while the query runs")
    parser.add_argument("--out", help="where the Parquet files and the checkpoint go (default: a new temporary folder)")
    args = parser.parse_args()
    zookeeper, bootstrap, topic, group = options.zookeeper(args), options.bootstrap(args), args.topic, args.group
    out = Path(args.out or tempfile.mkdtemp(prefix="spark-stream-"))

    existing = fetch_metadata(admin_client(bootstrap), bootstrap).topics.get(topic)
    if existing is None:
        create_topic(bootstrap, topic, PARTITIONS)
    partitions = PARTITIONS if existing is None else len(existing.partitions)
    with zookeeper_client(zookeeper) as zk:  # the bridge mirrors a new topic into ZooKeeper within a second
        for _ in range(100):
            if zk.exists(f"/brokers/topics/{topic}"):
                break
            time.sleep(0.1)

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # Spark's Python workers need zkconsumer too
    from pyspark.sql import SparkSession

    import zkconsumer.spark

    spark = (SparkSession.builder.master("local[2]").appName("zkconsumer-example")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    zkconsumer.spark.register(spark)

    query = (spark.readStream.format("zkconsumer")
             .option("zookeeper.connect", zookeeper).option("group.id", group).option("topics", topic)
             .option("auto.offset.reset", "smallest")
             .load()
             .writeStream.format("parquet").option("path", str(out / "data"))
             .option("checkpointLocation", str(out / "checkpoint"))
             .trigger(processingTime="1 second").start())
    print(f"streaming {topic} into {out / 'data'} as a member of group {group}", flush=True)
    while query.isActive and query.lastProgress is None:  # started: its first trigger is done
        time.sleep(0.2)

    failures: list[str] = []
    producer = threading.Thread(target=produce, args=(bootstrap, topic, partitions, args.messages, failures),
                                daemon=True)
    producer.start()
    started = time.monotonic()
    caught_up = False
    try:
        while time.monotonic() - started < CATCH_UP_S:
            time.sleep(2)
            if not query.isActive:
                print(f"the query stopped: {query.exception()}", file=sys.stderr)
                return 1
            behind, per_partition, members = lag(spark, zookeeper, bootstrap, group, topic)
            print(f"{time.monotonic() - started:5.1f} s  lag {behind}  ({per_partition}; members {members})",
                  flush=True)
            if not producer.is_alive() and behind == 0:
                caught_up = True
                break
    finally:
        query.stop()
        producer.join(30)
    if failures:
        print(f"{len(failures)} of {args.messages} messages not delivered to {topic}: {failures[0]}", file=sys.stderr)
        spark.stop()
        return 1
    rows = spark.read.parquet(str(out / "data")).count()
    print(f"wrote {rows} rows to {out / 'data'}; the group {'caught up' if caught_up else 'did NOT catch up'}")
    spark.stop()
    return 0 if caught_up else 1


def produce(bootstrap: str, topic: str, partitions: int, count: int, failures: list[str]) -> None:
    """``count`` messages over about ten seconds, so the query has something to catch up with as it runs; each one
    the broker did not take is added to ``failures``."""
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})

    def report(err: object, msg: object) -> None:
        if err is not None:
            failures.append(str(err))

    waves = 20
    for wave in range(waves):
        for i in range(wave * count // waves, (wave + 1) * count // waves):
            producer.produce(topic, key=str(i).encode(), value=f"click-{i}".encode(), partition=i % partitions,
                             on_delivery=report)
        producer.flush(10)
        time.sleep(0.5)
    if producer.flush(10):
        failures.append("no acknowledgement within 10 s")


def lag(spark, zookeeper: str, bootstrap: str, group: str, topic: str) -> tuple[int | str, str, int]:
    """The group's lag on ``topic`` as the groups table has it: total, per partition, and the members registered."""
    rows = (spark.read.format("zkconsumer_groups").option("zookeeper.connect", zookeeper)
            .option("groups", re.escape(group)).option("bootstrap.servers", bootstrap).load()
            .where(f"topic = '{topic}'").orderBy("partition").collect())
    lags = [row.lag for row in rows]
    total: int | str = sum(lags) if rows and None not in lags else "unknown"
    per_partition = ", ".join(f"p{row.partition} {'?' if row.lag is None else row.lag}" for row in rows) or "none yet"
    members = max((row.members for row in rows), default=0)
    return total, per_partition, members


if __name__ == "__main__":
    sys.exit(main())
