"""``demo --protocol``: what the demo says while one or more protocols play a scenario side by side.

The protocols are played by the migration comparison's runner, on one clock (every scene begins for every protocol
at once); this observer is told each scene and every event recorded, from each protocol's player thread, and
prints them as they come: the scene's heading once, a legacy group's rebalance attempts in the legacy narration's
steps (:class:`~zkconsumer.demo.narration.RebalanceNarrator`), a modern group's rounds from its coordinator's events
and its members' callbacks (:class:`~zkconsumer.demo.modern_narration.ModernNarrator`: the generation and its leader,
the SyncGroup waits, KIP-848's epochs and reconciliation, what each member revoked and when it fetched again), and
the runner's markers (a member started, killed, paused ...). Every line of a protocol starts with its name, so that
two protocols' lines can interleave. The coordinator's events come from the front's log
(:class:`~zkconsumer.demo.front_log_follower.FrontLogFollower` calls :meth:`ProtocolsNarrator.coordinator_event`),
each group's to the protocol :attr:`ProtocolsNarrator.groups` names.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, TextIO

from zkconsumer.demo.modern_narration import InTimeOrder, ModernNarrator
from zkconsumer.demo.narration import RebalanceNarrator
from zkconsumer.demo.rebalance_demo import scene_heading
from zkconsumer.events import catalogue as ev
from zkconsumer.scenarios.model import Scene

_MARKERS: dict[str, str] = {
    ev.DEMO_MEMBER_STARTED: "started {consumer_id} (pid {pid})",
    ev.DEMO_MEMBER_KILLED: "killed {consumer_id} with {signal}",
    ev.DEMO_MEMBER_STOPPING: "asked {consumer_id} to leave (SIGTERM)",
    ev.DEMO_MEMBER_STOPPED: "{consumer_id} left",
    ev.DEMO_MEMBER_PAUSED: "froze {consumer_id} (SIGSTOP) for {seconds} s",
    ev.DEMO_MEMBER_RESUMED: "{consumer_id} continues (SIGCONT)",
    ev.DEMO_SESSION_EXPIRED: "expired {consumer_id}'s ZooKeeper session",
    ev.DEMO_PARTITIONS_ADDED: "topic {topic} now has {after} partitions (was {before})",
    ev.DEMO_MEMBER_DIED: "{consumer_id} exited on its own (status {returncode})",
    ev.DEMO_NOT_SETTLED: "scene {scene} did not settle: {note}",
    ev.DEMO_CUTOVER: "cut over: every legacy member stopped; they start again as modern members in the same "
                     "group (offsets: {offsets}, auto.offset.reset={reset})",
    ev.DEMO_OFFSETS_TRANSLATED: "exported {partitions} offsets of {group} from ZooKeeper, committed {written} to Kafka",
}


class ProtocolsNarrator:
    """A :class:`~zkconsumer.migration.run.PlayObserver` that prints; ``legacy`` names the protocols whose members
    are legacy ones (their events are the legacy steps)."""

    def __init__(self, out: TextIO, legacy: set[str], explain: bool = True) -> None:
        self.out = out
        self.legacy = legacy
        self.explain = explain
        self._lock = threading.Lock()
        self._scenes_told: set[int] = set()
        self._narrators: dict[str, RebalanceNarrator] = {}
        self._modern: dict[str, ModernNarrator] = {}
        #: group id -> the protocol whose group it is, for the coordinator's events; while a log follower delivers
        #: them, the modern members' events wait for it in _order, to be told in the order they happened
        self.groups: dict[str, str] = {}
        self._order = InTimeOrder()
        #: the demo's observers (:mod:`zkconsumer.demo.classroom`: the live page, the step mode), told every scene and
        #: event as they come, under the narration's lock: a step stop holds every protocol's player (the members and
        #: the servers run on)
        self.observers: tuple[Any, ...] = ()

    @property
    def held_s(self) -> float:
        """How long the observers held the play (a step mode's stops): the players leave it out of their settle
        limit."""
        return sum(float(getattr(observer, "held_s", 0.0)) for observer in self.observers)

    def scene(self, protocol: str, scene: Scene) -> None:
        with self._lock:
            if scene.number in self._scenes_told:
                return
            self._scenes_told.add(scene.number)
            for line in scene_heading(scene):
                self._say(line)
            for observer in self.observers:
                observer.scene_started(scene)

    def event(self, protocol: str, event: dict[str, Any]) -> None:
        self._tell_observers(event)
        name = str(event.get("event", ""))
        if name == ev.DEMO_CUTOVER:  # a move's members are legacy ones until its cutover, modern ones after
            self.legacy.discard(protocol)
        if name in _MARKERS:
            lines = [f"-> {_MARKERS[name].format_map(_Missing(event))}"]
        elif protocol in self.legacy:
            narrator = self._narrators.setdefault(protocol, RebalanceNarrator(explain=self.explain))
            lines = narrator.feed(event)
        else:
            self._modern_lines(protocol, event)
            return
        if not lines:
            return
        with self._lock:
            for line in lines:
                self._say(f"[{protocol}] {line}")

    def coordinator_event(self, event: dict[str, Any]) -> None:
        """One of the group coordinator's events (``front.group.*``, ``front.consumer_group.*``), told under the
        protocol whose group it names; another group's is none of this demo's."""
        protocol = self.groups.get(str(event.get("group")))
        if protocol is not None:
            self._tell_observers(event)
            with self._lock:
                self._order.add({**event, "_protocol": protocol})

    def _tell_observers(self, event: dict[str, Any]) -> None:
        if self.observers:
            with self._lock:
                for observer in self.observers:
                    observer.event(event)

    def caught_up(self, watermark: float) -> None:
        """The log follower read the coordinator's events up to ``watermark``: tell what happened until then."""
        with self._lock:
            for event in self._order.release(watermark):
                self._tell_modern(str(event["_protocol"]), event)

    def _modern_lines(self, protocol: str, event: dict[str, Any]) -> None:
        # the members' events (a player's thread) and the coordinator's (the log follower's) feed one narrator
        with self._lock:
            if self.groups:
                self._order.add({**event, "_protocol": protocol})
            else:
                self._tell_modern(protocol, event)

    def _tell_modern(self, protocol: str, event: Mapping[str, Any]) -> None:
        narrator = self._modern.setdefault(protocol, ModernNarrator(explain=self.explain))
        for line in narrator.feed(event):
            self._say(f"[{protocol}] {line[2:] if line.startswith('  ') else line}")

    def _say(self, line: str) -> None:
        self.out.write(line + "\n")
        self.out.flush()


class _Missing(dict[str, Any]):
    """An event's fields for a marker's text; a field the event lacks reads as ``?``."""

    def __missing__(self, key: str) -> str:
        return "?"
