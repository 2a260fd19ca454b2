"""The front's overhead on Fetch: one consumer reading the same messages directly from the broker and relayed through
the front, in one run.

Run: ``.venv/bin/python benchmarks/front_fetch.py [--messages N] [--repeat N] [--consumer confluent-kafka]``. A Tansu
broker is started with the project's launcher and the front in front of it
(:mod:`zkconsumer.embedded.front_process`, its own process); 1,000,000 messages of 10 bytes are produced once on a
topic of 4 partitions; then the consumer of
``benchmarks/consume.py`` (``assign()`` at offset 0, in a child process of its own) reads all of them, once from the
broker and once through the front, alternately, ``--repeat`` times each, the best run of each path kept.

Printed per path: the consumer's rate (messages a second, from its first message to its last) and CPU per message
(its whole process, librdkafka's threads included), and the CPU per message of the front's process and of the
broker's over the consumer's whole run (start-up included, so the front's figure is an upper bound). The ratios are
the relayed path's against the direct one; the front's CPU is also given against the consumer's own, the cost of the
relay next to the cost of consuming. CPU moves much less than the rate with other load on a shared machine. This is
a benchmark, not a test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench_support import machine
from consume import VALUE_BYTES, Run, produce, run_child

if TYPE_CHECKING:
    from zkconsumer.embedded.broker import LocalTansu
    from zkconsumer.embedded.front_process import FrontProcess

CONSUMERS = ("confluent-kafka", "kafka-python")
_TICK = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> float:
    """CPU seconds (user and system) a process used so far, from ``/proc/<pid>/stat`` (Linux)."""
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICK  # utime and stime, the 14th and 15th fields


@dataclass(frozen=True)
class PathRun:
    run: Run
    front_cpu: float  # seconds of the front's process over the consumer's run (0 on the direct path)
    broker_cpu: float

    def per_message(self, seconds: float) -> float:
        return seconds / self.run.messages


def measure(consumer: str, bootstrap: str, topic: str, partitions: int, messages: int, front_pid: int,
            broker_pid: int) -> PathRun:
    front_before, broker_before = process_cpu(front_pid), process_cpu(broker_pid)
    run = run_child(consumer, "", bootstrap, topic, partitions, messages)
    if run.messages != messages:
        raise SystemExit(f"{consumer} read {run.messages} messages, not {messages}")
    return PathRun(run, process_cpu(front_pid) - front_before, process_cpu(broker_pid) - broker_before)


@contextlib.contextmanager
def fronted_topic(prefix: str, partitions: int, messages: int) -> Iterator[tuple[LocalTansu, FrontProcess, str]]:
    """A broker of its own with a front process before it, and a topic of ``partitions`` holding ``messages`` of
    VALUE_BYTES: what a benchmark of the front reads, printed with the machine it runs on."""
    from zkconsumer.embedded.broker import LocalTansu
    from zkconsumer.embedded.front_process import FrontProcess
    from zkconsumer.kafka.topics import create_topic
    from zkconsumer.log import configure_logging

    configure_logging(level="warning")
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}")
    with tempfile.TemporaryDirectory(prefix="zkconsumer-bench-") as workdir, \
            LocalTansu(Path(workdir) / "broker") as broker, \
            FrontProcess(broker.address, Path(workdir) / "front") as front:
        assert broker.record is not None and front.pid is not None
        topic = f"{prefix}-{uuid.uuid4().hex[:6]}"
        create_topic(broker.address, topic, partitions)
        produce(broker.address, topic, partitions, messages)
        yield broker, front, topic


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000,
                        help="messages produced and read (default 1,000,000)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per path, best kept (default 3)")
    parser.add_argument("--consumer", choices=CONSUMERS, default="confluent-kafka",
                        help="the consumer of benchmarks/consume.py to run (default confluent-kafka)")
    args = parser.parse_args()

    with fronted_topic("bench-front", args.partitions, args.messages) as (broker, front, topic):
        print(f"{args.messages:,} messages of {VALUE_BYTES} bytes on {args.partitions} partitions, read by "
              f"{args.consumer} (assign + consume) directly and through the front, alternately; best of "
              f"{args.repeat} run(s) per path")
        best: dict[str, PathRun] = {}
        for _ in range(args.repeat):
            for path, bootstrap in (("direct", broker.address), ("front", front.address)):
                measured = measure(args.consumer, bootstrap, topic, args.partitions, args.messages, front.pid,
                                   broker.record.pid)
                if path not in best or measured.run.rate > best[path].run.rate:
                    best[path] = measured
    direct, relayed = best["direct"], best["front"]
    print(f"{'path':22} {'msg/s':>10} {'vs direct':>10} {'consumer CPU/msg':>17} {'vs direct':>10} "
          f"{'front CPU/msg':>14} {'broker CPU/msg':>15}")
    for label, measured in (("direct to the broker", direct), ("through the front", relayed)):
        print(f"{label:22} {measured.run.rate:10,.0f} {measured.run.rate / direct.run.rate:9.2f}x "
              f"{measured.run.cpu_per_message * 1e6:14.2f} us "
              f"{measured.run.cpu_per_message / direct.run.cpu_per_message:9.2f}x "
              f"{measured.per_message(measured.front_cpu) * 1e6:11.2f} us "
              f"{measured.per_message(measured.broker_cpu) * 1e6:12.2f} us")
    print(f"the front's CPU per message relayed: {relayed.front_cpu / relayed.run.cpu:.2f}x the consumer's own "
          f"({relayed.per_message(relayed.front_cpu) * 1e6:.2f} us against "
          f"{relayed.run.cpu_per_message * 1e6:.2f} us)")


if __name__ == "__main__":
    main()
