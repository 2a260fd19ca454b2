"""The front beside Apache Kafka 4.x's own group coordinator: the same group story played with real clients at both,
and what the clients observed compared.

One Kafka node (:class:`~zkconsumer.embedded.kafka_broker.LocalKafkaKRaft`, the KIP-848 coordinator on) and one front
over the session's Tansu broker (:func:`coordinators`: once per worker for the modules at the default settings,
tests/front/conftest.py's ``pair``; per module for a module with settings of its own), both given the same short
settings (:func:`kafka_settings`: Kafka's names, the front's options), so that a story takes seconds. A story is a
function of one :class:`Coordinator` returning an :class:`Observed`; :func:`play` runs it at both at once (two
threads: the clients of each are their own) and returns both observations.

What is compared is what the clients see, normalized so that what is random in a run drops out:

- each member's rebalance callbacks in order (assign, revoke, lost: partitions counted, not named, since member ids
  are random and the assignors order members by them), each with the generation (classic) or member epoch (KIP-848)
  the client held when it was called, read from the client's own group metadata (librdkafka's serialized
  ``ConsumerGroupMetadata``: its generation id and member id);
- error codes the clients or the admin client were answered;
- the time from the story's action until the group settled, compared within :data:`SETTLE_TOLERANCE_S` (scaled to
  the machine): both coordinators wait on the same clients' heartbeats and the same timeouts, so a difference beyond
  it is a difference of pacing, not of noise.
"""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import textwrap
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from support import require_kafka, wait_for
from time_scale import bounded, scaled

from zkconsumer.embedded.front import SHORT_CLASSIC_SESSIONS, consumer_group_options
from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.embedded.kafka_broker import LocalKafkaKRaft
from zkconsumer.embedded.process import free_port
from zkconsumer.front.proxy.client import exchange

#: a classic member's session and heartbeat interval, and KIP-848's (the coordinator's: group.consumer.*)
SESSION_MS, HEARTBEAT_MS = 3000, 500
CONSUMER_SESSION_MS, CONSUMER_HEARTBEAT_MS = 4000, 500
#: group.initial.rebalance.delay.ms: Kafka's 3000 would add 3 s to every new classic group, at both
INITIAL_DELAY_MS = 1000


def kafka_settings(consumer_session_ms: int = CONSUMER_SESSION_MS) -> dict[str, str]:
    """The settings both coordinators run with, by Kafka's names (the rest are Kafka's defaults at both), as Kafka is
    given them; and what only Kafka is given: one partition of ``__consumer_offsets`` (created in a second, Kafka's 50
    in several), and no assignment batching (KIP-1263, Kafka 4.3 on: a consumer group's target assignment computed at
    most once every ``group.consumer.assignment.interval.ms``, 1000), which the front does not do (it computes a
    group's target at the heartbeat that needs it, as Kafka up to 4.2 did: docs/front.md's differential table)."""
    return {
        "group.min.session.timeout.ms": "1000",
        "group.initial.rebalance.delay.ms": str(INITIAL_DELAY_MS),
        "group.consumer.session.timeout.ms": str(consumer_session_ms),
        "group.consumer.min.session.timeout.ms": str(consumer_session_ms),
        "group.consumer.heartbeat.interval.ms": str(CONSUMER_HEARTBEAT_MS),
        "group.consumer.min.heartbeat.interval.ms": str(CONSUMER_HEARTBEAT_MS),
        "offsets.topic.num.partitions": "1",
        "group.consumer.assignment.interval.ms": "0",
    }


def front_options(consumer_session_ms: int = CONSUMER_SESSION_MS) -> tuple[str, ...]:
    """:func:`kafka_settings` as the front's options."""
    return (*SHORT_CLASSIC_SESSIONS, "--group-initial-rebalance-delay-ms", str(INITIAL_DELAY_MS),
            *consumer_group_options(consumer_session_ms, CONSUMER_HEARTBEAT_MS))


#: how far apart the two coordinators' settling times may be (the reference machine's figure, scaled): two heartbeat
#: intervals of the clients and the scheduling of two JVM or Python servers on a loaded machine
SETTLE_TOLERANCE_S = 1.5

#: the client settings of each protocol the stories play
CLASSIC_COMMON = {"session.timeout.ms": SESSION_MS, "heartbeat.interval.ms": HEARTBEAT_MS}
EAGER = {"partition.assignment.strategy": "range", **CLASSIC_COMMON}
COOPERATIVE = {"partition.assignment.strategy": "cooperative-sticky", **CLASSIC_COMMON}
CONSUMER = {"group.protocol": "consumer"}
PROTOCOLS = {"range": EAGER, "cooperative-sticky": COOPERATIVE, "consumer": CONSUMER}


@dataclass
class Coordinator:
    """One of the two coordinators under comparison: ``kafka`` or ``front``, and where its clients bootstrap."""

    name: str
    bootstrap: str
    kafka: LocalKafkaKRaft | None = None
    front: FrontProcess | None = None

    #: topics made in advance (:func:`coordinators`) by partition count, so that a story's group never meets a topic
    #: its coordinator does not know yet (Kafka's group coordinator sees a new topic a moment after Metadata lists
    #: it, and the group's epoch would move once more when it does)
    topics: dict[int, list[str]] = field(default_factory=dict)

    def topic(self, partitions: int) -> str:
        """A topic of ``partitions`` partitions no other story uses, made in advance: a topic made just before a
        story may not be in the coordinator's view of the cluster yet (its first assignment comes empty)."""
        return self.topics[partitions].pop()

    def make_topics(self, counts: dict[int, int]) -> None:
        """The topics, in one CreateTopics request, waited for until the broker's metadata has them all."""
        from confluent_kafka.admin import AdminClient, NewTopic

        wanted = {f"diff-{uuid.uuid4().hex[:8]}": partitions
                  for partitions, how_many in counts.items() for _ in range(how_many)}
        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        for future in admin.create_topics([NewTopic(name, n, 1) for name, n in wanted.items()]).values():
            future.result(timeout=bounded(30))

        def all_there() -> bool:
            listed = admin.list_topics(timeout=bounded(10)).topics
            return all(name in listed and len(listed[name].partitions) == n for name, n in wanted.items())

        wait_for(all_there, timeout=30)
        for name, partitions in wanted.items():
            self.topics.setdefault(partitions, []).append(name)

    def stop(self) -> None:
        """The coordinator's process stopped as an operator stops it (SIGTERM: Kafka's controlled shutdown)."""
        if self.kafka is not None:
            self.kafka.stop()
        elif self.front is not None:
            self.front.stop()

    def start(self) -> None:
        """Started again where it was: Kafka on its ports and log directory (it reloads its groups from
        ``__consumer_offsets``), the front on its port (it reloads them from its group store at the broker)."""
        if self.kafka is not None:
            self.kafka.start()
        elif self.front is not None:
            port = self.bootstrap.rsplit(":", 1)[1]
            previous = self.front
            self.front = FrontProcess(previous.bootstrap, previous.workdir.with_name(previous.workdir.name + "-again"),
                                      options=(*previous.options, "--port", port)).start()
            assert self.front.address == self.bootstrap
        wait_for(lambda: finds_coordinator(self), timeout=60)

    def events(self, name: str, group: str) -> list[dict]:
        """The front's events of ``group`` named ``name`` (none at Kafka, whose log is not structured)."""
        if self.front is None:
            return []
        lines = self.front.log_path.read_text(encoding="utf-8").splitlines()
        return [e for e in (json.loads(line) for line in lines if line.startswith("{"))
                if e["event"] == name and e.get("group") == group]


@contextlib.contextmanager
def coordinators(broker_bootstrap: str, workdir: Path, topics: dict[int, int],
                 consumer_session_ms: int = CONSUMER_SESSION_MS) -> Iterator[tuple[Coordinator, Coordinator]]:
    """Kafka 4.x and a front over ``broker_bootstrap``, both with :func:`kafka_settings`, each with ``topics`` made
    in advance (how many of each partition count), for the block (skipped in one line where Java or Kafka's
    artifacts are missing)."""
    require_kafka("kafka-4")
    # two ports asked for one after the other may be the same one (free_port binds and lets go), and Kafka refuses a
    # broker and a controller listener on one port
    port = free_port()
    controller_port = next(p for p in iter(free_port, None) if p != port)
    settings = kafka_settings(consumer_session_ms)
    with LocalKafkaKRaft(workdir / "kafka", port, controller_port, overrides=settings) as kafka:
        front = FrontProcess(broker_bootstrap, workdir / "front", options=front_options(consumer_session_ms)).start()
        pair = Coordinator("kafka", kafka.bootstrap, kafka=kafka), Coordinator("front", front.address, front=front)
        try:
            for coordinator in pair:
                coordinator.make_topics(topics)
                wait_for(lambda c=coordinator: finds_coordinator(c), timeout=60)
            yield pair
        finally:
            if pair[1].front is not None:
                pair[1].front.stop()


def finds_coordinator(c: Coordinator) -> bool:
    """Whether FindCoordinator of a group is answered without an error: Kafka creates ``__consumer_offsets`` at the
    first one and answers COORDINATOR_NOT_AVAILABLE until its partition is loaded, so that a story's first request
    (a raw one too) finds a coordinator, as a client would after looking it up."""
    from kio.schema.find_coordinator.v3.request import FindCoordinatorRequest
    from kio.static.primitive import i8

    return exchange(c.bootstrap, FindCoordinatorRequest(key="ready", key_type=i8(0)), bounded(10)).error_code == 0


@dataclass
class Observed:
    """What one coordinator's clients saw: ``facts`` compared for equality, ``settle_s`` within the tolerance."""

    facts: dict[str, object] = field(default_factory=dict)
    settle_s: dict[str, float] = field(default_factory=dict)


def play(pair: tuple[Coordinator, Coordinator], story: Callable[[Coordinator], Observed]) -> dict[str, Observed]:
    """``story`` at both coordinators at once; each one's observation by its name. Both run to their end whatever
    the other does, and the first failure is raised, saying at which coordinator it happened (a story that fails
    at one of them only is a difference between them)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        futures = {c.name: pool.submit(story, c) for c in pair}
        observed: dict[str, Observed] = {}
        for name, future in futures.items():
            try:
                observed[name] = future.result()
            except AssertionError as exc:
                raise AssertionError(f"at {name}: {exc}") from exc
        return observed


def differences(observed: dict[str, Observed]) -> dict[str, tuple[object, object]]:
    """Every fact that differs, as ``(kafka, front)``, and every settling time further apart than the tolerance."""
    kafka, front = observed["kafka"], observed["front"]
    found: dict[str, tuple[object, object]] = {
        name: (kafka.facts.get(name), front.facts.get(name))
        for name in sorted(set(kafka.facts) | set(front.facts)) if kafka.facts.get(name) != front.facts.get(name)}
    for name in sorted(set(kafka.settle_s) | set(front.settle_s)):
        k, f = kafka.settle_s.get(name), front.settle_s.get(name)
        if k is None or f is None or abs(k - f) > scaled(SETTLE_TOLERANCE_S):
            found[f"settle:{name}"] = (k, f)
    return found


def report(observed: dict[str, Observed]) -> str:
    """Both observations, one line each, for the test's output and the differential table in docs/front.md."""
    return "\n".join(f"{name}: {json.dumps(o.facts, sort_keys=True)} settle={o.settle_s}"
                     for name, o in observed.items())


# --- the clients ------------------------------------------------------------------------------------------------------

def group_metadata(raw: bytes) -> tuple[int, str]:
    """The generation (or member epoch) and member id of librdkafka's serialized ``ConsumerGroupMetadata``
    (``rd_kafka_consumer_group_metadata_write``: ``CGMDv2:``, the generation as a native int32, then the group id and
    member id, each NUL-terminated)."""
    magic = b"CGMDv2:"
    if not raw.startswith(magic):
        raise AssertionError(f"not librdkafka's group metadata: {raw[:16]!r}")
    generation = int.from_bytes(raw[len(magic):len(magic) + 4], sys.byteorder, signed=True)
    _group, member, _rest = raw[len(magic) + 4:].split(b"\0", 2)
    return generation, member.decode()


class Member:
    """One confluent-kafka consumer of the group: its rebalance callbacks (kind, partitions, the generation or epoch
    it held then), the errors it was told of, and its group metadata."""

    def __init__(self, coordinator: Coordinator, group: str, topics: list[str], settings: dict[str, object],
                 instance_id: str | None = None, revoke_s: float = 0.0) -> None:
        """``revoke_s``: how long its revocation callback takes (an application committing and cleaning up), which
        holds back its acknowledgement of the revocation."""
        from confluent_kafka import Consumer

        config: dict[str, object] = {"bootstrap.servers": coordinator.bootstrap, "group.id": group,
                                     "auto.offset.reset": "earliest", "enable.auto.commit": False, **settings}
        if instance_id is not None:
            config["group.instance.id"] = instance_id
        self.consumer = Consumer(config)
        #: a classic member is called back at each generation it gets (an empty assignment too), a KIP-848 one only
        #: when its assignment changes
        self.classic = settings.get("group.protocol", "classic") == "classic"
        self.calls: list[tuple[str, tuple[int, ...], int]] = []
        self.errors: list[str] = []
        self.owned: set[int] = set()
        self.closed = False
        self.revoke_s = revoke_s
        self._polling: threading.Thread | None = None
        self._stop = threading.Event()
        self._seen: tuple[set[int], int] = (set(), -1)
        self.consumer.subscribe(topics, on_assign=self._call("assign"), on_revoke=self._call("revoke"),
                                on_lost=self._call("lost"))

    def _call(self, kind: str):  # noqa: ANN202 - confluent-kafka's callback signature
        def record(consumer: object, partitions: list) -> None:
            numbers = tuple(sorted(p.partition for p in partitions))
            self.calls.append((kind, numbers, group_metadata(self.consumer.consumer_group_metadata())[0]))
            if kind == "assign":
                self.owned |= set(numbers)
            else:
                self.owned -= set(numbers)
                if numbers and self.revoke_s:
                    self._stop.wait(self.revoke_s)
        return record

    def poll_in_background(self) -> Member:
        """Poll on a thread of its own from now until :meth:`close` (a member whose callbacks take their time must not
        hold up the others' polling). Its assignment and generation are then read by that thread only, after each
        poll, and handed out as of then: a call into the client from another thread while a callback runs waits for
        it holding the interpreter's lock, which the callback needs."""
        def loop() -> None:
            while not self._stop.is_set():
                self.consumer.poll(0.02)
                self._seen = ({p.partition for p in self.consumer.assignment()},
                              group_metadata(self.consumer.consumer_group_metadata())[0])

        self._seen = (self.assigned(), self.generation())

        self._polling = threading.Thread(target=loop, daemon=True)
        self._polling.start()
        return self

    def generation(self) -> int:
        if self._polling is not None:
            return self._seen[1]
        return group_metadata(self.consumer.consumer_group_metadata())[0]

    def member_id(self) -> str:
        return group_metadata(self.consumer.consumer_group_metadata())[1]

    def poll(self) -> None:
        if self.closed or self._polling is not None:
            return
        message = self.consumer.poll(0.02)
        if message is not None and message.error() is not None:
            self.errors.append(message.error().name())

    def assigned(self) -> set[int]:
        if self._polling is not None:
            return set(self._seen[0])
        return {p.partition for p in self.consumer.assignment()}

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._stop.set()
            if self._polling is not None:
                self._polling.join(bounded(10))
            self.consumer.close()

    def state(self) -> str:
        """What it holds, at which generation, its last callbacks and errors: what a failed wait shows of it."""
        return (f"{sorted(self.assigned())} at generation {self.generation()}, callbacks {self.shape()[-4:]}"
                f"{', errors ' + ', '.join(self.errors[-3:]) if self.errors else ''}")

    def shape(self, since: int = 0) -> list[tuple[str, int, int]]:
        """The callbacks from ``since`` on, partitions counted: ``(kind, how many, generation)``."""
        return [(kind, len(numbers), generation) for kind, numbers, generation in self.calls[since:]]


def settle(members: list[Member], done: Callable[[], object], timeout: float = 60.0) -> float:
    """Poll every member until ``done()``; how long it took, in seconds."""
    started = time.monotonic()

    def polled() -> object:
        for member in members:
            member.poll()
        return done()

    try:
        wait_for(polled, timeout=timeout, interval=0.0)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; the members then: {'; '.join(m.state() for m in members)}") from exc
    return time.monotonic() - started


def settled(members: list[Member], done: Callable[[], object], timeout: float) -> float | None:
    """:func:`settle`, or ``None`` where ``done()`` did not come within ``timeout`` (a difference to observe, where one
    coordinator keeps a member out)."""
    try:
        return settle(members, done, timeout)
    except AssertionError:
        return None


def split_evenly(members: list[Member], partitions: int) -> bool:
    """Every partition owned once, the members' shares differing by one at most, as every assignor here splits, every
    member at the same generation or epoch, and every classic member called back at it (a member's generation moves
    with the answer to its SyncGroup, its callback comes at its next poll)."""
    owned = [m.assigned() for m in members]
    counts = sorted(len(o) for o in owned)
    generations = {m.generation() for m in members}
    return (sum(counts) == partitions and len(set().union(*owned)) == partitions
            and counts[-1] - counts[0] <= 1 and all(m.owned == m.assigned() for m in members)
            and len(generations) == 1
            and all(m.calls and m.calls[-1][2] in generations for m in members if m.classic))


@contextlib.contextmanager
def closing(members: list[Member]) -> Iterator[list[Member]]:
    try:
        yield members
    finally:
        for member in members:
            with contextlib.suppress(Exception):
                member.close()


_CHILD = textwrap.dedent("""
    import json, sys
    from confluent_kafka import Consumer
    config, topics = json.loads(sys.argv[1]), json.loads(sys.argv[2])
    consumer = Consumer(config)
    consumer.subscribe(topics, on_assign=lambda c, ps: print("assigned", len(ps), flush=True))
    while True:
        consumer.poll(0.1)
""")


class ChildMember:
    """A confluent-kafka consumer in a process of its own, so that a test can SIGKILL it: a member that dies without
    a word, as a crashed application's does."""

    def __init__(self, coordinator: Coordinator, group: str, topics: list[str], settings: dict[str, object]) -> None:
        config = {"bootstrap.servers": coordinator.bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                  "enable.auto.commit": False, **settings}
        self.process = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(config), json.dumps(topics)],
                                        stdout=subprocess.PIPE, text=True)
        self.assigned = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("assigned") and int(line.split()[1]) > 0:
                self.assigned.set()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=bounded(10))


def listed(c: Coordinator, group: str) -> tuple[str, str] | None:
    """The group as ListGroups v5 lists it at ``c`` (its type and state), or ``None`` where it is not listed."""
    from kio.schema.list_groups.v5.request import ListGroupsRequest

    answer = exchange(c.bootstrap, ListGroupsRequest(states_filter=(), types_filter=()), bounded(10))
    return next(((g.group_type, g.group_state) for g in answer.groups if g.group_id == group), None)
