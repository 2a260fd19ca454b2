"""How fast rows come through ``spark.readStream.format("zkconsumer")`` on ``local[2]``, next to raw confluent-kafka
reading the same messages in one process, in the same run.

Run: ``.venv/bin/python benchmarks/spark_source.py [--messages N] [--partitions P] [--size BYTES] [--repeat N]``.
One ZooKeeper and one broker are started with the project's launchers (or taken from ``ZK_CONNECT`` /
``KAFKA_BOOTSTRAP``), the broker's metadata is mirrored into a chroot of ZooKeeper by the bridge (the source is a
member of a group there: it needs ``/brokers/ids`` and ``/brokers/topics``), and N messages (default 500,000) of
``--size`` bytes (default 100) are produced over P partitions (default 4). Then, best of ``--repeat`` (default 2):

* **raw confluent-kafka**, the peer: one ``Consumer`` in this process, every partition ``assign()``-ed at 0,
  ``consume()`` in batches of 10,000 until every partition's last offset is seen; each message's key, value,
  offset and timestamp are read (what the source's tasks read too), nothing else is done with them;
* **the source**: a streaming query on ``local[2]`` (membership ``member`` in a fresh group each time,
  ``startingOffsets=earliest``) into Spark's ``noop`` sink, which takes every row; ``processAllAvailable()``.
  Its rate is the rows over the time Spark spent in the micro-batches that carried them (the queries' progress,
  ``durationMs.triggerExecution``): planning with the log ends, the tasks reading the ranges as Arrow batches,
  the rows into the JVM. The query's start (Spark's Python workers, the member joining its group) is printed
  beside it, not counted. The Spark session and its Python workers are warmed by a first small query.

The runs alternate (raw, source, raw, source...), so that both sides meet much the same load of a shared machine.
Beside the rates, each side's CPU a row: the raw reader's process (``time.process_time``, every thread), and the
Spark JVM's process tree (the JVM, its Python daemon, the tasks' Python workers and the source's planner process)
from ``start()`` to the end of ``processAllAvailable()``, so with the query's start-up (the member joining its
group, the workers' imports) spread over the rows. CPU-seconds change much less than wall time with the other
users' load. The micro-batches' time is printed split as Spark reports it (``latestOffset``: the planning with the
log ends; ``addBatch``: the tasks; the rest: Spark's offset and commit logs).

The ratio source / raw is printed; the goal is at least 0.8x. Both rows counts are checked to equal N first. This
is a benchmark, not a test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
import uuid
from contextlib import ExitStack
from pathlib import Path

from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from process_cpu import tree_cpu

from zkconsumer.bridge.metadata_bridge import MetadataBridge
from zkconsumer.embedded.broker import provide_broker
from zkconsumer.embedded.zookeeper import provide_zookeeper
from zkconsumer.kafka.librdkafka_log import LIBRDKAFKA_LOGGER
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk.client import close_client, open_client

CHROOT_BASE = "/zkconsumer-bench"


def produce(bootstrap: str, topic: str, messages: int, partitions: int, size: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.num.messages": 10_000,
                         "queue.buffering.max.messages": 1_000_000, "logger": LIBRDKAFKA_LOGGER})
    payload = b"x" * max(0, size - 8)
    for i in range(messages):
        while True:
            try:
                producer.produce(topic, key=str(i).encode(), value=b"%08d" % i + payload, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(120) == 0, "messages not delivered"


def raw_read(bootstrap: str, topic: str, partitions: int, messages: int) -> tuple[float, float]:
    """Seconds for one Consumer in this process to read every message, touching what the source's tasks touch, and
    the CPU-seconds the process spent meanwhile."""
    cpu = time.process_time()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "zkconsumer-bench-raw",
                         "enable.auto.commit": False, "enable.partition.eof": True, "logger": LIBRDKAFKA_LOGGER})
    per_partition = {p: len(range(p, messages, partitions)) for p in range(partitions)}
    started = time.perf_counter()
    consumer.assign([KafkaTopicPartition(topic, p, 0) for p in range(partitions)])
    seen = 0
    done: set[int] = set()
    try:
        while len(done) < partitions:
            for message in consumer.consume(10_000, 1.0):
                if message.error() is not None:
                    continue  # partition EOF before the end only when the broker is slow to answer
                message.key()
                message.value()
                offset = message.offset()
                partition = message.partition()
                message.timestamp()
                seen += 1
                if partition is not None and offset == per_partition[partition] - 1:
                    done.add(partition)
    finally:
        consumer.close()
    elapsed = time.perf_counter() - started
    assert seen == messages, (seen, messages)
    return elapsed, time.process_time() - cpu


def spark_session(workdir: Path):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    import zkconsumer.spark

    spark = (SparkSession.builder.master("local[2]").appName("zkconsumer-bench")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.local.dir", str(workdir)).getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    zkconsumer.spark.register(spark)
    return spark


def source_read(spark, connect: str, bootstrap: str, topic: str, workdir: Path,
                limit: int | None = None) -> dict:
    """Rows, seconds in the micro-batches that carried rows (``batches``) and their parts as Spark reports them
    (``parts``), seconds from start() to the end (``total``), and the Spark JVM's process tree's CPU-seconds
    meanwhile (``cpu``)."""
    jvm = spark.sparkContext._gateway.proc.pid
    cpu = tree_cpu(jvm)
    reader = (spark.readStream.format("zkconsumer").option("zookeeper.connect", connect)
              .option("group.id", f"bench-{uuid.uuid4().hex[:8]}").option("topics", topic)
              .option("startingOffsets", "earliest").option("bootstrap.servers", bootstrap))
    if limit is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(limit))
    started = time.perf_counter()
    query = (reader.load().writeStream.format("noop")
             .option("checkpointLocation", str(workdir / f"checkpoint-{uuid.uuid4().hex[:8]}"))
             .trigger(processingTime="100 milliseconds").start())
    try:
        query.processAllAvailable()
        total = time.perf_counter() - started
        cpu = tree_cpu(jvm) - cpu
        progress = [p for p in query.recentProgress if p["numInputRows"]]
    finally:
        query.stop()
    parts: dict[str, float] = {}
    for p in progress:
        for part, ms in p["durationMs"].items():
            parts[part] = parts.get(part, 0.0) + ms / 1000
    return {"rows": sum(p["numInputRows"] for p in progress), "batches": parts.pop("triggerExecution", 0.0),
            "parts": parts, "total": total, "cpu": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--size", type=int, default=100, help="bytes per message value (default 100)")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each; the best is kept (default 2)")
    args = parser.parse_args()

    with ExitStack() as stack:
        workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="zkc-bench-")))
        zk_connect = stack.enter_context(provide_zookeeper(workdir / "zookeeper"))
        bootstrap = stack.enter_context(provide_broker(workdir / "broker"))
        chroot = f"{CHROOT_BASE}/{uuid.uuid4().hex[:8]}"
        root = open_client(zk_connect)
        stack.callback(close_client, root)
        root.ensure_path(chroot)
        stack.callback(root.delete, chroot, recursive=True)
        connect = zk_connect + chroot

        topic, warm = f"bench-source-{uuid.uuid4().hex[:6]}", f"bench-warm-{uuid.uuid4().hex[:6]}"
        create_topic(bootstrap, topic, args.partitions)
        create_topic(bootstrap, warm, args.partitions)
        began = time.perf_counter()
        produce(bootstrap, topic, args.messages, args.partitions, args.size)
        produce(bootstrap, warm, 1000, args.partitions, args.size)
        print(f"{args.messages:,} messages of {args.size} bytes over {args.partitions} partitions produced in "
              f"{time.perf_counter() - began:.1f} s ({platform.python_implementation()} {platform.python_version()}, "
              f"{os.cpu_count()} cores)", flush=True)
        bridge = stack.enter_context(MetadataBridge(connect, bootstrap))  # /brokers/ids and /brokers/topics
        bridge.sync_once()

        spark = spark_session(workdir / "spark")
        stack.callback(spark.stop)
        source_read(spark, connect, bootstrap, warm, workdir)  # the JVM and the Python workers up

        raws, runs = [], []
        for _ in range(args.repeat):  # alternating: both sides meet much the same load
            raws.append(raw_read(bootstrap, topic, args.partitions, args.messages))
            runs.append(source_read(spark, connect, bootstrap, topic, workdir))
            load = os.getloadavg()
        for run in runs:
            assert run["rows"] == args.messages, (run["rows"], args.messages)
        raw, raw_cpu = min(raws)
        best = min(runs, key=lambda run: run["batches"])
        raw_rate, source_rate = args.messages / raw, args.messages / best["batches"]
        per_row = 1e6 / args.messages
        raw_cpu, source_cpu = min(c for _, c in raws) * per_row, min(run["cpu"] for run in runs) * per_row
        parts = ", ".join(f"{part} {seconds:.2f} s" for part, seconds in sorted(best["parts"].items(),
                                                                               key=lambda item: -item[1]))
        print(f"raw confluent-kafka (1 process):             {raw:7.2f} s  {raw_rate:10,.0f} rows/s  "
              f"CPU {raw_cpu:.2f} us a row")
        print(f"zkconsumer source (local[2], micro-batches): {best['batches']:7.2f} s  {source_rate:10,.0f} rows/s  "
              f"CPU {source_cpu:.2f} us a row, its start included (start() to the end: {best['total']:.2f} s)")
        print(f"  the micro-batches: {parts}")
        print(f"ratio source / raw: {source_rate / raw_rate:.2f}x by rate (goal: at least 0.8x), "
              f"{raw_cpu / source_cpu:.2f}x by CPU; best of {args.repeat} each, alternating; load average "
              f"{load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f} at the end")


if __name__ == "__main__":
    main()
