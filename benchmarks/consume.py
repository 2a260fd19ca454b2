"""How fast zkconsumer's streams hand out messages, next to raw confluent-kafka and kafka-python on the same data.

Run: ``.venv/bin/python benchmarks/consume.py [--messages N] [--repeat N]``. One ZooKeeper, one broker and the
metadata bridge are started with the project's launchers; 100,000 messages of 10 bytes are produced once on a topic
of 4 partitions; then every consumer reads all of them from the start, each in a child process of its own, so that
the peak RSS printed (``VmHWM``) is that consumer's alone:

* ``confluent-kafka``: the peer. ``assign()`` of the 4 partitions at offset 0, ``consume(num_messages=1000)``;
* ``kafka-python``: ``assign()`` at offset 0, then iterating the ``KafkaConsumer``, message by message;
* ``zkconsumer 1 stream`` and ``4 streams`` (one application thread per stream, as the legacy API is used): the
  legacy iteration, one MessageAndMetadata per message;
* ``... by chunks``: the same streams read with ``KafkaStream.chunks()``, a list of MessageAndMetadata at a time;
* ``... record batches``: read with ``KafkaStream.record_batches()``, columns (offsets, values...) at a time.

Every consumer reads each message's value (the application's minimum), and is timed from its first message to its
last, so that joining the group (zkconsumer) or connecting (the peers) is left out; that start-up is printed apart,
and so is the CPU time the process used per message meanwhile (all its threads, librdkafka's included), with its
ratio to raw confluent-kafka's: other load on the machine disturbs it much less than the rate, which on a shared
2-core machine moves by 2x from one minute to the next (raw confluent-kafka included). The last lines are what a run
is read for: each consumer's CPU a message over raw's (lower is better), beside the targets of issue 29 (1 stream at
most 1.25x, ``record_batches()`` at most 1.1x) and the load average.

A second table splits the CPU of the threads that run Python, the ones that share the GIL and so bound the rate
whatever the cores: the peers' one thread (``consume()`` making librdkafka's messages, and the loop), zkconsumer's
fetcher thread (the same ``consume()``, and cutting the batch into chunks) and its stream readers (making each
MessageAndMetadata and handing it out). Each thread's own CPU clock is read (``pthread_getcpuclockid``, Linux and
most Unixes); where there is none, the table is left out. Beside it, how many times the garbage collector ran
meanwhile, by generation: a full collection walks every object of the process, which costs a consumer with
zkconsumer's imports (kazoo, structlog...) about 10-20 ms each, so whether one happened in a run shows in its CPU.
With ``--repeat N`` each consumer runs N times and its best run is kept: the one with the least CPU a message, the
figure compared. Ratios are against confluent-kafka and
kafka-python of the same run. This is a benchmark, not a test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

from bench_support import machine, memory_kib, servers, wait_for_topic

VALUE_BYTES = 10
KINDS = ("confluent-kafka", "kafka-python", "zkconsumer-1", "zkconsumer-4", "zkconsumer-1-chunks",
         "zkconsumer-4-chunks", "zkconsumer-1-records", "zkconsumer-4-records")
LABELS = {
    "confluent-kafka": "raw confluent-kafka (assign + consume)",
    "kafka-python": "kafka-python (assign + iterate)",
    "zkconsumer-1": "zkconsumer, 1 stream",
    "zkconsumer-4": "zkconsumer, 4 streams",
    "zkconsumer-1-chunks": "zkconsumer, 1 stream, by chunks",
    "zkconsumer-4-chunks": "zkconsumer, 4 streams, by chunks",
    "zkconsumer-1-records": "zkconsumer, 1 stream, record batches",
    "zkconsumer-4-records": "zkconsumer, 4 streams, record batches",
}


@dataclass(frozen=True)
class Run:
    """What a child reports: messages read, seconds from the first to the last (and the CPU seconds the process used
    meanwhile, all its threads), start-up seconds, peak RSS."""

    kind: str
    messages: int
    seconds: float
    cpu: float
    startup: float
    peak_rss_kib: int
    fetcher_cpu: float = float("nan")  # CPU seconds of zkconsumer's fetcher threads over the same time
    reader_cpu: float = float("nan")  # CPU seconds of the application's threads (zkconsumer's readers, a peer's one)
    collections: tuple[int, ...] = ()  # the garbage collector's runs over the same time, by generation (young first)

    @property
    def rate(self) -> float:
        return self.messages / self.seconds if self.seconds > 0 else float("inf")

    @property
    def cpu_per_message(self) -> float:
        return self.cpu / self.messages

    @property
    def python_cpu_per_message(self) -> float:
        """CPU of the threads that run Python (they share the GIL) per message; NaN where not measured."""
        return ((0.0 if self.fetcher_cpu != self.fetcher_cpu else self.fetcher_cpu) + self.reader_cpu) / self.messages


# --- the servers and the data (parent) ----------------------------------------------------------------------------


def produce(bootstrap: str, topic: str, partitions: int, messages: int) -> None:
    """``messages`` values of VALUE_BYTES bytes, spread evenly over the partitions, in large batches."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.num.messages": 10_000})
    for i in range(messages):
        value = f"{i:0{VALUE_BYTES}d}".encode()
        while True:
            try:
                producer.produce(topic, value=value, partition=i % partitions)
                break
            except BufferError:  # librdkafka's queue is full: a broker slowed by other load has not taken it yet
                producer.poll(0.1)
        if i % 10_000 == 0:
            producer.poll(0)
    if producer.flush(60) != 0:
        raise SystemExit("the broker did not take every message")


def run_child(kind: str, zookeeper: str, bootstrap: str, topic: str, partitions: int, messages: int) -> Run:
    argv = [sys.executable, __file__, "--child", kind, "--zookeeper", zookeeper, "--bootstrap", bootstrap,
            "--topic", topic, "--partitions", str(partitions), "--messages", str(messages)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{done.stderr[-3000:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return Run(kind, report["messages"], report["seconds"], report["cpu"], report["startup"], report["peak_rss_kib"],
               report.get("fetcher_cpu", float("nan")), report.get("reader_cpu", float("nan")),
               tuple(report.get("collections", ())))


# --- the consumers (children) ---------------------------------------------------------------------------------------


def thread_cpu(thread: threading.Thread) -> float:
    """CPU seconds ``thread`` used so far, from its own clock; NaN where the platform has none."""
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(thread.ident or 0))
    except (AttributeError, OSError):
        return float("nan")


def collections() -> list[int]:
    """How many times the garbage collector ran so far, by generation."""
    return [stats["collections"] for stats in gc.get_stats()]


def fetcher_threads_cpu() -> float:
    """CPU seconds zkconsumer's fetcher threads used so far."""
    return sum(thread_cpu(t) for t in threading.enumerate() if t.name.startswith("ConsumerFetcherThread"))


def child_confluent(bootstrap: str, topic: str, partitions: int, messages: int) -> dict:
    from confluent_kafka import Consumer, TopicPartition

    started = time.perf_counter()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-raw-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False, "enable.partition.eof": False})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    count, first = 0, None
    while count < messages:
        batch = consumer.consume(num_messages=1000, timeout=1.0)
        if batch and first is None:
            first, first_cpu, first_own, first_gc = (time.perf_counter(), time.process_time(), time.thread_time(),
                                                     collections())
        for message in batch:
            if message.error() is None:
                message.value()
                count += 1
    last, last_cpu, last_own, last_gc = time.perf_counter(), time.process_time(), time.thread_time(), collections()
    consumer.close()
    assert first is not None
    return {"messages": count, "seconds": last - first, "cpu": last_cpu - first_cpu, "startup": first - started,
            "reader_cpu": last_own - first_own, "collections": [b - a for a, b in zip(first_gc, last_gc, strict=True)]}


def child_kafka_python(bootstrap: str, topic: str, partitions: int, messages: int) -> dict:
    from kafka import KafkaConsumer, TopicPartition

    started = time.perf_counter()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=None, enable_auto_commit=False,
                             auto_offset_reset="earliest")
    assigned = [TopicPartition(topic, p) for p in range(partitions)]
    consumer.assign(assigned)
    for tp in assigned:
        consumer.seek(tp, 0)
    count, first = 0, None
    for message in consumer:
        if first is None:
            first, first_cpu, first_own, first_gc = (time.perf_counter(), time.process_time(), time.thread_time(),
                                                     collections())
        _ = message.value
        count += 1
        if count >= messages:
            break
    last, last_cpu, last_own, last_gc = time.perf_counter(), time.process_time(), time.thread_time(), collections()
    consumer.close()
    assert first is not None
    return {"messages": count, "seconds": last - first, "cpu": last_cpu - first_cpu, "startup": first - started,
            "reader_cpu": last_own - first_own, "collections": [b - a for a, b in zip(first_gc, last_gc, strict=True)]}


def child_zkconsumer(zookeeper: str, topic: str, partitions: int, messages: int, streams: int,
                     batches: str | None) -> dict:
    from zkconsumer.consumer.zookeeper_consumer_connector import create_connector

    # Logging left unconfigured, as in an application that configures nothing: only warnings show, on stderr.
    started = time.perf_counter()
    connector = create_connector({"zookeeper.connect": zookeeper, "group.id": f"bench-{uuid.uuid4().hex[:6]}",
                                  "auto.offset.reset": "smallest", "auto.commit.enable": "false"})
    created = connector.create_message_streams({topic: streams})[topic]
    # Each stream reads a known share: the messages of the partitions its queue was given.
    per_partition = messages // partitions
    shares = {id(s.chunk_queue): 0 for s in created}
    for info in connector.topic_registry[topic].values():
        shares[id(info.chunk_queue)] += per_partition
    firsts: list[tuple[float, float, list[int]]] = []
    lasts: list[tuple[float, float, list[int]]] = []
    counts: list[int] = []
    readers_cpu: list[float] = []
    fetchers_at_first: list[float] = []

    def started_reading() -> None:
        if not firsts:  # the first reader to get a message starts the clocks (a race between readers costs nothing)
            fetchers_at_first.append(fetcher_threads_cpu())
        firsts.append((time.perf_counter(), time.process_time(), collections()))

    def read(stream, share: int) -> None:
        count = 0
        if batches == "chunks":
            chunks = stream.chunks()
            batch = next(chunks)
            started_reading()
            own = time.thread_time()
            while True:
                for message in batch:
                    _ = message.message
                count += len(batch)
                if count >= share:
                    break
                batch = next(chunks)
        elif batches == "records":
            record_batches = stream.record_batches()
            records = next(record_batches)
            started_reading()
            own = time.thread_time()
            while True:
                for value in records.values:
                    _ = value
                count += len(records)
                if count >= share:
                    break
                records = next(record_batches)
        else:
            iterator = iter(stream)
            message = next(iterator)
            started_reading()
            own = time.thread_time()
            _ = message.message
            for message in islice(iterator, share - 1):
                _ = message.message
            count = share
        readers_cpu.append(time.thread_time() - own)
        lasts.append((time.perf_counter(), time.process_time(), collections()))
        counts.append(count)

    threads = [threading.Thread(target=read, args=(s, shares[id(s.chunk_queue)])) for s in created
               if shares[id(s.chunk_queue)]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fetchers_cpu = fetcher_threads_cpu() - fetchers_at_first[0]
    connector.shutdown()
    first, last = min(firsts), max(lasts)
    return {"messages": sum(counts), "seconds": last[0] - first[0], "cpu": last[1] - first[1],
            "startup": first[0] - started, "fetcher_cpu": fetchers_cpu, "reader_cpu": sum(readers_cpu),
            "collections": [b - a for a, b in zip(first[2], last[2], strict=True)]}


def child(args: argparse.Namespace) -> None:
    kind = args.child
    if kind == "confluent-kafka":
        report = child_confluent(args.bootstrap, args.topic, args.partitions, args.messages)
    elif kind == "kafka-python":
        report = child_kafka_python(args.bootstrap, args.topic, args.partitions, args.messages)
    else:
        parts = kind.split("-")
        report = child_zkconsumer(args.zookeeper, args.topic, args.partitions, args.messages, int(parts[1]),
                                  parts[2] if len(parts) > 2 else None)
    report["peak_rss_kib"] = memory_kib("VmHWM")
    print(json.dumps(report))


# --- the report (parent) --------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000, help="messages produced and read (default 100,000)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument("--repeat", type=int, default=1, help="runs per consumer, best kept (default 1)")
    parser.add_argument("--only", nargs="*", choices=KINDS, help="run only these consumers")
    parser.add_argument("--child", choices=KINDS, help=argparse.SUPPRESS)
    parser.add_argument("--zookeeper", help=argparse.SUPPRESS)
    parser.add_argument("--bootstrap", help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    from zkconsumer.kafka.topics import create_topic
    from zkconsumer.log import configure_logging

    configure_logging(level="warning")
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}")
    kinds = args.only or list(KINDS)
    with tempfile.TemporaryDirectory(prefix="zkconsumer-bench-") as workdir, servers(Path(workdir)) as run_servers:
        zk, bootstrap = run_servers.connect, run_servers.bootstrap
        topic = f"bench-consume-{uuid.uuid4().hex[:6]}"
        create_topic(bootstrap, topic, args.partitions)
        wait_for_topic(zk, topic, args.partitions)
        started = time.perf_counter()
        produce(bootstrap, topic, args.partitions, args.messages)
        print(f"{args.messages:,} messages of {VALUE_BYTES} bytes on {args.partitions} partitions, produced in "
              f"{time.perf_counter() - started:.1f} s; best of {args.repeat} run(s) per consumer")
        runs: dict[str, Run] = {}
        for _ in range(args.repeat):
            for kind in kinds:
                run = run_child(kind, zk, bootstrap, topic, args.partitions, args.messages)
                if run.messages != args.messages:
                    raise SystemExit(f"{kind} read {run.messages} messages, not {args.messages}")
                if kind not in runs or run.cpu_per_message < runs[kind].cpu_per_message:
                    runs[kind] = run
    raw = runs.get("confluent-kafka")
    kp = runs.get("kafka-python")
    print(f"{'consumer':40} {'msg/s':>10} {'vs raw':>7} {'vs kafka-python':>16} {'CPU/msg':>9} {'vs raw':>7} "
          f"{'start-up':>9} {'peak RSS':>10}")
    for kind in kinds:
        run = runs[kind]
        vs_raw = f"{run.rate / raw.rate:6.2f}x" if raw else f"{'-':>7}"
        vs_kp = f"{run.rate / kp.rate:15.2f}x" if kp else f"{'-':>16}"
        cpu_vs_raw = f"{raw.cpu_per_message / run.cpu_per_message:6.2f}x" if raw else f"{'-':>7}"
        print(f"{LABELS[kind]:40} {run.rate:10,.0f} {vs_raw} {vs_kp} {run.cpu_per_message * 1e6:6.2f} us {cpu_vs_raw} "
              f"{run.startup:8.2f}s {run.peak_rss_kib / 1024:7.1f} MiB")
    if raw and raw.python_cpu_per_message == raw.python_cpu_per_message:
        print(f"\n{'CPU of the threads running Python, a message':40} {'total':>9} {'vs raw':>7} {'fetcher':>9} "
              f"{'readers':>9} {'GC runs, young/middle/full':>27}")
        for kind in kinds:
            run = runs[kind]
            fetcher = (f"{run.fetcher_cpu / run.messages * 1e6:6.2f} us" if run.fetcher_cpu == run.fetcher_cpu
                       else f"{'-':>9}")
            print(f"{LABELS[kind]:40} {run.python_cpu_per_message * 1e6:6.2f} us "
                  f"{raw.python_cpu_per_message / run.python_cpu_per_message:6.2f}x {fetcher} "
                  f"{run.reader_cpu / run.messages * 1e6:6.2f} us {'/'.join(map(str, run.collections)):>27}")
    if raw:
        print_cpu_ratios(runs, kinds, raw)


#: The most CPU a message each way of reading may cost, in raw confluent-kafka's CPU a message (issue 29).
CPU_TARGETS = {"zkconsumer-1": 1.25, "zkconsumer-1-records": 1.1}


def print_cpu_ratios(runs: dict[str, Run], kinds: list[str], raw: Run) -> None:
    """Last, what the run is read for: each consumer's CPU a message (all its threads, first message to last) over
    raw confluent-kafka's, the lower the better, with the target where there is one."""
    print(f"\nCPU a message over raw confluent-kafka's ({raw.cpu_per_message * 1e6:.2f} us; load average "
          f"{os.getloadavg()[0]:.1f})")
    for kind in kinds:
        run = runs[kind]
        ratio = run.cpu_per_message / raw.cpu_per_message
        target = CPU_TARGETS.get(kind)
        verdict = "" if target is None else f"  target <= {target:.2f}x: {'met' if ratio <= target else 'NOT met'}"
        print(f"{LABELS[kind]:40} {run.cpu_per_message * 1e6:6.2f} us {ratio:6.2f}x{verdict}")


if __name__ == "__main__":
    main()
