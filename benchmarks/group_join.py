"""A member joining a stable classic group of N: how long until the group is settled again, through the front and at
the broker's own group coordinator, in one run.

Run: ``.venv/bin/python benchmarks/group_join.py [--sizes 3,30] [--strategies range,cooperative-sticky]
[--repeat 1]``. A Tansu broker is started with the project's launcher and the front in front of it
(:mod:`zkconsumer.embedded.front_process`, its own process). For every strategy, size N and path (``front``: the
consumers bootstrap from the front; ``direct``: from the broker, whose own coordinator then runs the group), a topic of
``2 (N + 1)`` partitions and a group of its own are made; N confluent-kafka consumers (``subscribe()``, each polled by
a thread of its own, ``session.timeout.ms`` 45000 and ``heartbeat.interval.ms`` 3000 as in Kafka's defaults for a
classic member) form the group until it is stable: every partition owned by exactly one member, the members' shares
within one of each other, and no rebalance callback for one heartbeat interval. Then one more member subscribes, and
the clock runs until the group is settled again with N + 1 members (for cooperative-sticky, after its second round,
which hands out what the first revoked).

Printed per strategy and N: the join time on each path (from the newcomer's ``subscribe()`` to the group settled),
the newcomer's first partitions, the front's against the direct path's, and the CPU over the join of the consumers'
process (all N + 1, librdkafka's threads included), of the front's process and of the broker's. This is a benchmark,
not a test: nothing here fails on slowness.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from bench_support import machine
from front_fetch import process_cpu

SESSION_TIMEOUT_MS = 45_000
HEARTBEAT_INTERVAL_MS = 3_000
SETTLE_TIMEOUT_S = 300.0
PATHS = ("front", "direct")


class Member:
    """One confluent-kafka consumer of the group, polled by a thread of its own; its partitions as its rebalance
    callbacks last left them (eager: replaced on assign; cooperative: added and removed incrementally)."""

    def __init__(self, name: str, bootstrap: str, group: str, topic: str, strategy: str, session_ms: int,
                 heartbeat_ms: int, group_protocol: str = "classic") -> None:
        """``group_protocol`` ``consumer``: a KIP-848 member asking for ``strategy`` as its server-side assignor
        (the session and heartbeat are then the coordinator's)."""
        from confluent_kafka import Consumer

        self.name = name
        self.topic = topic
        self.cooperative = strategy == "cooperative-sticky" or group_protocol == "consumer"
        settings: dict[str, object] = (
            {"group.protocol": "consumer", "group.remote.assignor": strategy} if group_protocol == "consumer" else
            {"partition.assignment.strategy": strategy, "session.timeout.ms": session_ms,
             "heartbeat.interval.ms": heartbeat_ms})
        self.consumer = Consumer({
            "bootstrap.servers": bootstrap, "group.id": group, "client.id": name, **settings,
            "enable.auto.commit": False, "log_level": 0,
        })
        self.owned: set[int] = set()
        #: (monotonic time, partitions started (+) or stopped (-) being consumed), one per callback
        self.changes: list[tuple[float, int]] = []
        self.first_assigned: float | None = None
        self.last_callback = time.monotonic()
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._poll, name=name, daemon=True)

    def start(self) -> None:
        self.consumer.subscribe([self.topic], on_assign=self._assigned, on_revoke=self._revoked)
        self.thread.start()

    def _assigned(self, _consumer: object, partitions: list) -> None:
        now = time.monotonic()
        with self.lock:
            got = {p.partition for p in partitions}
            before = len(self.owned)
            self.owned = self.owned | got if self.cooperative else got
            self.changes.append((now, len(self.owned) - before))
            if got and self.first_assigned is None:
                self.first_assigned = now
            self.last_callback = now

    def _revoked(self, _consumer: object, partitions: list) -> None:
        with self.lock:
            before = len(self.owned)
            self.owned = self.owned - {p.partition for p in partitions} if self.cooperative else set()
            self.last_callback = time.monotonic()
            self.changes.append((self.last_callback, len(self.owned) - before))

    def _poll(self) -> None:
        while not self.stop.is_set():
            self.consumer.poll(0.1)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.consumer.close()


def settled(members: list[Member], partitions: int, quiet_s: float) -> bool:
    """Every partition owned by exactly one member, shares within one of each other, no callback for ``quiet_s``."""
    now = time.monotonic()
    shares = []
    owned: list[int] = []
    for member in members:
        with member.lock:
            shares.append(len(member.owned))
            owned.extend(member.owned)
            if now - member.last_callback < quiet_s:
                return False
    return sorted(owned) == list(range(partitions)) and max(shares) - min(shares) <= 1


def wait_settled(members: list[Member], partitions: int, quiet_s: float) -> float:
    """When the group became settled (its last callback), waiting at most :data:`SETTLE_TIMEOUT_S`."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    while not settled(members, partitions, quiet_s):
        if time.monotonic() > deadline:
            shares = {m.name: sorted(m.owned) for m in members}
            raise SystemExit(f"the group did not settle within {SETTLE_TIMEOUT_S:.0f} s: {shares}")
        time.sleep(0.05)
    return max(m.last_callback for m in members)


@dataclass(frozen=True)
class Join:
    seconds: float  # the newcomer's subscribe() to the group settled again
    newcomer_seconds: float  # the newcomer's subscribe() to its first partitions
    formed_seconds: float  # the first N members' subscribe() to their group settled
    consumers_cpu: float  # this process (every member) over the join
    front_cpu: float
    broker_cpu: float


def measure(bootstrap: str, strategy: str, size: int, front_pid: int, broker_pid: int, session_ms: int,
            heartbeat_ms: int) -> Join:
    from zkconsumer.kafka.topics import create_topic

    run = uuid.uuid4().hex[:6]
    topic, group, partitions = f"bench-join-{run}", f"bench-join-{run}", 2 * (size + 1)
    create_topic(bootstrap, topic, partitions)
    quiet_s = heartbeat_ms / 1000

    def member(n: int) -> Member:
        return Member(f"m{n}", bootstrap, group, topic, strategy, session_ms, heartbeat_ms)

    members = [member(n) for n in range(size)]
    try:
        began = time.monotonic()
        for m in members:
            m.start()
        formed = wait_settled(members, partitions, quiet_s) - began
        newcomer = member(size)
        members.append(newcomer)
        cpu, front, broker = time.process_time(), process_cpu(front_pid), process_cpu(broker_pid)
        joined = time.monotonic()
        newcomer.start()
        done = wait_settled(members, partitions, quiet_s)
        cpu, front, broker = (time.process_time() - cpu, process_cpu(front_pid) - front,
                              process_cpu(broker_pid) - broker)
        assert newcomer.first_assigned is not None  # settled: it owns its share
        return Join(done - joined, newcomer.first_assigned - joined, formed, cpu, front, broker)
    finally:
        for m in members:
            m.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3,30", help="members of the stable group, comma-separated (default 3,30)")
    parser.add_argument("--strategies", default="range,cooperative-sticky",
                        help="partition.assignment.strategy values, comma-separated (default range,cooperative-sticky)")
    parser.add_argument("--repeat", type=int, default=1, help="joins per path, the quickest kept (default 1)")
    parser.add_argument("--session-timeout-ms", type=int, default=SESSION_TIMEOUT_MS)
    parser.add_argument("--heartbeat-interval-ms", type=int, default=HEARTBEAT_INTERVAL_MS)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    strategies = args.strategies.split(",")

    from zkconsumer.embedded.broker import LocalTansu
    from zkconsumer.embedded.front_process import FrontProcess
    from zkconsumer.log import configure_logging

    configure_logging(level="warning")
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}")
    print(f"a member joining a stable classic group of N (confluent-kafka, session.timeout.ms "
          f"{args.session_timeout_ms}, heartbeat.interval.ms {args.heartbeat_interval_ms}), through the front and "
          f"at the broker's own coordinator, alternately; quickest of {args.repeat} join(s) per path")
    results: dict[tuple[str, int, str], Join] = {}
    with tempfile.TemporaryDirectory(prefix="zkconsumer-bench-") as workdir, \
            LocalTansu(Path(workdir) / "broker") as broker, \
            FrontProcess(broker.address, Path(workdir) / "front") as front:
        assert broker.record is not None and front.pid is not None
        for strategy in strategies:
            for size in sizes:
                for _ in range(args.repeat):
                    for path, bootstrap in (("front", front.address), ("direct", broker.address)):
                        join = measure(bootstrap, strategy, size, front.pid, broker.record.pid,
                                       args.session_timeout_ms, args.heartbeat_interval_ms)
                        key = (strategy, size, path)
                        if key not in results or join.seconds < results[key].seconds:
                            results[key] = join
                        print(f"  {strategy} N={size} {path}: settled {join.seconds:.2f} s after the join "
                              f"(group of {size} formed in {join.formed_seconds:.1f} s)", flush=True)
    print(f"{'strategy':19} {'N':>3} {'path':7} {'join s':>7} {'newcomer s':>10} {'vs direct':>9} "
          f"{'consumers CPU s':>15} {'front CPU s':>11} {'broker CPU s':>12}")
    for strategy in strategies:
        for size in sizes:
            direct = results[(strategy, size, "direct")]
            for path in PATHS:
                join = results[(strategy, size, path)]
                print(f"{strategy:19} {size:>3} {path:7} {join.seconds:7.2f} {join.newcomer_seconds:10.2f} "
                      f"{join.seconds / direct.seconds:8.2f}x {join.consumers_cpu:15.2f} "
                      f"{join.front_cpu if path == 'front' else 0.0:11.2f} {join.broker_cpu:12.2f}")


if __name__ == "__main__":
    main()
