"""The cost of the front's down-conversion: the same messages fetched through the front with Fetch v0, whose answers
the front converts record by record to message sets of magic 0, and with Fetch v11, whose answers it copies unread,
in one run.

Run: ``.venv/bin/python benchmarks/front_down_convert.py [--messages N] [--partitions N] [--repeat N]``. A Tansu
broker is started with the project's launcher and the front in front of it (:mod:`zkconsumer.embedded.front_process`,
its own process); 1,000,000 messages of 10 bytes are produced once on a topic of 4 partitions (as
``benchmarks/front_fetch.py`` does); then a reader in this process fetches all of them through the front on one
connection, every partition from offset 0 in each request (1 MiB a partition, Kafka's ``fetch.message.max.bytes``),
the next request from where each partition's answer ended, once with Fetch v0 and once with Fetch v11, alternately,
``--repeat`` times each, the run of each version whose front used the least CPU kept.

The reader does as little as a reader can with each answer: it walks the message set's headers (offset and size of
each message) or the record batches' headers (base offset, last offset delta and record count of each batch), to
count the messages and find the next offset; it decodes no message, so the rate is set by the front and the broker
more than by it. Printed per version: the rate (messages a second, from the first request to the last answer), the
CPU per message of the front's process (all its threads: the conversions of more than 64 KiB run on a worker thread;
summed from each thread's run time in nanoseconds, as the relayed path costs the front about one 10 ms tick of the
process's own clock), of the broker's and of the reader's, and the ratios of v0 to v11. CPU moves much less than the
rate with other load on a shared machine. This is a benchmark, not a test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from consume import VALUE_BYTES
from front_fetch import fronted_topic, process_cpu

PARTITION_MAX_BYTES = 1 << 20
MAX_WAIT_MS = 100


def threads_cpu(pid: int) -> tuple[float, frozenset[int]]:
    """CPU seconds each thread of a process has run so far, summed, in nanoseconds' resolution (the first field of
    ``/proc/<pid>/task/<tid>/schedstat``), and the threads' ids: the relayed path costs the front about 10 ms over a
    whole run, one tick of ``/proc/<pid>/stat``'s clock."""
    total, tids = 0, set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            total += int(Path(f"/proc/{pid}/task/{tid}/schedstat").read_text(encoding="ascii").split()[0])
        except (OSError, IndexError, ValueError):
            continue
        tids.add(int(tid))
    return total / 1e9, frozenset(tids)


class CpuMeter:
    """A process's CPU between two readings: its threads' run times in nanoseconds, or, where a thread ended between
    the readings (its time gone with it), the process's own clock ticks, which count it."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.ticks = process_cpu(pid)
        self.threads, self.tids = threads_cpu(pid)

    def used(self) -> float:
        threads, tids = threads_cpu(self.pid)
        if self.tids <= tids:
            return threads - self.threads
        return process_cpu(self.pid) - self.ticks


@dataclass(frozen=True)
class Fetched:
    version: int
    messages: int
    requests: int
    bytes: int
    seconds: float
    reader_cpu: float
    front_cpu: float
    broker_cpu: float

    @property
    def rate(self) -> float:
        return self.messages / self.seconds

    def per_message(self, seconds: float) -> float:
        return seconds / self.messages


def message_set_extent(records: bytes) -> tuple[int, int]:
    """Messages in a message set (magic 0 or 1, uncompressed, as the front writes them) and the offset after its last
    whole one (-1 for none); a message cut short at the end, as Kafka answers at the partition's limit, is left out."""
    count, last, position, end = 0, -1, 0, len(records)
    while position + 12 <= end:
        offset, size = struct.unpack_from(">qi", records, position)
        if position + 12 + size > end:
            break
        count, last, position = count + 1, offset, position + 12 + size
    return count, last + 1 if count else -1


def record_batches_extent(records: bytes) -> tuple[int, int]:
    """Records in a run of record batches (magic 2) and the offset after the last whole batch (-1 for none), read
    from the batches' headers: base offset (0), length (8), last offset delta (23), record count (57)."""
    count, after, position, end = 0, -1, 0, len(records)
    while position + 61 <= end:
        base, length = struct.unpack_from(">qi", records, position)
        if position + 12 + length > end:
            break
        delta, = struct.unpack_from(">i", records, position + 23)
        records_in_batch, = struct.unpack_from(">i", records, position + 57)
        count, after, position = count + records_in_batch, base + delta + 1, position + 12 + length
    return count, after


def fetch_v0(sock: socket.socket, topic: str, offsets: dict[int, int]) -> dict[int, tuple[int, int, int]]:
    """One Fetch v0 of every partition: partition -> (messages, next offset, bytes)."""
    from kafka.protocol.old.fetch import FetchRequest_v0, FetchResponse_v0

    from zkconsumer.front.proxy.client import read_answer

    request = FetchRequest_v0(replica_id=-1, max_wait_ms=MAX_WAIT_MS, min_bytes=1, topics=[
        (topic, [(partition, offset, PARTITION_MAX_BYTES) for partition, offset in offsets.items()])])
    request.with_header(correlation_id=1, client_id="bench-v0")
    sock.sendall(request.encode(header=True, framed=True))
    answer = FetchResponse_v0.decode(read_answer(sock)[4:])
    got = {}
    for _topic, partitions in answer.topics:
        for partition, error, _high_watermark, records in partitions:
            if error:
                raise SystemExit(f"Fetch v0 of partition {partition}: error {error}")
            count, after = message_set_extent(records)
            got[partition] = (count, after if count else offsets[partition], len(records))
    return got


def fetch_v11(sock: socket.socket, topic: str, offsets: dict[int, int]) -> dict[int, tuple[int, int, int]]:
    """One Fetch v11 of every partition: partition -> (records, next offset, bytes)."""
    from kio.schema.fetch.v11.request import FetchPartition, FetchRequest, FetchTopic
    from kio.static.primitive import i32, i32Timedelta, i64

    from zkconsumer.front.proxy.client import exchange_on

    request = FetchRequest(max_wait=i32Timedelta.parse(timedelta(milliseconds=MAX_WAIT_MS)), min_bytes=i32(1),
                           rack_id="", topics=(FetchTopic(topic=topic, partitions=tuple(
                               FetchPartition(partition=i32(partition), fetch_offset=i64(offset),
                                              partition_max_bytes=i32(PARTITION_MAX_BYTES))
                               for partition, offset in offsets.items())),), forgotten_topics_data=())
    answer = exchange_on(sock, request, client_id="bench-v11")
    got = {}
    for response in answer.responses:
        for data in response.partitions:
            if data.error_code.value:
                raise SystemExit(f"Fetch v11 of partition {data.partition_index}: {data.error_code}")
            records = bytes(data.records or b"")
            count, after = record_batches_extent(records)
            got[data.partition_index] = (count, after if count else offsets[data.partition_index], len(records))
    return got


def measure(version: int, front: str, topic: str, partitions: int, messages: int, front_pid: int,
            broker_pid: int) -> Fetched:
    from zkconsumer.front.proxy.config import parse_address

    fetch = fetch_v0 if version == 0 else fetch_v11
    offsets = dict.fromkeys(range(partitions), 0)
    read = requests = size = 0
    with socket.create_connection(parse_address(front), timeout=30) as sock:
        front_meter, broker_meter = CpuMeter(front_pid), CpuMeter(broker_pid)
        cpu_before, started = time.process_time(), time.perf_counter()
        while read < messages:
            answer = fetch(sock, topic, offsets)
            requests += 1
            for partition, (count, after, length) in answer.items():
                read, size, offsets[partition] = read + count, size + length, after
        seconds, reader_cpu = time.perf_counter() - started, time.process_time() - cpu_before
        front_cpu, broker_cpu = front_meter.used(), broker_meter.used()
    if read != messages:
        raise SystemExit(f"Fetch v{version} read {read} messages, not {messages}")
    return Fetched(version, read, requests, size, seconds, reader_cpu, front_cpu, broker_cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000,
                        help="messages produced and read (default 1,000,000)")
    parser.add_argument("--partitions", type=int, default=4, help="partitions of the topic (default 4)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per version, least front CPU kept (default 3)")
    args = parser.parse_args()

    with fronted_topic("bench-down-convert", args.partitions, args.messages) as (broker, front, topic):
        print(f"{args.messages:,} messages of {VALUE_BYTES} bytes on {args.partitions} partitions, fetched through "
              f"the front with Fetch v0 (down-converted) and Fetch v11 (relayed), alternately; {args.repeat} run(s) "
              f"per version, the one with the least front CPU kept")
        runs: dict[int, list[Fetched]] = {0: [], 11: []}
        for _ in range(args.repeat):
            for version in (0, 11):
                runs[version].append(measure(version, front.address, topic, args.partitions, args.messages,
                                             front.pid, broker.record.pid))
    for version, each in runs.items():
        print(f"Fetch v{version} runs: " + ", ".join(
            f"{r.rate:,.0f} msg/s with {r.per_message(r.front_cpu) * 1e6:.3f} us front CPU/msg" for r in each))
    best = {version: min(each, key=lambda r: r.front_cpu) for version, each in runs.items()}
    old, new = best[0], best[11]
    print(f"{'Fetch':8} {'msg/s':>10} {'requests':>9} {'MB':>7} {'front CPU/msg':>14} {'broker CPU/msg':>15} "
          f"{'reader CPU/msg':>15}")
    for measured in (old, new):
        print(f"{'v' + str(measured.version):8} {measured.rate:10,.0f} {measured.requests:9,} "
              f"{measured.bytes / 1e6:7.1f} {measured.per_message(measured.front_cpu) * 1e6:11.3f} us "
              f"{measured.per_message(measured.broker_cpu) * 1e6:12.3f} us "
              f"{measured.per_message(measured.reader_cpu) * 1e6:12.2f} us")
    print(f"v0 / v11: rate {old.rate / new.rate:.2f}x, front CPU per message "
          f"{old.front_cpu / new.front_cpu:.0f}x ({(old.front_cpu - new.front_cpu) / old.messages * 1e6:.2f} us a "
          f"message more), broker CPU per message "
          f"{old.broker_cpu / new.broker_cpu if new.broker_cpu else float('nan'):.2f}x")


if __name__ == "__main__":
    main()
