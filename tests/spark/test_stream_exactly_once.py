"""Exactly once into a file sink through Spark's checkpoint: a query killed (SIGKILL, its whole process group) in
the middle of a batch and restarted loses and duplicates nothing. The ranges a batch reads are a function of its
offsets alone, so Spark's replay of the killed batch reads the same rows; the file sink's log keeps the killed
attempt's files out. (Stopped and restarted: ``test_stream_source.py``.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from support import SPARK_JAVA_OPTIONS, mirrored_topic, produce, wait_for
from time_scale import bounded


def start_query(spark, options: dict[str, str], out: Path, checkpoint: Path):
    reader = spark.readStream.format("zkconsumer")
    for key, value in options.items():
        reader = reader.option(key, value)
    return (reader.load().writeStream.format("parquet").option("path", str(out))
            .option("checkpointLocation", str(checkpoint)).trigger(processingTime="200 milliseconds").start())


def sink_rows(spark, out: Path) -> list[tuple[int, int, bytes]]:
    """What the file sink holds: read through its log, as any reader of the sink does."""
    return sorted((r.partition, r.offset, bytes(r.value))
                  for r in spark.read.parquet(str(out)).select("partition", "offset", "value").collect())


def sent(partitions: int, count: int, start: int = 0) -> list[tuple[int, int, bytes]]:
    return [(p, i, f"{p}-{i}".encode()) for p in range(partitions) for i in range(start, start + count)]


def batches(checkpoint: Path, log: str) -> int:
    folder = checkpoint / log
    return len([f for f in folder.iterdir() if f.name.isdigit()]) if folder.exists() else 0


CHILD = textwrap.dedent("""
    import sys
    from pyspark.sql import SparkSession
    import zkconsumer.spark

    zk, topic, out, checkpoint, java_options = sys.argv[1:6]
    spark = (SparkSession.builder.master("local[2]").appName("killed").config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "2").config("spark.driver.defaultJavaOptions", java_options)
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    zkconsumer.spark.register(spark)
    (spark.readStream.format("zkconsumer").option("zookeeper.connect", zk).option("group.id", "spark-killed")
     .option("topics", topic).option("membership", "none").option("startingOffsets", "earliest")
     .option("maxOffsetsPerTrigger", "100").load()
     .writeStream.format("parquet").option("path", out).option("checkpointLocation", checkpoint)
     .start().awaitTermination())
""")


@pytest.mark.timeout(420)
def test_a_query_killed_mid_batch_resumes_from_its_checkpoint_exactly_once(
        spark, zk, kafka_zk, bootstrap_servers, topic_name, tmp_path):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    for p in range(2):
        produce(bootstrap_servers, topic, [f"{p}-{i}".encode() for i in range(150)], partition=p)
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
           "ZKCONSUMER_LOG_LEVEL": "warning"}
    argv = [sys.executable, "-c", CHILD, kafka_zk, topic, str(out), str(checkpoint), SPARK_JAVA_OPTIONS]
    child = subprocess.Popen(argv, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        # mid-batch: a batch is in the offset log (planned, being written) and not yet in the commit log
        wait_for(lambda: child.poll() is not None
                 or batches(checkpoint, "commits") < batches(checkpoint, "offsets"), timeout=240, interval=0.01)
        assert child.poll() is None, "the query's process ended by itself"
    finally:
        os.killpg(child.pid, signal.SIGKILL)  # the Python driver, its JVM and the JVM's Python workers, at once
        child.wait(bounded(30))
    done, planned = batches(checkpoint, "commits"), batches(checkpoint, "offsets")
    assert done < planned, (done, planned)  # killed inside a batch

    options = {"zookeeper.connect": kafka_zk, "group.id": "spark-killed", "topics": topic, "membership": "none",
               "startingOffsets": "earliest", "maxOffsetsPerTrigger": "100"}
    query = start_query(spark, options, out, checkpoint)
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink_rows(spark, out) == sent(2, 150)
