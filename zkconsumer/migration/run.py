"""The comparison's edge: servers, a producer, member processes, the script played once per protocol.

Every protocol gets a topic and a group of its own (``migration-<protocol>-<run id>``): the legacy group lives in
ZooKeeper, the modern ones at the broker's group coordinator, and the two kinds ignore each other, so sharing a
group would only double-consume (KIP-125). A move from ZooKeeper (a scenario with ``dual_commit`` or ``cutover``)
is the exception by design: its group id is the protocol's, run by legacy members until the cutover stops them all
and starts them again as members of the protocol. The protocols play the script at the same time, each in a thread of
its own, on one clock (:class:`SceneClock`): every scene begins for every protocol at the same moment, once each
protocol has settled the scene before and produced steadily for ``pace`` seconds after it, and production to
every topic runs from the first scene's start to the moment the last protocol finished the script. So every
protocol is sent the same messages over the same time, scene by scene, and ``produced`` compares like with like
(a protocol that settles sooner waits for the others, in a steady state that pauses nothing); the scenes line up
on the page's shared time axis; and the members' start-ups, kills and departures meet the same machine load. One
producer writes ``--rate`` messages a second to every protocol's topic, each keyed ``<sequence>`` and valued
``<protocol>:<sequence>`` (or the team's own messages, :mod:`zkconsumer.migration.messages`), and every message is
followed from the delivery report that counts it, by where it was written (partition, offset; Tansu's high watermark
is not the log end: nothing here reads it), to the member that delivered it.

Members are processes of their own (:mod:`zkconsumer.members.legacy_member`,
:mod:`zkconsumer.members.modern_member`), started, followed and stopped through :mod:`zkconsumer.members.group`.
With ``member`` (a team's own consumer, :mod:`zkconsumer.members.command_member`) the modern protocols' members run
that command instead, told their settings through the environment; its reports are read into the same events and
deliveries files, so that every measure reads both kinds of member alike.
The legacy members need brokers and topics in ZooKeeper: the run mirrors the broker into a chroot of its own with a
:class:`~zkconsumer.bridge.metadata_bridge.MetadataBridge`, and deletes the chroot at the end. Members are started
with ``--stop-at-stdin-eof``: whatever way this process ends, they leave. After the script, production stops, the run
waits for the members to deliver what was produced, then stops them (consumers first: Tansu crashes a consumer whose
assigned topic is deleted) and deletes the topics. A member that exits on its own is recorded (``demo.member_died``)
and the script goes on without it; a member that says its broker cannot run its group protocol
(:data:`~zkconsumer.members.modern_member.UNSUPPORTED_EVENT`: a KIP-848 member of a coordinator without
ConsumerGroupHeartbeat) stops its protocol's run at once, with that reason as the run's error.

Per protocol, under ``output_dir/<protocol>/``: ``events.jsonl`` (the members' events and the runner's
``demo.*`` markers), ``produced.txt`` (``partition value scene`` per acknowledged message),
``members/<member>.deliveries`` (``time topic partition offset value`` per message delivered), ``committed.json``
(the group's committed offsets once its members left) and ``members/<member>.log``.
With ``coordinator_events`` (the front's log), the coordinator's events for the protocol's group are added to its
``events.jsonl`` once the run ends.

Its events (``migration.*``) and markers are declared once in :mod:`zkconsumer.events.migration` and listed on
the events page (``docs/events.md``).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any
from typing import Protocol as Interface

from zkconsumer.events import catalogue as ev
from zkconsumer.events.fields import duration_ms, elapsed_ms
from zkconsumer.kafka.client_config import with_client_settings
from zkconsumer.kafka.coordinator_identity import CoordinatorIdentity, identify
from zkconsumer.kafka.group_configs import delete_group_configs, set_group_configs
from zkconsumer.kafka.topics import alter_partitions, create_topic, show_partitions
from zkconsumer.log import get_logger
from zkconsumer.members import legacy_member, modern_member
from zkconsumer.members.application import FAILED_EVENT, Application
from zkconsumer.members.command_member import CommandMember, ReportReader, environment
from zkconsumer.members.faults import expire_session, paused
from zkconsumer.members.group import MemberGroup
from zkconsumer.members.recorder import EventRecorder
from zkconsumer.migration.measures import DIED, DRAINING, Delivery, Identity, Produced, identity, measure
from zkconsumer.migration.messages import MessageSource, OutMessage, partition_for
from zkconsumer.migration.report import MemberSettings, ProtocolResult
from zkconsumer.migration.scenes import CONSUMER_DEFAULT, KIP848_PROTOCOLS, Protocol, Scene, default_scenario
from zkconsumer.migration.timeouts import (
    GROUP_HEARTBEAT,
    GROUP_SESSION,
    SAME,
    Timeouts,
    in_force,
    member_timeouts,
)
from zkconsumer.scenarios.model import (
    BOUNCE,
    CUTOVER,
    DUAL_COMMIT,
    DUAL_COMMIT_CONFIG,
    EXPIRE,
    GROW,
    KILL,
    MOVE_LEGACY_STRATEGY,
    PAUSE,
    RESTART,
    SETTLE,
    START,
    STOP,
    UPGRADE,
    UPGRADED_GROUP_PROTOCOL,
    WAIT,
    Action,
    Scenario,
)
from zkconsumer.trace.timeline import Event, build_timeline, read_events
from zkconsumer.trace.vocabulary import COORDINATOR_EVENTS
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.cluster import wait_for_topic
from zkconsumer.zk.persistent import ensure_path

if TYPE_CHECKING:
    from zkconsumer.bridge.metadata_bridge import MetadataBridge
    from zkconsumer.embedded.servers import Restarts

EVENTS_FILE = "events.jsonl"
PRODUCED_FILE = "produced.txt"
COMMITTED_FILE = "committed.json"
COMMITTED_TIMEOUT_S = 10.0
STATE_DIR = "state"
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
    # the group coordinator the modern groups bootstrap from: ``front`` (the front's own, :mod:`zkconsumer.front`,
    # at ``bootstrap``) or ``broker`` (the broker's own); the report names it, and the page's note on Tansu's
    # coordinator applies to the broker's alone
    coordinator: str = "broker"
    # the front's events (JSON lines): each protocol's group's coordinator events are added to its events.jsonl, so
    # its timeline has the coordinator's lane
    coordinator_events: Path | None = None
    # the script every protocol plays (:mod:`zkconsumer.scenarios`); its topic's partitions, rate and session are
    # the command's defaults, the fields above what is played
    scenario: Scenario = field(default_factory=default_scenario)
    # the application's cost of giving partitions up, for every member (:mod:`zkconsumer.members.revoke_cost`);
    # None: each member's ``revoke_ms`` in the scenario
    revoke_ms: int | None = None
    settle_timeout_s: float = 60.0
    drain_timeout_s: float = 30.0
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:6])
    prefix: str = "migration"  # of every topic and group the run makes (``demo --protocol``: ``demo``)
    # the user's application every member runs (:mod:`zkconsumer.members.application`), its state directory
    # ``<protocol>/state`` of the output directory; None: the members only record what they deliver
    app: Application | None = None
    # how the protocols' timeouts are set (:mod:`zkconsumer.migration.timeouts`): ``same`` (``session_timeout_ms``
    # for every protocol) or ``stock`` (each protocol's defaults)
    settings_mode: str = SAME
    # who coordinates the modern groups at ``bootstrap`` and its group settings, as it said
    # (:func:`~zkconsumer.kafka.coordinator_identity.identify`); None: not asked yet
    identity: CoordinatorIdentity | None = None
    # where the producer sends (the broker itself where known: a front holding a topic smaller refuses a produce to
    # a partition it does not show yet); None: ``bootstrap``
    producer_bootstrap: str | None = None
    # the KIP-848 groups' (session, heartbeat) the run sets on each modern group at a Kafka coordinator, its group
    # configs (:func:`~zkconsumer.migration.comparison.with_group_timeouts`); None: the coordinator's own
    group_timeouts_ms: tuple[int, int] | None = None
    # a team's own consumer run as every member of the modern protocols (:mod:`zkconsumer.members.command_member`);
    # None: our modern member
    member: CommandMember | None = None
    # the team's messages (:mod:`zkconsumer.migration.messages`), produced to every protocol's topic instead of the
    # runner's ``<protocol>:<n>``; None: the runner's
    messages: MessageSource | None = None
    # a fault for tests of the assertions: every modern member goes on fetching what it gave up for this long
    # (:class:`~zkconsumer.members.modern_member.KeepFetching`); 0: none
    fetch_after_revoke_ms: int = 0
    # what of the servers a scenario's ``restart`` may restart (:class:`~zkconsumer.embedded.servers.Restarts`);
    # None: nothing
    restarts: Restarts | None = None

    def name(self, protocol: Protocol) -> str:
        return f"{self.prefix}-{protocol.name}-{self.run_id}"

    def timeouts(self, protocol: Protocol) -> Timeouts:
        """What ``protocol``'s groups run with (the coordinator's for KIP-848, as it said)."""
        reported = self.identity.settings if self.identity is not None else {}
        return in_force(protocol, self.settings_mode, self.session_timeout_ms, reported,
                        modern_member.classic_heartbeat_interval_ms(self.session_timeout_ms),
                        upgrades=self.scenario.uses(UPGRADE) is not None, group_configs=self.group_timeouts_ms)

    def member_revoke_ms(self, member: str) -> int:
        return self.revoke_ms if self.revoke_ms is not None else self.scenario.member(member).revoke_ms

    def revoke_costs(self) -> str:
        """The members' revoke cost in words, for the page: ``0 ms``, or ``500 ms``, or ``m1 500 ms, m2 0 ms``."""
        costs = {m.name: self.member_revoke_ms(m.name) for m in self.scenario.members}
        if len(set(costs.values())) == 1:
            return f"{next(iter(costs.values()))} ms"
        return ", ".join(f"{name} {ms} ms" for name, ms in costs.items())


@dataclass
class ProtocolRun:
    """One protocol's run as recorded: where its files are, and what the producer got acknowledged."""

    protocol: Protocol
    topic: str
    group: str
    directory: Path
    partitions: int
    produced: list[Produced] = field(default_factory=list)
    producing: bool = True  # false once the run stopped early: its topic gets nothing more
    # messages handed to the producer whose delivery report has not come yet (written by the producer's thread alone)
    in_flight: int = 0
    error: str | None = None
    # the group's committed offsets by partition once its members left (:meth:`_Player.read_committed`); None: not
    # read, and why in ``committed_error``
    committed: dict[int, int] | None = None
    committed_error: str | None = None

    @property
    def events_path(self) -> Path:
        return self.directory / EVENTS_FILE


def member_settings(settings: CompareSettings) -> tuple[MemberSettings, ...]:
    """The settings the members of each family run with, read from the members' own config functions with the
    arguments :meth:`_Player.start_member` gives them, so that the page shows what actually ran; a KIP-848 group's
    session and heartbeat are its coordinator's, as it reported them."""
    skip = {"zookeeper.connect", "bootstrap.servers", "group.id", "consumer.id", "client.id", "log_level"}
    legacy_session, _ = member_timeouts("zookeeper", settings.settings_mode, settings.session_timeout_ms)
    cutover = first_action(settings.scenario, CUTOVER)
    legacy_config = legacy_member.member_config(zookeeper="", group="", consumer_id="",
                                                strategy=MOVE_LEGACY_STRATEGY if cutover else "<protocol>",
                                                session_timeout_ms=legacy_session)
    classic_session, classic_heartbeat = member_timeouts("classic", settings.settings_mode, settings.session_timeout_ms)
    reset = modern_member.AUTO_OFFSET_RESETS[0] if cutover is None else cutover.reset
    modern_config = {**modern_member.consumer_config(bootstrap="", group="", consumer_id="",
                                                     session_timeout_ms=classic_session,
                                                     heartbeat_interval_ms=classic_heartbeat, auto_offset_reset=reset),
                     "partition.assignment.strategy": "<protocol>"}
    legacy = tuple((k, str(v)) for k, v in legacy_config.items() if k not in skip)
    modern = tuple((k, str(v)) for k, v in modern_config.items() if k not in skip)
    poll = ("poll() timeout", f"{modern_member.POLL_TIMEOUT_S * 1000:g} ms")
    revoke = ("revoke cost (the application's, revoke_ms)", settings.revoke_costs())
    legacy += (revoke,)
    if settings.scenario.uses(DUAL_COMMIT) is not None:
        legacy += (("after dual_commit", ", ".join(f"{k}={v}" for k, v in DUAL_COMMIT_CONFIG)),)
    modern += (("max.poll.interval.ms", "300000 (librdkafka default)"), poll, revoke)
    static = [m.name for m in settings.scenario.members if m.static]
    if static:
        modern += (("group.instance.id", f"<group>_<member> for the static members: {', '.join(static)}"),)
    own = ("everything else", "the member's own (docs: writing a member in another language)")
    if settings.member is not None:  # the team's consumer: what the run told it; the rest (revoke work too) its own
        told = ("session.timeout.ms", "heartbeat.interval.ms", "group.instance.id")
        modern = (*((f"{k} (told)", v) for k, v in modern if k in told), own)
    program = modern_member.MODULE if settings.member is None else str(settings.member)
    found = [MemberSettings("legacy", legacy_member.MODULE, legacy), MemberSettings("modern", program, modern)]
    consumer_protocol = next((p for p in settings.protocols if p.group_protocol == "consumer"), None)
    if (consumer_protocol is None and settings.scenario.uses(UPGRADE) is not None
            and any(p.family == "modern" for p in settings.protocols)):
        consumer_protocol = KIP848_PROTOCOLS[CONSUMER_DEFAULT]  # what the upgraded members run
    if consumer_protocol is not None:
        consumer_config = {**modern_member.consumer_config(bootstrap="", group="", consumer_id="", strategy="uniform",
                                                           group_protocol="consumer", auto_offset_reset=reset),
                           "group.remote.assignor": "<protocol>"}
        consumer = tuple((k, str(v)) for k, v in consumer_config.items() if k not in skip)
        timeouts = settings.timeouts(consumer_protocol)
        reported = ("not reported by the coordinator" if timeouts.session_ms is None
                    else f"{timeouts.session_ms}, group.consumer.heartbeat.interval.ms {timeouts.heartbeat_ms}")
        said = (f"the coordinator's, as it reported them: group.consumer.session.timeout.ms {reported}"
                if settings.group_timeouts_ms is None else
                f"the group's, set by the run: {GROUP_SESSION} {timeouts.session_ms}, {GROUP_HEARTBEAT} "
                f"{timeouts.heartbeat_ms}")
        consumer += (("session and heartbeat", said), poll, revoke)
        if settings.member is not None:
            consumer = (("session and heartbeat", said), own)
        found.append(MemberSettings("consumer", program, consumer))
    return tuple(found)


def first_action(scenario: Scenario, kind: str) -> Action | None:
    """The scenario's first action of ``kind``, or None."""
    return next((a for scene in scenario.scenes for a in scene.actions if a.kind == kind), None)


class PlayObserver(Interface):
    """Told what each protocol's run does as it happens (``demo --protocol`` narrates from it): a scene begins,
    and every event recorded in the protocol's ``events.jsonl`` (the members' and the runner's markers). Called from
    the protocol's player thread: one protocol's calls come in order, different protocols' interleave."""

    def scene(self, protocol: str, scene: Scene) -> None: ...

    def event(self, protocol: str, event: dict[str, Any]) -> None: ...


class GroupProtocolUnsupported(Exception):
    """A member said the broker cannot run its group protocol: its run cannot go on."""


class SceneClock:
    """Every protocol's scene ``n`` begins at the same moment: a player is ready (:meth:`arrive`) for a scene (or for
    the end of the script, ``scenes + 1``) and waits until every player still playing is ready too. The clock
    also says what the producer does: nothing before the first scene, then to every topic in the scene under way,
    nothing once the last player reached the end. A player that stops early leaves (:meth:`leave`); the others go on."""

    def __init__(self, players: int, stop: threading.Event, scenes: int) -> None:
        self.end = scenes + 1
        self.scene = 0  # the scene under way for everyone (0: not begun; ``end``: the script is over)
        self._active = players
        self._left: set[int] = set()
        self._waiting: set[int] = set()
        self._pending = 0  # the step the waiting players are ready for
        self._condition = threading.Condition()
        self._stop = stop

    @property
    def producing(self) -> bool:
        return 0 < self.scene < self.end

    def arrive(self, player: int, step: int, while_waiting: Callable[[], None] = lambda: None) -> bool:
        """Ready for ``step``; returns once every player is (True), or when the run is stopped (False).
        ``while_waiting`` runs between waits of up to 50 ms (the player records its members' events)."""
        with self._condition:
            self._pending = step
            self._waiting.add(player)
            self._release_if_all()
        while True:
            with self._condition:
                if self.scene >= step:
                    return True
                if self._stop.is_set():
                    return False
                self._condition.wait(0.05)
                if self.scene >= step:
                    return True
            while_waiting()

    def leave(self, player: int) -> None:
        """This player plays no more (it stopped early, or finished): the others no longer wait for it."""
        with self._condition:
            if player in self._left:
                return
            self._left.add(player)
            self._waiting.discard(player)
            self._active -= 1
            self._release_if_all()

    def _release_if_all(self) -> None:
        if self._waiting and len(self._waiting) >= self._active:
            self.scene = self._pending
            self._waiting.clear()
            self._condition.notify_all()


def state_dir(run: ProtocolRun) -> Path:
    """The application's own directory for one protocol's run, shared by its members (``ZKCONSUMER_STATE_DIR``)."""
    return run.directory / STATE_DIR


def read_deliveries(run: ProtocolRun) -> list[Delivery]:
    """Every member's deliveries file, each in its order; a last line cut short by a SIGKILL is left out."""
    deliveries = []
    for path in sorted((run.directory / "members").glob("*.deliveries")):
        for line in path.read_text(encoding="utf-8").splitlines():
            found = delivery_of(path.stem, line)
            if found is not None:
                deliveries.append(found)
    return deliveries


def delivery_of(member: str, line: str) -> Delivery | None:
    """A member's line (either ``--delivery-format``: ``partition offset value`` or ``time topic partition offset
    value``), or None for one that is not whole."""
    plain = line.split(" ", 2)
    if len(plain) == 3 and plain[0].isdigit() and plain[1].isdigit():
        return Delivery(member, int(plain[0]), int(plain[1]), plain[2])
    timed = line.split(" ", 4)
    if len(timed) == 5 and timed[2].isdigit() and timed[3].isdigit():
        try:
            at = float(timed[0])
        except ValueError:
            return None
        return Delivery(member, int(timed[2]), int(timed[3]), timed[4], at)
    return None
class ServerFaults:
    """A scenario's ``restart`` of a server every protocol shares: played once, by the first player to reach it (the
    scenes begin together), the others waiting for it; each records it."""

    def __init__(self, restarts: Restarts | None) -> None:
        self.restarts = restarts
        self._lock = threading.Lock()
        self._done: dict[tuple[int, int], tuple[str, float]] = {}

    def restart(self, where: tuple[int, int], server: str) -> tuple[str, float]:
        """What was restarted, in words, and in how many ms; ``where``: the action's scene and place in it."""
        with self._lock:
            if where not in self._done:
                if self.restarts is None:
                    raise RuntimeError(f"restart {server}: these servers cannot be restarted")
                began = time.monotonic()
                self._done[where] = (self.restarts.restart(server), elapsed_ms(began))
            return self._done[where]


class _Player:
    """Plays the script for one protocol: starts, kills and stops its members, records their events, waits for
    each scene to settle."""

    def __init__(self, settings: CompareSettings, run: ProtocolRun, zk_connect: str, stop: threading.Event,
                 on_scene: Callable[[str, Scene, bool, float], None] | None, clock: SceneClock,
                 number: int, grow: Callable[[ProtocolRun, int], None], observer: PlayObserver | None = None,
                 faults: ServerFaults | None = None) -> None:
        self.settings = settings
        self.faults = faults or ServerFaults(settings.restarts)
        self.grow = grow  # shows the run's topic with this many partitions to its members
        self.observer = observer
        self.run = run
        self.clock = clock
        self.number = number  # the player's place on the clock
        self.zk_connect = zk_connect
        self.stop = stop
        self.on_scene = on_scene
        self.group = MemberGroup(run.directory / "members")
        self.recorder: EventRecorder | None = None
        self.playing = False  # the script is under way: a member's word that it cannot play stops it
        self.unsupported_reason: str | None = None
        self.given_up: set[tuple[object, object]] = set()  # (partition, offset) of the messages the application refused
        self.upgraded: set[str] = set()  # members an ``upgrade`` restarted with group.protocol=consumer: they keep it
        self.dual_commit: set[str] = set()  # legacy members a ``dual_commit`` restarted: they keep its settings
        self.cutover: Action | None = None  # a move's cutover, once played: every member starts as a modern one

    # --- the script -----------------------------------------------------------------------------------

    def play(self) -> None:
        run = self.run
        (run.directory / "members").mkdir(parents=True, exist_ok=True)
        self.recorder = EventRecorder(run.events_path)
        self.playing = True
        try:
            log.emit(ev.MIGRATION_PROTOCOL_STARTED, protocol=run.protocol.name, topic=run.topic, group=run.group)
            for scene in self.settings.scenario.scenes:
                if not self.clock.arrive(self.number, scene.number, while_waiting=lambda: self.pump(0)):
                    return
                self.marker(ev.DEMO_SCENE, scene=scene.number, title=scene.title, note=scene.note)
                if self.observer is not None:
                    self.observer.scene(run.protocol.name, scene)
                began = time.monotonic()
                for index, action in enumerate(scene.actions):
                    if action.kind == RESTART:
                        restarted, took_ms = self.faults.restart((scene.number, index), action.server)
                        self.marker(ev.DEMO_SERVER_RESTARTED, server=action.server, restarted=restarted,
                                    duration_ms=took_ms)
                        continue
                    self.act(action, scene)
                settled = self.settle(scene)
                if self.stop.is_set():
                    return
                duration = time.monotonic() - began
                log.emit(ev.MIGRATION_SCENE_SETTLED, protocol=run.protocol.name, scene=scene.number, settled=settled,
                         duration_ms=duration_ms(duration))
                if self.on_scene is not None:
                    self.on_scene(run.protocol.name, scene, settled, duration)
                self.wait(self.settings.pace)
            if not self.clock.arrive(self.number, self.clock.end, while_waiting=lambda: self.pump(0)):
                return
            self.drain()
        except GroupProtocolUnsupported as exc:  # the reason is the whole story
            run.error = str(exc)
        except Exception as exc:  # recorded for the report; the other protocols go on
            run.error = f"{type(exc).__name__}: {exc}"
        finally:
            run.producing = self.playing = False
            self.clock.leave(self.number)
            self.finish()

    def act(self, action: Action, scene: Scene) -> None:
        if action.kind == START:
            self.start_member(action.member)
            return
        if action.kind == GROW:
            before = self.run.partitions
            self.grow(self.run, before + action.partitions)
            self.run.partitions = before + action.partitions
            self.marker(ev.DEMO_PARTITIONS_ADDED, topic=self.run.topic, before=before, after=self.run.partitions)
            return
        if action.kind == WAIT:
            self.wait(action.seconds)
            return
        if action.kind == SETTLE:
            self.settle(scene)
            return
        if action.kind == CUTOVER:
            self.cut_over(action)
            return
        member = self.group.members[action.member]
        if not member.alive:
            return
        if action.kind == KILL:
            self.group.kill(member)
            self.marker(ev.DEMO_MEMBER_KILLED, consumer_id=member.consumer_id, pid=member.pid, signal="SIGKILL")
        elif action.kind == PAUSE:
            self.marker(ev.DEMO_MEMBER_PAUSED, consumer_id=member.consumer_id, pid=member.pid, seconds=action.seconds)
            with paused(member.process):
                self.wait(action.seconds)
            self.marker(ev.DEMO_MEMBER_RESUMED, consumer_id=member.consumer_id, pid=member.pid)
        elif action.kind == EXPIRE:
            expired = expire_session(self.zk_connect, self.session_file(action.member))
            self.marker(ev.DEMO_SESSION_EXPIRED, consumer_id=member.consumer_id, forced=expired)
        else:
            assert action.kind in (STOP, UPGRADE, DUAL_COMMIT, BOUNCE)
            self.stop_member(action.member)
            if action.kind == BOUNCE:
                self.start_member(action.member)
            elif action.kind == UPGRADE:  # a deploy changing group.protocol alone: started again at once
                self.upgraded.add(action.member)
                self.start_member(action.member)
            elif action.kind == DUAL_COMMIT:  # the same for offsets.storage and dual.commit.enabled
                self.dual_commit.add(action.member)
                self.start_member(action.member)

    def stop_member(self, name: str) -> None:
        """SIGTERM, waited for: the member commits and leaves cleanly."""
        member = self.group.members[name]
        self.marker(ev.DEMO_MEMBER_STOPPING, consumer_id=member.consumer_id)
        self.group.stop(member, timeout=20.0, while_waiting=lambda: self.pump(0.1))
        self.marker(ev.DEMO_MEMBER_STOPPED, consumer_id=member.consumer_id)

    def cut_over(self, action: Action) -> None:
        """The move's second step: every legacy member stopped at once (each commits as it leaves), the offsets
        carried over where the action says so, then every one of them started again as a modern member of the
        protocol, in the same group id."""
        moved = [name for name, member in self.group.members.items() if member.alive]
        for name in moved:  # all at once, as a deploy scaled to nothing: none takes another's partitions meanwhile
            self.marker(ev.DEMO_MEMBER_STOPPING, consumer_id=self.group.members[name].consumer_id)
        for member in self.group.stop_all(timeout=20.0, while_waiting=lambda: self.pump(0.1)):
            self.marker(ev.DEMO_MEMBER_STOPPED, consumer_id=member.consumer_id)
        if action.offsets == "exported":
            self.translate_offsets()
        self.cutover = action
        self.marker(ev.DEMO_CUTOVER, offsets=action.offsets, reset=action.reset, members=moved)
        for name in moved:
            self.start_member(name)

    def translate_offsets(self) -> None:
        """The offsets tools' path (``zkconsumer offsets migrate --to kafka``: ExportZkOffsets, then
        ``kafka-consumer-groups.sh --reset-offsets --from-file`` on the idle group): the group's offsets read from
        ZooKeeper and committed to Kafka. A refusal (someone still consumes the group) stops the run."""
        from zkconsumer.kafka.group_offsets import GroupOffsetsClient
        from zkconsumer.tools.offsets_migration import KAFKA, migrate

        began = time.monotonic()
        with zookeeper(self.zk_connect) as zk:
            done = migrate(zk, GroupOffsetsClient(self.settings.bootstrap, 10.0), self.settings.bootstrap,
                           self.run.group, KAFKA, force=False, dry_run=False, timeout=10.0)
        if done.refused:
            raise RuntimeError(f"the offsets tools refused to move the group's offsets: {'; '.join(done.consumers)}")
        self.marker(ev.DEMO_OFFSETS_TRANSLATED, group=self.run.group, partitions=len(done.rows),
                    written=done.written, duration_ms=elapsed_ms(began))

    def drain(self) -> None:
        """Production has stopped (every protocol finished the script); wait until every acknowledged message was
        delivered (or the limit passes)."""
        self.marker(DRAINING)
        began = time.monotonic()
        while not self.stop.is_set() and time.monotonic() - began < self.settings.drain_timeout_s:
            if caught_up(self.run, read_deliveries(self.run), self.given_up):
                break
            self.pump(0.3)
        ids = identity(self.run.produced)
        log.emit(ev.MIGRATION_DRAINED, protocol=self.run.protocol.name, produced=len(self.run.produced),
                 delivered=len({ids.delivered(d) for d in read_deliveries(self.run)}), duration_ms=elapsed_ms(began))

    # --- members --------------------------------------------------------------------------------------

    def start_member(self, name: str) -> None:
        s, run = self.settings, self.run
        consumer_id = f"{run.group}_{name}"
        deliveries = run.directory / "members" / f"{name}.deliveries"
        argv: list[str]
        cast = s.scenario.member(name)
        app = None if s.app is None else replace(s.app, state_dir=state_dir(run))
        if self.legacy:
            self.session_file(name).unlink(missing_ok=True)  # an earlier process's session, never this one's
            config = {**dict(cast.config), **(dict(DUAL_COMMIT_CONFIG) if name in self.dual_commit else {})}
            argv = legacy_member.command(zookeeper=self.zk_connect, group=run.group,
                                         topic=f"{run.topic}:{cast.streams}", consumer_id=name,
                                         strategy=(run.protocol.strategy if run.protocol.family == "legacy"
                                                   else MOVE_LEGACY_STRATEGY),
                                         session_timeout_ms=member_timeouts("zookeeper", s.settings_mode,
                                                                            s.session_timeout_ms)[0],
                                         config=config, output=deliveries, stop_at_stdin_eof=True,
                                         session_file=self.session_file(name), delivery_format="timed",
                                         revoke_ms=s.member_revoke_ms(name), app=app)
        elif s.member is not None:
            self.start_command_member(name, consumer_id, deliveries)
            return
        else:
            group_protocol, strategy = self.group_protocol(name)
            session_ms, heartbeat_ms = ((s.session_timeout_ms, 0) if group_protocol == "consumer"  # not used
                                        else member_timeouts("classic", s.settings_mode, s.session_timeout_ms))
            argv = modern_member.command(bootstrap=s.bootstrap, group=run.group, topic=run.topic,
                                         consumer_id=consumer_id, strategy=strategy,
                                         session_timeout_ms=session_ms, heartbeat_interval_ms=heartbeat_ms,
                                         output=deliveries, stop_at_stdin_eof=True, group_protocol=group_protocol,
                                         revoke_ms=s.member_revoke_ms(name), app=app, delivery_format="timed",
                                         fetch_after_revoke_ms=s.fetch_after_revoke_ms,
                                         auto_offset_reset=self.auto_offset_reset,
                                         group_instance_id=consumer_id if cast.static else "")
        member = self.group.start(name, consumer_id, argv)
        self.marker(ev.DEMO_MEMBER_STARTED, consumer_id=consumer_id, pid=member.pid)

    def start_command_member(self, name: str, consumer_id: str, deliveries: Path) -> None:
        """The team's consumer as this member: its settings in its environment, its reports read into our events
        and its deliveries file. Its revoke cost is its own (what its rebalance callbacks do)."""
        s, run = self.settings, self.run
        assert s.member is not None
        group_protocol, strategy = self.group_protocol(name)
        session_ms, heartbeat_ms = member_timeouts("classic", s.settings_mode, s.session_timeout_ms)
        # told what our modern member would run with (under KIP-848, no session: the coordinator's)
        ours = modern_member.consumer_config(bootstrap=s.bootstrap, group=run.group, consumer_id=consumer_id,
                                             strategy=strategy, session_timeout_ms=session_ms,
                                             group_protocol=group_protocol, heartbeat_interval_ms=heartbeat_ms)
        env = environment(bootstrap=s.bootstrap, topic=run.topic, group=run.group, client_id=consumer_id,
                          member=name, group_protocol=group_protocol, assignor=strategy,
                          session_timeout_ms=_int_or_none(ours.get("session.timeout.ms")),
                          heartbeat_interval_ms=_int_or_none(ours.get("heartbeat.interval.ms")),
                          group_instance_id=consumer_id if s.scenario.member(name).static else None,
                          state_dir=state_dir(run))
        state_dir(run).mkdir(parents=True, exist_ok=True)
        reader = ReportReader(consumer_id=consumer_id, group=run.group, topic=run.topic,
                              group_protocol=group_protocol, strategy=strategy, deliveries=deliveries)
        member = self.group.start(name, consumer_id, list(s.member.argv), env=env, reader=reader)
        self.marker(ev.DEMO_MEMBER_STARTED, consumer_id=consumer_id, pid=member.pid)

    @property
    def legacy(self) -> bool:
        """Whether a member starts as a legacy one: of a legacy protocol, or of a move not cut over yet."""
        return self.run.protocol.family == "legacy" or (self.settings.scenario.moves and self.cutover is None)

    @property
    def auto_offset_reset(self) -> str:
        """A modern member's: the cutover's, once a move was cut over; else the comparison's own, ``earliest``."""
        return modern_member.AUTO_OFFSET_RESETS[0] if self.cutover is None else self.cutover.reset

    def group_protocol(self, name: str) -> tuple[str, str]:
        """A modern member's ``(group.protocol, assignor)``: its protocol's, or once an ``upgrade`` restarted it,
        KIP-848's with ``group.remote.assignor`` uniform (Kafka's default, the first of the front's
        ``group.consumer.assignors``: what ``group.protocol=consumer`` alone gets); a KIP-848 member keeps its own."""
        protocol = self.run.protocol
        if protocol.group_protocol == "consumer":
            return "consumer", protocol.strategy
        if name in self.upgraded:
            return UPGRADED_GROUP_PROTOCOL, "uniform"
        return "classic", protocol.strategy

    def session_file(self, name: str) -> Path:
        """Where a legacy member keeps its ZooKeeper session's id and password, for ``expire``."""
        return self.run.directory / "members" / f"{name}.session"

    # --- settling -------------------------------------------------------------------------------------

    def settle(self, scene: Scene) -> bool:
        began = time.monotonic()
        held_before = self._held_s()
        while not self.stop.is_set():
            self.pump(0.1)
            if self.settled(scene, began):
                return True
            # the time an observer held the play (a class at a step mode's stop) is no slow group
            if time.monotonic() - began - (self._held_s() - held_before) > self.settings.settle_timeout_s:
                self.marker(ev.DEMO_NOT_SETTLED, scene=scene.number,
                            note=f"not settled within {self.settings.settle_timeout_s:g} s")
                return False
        return False

    def _held_s(self) -> float:
        """How long the observer has held the play so far (its ``held_s``, when it has one)."""
        return float(getattr(self.observer, "held_s", 0.0))

    def settled(self, scene: Scene, began: float) -> bool:
        return self.group.settled(self.run.partitions, quiet_s=QUIET_S, began=began)

    def pump(self, wait: float) -> None:
        """Record what the members said (waiting up to ``wait`` for it), and notice a member that exited on its
        own. Raises :class:`GroupProtocolUnsupported` when a member says, or shows by its exit status, that the
        broker cannot run its group protocol."""
        for event in self.group.receive(wait):
            self.record(event)
            if event.get("event") == FAILED_EVENT and event.get("gave_up"):
                self.given_up.add((event.get("partition"), event.get("offset")))
            if event.get("event") == modern_member.UNSUPPORTED_EVENT and self.unsupported_reason is None:
                self.unsupported_reason = str(event.get("reason") or "")
        for member in self.group.members.values():
            if (member.alive and not member.ended_by_us and self.settings.member is None
                    and member.process.poll() == modern_member.UNSUPPORTED_EXIT):
                member.ended_by_us = True  # its end is the reason given, not a death
                if self.unsupported_reason is None:
                    status = modern_member.UNSUPPORTED_EXIT
                    self.unsupported_reason = f"{member.consumer_id} exited with status {status}"
        for member in self.group.died():
            log.emit(ev.MIGRATION_MEMBER_DIED, protocol=self.run.protocol.name,
                     consumer_id=member.consumer_id, returncode=member.process.returncode)
            self.marker(DIED, consumer_id=member.consumer_id, returncode=member.process.returncode)
        if self.unsupported_reason is not None and self.playing:
            self.playing = False
            raise GroupProtocolUnsupported(self.unsupported(self.unsupported_reason))

    def unsupported(self, reason: str) -> str:
        """One line: which coordinator, which protocol, and librdkafka's last word on it (``ConsumerGroupHeartbeat
        Request not supported by broker``, without the group and broker ids before it). Only a KIP-848 member says
        so: a member of the run's protocol, or one an ``upgrade`` restarted with it."""
        s = self.settings
        coordinator = "the broker's own group coordinator" if s.coordinator == "broker" else f"the {s.coordinator}"
        kind = "KIP-848 consumer" if self.upgraded else self.run.protocol.kind
        return f"{coordinator} at {s.bootstrap} does not run {kind} groups ({reason.rsplit(': ', 1)[-1]})"

    def marker(self, name: str, **fields: Any) -> None:
        self.record({"event": name, "protocol": self.run.protocol.name, **fields})

    def record(self, event: dict[str, Any]) -> None:
        if self.recorder is not None:
            self.recorder.write(event)
        if self.observer is not None:
            self.observer.event(self.run.protocol.name, event)

    def wait(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not self.stop.is_set() and time.monotonic() < deadline:
            self.pump(min(0.1, max(0.0, deadline - time.monotonic())))

    # --- the end --------------------------------------------------------------------------------------

    def read_committed(self) -> None:
        """The group's committed offsets of the run's topic, once every member left (their last commits made):
        ZooKeeper's ``/consumers/<group>/offsets`` for a legacy group, the coordinator's OffsetFetch for a modern
        one; written to ``committed.json`` for ``assert_committed_equals_consumed``."""
        run = self.run
        try:
            if run.protocol.family == "legacy":
                from zkconsumer.tools.offset_checker import read_group_offsets

                with zookeeper(self.zk_connect, quiet=True) as zk:
                    rows = read_group_offsets(zk, run.group).rows
                found = {r.partition: r.offset for r in rows if r.topic == run.topic and r.offset is not None}
            else:
                from zkconsumer.kafka.group_offsets import GroupOffsetsClient

                offsets = GroupOffsetsClient(self.settings.bootstrap, COMMITTED_TIMEOUT_S).fetch(run.group).offsets
                found = {tp.partition: offset for tp, offset in offsets.items() if tp.topic == run.topic}
            run.committed = {p: o for p, o in sorted(found.items()) if o >= 0}
        except Exception as exc:  # said by the assertion that needs it; the run's figures stand without it
            run.committed_error = f"{type(exc).__name__}: {exc}"
        (run.directory / COMMITTED_FILE).write_text(json.dumps(
            {"committed": run.committed, "error": run.committed_error}), encoding="utf-8")

    def finish(self) -> None:
        """Every member still running leaves (SIGTERM, then SIGKILL after 15 s); their last events recorded."""
        for member in self.group.stop_all(timeout=15.0, while_waiting=lambda: self.pump(0.1)):
            self.marker(ev.DEMO_MEMBER_STOPPED, consumer_id=member.consumer_id)
        for event in self.group.close():
            self.record(event)
        self.read_committed()
        if self.recorder is not None:
            self.recorder.close()
            self.recorder = None


def _produce(runs: list[ProtocolRun], bootstrap: str, rate: float, clock: SceneClock, stop: threading.Event,
             done: threading.Event, messages: MessageSource | None = None) -> None:
    """One message a tick to every protocol still playing, while the clock says the script is under way; the scene
    is the clock's when it was produced, the same for every protocol. With ``messages``, the team's message ``n`` to
    each topic instead of ``<protocol>:<n>``, placed by its key (:mod:`zkconsumer.migration.messages`), until they
    end. A partition the producer's metadata does not
    show yet (a topic just grown, seen through a front) is skipped for that tick: a message refused before it was
    sent is not produced, and its sequence number is simply not used."""
    from confluent_kafka import KafkaError, KafkaException, Producer

    producer = Producer(with_client_settings({"bootstrap.servers": bootstrap, "linger.ms": 5,
                                              "message.timeout.ms": 60000, "topic.metadata.refresh.interval.ms": 1000,
                                              "log_level": 3}))
    sequence = dict.fromkeys((r.protocol.name for r in runs), 0)
    interval, next_at = 1.0 / rate, time.monotonic()

    def acked(run: ProtocolRun, value: str, partition: int, scene: int, key: str | None,
              n: int) -> Callable[[Any, Any], None]:
        def report(err: Any, msg: Any) -> None:
            run.in_flight -= 1
            if err is None:
                run.produced.append(Produced(value, partition, scene, msg.offset(), key, n))
        return report

    while not (stop.is_set() or done.is_set()):
        scene = clock.scene
        for run in runs if clock.producing else ():
            name = run.protocol.name
            if not run.producing:
                continue
            n = sequence[name]
            message = OutMessage(str(n).encode(), f"{name}:{n}".encode()) if messages is None else messages.get(n)
            if message is None:  # the team's messages ended (or one was bad: the run says so at its end)
                continue
            sequence[name] = n + 1
            partition = n % run.partitions if messages is None else partition_for(message, n, run.partitions)
            options: dict[str, Any] = {"headers": list(message.headers)} if message.headers else {}
            try:
                producer.produce(run.topic, key=message.key, value=message.value, partition=partition, **options,
                                 on_delivery=acked(run, message.value_text, partition, scene, message.key_text, n))
                run.in_flight += 1  # its report is served by this thread's poll, never before this line
            except KafkaException as exc:
                if exc.args[0].code() != KafkaError._UNKNOWN_PARTITION:
                    raise
        producer.poll(0)
        next_at += interval
        time.sleep(max(0.0, next_at - time.monotonic()))
    producer.flush(30)


def write_produced(run: ProtocolRun) -> None:
    lines = (f"{m.partition} {m.value} {m.scene}\n" for m in run.produced)
    run.directory.mkdir(parents=True, exist_ok=True)  # a run stopped before its player began has none yet
    (run.directory / PRODUCED_FILE).write_text("".join(lines), encoding="utf-8")


def compare_protocols(settings: CompareSettings,
                      on_scene: Callable[[str, Scene, bool, float], None] | None = None,
                      observer: PlayObserver | None = None) -> list[ProtocolRun]:
    """Play the script for every protocol at once; returns the runs, their files written. Whatever ends the run, no
    member, bridge, chroot or topic of it outlives it."""
    s = settings
    runs = [ProtocolRun(p, s.name(p), s.name(p), s.output_dir / p.name, s.partitions) for p in s.protocols]
    made: list[str] = []
    players: list[_Player] = []
    with contextlib.ExitStack() as teardown:  # 5. in reverse: the members, the bridge and the chroot, the topics
        teardown.callback(_delete_topics, s.bootstrap, made)
        # 1. each protocol's topic, at the size its members first see; at a Kafka coordinator under --settings
        # same, each modern group's KIP-848 session and heartbeat, removed again at the end
        holds = _make_topics(s, runs, made)
        if s.group_timeouts_ms is not None:
            groups = [r.group for r in runs if r.protocol.family == "modern"]
            teardown.callback(delete_group_configs, s.bootstrap, groups, (GROUP_SESSION, GROUP_HEARTBEAT))
            set_group_configs(s.bootstrap, groups, dict(zip((GROUP_SESSION, GROUP_HEARTBEAT),
                                                            map(str, s.group_timeouts_ms), strict=True)))
        # 2. the legacy protocols' cluster: a chroot of the run's own that its bridge mirrors the broker into
        stage = teardown.enter_context(_stage(s, runs, holds))
        teardown.callback(_kill_members, players)
        # 3. the players and the producer on one clock, until every player is done; 4. each run's files written
        _play(s, runs, stage, players, on_scene, observer)
    return runs


def _make_topics(s: CompareSettings, runs: list[ProtocolRun], made: list[str]) -> bool:
    """Each protocol's topic, named in ``made`` once created; returns whether the modern ones are held smaller in a
    front's Metadata.

    A scenario that grows the topic has a legacy protocol's topic created at its final size and held smaller in
    ZooKeeper by the bridge until the scene that grows it, as the demo does: the broker needs no CreatePartitions,
    and to the members it is the znode change a ZooKeeper-mode controller made. A modern protocol's topic is held
    smaller the same way in the Metadata of a front (:func:`~zkconsumer.kafka.topics.show_partitions`), which is
    what its members see as a topic grown by CreatePartitions; at a broker that is not a front, it is created at its
    first size and grown with CreatePartitions (a Kafka broker has it; Tansu does not:
    :func:`~zkconsumer.migration.scenes.check_playable`)."""
    final = s.partitions + s.scenario.grown
    grows_modern = final > s.partitions and any(r.protocol.family == "modern" for r in runs)
    holds = grows_modern and (s.identity or identify(s.bootstrap)).holds_topics
    for run in runs:
        create_topic(s.bootstrap, run.topic, final if run.protocol.family == "legacy" or holds else s.partitions)
        made.append(run.topic)
        if run.protocol.family == "modern" and holds:
            # not a legacy topic: the bridge reads the front's metadata and would mirror the hold into ZooKeeper
            show_partitions(s.bootstrap, run.topic, s.partitions)
    return holds


@dataclass(frozen=True)
class _Stage:
    """Where the members play, and how a scene grows a protocol's topic."""

    settings: CompareSettings
    #: the ZooKeeper the legacy members read: the run's chroot (the root, when no legacy protocol plays)
    connect: str
    #: the modern protocols' topics are held smaller in a front's Metadata until a scene grows them
    holds: bool
    #: the legacy protocols' mirror of the broker, which holds their topics smaller until a scene grows them
    bridge: MetadataBridge | None = None

    def grow(self, run: ProtocolRun, partitions: int) -> None:
        """Show ``run``'s topic to its members with ``partitions`` partitions."""
        s = self.settings
        if run.protocol.family == "modern":
            (show_partitions if self.holds else alter_partitions)(s.bootstrap, run.topic, partitions)
            return
        assert self.bridge is not None, "a legacy protocol's run has the bridge"
        self.bridge.show_partitions(run.topic, partitions)
        with zookeeper(self.connect) as zk:
            wait_for_topic(zk, run.topic, partitions)


@contextlib.contextmanager
def _stage(s: CompareSettings, runs: list[ProtocolRun], holds: bool) -> Iterator[_Stage]:
    """For the legacy protocols and a move's legacy members, a chroot of the run's own where a bridge mirrors the
    broker as a ZooKeeper-mode cluster, every topic shown before the block begins; at its end the bridge stops and the
    chroot is deleted."""
    from zkconsumer.bridge.metadata_bridge import MetadataBridge

    if not s.scenario.moves and not any(r.protocol.family == "legacy" for r in runs):
        yield _Stage(s, s.zookeeper, holds)
        return
    chroot = f"/zkconsumer-migration-{s.run_id}"
    connect = s.zookeeper.rstrip("/") + chroot
    try:
        with zookeeper(s.zookeeper) as zk:
            ensure_path(zk, chroot)  # a chroot as a broker's zookeeper.connect makes it: null data
        bridge = MetadataBridge(connect, s.bootstrap, interval_ms=250,
                                partition_limits={r.topic: s.partitions for r in runs} if s.scenario.grown else None)
        with bridge.running("migration-bridge"):
            with zookeeper(connect) as zk:
                for run in runs:
                    wait_for_topic(zk, run.topic, s.partitions)
            yield _Stage(s, connect, holds, bridge)
    finally:
        with contextlib.suppress(Exception), zookeeper(s.zookeeper, quiet=True) as zk:
            zk.delete(chroot, recursive=True)


def _play(s: CompareSettings, runs: list[ProtocolRun], stage: _Stage, players: list[_Player],
          on_scene: Callable[[str, Scene, bool, float], None] | None, observer: PlayObserver | None) -> None:
    """Each protocol's player in a thread of its own and one producer, on one clock, until every player is done (on
    an interrupt: every player told to stop and waited for); then, whatever ended the play, what each run produced
    written and the coordinator's events for its group merged into its own."""
    stop, done = threading.Event(), threading.Event()
    clock = SceneClock(len(runs), stop, len(s.scenario.scenes))
    faults = ServerFaults(s.restarts)
    producer = threading.Thread(target=_produce, args=(runs, s.producer_bootstrap or s.bootstrap, s.rate, clock,
                                                       stop, done, s.messages),
                                name="producer", daemon=True)
    threads: list[threading.Thread] = []
    try:
        producer.start()
        for number, run in enumerate(runs):
            player = _Player(s, run, stage.connect, stop, on_scene, clock, number, stage.grow, observer, faults)
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
            if s.coordinator_events is not None:
                merge_coordinator_events(run, s.coordinator_events)


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) else None


def caught_up(run: ProtocolRun, deliveries: Iterable[Delivery], given_up: Collection[tuple[object, object]]) -> bool:
    """Whether the members have delivered all they will: no message is still awaiting its delivery report (on a
    loaded machine the last reports come seconds after production stopped, and a message acknowledged after the
    members left would count as lost), and every message acknowledged was delivered, or every partition's last one
    was, or the application gave up on it (``given_up``: partition and offset)."""
    if run.in_flight:
        return False
    produced = list(run.produced)
    ids = identity(produced)
    wanted = {ids.produced(m) for m in produced if (m.partition, m.offset) not in given_up}
    got = {ids.delivered(d) for d in deliveries}
    return wanted <= got or _last_delivered(produced, got, ids)


def _last_delivered(produced: list[Produced], delivered: set[Hashable], ids: Identity) -> bool:
    """Whether every partition's last message produced was delivered: members consume a partition in order, so what
    is missing before it is lost (a member committed past it), not late, and waiting longer would not bring it."""
    last: dict[int, Produced] = {}
    for message in produced:
        if message.offset >= 0 and (message.partition not in last or message.offset > last[message.partition].offset):
            last[message.partition] = message
    return bool(last) and all(ids.produced(m) in delivered for m in last.values())


def _kill_members(players: list[_Player]) -> None:
    """Every member still running is killed, a player's that never ran or failed early too."""
    for player in players:
        for member in player.group.members.values():
            if member.process.poll() is None:
                member.process.kill()
                member.process.wait()  # no timeout: SIGKILL cannot be caught or ignored


def merge_coordinator_events(run: ProtocolRun, source: Path) -> int:
    """Append to the run's ``events.jsonl`` the coordinator's events (:data:`COORDINATOR_EVENTS`) that name its
    group, as the front wrote them; returns how many. The timeline orders events by time, so appending is enough."""
    try:
        with open(source, encoding="utf-8", errors="replace") as f:
            lines = [line.rstrip("\n") for line in f if run.group in line and _names_group(line, run.group)]
    except OSError:
        return 0
    if lines:
        run.directory.mkdir(parents=True, exist_ok=True)
        with open(run.events_path, "a", encoding="utf-8") as f:
            f.write("".join(f"{line}\n" for line in lines))
    return len(lines)


def _names_group(line: str, group: str) -> bool:
    try:
        event = json.loads(line)
    except ValueError:
        return False
    return isinstance(event, dict) and event.get("event") in COORDINATOR_EVENTS and event.get("group") == group


def _delete_topics(bootstrap: str, topics: list[str]) -> None:
    """The run's topics go, once its members and bridge are gone (Tansu crashes a consumer whose assigned topic is
    deleted)."""
    from zkconsumer.kafka.metadata import admin_client

    if not topics:
        return
    with contextlib.suppress(Exception):
        admin = admin_client(bootstrap)  # kept: the futures fail when the client is collected
        futures = admin.delete_topics(topics, operation_timeout=10)
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
        measures = measure(run.protocol.name, events, run.produced, read_deliveries(run), run.topic, run.group)
        results.append(ProtocolResult(run.protocol, run.topic, run.group, measures, build_timeline(events),
                                      str(run.events_path.relative_to(output_dir)), run.error))
    return results
