"""How long a legacy group takes to start, by partitions and members, and what it costs ZooKeeper: batched multi-op
claims next to Kafka's one create per partition, in the same run.

Run: ``.venv/bin/python benchmarks/rebalance.py [--partitions 100,1000,10000] [--members 1,10,50] [--quick]``.
One ZooKeeper, one broker and the metadata bridge (which registers the broker) are started with the project's
launchers. Each topic is written to ZooKeeper the ZooKeeper way (``admin.zk_topics``): ownership, offsets and the
rebalance are all ZooKeeper's, and the topic's partitions then wait for a leader in the leader finder rather than
fetch (fetching is ``benchmarks/consume.py``'s subject). For every size, members and claim mode a fresh group:

* the members are constructed (connected to ZooKeeper) first, outside the timing;
* then all call ``create_message_streams`` at once, each in its own thread, and the clock runs until every
  partition is owned, each member holds its range share and ZooKeeper has one owner znode per partition: the group
  fetches (for 1 member: when ``create_message_streams`` returned);
* ``into 1``: the same, but one member already owns every partition when the others join at once, the usual case
  of a running group that grows: it must release before they can claim, so some of their attempts fail;
* ``attempts failed`` counts the ``rebalance.attempt_failed`` events (ownership conflicts while members release);
* ``ZK requests`` is the difference of the server's ``zk_packets_received`` (the ``mntr`` four-letter word) over the
  join, every request of every member (registration, watches, reads, writes, and a ping per idle session every
  couple of seconds); ``claim writes`` adds up the ``batches`` of the members' ``rebalance.claim`` events: the
  requests that created owner znodes;
* ``batched`` is the default (``zookeeper.multi.max.bytes`` = 512 KiB), ``legacy`` sets it to 0: one create per
  partition, as Kafka's ``reflectPartitionOwnershipDecision`` did, and single deletes and writes elsewhere.

With ``--repeat N`` every join runs N times (a fresh group each time) and the fastest is kept, with its own counts:
other load on the machine only ever adds time. A join still not shared after ``--max-seconds`` (300) is shown as
``>300s``, its ratios as lower bounds. The ratio is legacy / batched of the same run. ``--quick`` leaves out the
legacy runs of 10,000 partitions, the slow ones. This is a benchmark, not a test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import platform
import signal
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import structlog
from bench_support import machine, servers

from zkconsumer import ConsumerConfig, create_connector
from zkconsumer.admin import zk_topics
from zkconsumer.admin.topic_plans import CreateRequest
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.types import TopicPartition
from zkconsumer.zk import paths
from zkconsumer.zk.client import close_client, open_client
from zkconsumer.zk.reads import children

MODES = {"batched": None, "legacy": 0}  # zookeeper.multi.max.bytes: the default, or one request per znode


@dataclass(frozen=True)
class Join:
    seconds: float
    failed_attempts: int
    rebalances: int
    zk_requests: int
    claim_writes: int
    finished: bool = True  # False: still not shared at --max-seconds; the counts are up to then
    cpu_seconds: float = 0.0  # this process's CPU (every member's threads) over the same interval

    @property
    def shown(self) -> str:
        return f"{self.seconds:7.2f}s" if self.finished else f">{self.seconds:6.0f}s"


class EventTally:
    """The events of the run, counted per group (structlog is configured to count and drop them)."""

    def __init__(self) -> None:
        self.failed: dict[str, int] = {}
        self.completed: dict[str, int] = {}
        self.claim_writes: dict[str, int] = {}
        self._lock = threading.Lock()

    def __call__(self, _logger, _name, event: dict) -> dict:
        group, name = event.get("group"), event.get("event")
        if group is not None:
            with self._lock:
                if name == "rebalance.attempt_failed":
                    self.failed[group] = self.failed.get(group, 0) + 1
                elif name == "rebalance.completed":
                    self.completed[group] = self.completed.get(group, 0) + 1
                elif name == "rebalance.claim":
                    self.claim_writes[group] = self.claim_writes.get(group, 0) + event.get("batches", 0)
        raise structlog.DropEvent


def packets_received(zk) -> int:
    stats = dict(line.split("\t", 1) for line in zk.command(b"mntr").splitlines() if "\t" in line)
    return int(stats["zk_packets_received"])


def owned(connector: ZookeeperConsumerConnector) -> set[TopicPartition]:
    return {TopicPartition(t, p) for t, ps in connector.topic_registry.items() for p in ps}


def start_streams(connector: ZookeeperConsumerConnector, topic: str, errors: list[BaseException]) -> None:
    """``create_message_streams`` on ``topic`` (a thread's target); what it raises goes to ``errors``."""
    try:
        connector.create_message_streams({topic: 1})
    except BaseException as exc:
        errors.append(exc)


def shared_evenly(zk, connectors: list[ZookeeperConsumerConnector], everything: set[TopicPartition],
                  owners_dir: str) -> bool:
    """Every partition owned by one of ``connectors``, their shares within one of each other, and ZooKeeper holding
    one owner znode per partition."""
    shares = [owned(c) for c in connectors]
    return (sum(len(s) for s in shares) == len(everything) and set().union(*shares) == everything
            and max(len(s) for s in shares) - min(len(s) for s in shares) <= 1
            and len(children(zk, owners_dir)) == len(everything))


def join(connect: str, root, zk, topic: str, partitions: int, members: int, mode: str, tally: EventTally,
         into_one: bool = False, max_seconds: float = 300.0) -> Join:
    group = f"bench-{partitions}-{members}-{mode}-{uuid.uuid4().hex[:6]}"
    props = {"zookeeper.connect": connect, "group.id": group, "rebalance.backoff.ms": 200,
             "rebalance.max.retries": 100, "zookeeper.session.timeout.ms": 30_000}
    if MODES[mode] is not None:
        props["zookeeper.multi.max.bytes"] = MODES[mode]
    connectors = [create_connector(ConsumerConfig({**props, "consumer.id": f"m{n:02d}"})) for n in range(members)]
    everything = {TopicPartition(topic, p) for p in range(partitions)}
    owners_dir = paths.GroupTopicDirs(group, topic).owner_dir
    errors: list[BaseException] = []

    def start(connector: ZookeeperConsumerConnector) -> None:
        start_streams(connector, topic, errors)

    def shared() -> bool:
        return shared_evenly(zk, connectors, everything, owners_dir)

    try:
        joining = connectors
        if into_one:
            connectors[0].create_message_streams({topic: 1})
            joining = connectors[1:]
        counted = tally.failed.get(group, 0), tally.completed.get(group, 0), tally.claim_writes.get(group, 0)
        before = packets_received(root)
        cpu = time.process_time()
        started = time.monotonic()
        threads = [threading.Thread(target=start, args=(c,)) for c in joining]
        for thread in threads:
            thread.start()
        deadline = started + max_seconds
        for thread in threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        while not errors and not shared() and time.monotonic() < deadline:
            time.sleep(0.01)
        finished = time.monotonic() < deadline
        seconds = time.monotonic() - started
        cpu = time.process_time() - cpu
        failures = list(errors)  # later ones are the shutdown below cutting a join short
        requests = packets_received(root) - before
        counts = (tally.failed.get(group, 0) - counted[0], tally.completed.get(group, 0) - counted[1],
                  tally.claim_writes.get(group, 0) - counted[2])
    finally:
        stoppers = [threading.Thread(target=c.shutdown) for c in connectors]
        for thread in stoppers:
            thread.start()
        for thread in stoppers:
            thread.join()
    if failures:
        raise SystemExit(f"{members} members of {partitions} partitions ({mode}): {failures[0]!r}")
    return Join(seconds, counts[0], counts[1], requests, counts[2], finished, cpu)


def numbers(text: str) -> list[int]:
    return [int(part) for part in text.split(",") if part.strip()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=numbers, default=[100, 1000, 10_000], help="topic sizes (100,1000,10000)")
    parser.add_argument("--members", type=numbers, default=[1, 10, 50], help="members joining at once (1,10,50)")
    parser.add_argument("--quick", action="store_true", help="skip the legacy runs of 10,000 partitions")
    parser.add_argument("--repeat", type=int, default=1, help="runs per join, fastest kept (default 1)")
    parser.add_argument("--max-seconds", type=float, default=300.0,
                        help="give up on a join still not shared after this long (default 300)")
    args = parser.parse_args()
    # A SIGTERM (timeout, Ctrl-C's cousin) unwinds the servers' context managers instead of orphaning them.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tally = EventTally()
    structlog.configure(processors=[tally])
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}")
    print("join: from create_message_streams in every member at once until every partition is owned and shared")
    header = (f"{'partitions':>10} {'members':>13} {'mode':8} {'join':>8} {'attempts failed':>15} {'rebalances':>10} "
              f"{'ZK requests':>11} {'claim writes':>12} {'legacy/batched (join, requests, claim writes)':>46}")
    with tempfile.TemporaryDirectory(prefix="zkconsumer-bench-") as tmp, servers(Path(tmp)) as run_servers:
        root_connect, connect = run_servers.zookeeper, run_servers.connect
        root, zk = open_client(root_connect), open_client(connect)
        try:
            while not children(zk, paths.BROKER_IDS_PATH):
                time.sleep(0.1)
            print(header)
            for partitions in args.partitions:
                topic = f"bench-{partitions}"
                zk_topics.write_creation(zk, zk_topics.prepare_creation(zk, CreateRequest(topic, partitions, 1)))
                scenarios = [(m, False) for m in args.members] + [(m, True) for m in args.members if m > 1]
                for members, into_one in scenarios:
                    results: dict[str, Join] = {}
                    for mode in MODES:
                        if mode == "legacy" and args.quick and partitions >= 10_000:
                            continue
                        result = results[mode] = min(
                            (join(connect, root, zk, topic, partitions, members, mode, tally, into_one,
                                  args.max_seconds) for _ in range(args.repeat)), key=lambda j: j.seconds)
                        ratio = ""
                        if mode == "legacy" and "batched" in results:
                            b = results["batched"]
                            at_least = "" if result.finished else ">"
                            ratio = (f"{at_least}{result.seconds / b.seconds:5.1f}x "
                                     f"{at_least}{result.zk_requests / b.zk_requests:5.1f}x "
                                     f"{at_least}{result.claim_writes / max(b.claim_writes, 1):7.0f}x")
                        label = f"{members - 1} into 1" if into_one else f"{members} at once"
                        print(f"{partitions:>10,} {label:>13} {mode:8} {result.shown} "
                              f"{result.failed_attempts:>15} {result.rebalances:>10} {result.zk_requests:>11,} "
                              f"{result.claim_writes:>12,} {ratio:>46}", flush=True)
        finally:
            close_client(zk)
            close_client(root)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
