"""What the plugin's plain fixtures hand a test: names no other test (or pytest-xdist worker) uses, a ZooKeeper chroot
of the test's own, topics, a producer with keys and a rate, a legacy group's owners and offsets, and legacy members,
in the test's process or as processes of their own, stopped when the test ends.
"""

from __future__ import annotations

import contextlib
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.members.application import Message

CHROOT_BASE = "/zkconsumer-tests"  # every test's chroot lives under it
STOP_TIMEOUT_S = 20.0  # a member told to leave that is still there after this is killed


@dataclass(frozen=True)
class Names:
    """Names for one test's topics and groups: the test's name (cut, made safe) and a random suffix."""

    base: str

    @staticmethod
    def for_test(node_name: str, length: int = 40) -> Names:
        return Names(re.sub(r"[^A-Za-z0-9_-]", "-", node_name)[:length])

    def topic(self) -> str:
        return f"{self.base}-{uuid.uuid4().hex[:6]}"

    def group(self) -> str:
        return f"{self.base}-group-{uuid.uuid4().hex[:6]}"


@contextlib.contextmanager
def chroot(connect: str, node_name: str) -> Iterator[str]:
    """``connect`` with a fresh chroot under :data:`CHROOT_BASE`, created for the test and deleted after it."""
    from zkconsumer.zk.client import close_client, open_client
    from zkconsumer.zk.persistent import delete_tree

    name = re.sub(r"[^A-Za-z0-9_-]", "_", node_name)[:60]
    path = f"{CHROOT_BASE}/{name}-{uuid.uuid4().hex[:8]}"
    root = open_client(connect)
    try:
        root.ensure_path(path)
        yield f"{connect}{path}"
    finally:
        delete_tree(root, path)
        close_client(root)


@contextlib.contextmanager
def mirrored(connect: str, bootstrap: str) -> Iterator[str]:
    """``connect`` (a chroot) made to look like a ZooKeeper-mode Kafka cluster: the metadata bridge mirrors the
    broker into it (``/brokers/ids``, ``/brokers/topics``) while the test runs, as legacy members need."""
    from zkconsumer.bridge.metadata_bridge import MetadataBridge

    with MetadataBridge(connect, bootstrap, interval_ms=250).running():
        yield connect


@dataclass
class Topics:
    """Creates topics on the session's broker, named for the test; with ``cluster`` (a mirrored chroot), returns
    once legacy members can see every partition there."""

    bootstrap: str
    names: Names
    cluster: str | None = None
    timeout_s: float = 30.0

    def create(self, partitions: int = 1, name: str | None = None) -> str:
        from zkconsumer.kafka.topics import create_topic

        topic = name or self.names.topic()
        create_topic(self.bootstrap, topic, partitions)
        if self.cluster is not None:
            from zkconsumer.zk.client import zookeeper
            from zkconsumer.zk.cluster import wait_for_topic

            with zookeeper(self.cluster) as zk:
                wait_for_topic(zk, topic, partitions, timeout=self.timeout_s)
        return topic


@dataclass(frozen=True)
class Sent:
    """A message the broker acknowledged."""

    partition: int
    offset: int
    key: bytes | None
    value: bytes


def produce(bootstrap: str, topic: str, values: Sequence[bytes | str] | int, *,
            keys: Sequence[bytes | str | None] | Callable[[int], bytes | str | None] | None = None,
            partition: int | None = None, rate: float | None = None, timeout_s: float = 30.0) -> list[Sent]:
    """Send ``values`` (or that many messages ``m0``, ``m1``...) with ``keys`` (a list, or a function of the
    message's number), to ``partition`` or as the keys spread them, ``rate`` messages a second (default: at once);
    returns what the broker acknowledged, in order. Raises AssertionError naming what was not acknowledged."""
    from confluent_kafka import Producer

    from zkconsumer.kafka.client_config import with_client_settings

    items = [f"m{i}".encode() for i in range(values)] if isinstance(values, int) else \
        [v.encode() if isinstance(v, str) else v for v in values]
    producer = Producer(with_client_settings({"bootstrap.servers": bootstrap, "linger.ms": 5, "log_level": 3}))
    sent: list[Sent] = []
    failures: list[str] = []

    def report(err: Any, msg: Any) -> None:
        if err is None:
            sent.append(Sent(msg.partition(), msg.offset(), msg.key(), msg.value()))
        else:
            failures.append(str(err))

    next_at = time.monotonic()
    for n, value in enumerate(items):
        key = keys(n) if callable(keys) else (keys[n] if keys is not None else None)
        options: dict[str, Any] = {"value": value, "on_delivery": report}
        if key is not None:
            options["key"] = key.encode() if isinstance(key, str) else key
        if partition is not None:
            options["partition"] = partition
        producer.produce(topic, **options)
        producer.poll(0)
        if rate:
            next_at += 1.0 / rate
            time.sleep(max(0.0, next_at - time.monotonic()))
    left = producer.flush(timeout_s)
    if left or failures:
        raise AssertionError(f"{left + len(failures)} of {len(items)} messages to {topic} not acknowledged"
                             + (f": {failures[0]}" if failures else f" within {timeout_s:g} s"))
    return sorted(sent, key=lambda s: (s.partition, s.offset))


@dataclass(frozen=True)
class GroupState:
    """A legacy group as ZooKeeper holds it: who owns each ``(topic, partition)`` (its owner znode's thread id) and
    its committed offsets (the next offset to read), for the partitions of the topics it has offsets or owners of."""

    owners: dict[tuple[str, int], str]
    offsets: dict[tuple[str, int], int]
    members: tuple[str, ...]


def read_group(connect: str, group: str) -> GroupState:
    """One reading of ``group``'s owners and offsets at ``connect`` (a chroot of a mirrored cluster)."""
    from zkconsumer.tools.offset_checker import read_group_offsets
    from zkconsumer.zk.client import zookeeper

    with zookeeper(connect, quiet=True) as zk:
        read = read_group_offsets(zk, group)
    return GroupState({(r.topic, r.partition): r.owner for r in read.rows if r.owner is not None},
                      {(r.topic, r.partition): r.offset for r in read.rows if r.offset is not None and r.offset >= 0},
                      read.members)


@dataclass
class LegacyMember:
    """A legacy member started by :class:`LegacyMembers`: what it delivered so far, and how to end it."""

    consumer_id: str  # as the group knows it: ``<group>_<name>``, Kafka's consumer id
    stop: Callable[[], None]
    kill: Callable[[], None]
    read: Callable[[], list[Message]]
    running: Callable[[], bool]

    @property
    def delivered(self) -> list[Message]:
        """Every message the member handed on so far, in the order delivered."""
        return self.read()


@dataclass
class LegacyMembers:
    """Starts legacy members of a group on the test's cluster; those still running leave when the test ends."""

    connect: str
    workdir: Path
    started: list[LegacyMember] = field(default_factory=list)

    def start(self, group: str, topic: str, *, consumer_id: str | None = None, streams: int = 1,
              in_process: bool = True, config: dict[str, object] | None = None,
              handle: Callable[[Message], object] | None = None) -> LegacyMember:
        """A member of ``group`` reading ``topic`` with ``streams`` threads, from the earliest offset; in the test's
        process (``handle`` is then called with each message, as a member process calls its application: one that
        raises is retried, then given up) or as a process of its own
        (:mod:`zkconsumer.members.legacy_member`, which SIGKILL ends as a crash would)."""
        name = consumer_id or f"m{len(self.started) + 1}"
        member = (self._in_process(group, topic, name, streams, config or {}, handle) if in_process
                  else self._process(group, topic, name, streams, config or {}))
        self.started.append(member)
        return member

    def stop_all(self) -> None:
        for member in self.started:
            if member.running():
                member.stop()

    def _in_process(self, group: str, topic: str, name: str, streams: int, config: dict[str, object],
                    handle: Callable[[Message], object] | None) -> LegacyMember:
        from zkconsumer.config import ConsumerConfig
        from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
        from zkconsumer.log import get_logger
        from zkconsumer.members.application import Runner
        from zkconsumer.members.legacy_member import consume, member_config

        connector = ZookeeperConsumerConnector(ConsumerConfig(member_config(
            zookeeper=self.connect, group=group, consumer_id=name, overrides=config)))
        delivered: list[Message] = []
        stop = threading.Event()

        def take(message: Message) -> None:
            if handle is not None:
                handle(message)
            delivered.append(message)

        # the member process's own loop, the handler run (and a raise reported) as its application's
        app = Runner(take, get_logger("zkconsumer.testing").error, consumer_id=f"{group}_{name}")
        lock = threading.Lock()
        threads = [threading.Thread(target=consume, args=(s, stop, None, "plain", lock, app), name=f"{name}-stream",
                                    daemon=True)
                   for s in connector.create_message_streams({topic: streams})[topic]]
        for thread in threads:
            thread.start()

        def leave() -> None:
            if stop.is_set():
                return
            stop.set()
            connector.shutdown()
            for thread in threads:
                thread.join(STOP_TIMEOUT_S)

        def crash() -> None:
            raise RuntimeError("an in-process member cannot be killed; start it with in_process=False")

        return LegacyMember(f"{group}_{name}", leave, crash, lambda: list(delivered), lambda: not stop.is_set())

    def _process(self, group: str, topic: str, name: str, streams: int,
                 config: dict[str, object]) -> LegacyMember:
        from zkconsumer.members.legacy_member import command

        self.workdir.mkdir(parents=True, exist_ok=True)
        output = self.workdir / f"{name}.deliveries"
        argv = command(zookeeper=self.connect, group=group, topic=f"{topic}:{streams}", consumer_id=name,
                       config=config, output=output, delivery_format="timed", stop_at_stdin_eof=True,
                       events_file=self.workdir / f"{name}.events")
        with open(self.workdir / f"{name}.log", "wb") as log:
            process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log)

        def leave() -> None:
            with contextlib.suppress(OSError):
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()  # no timeout: SIGKILL cannot be caught or ignored
            _close(process)

        def crash() -> None:
            process.kill()
            process.wait()  # no timeout: SIGKILL cannot be caught or ignored
            _close(process)

        def read() -> list[Message]:
            found = []
            text = output.read_text(encoding="utf-8") if output.exists() else ""
            for line in text.splitlines():
                parts = line.split(" ", 4)  # time topic partition offset value
                if len(parts) == 5 and parts[2].isdigit() and parts[3].isdigit():
                    found.append(Message(parts[1], int(parts[2]), int(parts[3]), None, parts[4].encode()))
            return found

        return LegacyMember(f"{group}_{name}", leave, crash, read, lambda: process.poll() is None)


def _close(process: subprocess.Popen[bytes]) -> None:
    if process.stdin is not None:
        with contextlib.suppress(OSError):
            process.stdin.close()
