"""Memory of a consumer far behind: bounded by its queues, not by the backlog.

Run: ``.venv/bin/python benchmarks/memory.py [--partitions N] [--messages N] [--seconds S]``. One ZooKeeper, one broker
and the metadata bridge are started with the project's launchers; ``--messages`` messages (default 1,000,000, of 100
bytes) are produced on a topic of ``--partitions`` partitions (default 10,000); then a consumer whose application
reads slowly (one message per millisecond, for ``--seconds`` after the first) joins with one stream, so it stays
about a million messages behind all along. It runs in a child process of its own, which samples its resident memory
every 100 ms: printed are the memory before joining, at the first message (joined and fetching), the most while
reading, at the end, and the process's peak (``VmHWM``, which also counts what joining a group of 10,000 partitions
took for a moment), next to the bound the queues set: ``queued.max.message.chunks`` chunks (plus the one being read
and the fetcher's batch in hand) of at most one ``consume()`` batch and ``fetch.message.max.bytes`` each, and
librdkafka's prefetch, capped by ``queued.max.messages.kbytes`` (see ``librdkafka_config``).

The peer is raw confluent-kafka, assigned the same partitions with its default settings and read as slowly: its
prefetch is bounded only by librdkafka's defaults (64 MiB, 100,000 messages per partition). This is a benchmark, not a
test: nothing here fails.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

from bench_support import machine, memory_kib, servers, wait_for_topic

VALUE_BYTES = 100
READ_EVERY_S = 0.001


class Sampler(threading.Thread):
    """VmRSS every 100 ms, with when (``time.monotonic()``)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, int]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.1):
            self.samples.append((time.monotonic(), memory_kib()))

    def since(self, moment: float) -> list[int]:
        return [rss for at, rss in self.samples if at >= moment]


def create_topic_both_ways(zookeeper: str, bootstrap: str, topic: str, partitions: int) -> None:
    """In ZooKeeper first (the ZooKeeper way, ``admin.zk_topics``), then on the broker: the bridge then finds the
    topic written and only adds the partition states, one by one (a new topic of 10,000 partitions is more than one
    ZooKeeper transaction of the bridge can carry)."""
    from zkconsumer.admin import zk_topics
    from zkconsumer.admin.topic_plans import CreateRequest
    from zkconsumer.kafka.topics import create_topic
    from zkconsumer.zk import paths
    from zkconsumer.zk.client import zookeeper as zk_client
    from zkconsumer.zk.reads import children

    with zk_client(zookeeper) as zk:
        deadline = time.monotonic() + 30
        while not children(zk, paths.BROKER_IDS_PATH):  # the bridge registers the broker first
            if time.monotonic() > deadline:
                raise SystemExit("the bridge registered no broker within 30 s")
            time.sleep(0.1)
        zk_topics.write_creation(zk, zk_topics.prepare_creation(zk, CreateRequest(topic, partitions, 1)))
    create_topic(bootstrap, topic, partitions, timeout=120)


def produce(bootstrap: str, topic: str, partitions: int, messages: int) -> None:
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 100, "batch.num.messages": 10_000,
                         "queue.buffering.max.messages": 1_000_000})
    value = b"v" * VALUE_BYTES
    for i in range(messages):
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.1)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(300) != 0:
        raise SystemExit("the broker did not take every message")


def slow_read(next_message, seconds: float, sampler: Sampler, start_rss: int) -> dict:
    """The first message, then one per READ_EVERY_S for ``seconds``: how many were read, and the memory: before
    joining (``start``), at the first message (set up and fetching), the most while reading, at the end, and the
    process's peak (VmHWM)."""
    next_message()
    first_at, first_rss = time.monotonic(), memory_kib()
    deadline = first_at + seconds
    count = 1
    while time.monotonic() < deadline:
        next_message()
        count += 1
        time.sleep(READ_EVERY_S)
    end_rss = memory_kib()
    sampler.stop.set()
    sampler.join()
    reading = sampler.since(first_at) + [first_rss, end_rss]
    return {"read": count, "start_rss_kib": start_rss, "first_rss_kib": first_rss, "reading_max_rss_kib": max(reading),
            "end_rss_kib": end_rss, "peak_rss_kib": memory_kib("VmHWM")}


def child_zkconsumer(zookeeper: str, topic: str, seconds: float) -> dict:
    from zkconsumer.consumer.consumer_fetcher_thread import _CONSUME_BATCH, librdkafka_config
    from zkconsumer.consumer.zookeeper_consumer_connector import create_connector

    connector = create_connector({"zookeeper.connect": zookeeper, "group.id": f"bench-mem-{uuid.uuid4().hex[:6]}",
                                  "auto.offset.reset": "smallest", "consumer.timeout.ms": 60_000})
    sampler = Sampler()
    sampler.start()
    start_rss = memory_kib()
    started = time.monotonic()
    (stream,) = connector.create_message_streams({topic: 1})[topic]
    joined = time.monotonic() - started
    owned = sum(len(ps) for ps in connector.topic_registry.values())
    loop = iter(stream)
    report = slow_read(lambda: next(loop), seconds, sampler, start_rss)
    config = connector.config
    report.update(owned=owned, joined_s=joined, chunks=config.queued_max_message_chunks,
                  chunk_bytes=config.fetch_message_max_bytes, chunk_messages=_CONSUME_BATCH,
                  rdkafka_kbytes=librdkafka_config(config, "")["queued.max.messages.kbytes"])
    connector.shutdown()
    return report


def child_confluent(bootstrap: str, topic: str, partitions: int, seconds: float) -> dict:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-mem-raw-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False, "enable.partition.eof": False})
    sampler = Sampler()
    sampler.start()
    start_rss = memory_kib()
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])

    def next_message():
        while True:
            message = consumer.poll(1.0)
            if message is not None and message.error() is None:
                return message

    report = slow_read(next_message, seconds, sampler, start_rss)
    report["owned"] = partitions
    consumer.close()
    return report


def run_child(args: list[str]) -> dict:
    done = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise SystemExit(f"{args[1]} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=10_000, help="partitions of the topic (default 10,000)")
    parser.add_argument("--messages", type=int, default=1_000_000, help="backlog produced (default 1,000,000)")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the application reads (default 20)")
    parser.add_argument("--child", choices=("zkconsumer", "confluent-kafka"), help=argparse.SUPPRESS)
    parser.add_argument("--zookeeper", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child == "zkconsumer":
        print(json.dumps(child_zkconsumer(args.zookeeper, args.topic, args.seconds)))
        return
    if args.child == "confluent-kafka":
        print(json.dumps(child_confluent(args.bootstrap, args.topic, args.partitions, args.seconds)))
        return

    from zkconsumer.log import configure_logging

    configure_logging(level="warning")
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}")
    with tempfile.TemporaryDirectory(prefix="zkconsumer-bench-") as workdir, servers(Path(workdir)) as run_servers:
        zk, bootstrap = run_servers.connect, run_servers.bootstrap
        topic = f"bench-memory-{uuid.uuid4().hex[:6]}"
        create_topic_both_ways(zk, bootstrap, topic, args.partitions)
        wait_for_topic(zk, topic, args.partitions, timeout=300)
        started = time.perf_counter()
        produce(bootstrap, topic, args.partitions, args.messages)
        print(f"{args.messages:,} messages of {VALUE_BYTES} bytes on {args.partitions:,} partitions, produced in "
              f"{time.perf_counter() - started:.1f} s; the application reads one message per "
              f"{READ_EVERY_S * 1000:g} ms for {args.seconds:g} s")
        common = ["--zookeeper", zk, "--bootstrap", bootstrap, "--topic", topic, "--partitions",
                  str(args.partitions), "--seconds", str(args.seconds)]
        ours = run_child(["--child", "zkconsumer", *common])
        raw = run_child(["--child", "confluent-kafka", *common])
    mib = 1024
    in_hand = ours["chunks"] + 2  # the queue, the chunk being read, the fetcher's batch
    queue_bound = in_hand * min(ours["chunk_bytes"], ours["chunk_messages"] * VALUE_BYTES)
    print(f"zkconsumer: owns {ours['owned']:,} partitions, joined in {ours['joined_s']:.1f} s, read {ours['read']:,} "
          f"messages, {args.messages - ours['read']:,} behind at the end")
    print(f"  bound: {ours['chunks']} chunks in the queue + the one being read + the fetcher's batch, each at most "
          f"{ours['chunk_messages']:,} messages and {ours['chunk_bytes'] / mib / mib:g} MiB of values "
          f"({queue_bound / mib / mib:.1f} MiB of values here), and librdkafka's prefetch, "
          f"{ours['rdkafka_kbytes'] / mib:g} MiB of values (queued.max.messages.kbytes)")
    print(f"{'resident memory, MiB':40} {'before':>7} {'first msg':>10} {'max reading':>12} {'end':>7} "
          f"{'growth reading':>15} {'peak (VmHWM)':>13}")
    for label, report in (("zkconsumer, 1 stream", ours), ("raw confluent-kafka (defaults), poll()", raw)):
        growth = report["reading_max_rss_kib"] - report["first_rss_kib"]
        print(f"{label:40} {report['start_rss_kib'] / mib:7.1f} {report['first_rss_kib'] / mib:10.1f} "
              f"{report['reading_max_rss_kib'] / mib:12.1f} {report['end_rss_kib'] / mib:7.1f} {growth / mib:15.1f} "
              f"{report['peak_rss_kib'] / mib:13.1f}")
    print(f"backlog: {args.messages * VALUE_BYTES / mib / mib:.0f} MiB of values")


if __name__ == "__main__":
    main()
