"""The comparison's edge: servers, a producer, member processes, the script played once per protocol.

Every protocol gets a topic and a group of its own (``migration-<protocol>-<run id>``): the legacy group lives in
ZooKeeper, the modern ones at the broker's group coordinator, and the two kinds ignore each other, so sharing a
group would only double-consume (KIP-125). The protocols play the script at the same time, each in a thread of
its own, so that their timelines share one clock; one producer writes ``--rate`` messages a second to every
protocol's topic, each keyed and valued ``<protocol>:<sequence>`` so that every message can be followed from
the delivery report that counts it (Tansu's high watermark is not the log end: nothing here reads it) to the
member that delivered it.

Members are processes of their own (:mod:`zkconsumer.members.legacy_member`,
:mod:`zkconsumer.members.modern_member`), started, followed and stopped through :mod:`zkconsumer.members.group`.
The legacy members need brokers and topics in ZooKeeper: the run mirrors the broker into a chroot of its own with a
:class:`~zkconsumer.bridge.metadata_bridge.MetadataBridge`, and deletes the chroot at the end. Members are started
with ``--stop-at-stdin-eof``: whatever way this process ends, they leave. After the script, production stops, the run
waits for the members to deliver what was produced, then stops them (consumers first: Tansu crashes a consumer whose
assigned topic is deleted) and deletes the topics. A member that exits on its own is recorded (``demo.member_died``)
and the script goes on without it.

Per protocol, under ``output_dir/<protocol>/``: ``events.jsonl`` (the members' events and the runner's
``demo.*`` markers), ``produced.txt`` (``partition value scene`` per acknowledged message),
``members/<member>.deliveries`` (``partition offset value`` per message delivered) and ``members/<member>.log``.

Events (logger ``zkconsumer.migration``): ``migration.protocol_started`` (``protocol``, ``topic``, ``group``),
``migration.scene_settled`` (``protocol``, ``scene``, ``settled``: false when it did not settle within the
limit, ``duration_ms``), ``migration.member_died`` (``protocol``, ``consumer_id``, ``returncode``),
``migration.drained`` (``protocol``, ``produced``, ``delivered``, ``duration_ms``).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.events.fields import duration_ms, elapsed_ms
from zkconsumer.kafka.topics import create_topic
from zkconsumer.log import get_logger
from zkconsumer.members import legacy_member, modern_member
from zkconsumer.members.group import MemberGroup
from zkconsumer.members.recorder import EventRecorder
from zkconsumer.members.topic_wait import wait_for_topic
from zkconsumer.migration.measures import DIED, DRAINING, Delivery, Produced, measure
from zkconsumer.migration.report import MemberSettings, ProtocolResult
from zkconsumer.migration.scenes import SCENES, Protocol, Scene
from zkconsumer.trace.timeline import Event, build_timeline, read_events
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.persistent import ensure_path

EVENTS_FILE = "events.jsonl"
PRODUCED_FILE = "produced.txt"
QUIET_S = 1.0  # no rebalance event for this long, every partition fetched: the scene has settled
MAX_TOTAL_RATE = 2000  # messages a second over all protocols: one producer, every delivery report counted
log = get_logger("zkconsumer.migration")


@dataclass(frozen=True)
class CompareSettings:
    zookeeper: str  # the ZooKeeper root; the run makes its own chroot under it
    bootstrap: str
    protocols: tuple[Protocol, ...]
    output_dir: Path
    partitions: int = 4
    rate: float = 50.0  # messages a second, to each protocol's topic
    pace: float = 2.0  # seconds of steady production after a scene settled, before the next one
    session_timeout_ms: int = 4000
    settle_timeout_s: float = 60.0
    drain_timeout_s: float = 30.0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:6])

    def name(self, protocol: Protocol) -> str:
        return f"migration-{protocol.name}-{self.run_id}"


@dataclass
class ProtocolRun:
    """One protocol's run as recorded: where its files are, and what the producer got acknowledged."""

    protocol: Protocol
    topic: str
    group: str
    directory: Path
    partitions: int
    produced: list[Produced] = field(default_factory=list)
    scene: int = 0
    producing: bool = False
    error: str | None = None

    @property
    def events_path(self) -> Path:
        return self.directory / EVENTS_FILE


def member_settings(settings: CompareSettings) -> tuple[MemberSettings, ...]:
    """The settings the members of each family run with, read from the members' own config functions with the
    arguments :meth:`_Player.start_member` gives them, so that the page shows what actually ran."""
    skip = {"zookeeper.connect", "bootstrap.servers", "group.id", "consumer.id", "client.id", "log_level"}
    legacy_config = legacy_member.member_config(zookeeper="", group="", consumer_id="", strategy="<protocol>",
                                                session_timeout_ms=settings.session_timeout_ms)
    modern_config = modern_member.consumer_config(bootstrap="", group="", consumer_id="", strategy="<protocol>",
                                                  session_timeout_ms=settings.session_timeout_ms)
    legacy = tuple((k, str(v)) for k, v in legacy_config.items() if k not in skip)
    modern = tuple((k, str(v)) for k, v in modern_config.items() if k not in skip)
    modern += (("max.poll.interval.ms", "300000 (librdkafka default)"),
               ("poll() timeout", f"{modern_member.POLL_TIMEOUT_S * 1000:g} ms"))
    return (MemberSettings("legacy", legacy_member.MODULE, legacy),
            MemberSettings("modern", modern_member.MODULE, modern))


def read_deliveries(run: ProtocolRun) -> list[Delivery]:
    """Every member's deliveries file; a last line cut short by a SIGKILL is left out."""
    deliveries = []
    for path in sorted((run.directory / "members").glob("*.deliveries")):
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split(" ", 2)
            if len(parts) == 3 and parts[0].isdigit() and parts[1].isdigit():
                deliveries.append(Delivery(path.stem, int(parts[0]), int(parts[1]), parts[2]))
    return deliveries


class _Player:
    """Plays the script for one protocol: starts, kills and stops its members, records their events, waits for
    each scene to settle."""

    def __init__(self, settings: CompareSettings, run: ProtocolRun, zk_connect: str, stop: threading.Event,
                 on_scene: Callable[[str, Scene, bool, float], None] | None) -> None:
        self.settings = settings
        self.run = run
        self.zk_connect = zk_connect
        self.stop = stop
        self.on_scene = on_scene
        self.group = MemberGroup(run.directory / "members")
        self.recorder: EventRecorder | None = None

    # --- the script -----------------------------------------------------------------------------------

    def play(self) -> None:
        run = self.run
        (run.directory / "members").mkdir(parents=True, exist_ok=True)
        self.recorder = EventRecorder(run.events_path)
        try:
            log.info("migration.protocol_started", protocol=run.protocol.name, topic=run.topic, group=run.group)
            for scene in SCENES:
                if self.stop.is_set():
                    return
                self.marker("demo.scene", scene=scene.number, title=scene.title, note=scene.note)
                run.scene = scene.number
                run.producing = True
                began = time.monotonic()
                self.act(scene)
                settled = self.settle(scene)
                if self.stop.is_set():
                    return
                duration = time.monotonic() - began
                log.info("migration.scene_settled", protocol=run.protocol.name, scene=scene.number, settled=settled,
                         duration_ms=duration_ms(duration))
                if self.on_scene is not None:
                    self.on_scene(run.protocol.name, scene, settled, duration)
                self.wait(self.settings.pace)
            self.drain()
        except Exception as exc:  # recorded for the report; the other protocols go on
            run.error = f"{type(exc).__name__}: {exc}"
        finally:
            run.producing = False
            self.finish()

    def act(self, scene: Scene) -> None:
        action = scene.action
        if action.kind == "start":
            self.start_member(action.member)
            return
        member = self.group.members[action.member]
        if not member.alive:
            return
        if action.kind == "kill":
            self.group.kill(member)
            self.marker("demo.member_killed", consumer_id=member.consumer_id, pid=member.pid, signal="SIGKILL")
        else:
            self.marker("demo.member_stopping", consumer_id=member.consumer_id)
            self.group.stop(member, timeout=20.0, while_waiting=lambda: self.pump(0.1))
            self.marker("demo.member_stopped", consumer_id=member.consumer_id)

    def drain(self) -> None:
        """Production stops; wait until every acknowledged message was delivered (or the limit passes)."""
        self.marker(DRAINING)
        self.run.producing = False
        time.sleep(0.5)  # the producer's last delivery reports
        began = time.monotonic()
        while not self.stop.is_set() and time.monotonic() - began < self.settings.drain_timeout_s:
            wanted = {m.value for m in list(self.run.produced)}
            got = {d.value for d in read_deliveries(self.run)}
            if wanted <= got:
                break
            self.pump(0.3)
        log.info("migration.drained", protocol=self.run.protocol.name, produced=len(self.run.produced),
                 delivered=len({d.value for d in read_deliveries(self.run)}), duration_ms=elapsed_ms(began))

    # --- members --------------------------------------------------------------------------------------

    def start_member(self, name: str) -> None:
        s, run = self.settings, self.run
        consumer_id = f"{run.group}_{name}"
        deliveries = run.directory / "members" / f"{name}.deliveries"
        argv: list[str]
        if run.protocol.family == "legacy":
            argv = legacy_member.command(zookeeper=self.zk_connect, group=run.group, topic=f"{run.topic}:1",
                                         consumer_id=name, strategy=run.protocol.strategy,
                                         session_timeout_ms=s.session_timeout_ms, output=deliveries,
                                         stop_at_stdin_eof=True)
        else:
            argv = modern_member.command(bootstrap=s.bootstrap, group=run.group, topic=run.topic,
                                         consumer_id=consumer_id, strategy=run.protocol.strategy,
                                         session_timeout_ms=s.session_timeout_ms, output=deliveries,
                                         stop_at_stdin_eof=True)
        member = self.group.start(name, consumer_id, argv)
        self.marker("demo.member_started", consumer_id=consumer_id, pid=member.pid)

    # --- settling -------------------------------------------------------------------------------------

    def settle(self, scene: Scene) -> bool:
        began = time.monotonic()
        while not self.stop.is_set():
            self.pump(0.1)
            if self.settled(scene, began):
                return True
            if time.monotonic() - began > self.settings.settle_timeout_s:
                self.marker("demo.not_settled", scene=scene.number,
                            note=f"not settled within {self.settings.settle_timeout_s:g} s")
                return False
        return False

    def settled(self, scene: Scene, began: float) -> bool:
        return self.group.settled(self.settings.partitions, quiet_s=QUIET_S, began=began)

    def pump(self, wait: float) -> None:
        """Record what the members said (waiting up to ``wait`` for it), and notice a member that exited on its
        own."""
        for event in self.group.receive(wait):
            self.record(event)
        for member in self.group.died():
            log.warning("migration.member_died", protocol=self.run.protocol.name,
                        consumer_id=member.consumer_id, returncode=member.process.returncode)
            self.marker(DIED, consumer_id=member.consumer_id, returncode=member.process.returncode)

    def marker(self, name: str, **fields: Any) -> None:
        self.record({"event": name, "protocol": self.run.protocol.name, **fields})

    def record(self, event: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.write(event)

    def wait(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.stop.is_set() and time.monotonic() < deadline:
            self.pump(min(0.1, max(0.0, deadline - time.monotonic())))

    # --- the end --------------------------------------------------------------------------------------

    def finish(self) -> None:
        """Every member still running leaves (SIGTERM, then SIGKILL after 15 s); their last events recorded."""
        for member in self.group.stop_all(timeout=15.0, while_waiting=lambda: self.pump(0.1)):
            self.marker("demo.member_stopped", consumer_id=member.consumer_id)
        for event in self.group.close():
            self.record(event)
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None


def _produce(runs: list[ProtocolRun], bootstrap: str, rate: float, stop: threading.Event,
             done: threading.Event) -> None:
    """One message a tick to every protocol that is producing; the scene is the one when it was produced."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "message.timeout.ms": 60000,
                         "log_level": 3})
    sequence = dict.fromkeys((r.protocol.name for r in runs), 0)
    interval, next_at = 1.0 / rate, time.monotonic()

    def acked(run: ProtocolRun, value: str, partition: int, scene: int) -> Callable[[Any, Any], None]:
        def report(err: Any, _msg: Any) -> None:
            if err is None:
                run.produced.append(Produced(value, partition, scene))
        return report

    while not (stop.is_set() or done.is_set()):
        for run in runs:
            name = run.protocol.name
            if not run.producing:
                continue
            n = sequence[name]
            sequence[name] = n + 1
            value, partition = f"{name}:{n}", n % run.partitions
            producer.produce(run.topic, key=str(n).encode(), value=value.encode(), partition=partition,
                             on_delivery=acked(run, value, partition, run.scene))
        producer.poll(0)
        next_at += interval
        time.sleep(max(0.0, next_at - time.monotonic()))
    producer.flush(30)


def write_produced(run: ProtocolRun) -> None:
    lines = (f"{m.partition} {m.value} {m.scene}\n" for m in run.produced)
    (run.directory / PRODUCED_FILE).write_text("".join(lines), encoding="utf-8")


def compare_protocols(settings: CompareSettings,
                      on_scene: Callable[[str, Scene, bool, float], None] | None = None) -> list[ProtocolRun]:
    """Play the script for every protocol at once; returns the runs, their files written."""
    from zkconsumer.bridge.metadata_bridge import MetadataBridge

    s = settings
    runs = [ProtocolRun(p, s.name(p), s.name(p), s.output_dir / p.name, s.partitions) for p in s.protocols]
    for run in runs:
        create_topic(s.bootstrap, run.topic, s.partitions)
    chroot = f"/zkconsumer-migration-{s.run_id}"
    legacy = any(r.protocol.family == "legacy" for r in runs)
    stop, done = threading.Event(), threading.Event()
    bridge = contextlib.ExitStack()
    players: list[_Player] = []
    threads: list[threading.Thread] = []
    producer = threading.Thread(target=_produce, args=(runs, s.bootstrap, s.rate, stop, done), name="producer",
                                daemon=True)
    try:
        if legacy:
            with zookeeper(s.zookeeper) as zk:
                ensure_path(zk, chroot)  # a chroot as a broker's zookeeper.connect makes it: null data
            connect = s.zookeeper.rstrip("/") + chroot
            bridge.enter_context(MetadataBridge(connect, s.bootstrap, interval_ms=250).running("migration-bridge"))
            with zookeeper(connect) as zk:
                for run in runs:
                    wait_for_topic(zk, run.topic, s.partitions)
        else:
            connect = s.zookeeper
        producer.start()
        for run in runs:
            player = _Player(s, run, connect, stop, on_scene)
            players.append(player)
            thread = threading.Thread(target=player.play, name=f"play-{run.protocol.name}", daemon=True)
            threads.append(thread)
            thread.start()
        for thread in threads:
            while thread.is_alive():
                thread.join(0.2)
    except BaseException:
        stop.set()
        for thread in threads:
            thread.join(30)
        raise
    finally:
        done.set()
        if producer.is_alive():
            producer.join(35)
        for run in runs:
            write_produced(run)
        for player in players:  # a player that never ran (or failed early) leaves no member behind either
            for member in player.group.members.values():
                if member.process.poll() is None:
                    member.process.kill()
                    member.process.wait()
        bridge.close()
        _cleanup(s, runs, chroot if legacy else None)
    return runs


def _cleanup(s: CompareSettings, runs: list[ProtocolRun], chroot: str | None) -> None:
    """The chroot and the topics go; the members and the bridge are gone by now (Tansu and deleted topics)."""
    from zkconsumer.kafka.metadata import admin_client

    if chroot is not None:
        with contextlib.suppress(Exception), zookeeper(s.zookeeper, quiet=True) as zk:
            zk.delete(chroot, recursive=True)
    with contextlib.suppress(Exception):
        admin = admin_client(s.bootstrap)  # kept: the futures fail when the client is collected
        futures = admin.delete_topics([r.topic for r in runs], operation_timeout=10)
        for future in futures.values():
            with contextlib.suppress(Exception):
                future.result(15)


def collect(runs: list[ProtocolRun], output_dir: Path) -> list[ProtocolResult]:
    """Each run's recorded files, measured, with its timeline for the page."""
    results = []
    for run in runs:
        events: tuple[Event, ...] = ()
        if run.events_path.exists():
            with open(run.events_path, encoding="utf-8") as f:
                events = read_events(f).events
        measures = measure(run.protocol.name, events, run.produced, read_deliveries(run), run.topic)
        results.append(ProtocolResult(run.protocol, run.topic, run.group, measures, build_timeline(events),
                                      str(run.events_path.relative_to(output_dir)), run.error))
    return results
