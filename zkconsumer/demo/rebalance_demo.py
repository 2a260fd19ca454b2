"""The teaching demo: a scenario played live by real group members and narrated step by step.

The scenario is a file (:mod:`zkconsumer.scenarios`); the default, the shipped ``demo`` (:data:`SCENES`), is the
classic rebalance story in five scenes, each one action and the rebalance it causes:

1. one consumer takes every partition;
2. a second joins and both rebalance (the newcomer usually hits an ownership conflict first: the old owner has
   not released yet, which is exactly how the legacy protocol behaves);
3. a third joins with three streams, more threads than there are partitions left: one thread gets nothing;
4. the second is killed with SIGKILL: nothing happens until ZooKeeper expires its session, and meanwhile its
   partitions are consumed by nobody;
5. partitions are added to the topic: the topic watch fires and everyone rebalances.

A scene's actions (start, stop, SIGKILL, a pause, a forced session expiry, growing the topic, waiting) are played in
order, then the scene waits until the group has settled, and the demo reports it.

Members are separate processes (:mod:`zkconsumer.members.legacy_member`, started and followed through
:mod:`zkconsumer.members.group`) writing their events as JSON lines; the demo reads them, narrates each attempt
(:mod:`zkconsumer.demo.narration`), records them, with its own ``demo.*`` events, in ``events.jsonl``, and after
each scene prints the ConsumerOffsetChecker table and the VerifyConsumerRebalance verdict read from ZooKeeper, as an
operator would see them. At the end the recorded events
become the HTML timeline (:mod:`zkconsumer.trace.timeline_html`).

How partitions are added depends on the broker: with CreatePartitions when it has it; on the embedded Tansu,
which has not, the demo runs its own metadata bridge into a ZooKeeper chroot, creates the topic at its final
size and holds it smaller until scene 5 (:func:`zkconsumer.bridge.plan.hold_partitions`). To the consumers
this is the same znode change a ZooKeeper-mode controller made.

The demo's own events (``demo.*``, in the same JSON shape as the connector's) are declared once in
:mod:`zkconsumer.events.demo` and listed on the events page (``docs/events.md``).

Hooks: a :class:`DemoObserver` (any of its methods) is told when a scene begins, when an action was played, every
event recorded, and each settled scene; ``on_action`` and ``on_settled`` are the short forms of the last two.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

from confluent_kafka import Producer
from kazoo.client import KazooClient
from kazoo.exceptions import KazooException, NoNodeError

from zkconsumer.assignors import NAMES
from zkconsumer.assignors.comparison import compare, format_partitions
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.bridge.metadata_bridge import MetadataBridge
from zkconsumer.demo.narration import RebalanceNarrator, parse_time
from zkconsumer.errors import UsageError, ZkConsumerError
from zkconsumer.events import catalogue as ev
from zkconsumer.group.snapshot import read_group_snapshot
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.kafka.topics import TopicCommandError, alter_partitions, create_topic
from zkconsumer.members import legacy_member
from zkconsumer.members.faults import expire_session, paused
from zkconsumer.members.group import MemberGroup, MemberProcess
from zkconsumer.members.recorder import EventRecorder
from zkconsumer.progress import Waiting
from zkconsumer.scenarios.model import (
    BOUNCE,
    EXPIRE,
    GROW,
    KILL,
    PAUSE,
    SETTLE,
    START,
    STOP,
    WAIT,
    Action,
    Scenario,
    Scene,
)
from zkconsumer.scenarios.parse import load
from zkconsumer.tools.offset_checker import GroupDescription, describe_group, format_table
from zkconsumer.tools.verify_rebalance import RebalanceCheck, verify_rebalance
from zkconsumer.types import TopicPartition
from zkconsumer.zk import paths
from zkconsumer.zk.client import close_client, open_client, zookeeper
from zkconsumer.zk.cluster import registered_bootstrap, wait_for_topic
from zkconsumer.zk.reads import children

EVENTS_FILE = "events.jsonl"
TIMELINE_FILE = "timeline.html"
_QUIET_S = 0.6  # no rebalance event for this long, and the group reads as valid: the scene has settled


class DemoError(ZkConsumerError):
    pass


DEFAULT_SCENARIO = "demo"


def default_scenario() -> Scenario:
    return load(DEFAULT_SCENARIO)


@dataclass(frozen=True)
class DemoSettings:
    """What the demo plays and where; ``partitions``, ``session_timeout_ms`` and ``messages_per_partition`` are what is
    played (the command takes them from the scenario unless its options say otherwise)."""

    zookeeper: str  # connect string, chroot included
    bootstrap: str
    topic: str = "demo"
    group: str = "demo"
    strategy: str = "range"
    partitions: int = 4
    session_timeout_ms: int = 6000
    messages_per_partition: int = 25  # produced at the start of every scene, so offsets and lag move
    scenario: Scenario = field(default_factory=default_scenario)
    pace: float = 0.0  # seconds to pause after each scene's heading and each narrated block
    compare: bool = False
    explain: bool = True
    output_dir: Path = Path("demo-output")
    settle_timeout_s: float | None = None  # default: 60 s, or twice the session timeout + 20 s if longer
    step_gate: bool = False  # members wait before each rebalance step until the step mode lets them go (--step)

    @property
    def settle_limit_s(self) -> float:
        if self.settle_timeout_s is not None:
            return self.settle_timeout_s
        return max(60.0, 2 * self.session_timeout_ms / 1000 + 20)


SCENES = default_scenario().scenes
"""The default story's scenes (the shipped ``demo`` scenario)."""


@dataclass(frozen=True)
class SceneResult:
    """What the group looked like once the scene settled, from the events and from ZooKeeper, for tests."""

    scene: Scene
    owners: dict[TopicPartition, str]  # partition -> thread, from the members' rebalance.completed events
    description: GroupDescription  # groups describe
    check: RebalanceCheck  # groups verify


@dataclass
class DemoResult:
    settings: DemoSettings
    events_path: Path
    timeline_path: Path | None
    scenes: list[SceneResult] = field(default_factory=list)


def scene_heading(scene: Scene) -> list[str]:
    """How the demo opens a scene on the terminal: a blank line, the numbered title, the note."""
    return ["", f"== Scene {scene.number}: {scene.title} ==", *([f"   {scene.note}"] if scene.note else [])]


class DemoObserver:
    """Hooks into a demo as it plays (the narration of other protocols, a step mode, a live page): subclass and
    override what you need. Called on the demo's thread, in order; what they block, the demo waits for."""

    def scene_started(self, scene: Scene) -> None:
        """A scene's heading was printed; its actions come next."""

    def action_played(self, scene: Scene, action: Action) -> None:
        """One of the scene's actions was played (a member started, killed, paused and resumed ...)."""

    def event(self, event: dict[str, Any]) -> None:
        """An event was recorded in ``events.jsonl`` (a member's, or the demo's own ``demo.*``)."""

    def settled(self, result: SceneResult) -> None:
        """The scene settled and was reported."""


class RebalanceDemo:
    """Plays ``settings.scenario``; ``grow(total)`` adds partitions and returns None, or why it cannot."""

    def __init__(self, settings: DemoSettings, grow: Callable[[int], str | None], out: TextIO = sys.stdout,
                 status: TextIO = sys.stderr, on_action: Callable[[Scene], None] | None = None,
                 on_settled: Callable[[SceneResult], None] | None = None,
                 observers: tuple[DemoObserver, ...] = ()) -> None:
        self.settings = settings
        self.grow = grow
        self.out = out
        self.status = status
        self.on_action = on_action  # after a scene's actions, before it settles
        self.on_settled = on_settled
        self.observers = observers
        self.group = MemberGroup(settings.output_dir / "members")
        self.streams: dict[str, int] = {}  # member name -> its streams
        self.narrator = RebalanceNarrator(explain=settings.explain)
        self._recorder: EventRecorder | None = None
        self._last_told = 0.0  # time of the last narrated event, to show the quiet stretches
        self._waiting: Waiting | None = None  # the wait indicator while a scene settles
        self._check: RebalanceCheck | None = None  # the verdict that let the scene settle, reported as is
        self._partitions = settings.partitions

    # --- the story, top to bottom -------------------------------------------------------------------

    def run(self) -> DemoResult:
        s = self.settings
        s.output_dir.mkdir(parents=True, exist_ok=True)
        (s.output_dir / "members").mkdir(exist_ok=True)
        result = DemoResult(s, s.output_dir / EVENTS_FILE, None)
        (s.output_dir / TIMELINE_FILE).unlink(missing_ok=True)  # never leave an older run's page beside these events
        self._recorder = EventRecorder(result.events_path)
        self._zk = open_client(s.zookeeper)
        try:
            self._say(f"Scenario {s.scenario.name!r}: {s.scenario.title}")
            self._say(f"Group {s.group!r} on topic {s.topic!r} ({s.partitions} partitions), strategy {s.strategy}, "
                      f"session timeout {s.session_timeout_ms} ms; ZooKeeper {s.zookeeper}")
            for scene in s.scenario.scenes:
                played = self._scene(scene)  # None when the topic cannot grow here
                if played is not None:
                    result.scenes.append(played)
            self._stop_all()
        except KazooException as exc:
            raise DemoError(f"ZooKeeper at {s.zookeeper} failed ({type(exc).__name__}); the demo stopped. "
                            f"Its events so far are in {result.events_path}") from None
        finally:
            self._cleanup()
            result.timeline_path = self._write_timeline(result.events_path)
        return result

    # --- scenes -------------------------------------------------------------------------------------

    def _scene(self, scene: Scene) -> SceneResult | None:
        self._record({"event": ev.DEMO_SCENE, "scene": scene.number, "title": scene.title, "note": scene.note})
        for line in scene_heading(scene):
            self._say(line)
        for observer in self.observers:
            observer.scene_started(scene)
        self._pause()
        self._produce()
        started = time.time()
        # a scene that only pauses or waits need not make anyone rebalance: then the group settles as it stands
        since = started if scene.changes_membership else None
        refused = False
        for action in scene.actions:
            if self._act(action, since, scene.waiting_for) is False:
                refused = True  # the rest of the scene still plays: the scenario's later scenes count on it
                continue
            for observer in self.observers:
                observer.action_played(scene, action)
        if refused and not any(a.kind in (START, KILL, STOP, BOUNCE, EXPIRE) for a in scene.actions):
            return None  # nothing else in it changes the group: nothing to settle, the scene is skipped
        self._last_told = time.time()
        if self.on_action is not None:
            self.on_action(scene)
        self._settle(since, scene.waiting_for)
        return self._report(scene)

    def _act(self, action: Action, since: float | None, waiting_for: str) -> bool:
        """Play one action; False when it cannot be played here (a topic that cannot grow)."""
        if action.kind == START:
            self._start(action.member)
        elif action.kind == KILL:
            self._kill(action.member)
        elif action.kind in (STOP, BOUNCE):
            self._stop(self.group.members[action.member])
            if action.kind == BOUNCE:
                self._start(action.member)
        elif action.kind == PAUSE:
            self._freeze(action.member, action.seconds)
        elif action.kind == EXPIRE:
            self._expire(action.member)
        elif action.kind == GROW:
            return self._add_partitions(action.partitions)
        elif action.kind == WAIT:
            self._say(f"-> waiting {action.seconds:g} s")
            deadline = time.monotonic() + action.seconds
            while time.monotonic() < deadline:
                self._drain(min(0.1, max(0.0, deadline - time.monotonic())))
        else:
            assert action.kind == SETTLE
            self._settle(since, waiting_for)
        return True

    def _start(self, name: str) -> None:
        s = self.settings
        cast = s.scenario.member(name)
        streams = cast.streams
        consumer_id = f"{s.group}_{name}"
        self._session_file(name).unlink(missing_ok=True)  # an earlier process's session, never this one's
        argv = legacy_member.command(zookeeper=s.zookeeper, group=s.group, topic=f"{s.topic}:{streams}",
                                     consumer_id=name, strategy=s.strategy, session_timeout_ms=s.session_timeout_ms,
                                     config=dict(cast.config), session_file=self._session_file(name),
                                     stop_at_stdin_eof=True, revoke_ms=cast.revoke_ms,
                                     step_gate=self._session_file(name).with_suffix(".step") if s.step_gate else None)
        member = self.group.start(name, consumer_id, argv)
        self.streams[name] = streams
        self._record({"event": ev.DEMO_MEMBER_STARTED, "consumer_id": consumer_id, "pid": member.pid,
                      "streams": streams})
        self._say(f"-> started {name} ({consumer_id}, {streams} stream{'s' if streams > 1 else ''}, pid {member.pid})")

    def _kill(self, name: str) -> None:
        member = self.group.members[name]
        self.group.kill(member)
        self._record({"event": ev.DEMO_MEMBER_KILLED, "consumer_id": member.consumer_id, "pid": member.process.pid,
                      "signal": "SIGKILL"})
        self._say(f"-> killed {name} with SIGKILL; its znodes stay until its session expires "
                  f"(up to {self.settings.session_timeout_ms} ms)")

    def _freeze(self, name: str, seconds: float) -> None:
        member = self.group.members[name]
        self._record({"event": ev.DEMO_MEMBER_PAUSED, "consumer_id": member.consumer_id, "pid": member.pid,
                      "seconds": seconds})
        self._say(f"-> froze {name} with SIGSTOP for {seconds:g} s (its session timeout: "
                  f"{self.settings.session_timeout_ms} ms); it runs nothing, heartbeats included")
        deadline = time.monotonic() + seconds
        with paused(member.process):
            while time.monotonic() < deadline:
                self._drain(min(0.1, max(0.0, deadline - time.monotonic())))
        self._record({"event": ev.DEMO_MEMBER_RESUMED, "consumer_id": member.consumer_id, "pid": member.pid})
        self._say(f"-> {name} continues (SIGCONT)")

    def _expire(self, name: str) -> None:
        member = self.group.members[name]
        forced = expire_session(self.settings.zookeeper, self._session_file(name))
        self._record({"event": ev.DEMO_SESSION_EXPIRED, "consumer_id": member.consumer_id, "forced": forced})
        if forced:
            self._say(f"-> expired {name}'s ZooKeeper session (as a partition longer than the session would): its "
                      f"ephemeral znodes go at once, and it registers again on a new session")
        else:
            self._say(f"-> {name} has not written its session yet; nothing to expire")

    def _session_file(self, name: str) -> Path:
        """Where a member keeps its ZooKeeper session's id and password, for ``expire``."""
        return self.settings.output_dir / "members" / f"{name}.session"

    def _add_partitions(self, added: int) -> bool:
        before = self._partitions
        after = before + added
        refused = self.grow(after)
        if refused is not None:
            self._say(f"-> cannot add partitions here: {refused}; scene skipped")
            return False
        self._partitions = after
        self._record({"event": ev.DEMO_PARTITIONS_ADDED, "topic": self.settings.topic, "before": before,
                      "after": after})
        self._say(f"-> topic {self.settings.topic} now has {after} partitions (was {before})")
        return True

    def _stop_all(self) -> None:
        """One at a time, so that each departure is a rebalance of those who stay, and the last one leaves alone."""
        self._say("")
        self._say("== The end: the members leave one by one (SIGTERM: a clean shutdown) ==")
        live = self.group.live()
        for i, member in enumerate(live):
            started = time.time()
            self._stop(member)
            if i < len(live) - 1:
                self._settle(started, f"the others to take over from {member.name}")
        for event in self.group.close():
            self._take(event)

    def _stop(self, member: MemberProcess) -> None:
        waiting = Waiting(self.status, f"{member.name} to shut down")

        def take_events() -> None:
            self._drain(0.1)
            waiting.tick()

        try:
            self.group.stop(member, timeout=20.0, while_waiting=take_events)
        finally:
            waiting.finish()
        self._record({"event": ev.DEMO_MEMBER_STOPPED, "consumer_id": member.consumer_id})
        self._say(f"-> stopped {member.name}")

    # --- events ---------------------------------------------------------------------------------------

    def _record(self, event: dict[str, Any]) -> None:
        if self._recorder is not None:
            self._recorder.write(event)
        for observer in self.observers:
            observer.event(event)

    def _drain(self, wait: float) -> None:
        """Record and narrate whatever the members said, waiting up to ``wait`` for the first event."""
        for event in self.group.receive(wait):
            self._take(event)

    def _take(self, event: dict[str, Any]) -> None:
        """Record and narrate one event; :meth:`MemberGroup.receive` has applied it to its member's state."""
        self._record(event)
        lines = self.narrator.feed(event)
        if lines:
            if self._waiting is not None:  # the narration takes the line the wait indicator was drawing on
                self._waiting.finish()
            at = parse_time(event["timestamp"]) if "timestamp" in event else time.time()
            if self._last_told and at - self._last_told > 1.0:
                self._say(f"  ... {at - self._last_told:.1f} s later:")
            self._last_told = at
            for line in lines:
                self._say(line)
            self._pause()

    # --- settling and reporting -----------------------------------------------------------------------

    def _settled(self, since: float | None) -> bool:
        """The members' events say every live member rebalanced since ``since`` (when given) and together they own
        every partition, and ZooKeeper agrees (groups verify)."""
        if not self.group.settled(self._partitions, quiet_s=_QUIET_S, completed_after=since):
            return False
        try:
            self._check = verify_rebalance(self._zk, self.settings.group)
            return self._check.ok
        except (KazooException, ZkConsumerError):  # a znode vanished under us, or ZooKeeper is away: not yet
            return False

    def _settle(self, since: float | None, waiting_for: str) -> None:
        self._waiting = Waiting(self.status, waiting_for)
        held_before = self._held_s()
        try:
            while not self._settled(since):
                if self._waiting.elapsed - (self._held_s() - held_before) > self.settings.settle_limit_s:
                    raise DemoError(
                        f"the group did not settle within {self.settings.settle_limit_s:g} s; the members' logs "
                        f"are in {self.settings.output_dir / 'members'}")
                for member in self.group.live():
                    if member.process.poll() is not None:
                        raise DemoError(f"member {member.name} exited with status {member.process.returncode}; "
                                        f"see {self.settings.output_dir / 'members' / (member.name + '.log')}")
                self._drain(0.1)
                self._waiting.tick()
        finally:
            self._waiting.finish()
            self._waiting = None

    def _held_s(self) -> float:
        """How long observers held the demo (a step mode's stops, ``held_s``): a class talking is no slow group."""
        return sum(float(getattr(observer, "held_s", 0.0)) for observer in self.observers)

    def _report(self, scene: Scene) -> SceneResult:
        s = self.settings
        owners = {tp: thread for m in self.group.live() for tp, thread in m.state.owned.items()}
        description = describe_group(self._zk, s.group)
        check = self._check  # read by _settled just now; nothing has happened since
        assert check is not None
        self._record({"event": ev.DEMO_SETTLED, "scene": scene.number, "valid": check.ok,
                      "owners": [{"topic": tp.topic, "partition": tp.partition, "thread": t}
                                 for tp, t in sorted(owners.items())]})
        self._say("")
        self._say(f"   What `zkconsumer groups describe --group {s.group}` shows now:")
        for line in format_table(description.offsets.rows):
            self._say(f"     {line}")
        for warning in description.warnings:
            self._say(f"     warning: {warning}")
        idle = [f"{m.consumer_id}-{n}" for m in self.group.live() for n in range(self.streams[m.name])
                if f"{m.consumer_id}-{n}" not in owners.values()]
        if idle:
            self._say(f"   Idle threads (nothing assigned): {', '.join(idle)}")
        self._say(f"   `zkconsumer groups verify`: {check.verdict}")
        for problem in check.problems:
            self._say(f"     {problem}")
        if s.compare:
            self._compare()
        result = SceneResult(scene, owners, description, check)
        if self.on_settled is not None:
            self.on_settled(result)
        for observer in self.observers:
            observer.settled(result)
        self._pause()
        return result

    def _compare(self) -> None:
        """What every assignor, legacy and modern, would do with the same members at this moment."""
        snapshot = read_group_snapshot(self._zk, self.settings.group)
        owned = {m.consumer_id: list(m.state.owned) for m in self.group.live()}
        members = tuple(
            Member(cid, streams=streams, owned=tuple(sorted(owned.get(cid, []))))
            for cid, streams in snapshot.streams_per_member(exclude_internal=True).items()
        )
        request = AssignmentInput({t: len(ids) for t, ids in snapshot.partitions.items()}, members)
        self._say("")
        self._say("   The same members under every strategy (`zkconsumer compare`); 'moved': partitions that would")
        self._say("   change hands from the current owners, 'idle': threads (legacy) or members (modern) left empty:")
        for report in compare(request, NAMES):
            if report.error:
                self._say(f"     {report.strategy:<19} {report.error}")
                continue
            shares = " | ".join(f"{v.member_id} {format_partitions(v.partitions)}" for v in report.members)
            idle = len(report.idle_threads if report.family == "legacy" else report.idle_members)
            extra = ""
            if report.cooperative is not None and report.cooperative.rounds > 1:
                extra = f", {report.cooperative.rounds} rebalances"
            self._say(f"     {report.strategy:<19} {shares}   (moved {report.moved}, idle {idle}{extra})")

    # --- plumbing -------------------------------------------------------------------------------------

    def _produce(self) -> None:
        """One message per produce request: Tansu reports the last batch's base offset + 1 as the log end."""
        failures: list[str] = []
        producer = Producer({"bootstrap.servers": self.settings.bootstrap, "linger.ms": 0,
                             "message.timeout.ms": 10_000})
        deadline = time.monotonic() + 30
        for p in range(self._partitions):
            for i in range(self.settings.messages_per_partition):
                producer.produce(self.settings.topic, value=f"p{p}-{i}".encode(), partition=p,
                                 on_delivery=lambda err, _msg: failures.append(str(err)) if err else None)
                producer.flush(max(0.1, deadline - time.monotonic()))
                if failures or time.monotonic() > deadline:
                    raise DemoError(f"could not produce to topic {self.settings.topic} at {self.settings.bootstrap}: "
                                    f"{failures[0] if failures else 'no answer within 30 s'}")

    def _say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()

    def _pause(self) -> None:
        if self.settings.pace > 0:
            time.sleep(self.settings.pace)

    def _cleanup(self) -> None:
        """After an error or Ctrl-C: ask every member still running to leave, then make sure it did."""
        self.group.stop_all(timeout=10.0)
        self.group.close()
        close_client(self._zk)
        if self._recorder is not None:
            self._recorder.close()
            self._recorder = None

    def _write_timeline(self, events_path: Path) -> Path | None:
        from zkconsumer.trace.timeline import build_timeline, read_events
        from zkconsumer.trace.timeline_html import render_html

        if not events_path.exists():
            return None
        with open(events_path, encoding="utf-8") as f:
            log = read_events(f)
        if not log.events:
            return None
        path = self.settings.output_dir / TIMELINE_FILE
        path.write_text(render_html(build_timeline(log), title=f"zkconsumer demo: group {self.settings.group}"),
                        encoding="utf-8")
        return path


# --- where the demo plays ---------------------------------------------------------------------------------

CHROOT = "/zkconsumer-demo"
CHROOT_MARKER = b"zkconsumer demo: cleared at the start of every run"


def play_in_own_chroot(root: str, bootstrap: str, settings: DemoSettings, **hooks: Any) -> DemoResult:
    """The embedded way: a chroot of our own, cleared first, and a bridge that can add partitions on Tansu.

    The topic is created at its final size and the bridge holds it at ``settings.partitions`` until a scene grows
    it. ``hooks`` go to :class:`RebalanceDemo` (``on_action``, ``on_settled``, ``observers``, ``out``, ``status``).
    """
    final = settings.partitions + settings.scenario.grown
    if ensure_topic(bootstrap, settings.topic, final) is not None:
        out: TextIO = hooks.get("out") or sys.stdout
        out.write(f"Topic {settings.topic!r} exists already (an earlier run's): its offsets go on from where that run "
                  f"left them, so they start above 0 here. Without --topic the demo makes a fresh topic per run.\n")
    with zookeeper(root) as zk:
        fresh_chroot(zk)
    connect = root.rstrip("/") + CHROOT
    bridge = MetadataBridge(connect, bootstrap, interval_ms=250, partition_limits={settings.topic: settings.partitions})
    with bridge.running(name="demo-bridge", join_timeout=5.0):
        with zookeeper(connect) as zk:
            wait_for_topic(zk, settings.topic, settings.partitions)

        def grow(partitions: int) -> str | None:
            bridge.show_partitions(settings.topic, partitions)
            with zookeeper(connect) as zk:
                wait_for_topic(zk, settings.topic, partitions)
            return None

        return RebalanceDemo(replace(settings, zookeeper=connect, bootstrap=bootstrap), grow, **hooks).run()


def play_against(connect: str, bootstrap: str | None, settings: DemoSettings, **hooks: Any) -> DemoResult:
    """Servers as they are: partitions are added with CreatePartitions, or the scene that grows the topic says why
    it cannot be."""
    with zookeeper(connect, quiet=True) as zk:
        bootstrap = bootstrap or registered_bootstrap(zk)
        if bootstrap is None:
            raise UsageError(f"no broker is registered in ZooKeeper at {connect}; give --bootstrap-server")
        if zk.exists(paths.GroupDirs(settings.group).group_dir):
            raise UsageError(f"group {settings.group!r} already exists at {connect}; the demo starts a group of its "
                             f"own: pick a new --group")
    # Test messages and two partitions that cannot be taken back: only into a topic the demo creates.
    if settings.topic in fetch_metadata(admin_client(bootstrap), bootstrap).topics:
        raise UsageError(f"topic {settings.topic!r} already exists at {bootstrap}; the demo writes test messages "
                         f"and adds partitions, so it creates its own: pick a new --topic")
    create_topic(bootstrap, settings.topic, settings.partitions)
    settings = replace(settings, zookeeper=connect, bootstrap=bootstrap)
    with zookeeper(connect) as zk:
        wait_for_topic(zk, settings.topic, settings.partitions)

    def grow(partitions: int) -> str | None:
        try:
            alter_partitions(bootstrap, settings.topic, partitions)
        except TopicCommandError as exc:
            return str(exc)
        with zookeeper(connect) as zk:
            wait_for_topic(zk, settings.topic, partitions)
        return None

    return RebalanceDemo(settings, grow, **hooks).run()


def ensure_topic(bootstrap: str, topic: str, partitions: int) -> int | None:
    """Create the topic with ``partitions`` unless it exists with at least that many; returns None when it was
    created, else its count."""
    existing = fetch_metadata(admin_client(bootstrap), bootstrap).topics.get(topic)
    if existing is None:
        create_topic(bootstrap, topic, partitions)
        return None
    count = len(existing.partitions)
    if count < partitions:
        raise UsageError(f"topic {topic!r} exists with {count} partitions, fewer than the {partitions} the demo "
                         f"needs; pass --topic with a new name")
    return count


def fresh_topic(prefix: str) -> str:
    """A topic of this run's own (``demo-20261125-193012``): the offsets the demo shows start at 0, as the docs'
    do, whatever ran before on the same broker."""
    return f"{prefix}-{time.strftime('%Y%m%d-%H%M%S')}"


def fresh_chroot(zk: KazooClient) -> None:
    """Clear the previous run's chroot; refuse one that the demo did not make (nothing of others is deleted)."""
    try:
        data, _ = zk.get(CHROOT)
    except NoNodeError:
        data = None
    if data is not None and data != CHROOT_MARKER:
        raise UsageError(f"znode {CHROOT} exists and was not made by the demo; it is left alone. Remove it, or run "
                         f"the demo with --zookeeper")
    if data is not None:
        for group in children(zk, f"{CHROOT}/consumers"):
            if children(zk, f"{CHROOT}/consumers/{group}/ids"):
                raise UsageError(f"another demo is running (group {group!r} has live members in {CHROOT}); "
                                 f"wait for it to end")
        zk.delete(CHROOT, recursive=True)
    zk.create(CHROOT, CHROOT_MARKER)
