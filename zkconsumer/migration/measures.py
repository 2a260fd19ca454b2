"""What one protocol's run cost, from what it recorded: its events (``docs/events.md``), the messages produced
and the messages its members delivered.

Pure: parsed events and records in, frozen dataclasses out.

*Fetching* is read from the events with one rule for both families, since the modern member speaks the legacy
steps' words (:mod:`zkconsumer.members.modern_member`): ``rebalance.stop_fetchers`` stops everything the
member fetched (from the moment the step began), ``rebalance.release`` stops the partitions it names,
``rebalance.completed`` makes ``owned`` what the member fetches, ``rebalance.listener_before_release`` (the
application's revoke work, :mod:`zkconsumer.members.revoke_cost`) stops everything the member fetched while it ran
(the member delivers nothing meanwhile) and resumes what it names ``kept``, ``session.expired`` drops what it names and
``consumer.shutting_down``, ``demo.member_killed``, ``demo.member_died`` and ``demo.member_stopped`` stop
everything. The group is *down*
while it fetches no partition at all, from the first fetch on: the downtime of a move from ZooKeeper, whose cutover
stops every member before the modern ones start. A partition is
*paused* while nobody fetches it, from the moment its last fetcher stopped to the next start: a partition that
was never fetched yet (the start of the run) is not paused, and what happens once the runner stops the script
(``demo.draining``: production stopped, the last members about to leave) is not counted. A pause, a rebalance,
an ownership change belong to the scene in which they began; a message to the scene in which it was produced.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from zkconsumer.events import catalogue as ev
from zkconsumer.trace.timeline import Event, build_timeline, partition_refs, rebalance_rounds

SCENE = ev.DEMO_SCENE
REVOKE_WORK = ev.REBALANCE_LISTENER_BEFORE_RELEASE
DRAINING = ev.DEMO_DRAINING
DIED = ev.DEMO_MEMBER_DIED
#: the member fetches nothing from here on: it is leaving, or its process is gone (a legacy member's rebalance under
#: way when it was told to stop may complete during its shutdown, its fetchers stopped again before it exits)
_STOP_ALL = (ev.CONSUMER_SHUTTING_DOWN, ev.DEMO_MEMBER_KILLED, DIED, ev.DEMO_MEMBER_STOPPED)


@dataclass(frozen=True, slots=True)
class Produced:
    """A message the broker acknowledged (its delivery report said so), and the scene it was produced in."""

    value: str
    partition: int
    scene: int
    offset: int = -1  # as the delivery report gave it (-1: not known, a run read back from its files)
    key: str | None = None  # as produced (None: no key, or not known)
    sequence: int = -1  # its number in the order produced (-1: not known)


@dataclass(frozen=True, slots=True)
class Delivery:
    """A message a member handed to its application."""

    member: str
    partition: int
    offset: int
    value: str
    at: float | None = None  # when, in wall-clock seconds (None: the member did not say)


@dataclass(frozen=True)
class Identity:
    """How a delivery is matched to what was produced: by where the message was written (partition, offset) when
    every delivery report gave its offset (the team's messages may repeat a value), else by value (a run read back
    from its files, where values are the runner's ``<protocol>:<n>``, unique)."""

    by_offset: bool

    def produced(self, m: Produced) -> Hashable:
        return (m.partition, m.offset) if self.by_offset else m.value

    def delivered(self, d: Delivery) -> Hashable:
        return (d.partition, d.offset) if self.by_offset else d.value


def identity(produced: Iterable[Produced]) -> Identity:
    return Identity(all(m.offset >= 0 for m in produced))


@dataclass(frozen=True, slots=True)
class DoubleOwnership:
    """A partition held by two members at once (``at``: seconds since the run began): ``new`` began to fetch it
    while ``old`` still did (``offset`` None: as their events say), or ``new`` delivered a message of it (``offset``)
    after its own fetching of it had ended, while ``old`` held it."""

    partition: int
    at: float
    old: str
    new: str
    offset: int | None = None


@dataclass(frozen=True, slots=True)
class Pause:
    """A partition fetched by nobody from ``start`` to ``end`` (seconds since the run began); ``end`` is None when
    nobody fetched it again before the run stopped (``unfinished``: counted up to the last event)."""

    partition: int
    start: float
    end: float | None
    before: str  # the member that fetched it last
    after: str | None  # the member that fetched it next
    scene: int

    def duration_s(self, last: float) -> float:
        return (self.end if self.end is not None else last) - self.start


@dataclass(frozen=True, slots=True)
class Figures:
    """The figures of a whole run or of one scene."""

    produced: int
    delivered: int
    lost: int
    duplicates: int
    rebalances: int
    failed_attempts: int
    partition_seconds_paused: float
    max_pause_ms: float
    paused_partitions: int
    moved_partitions: int
    settle_ms: float
    downtime_ms: float = 0.0  # time with no partition fetched by anyone (after the first fetch)


@dataclass(frozen=True, slots=True)
class SceneFigures:
    """``group_protocols``: each modern member running at the scene's end and the ``group.protocol`` it subscribed
    with (its ``consumer.subscribed``), by member: what an ``upgrade`` changed, as the members said it."""

    scene: int
    title: str
    start: float
    figures: Figures
    group_protocols: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class MemberFailure:
    """A member process that ended without being told to (``demo.member_died``)."""

    member: str
    time: float
    returncode: int | None
    reason: str | None = None  # what the member said before it ended (``consumer.fatal_error``), if anything


@dataclass(frozen=True, slots=True)
class ProtocolMeasures:
    protocol: str
    total: Figures
    scenes: tuple[SceneFigures, ...]
    pauses: tuple[Pause, ...]
    failures: tuple[MemberFailure, ...]
    end: float  # the last event, seconds since the run began
    double_ownership: tuple[DoubleOwnership, ...] = ()


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _duration_s(event: Event) -> float:
    value = event.fields.get("duration_ms")
    return max(float(value), 0.0) / 1000 if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


class _Fetching:
    """Who fetches which partition; records pauses and changes of owner as they happen."""

    def __init__(self, draining_at: float) -> None:
        self.by_member: dict[str, set[int]] = defaultdict(set)
        self.fetchers: dict[int, set[str]] = defaultdict(set)
        self.last_fetcher: dict[int, str] = {}
        self.open: dict[int, tuple[float, str, int]] = {}
        self.pauses: list[Pause] = []
        self.moves: list[tuple[float, int]] = []  # (time, scene)
        self.changes: list[tuple[float, int]] = []  # (time, +1 or -1): a partition's first fetcher came or last went
        self.draining_at = draining_at
        self.since: dict[tuple[str, int], float] = {}  # (member, partition): fetched since
        self.tenures: list[tuple[str, int, float, float]] = []  # (member, partition, start, end)
        self.overlaps: list[DoubleOwnership] = []

    def stop(self, member: str, partitions: Iterable[int], time: float, scene: int) -> None:
        for p in list(partitions):
            if p not in self.by_member[member]:
                continue
            self.by_member[member].discard(p)
            self.fetchers[p].discard(member)
            self.tenures.append((member, p, self.since.pop((member, p), time), time))
            if not self.fetchers[p]:
                self.changes.append((time, -1))
            if not self.fetchers[p] and time < self.draining_at:
                self.open[p] = (time, member, scene)

    def start(self, member: str, partitions: Iterable[int], time: float, scene: int) -> None:
        for p in partitions:
            if p in self.by_member[member]:
                continue
            self.overlaps.extend(DoubleOwnership(p, time, old, member) for old in sorted(self.fetchers[p]))
            self.by_member[member].add(p)
            if not self.fetchers[p]:
                self.changes.append((time, 1))
            self.fetchers[p].add(member)
            self.since[(member, p)] = time
            previous = self.last_fetcher.get(p)
            if previous is not None and previous != member:
                self.moves.append((time, scene))
            self.last_fetcher[p] = member
            opened = self.open.pop(p, None)
            if opened is not None:
                self.pauses.append(Pause(p, opened[0], time, opened[1], member, opened[2]))

    def late(self, deliveries: Iterable[tuple[Delivery, float]]) -> list[DoubleOwnership]:
        """Each delivery (with its time since the run began) of a partition its member did not fetch then, while
        another member did."""
        held = self.tenures + [(m, p, start, float("inf")) for (m, p), start in self.since.items()]
        found = []
        for d, at in deliveries:
            mine = any(m == d.member and p == d.partition and start <= at <= end for m, p, start, end in held)
            other = next((m for m, p, start, end in held
                          if m != d.member and p == d.partition and start <= at < end), None)
            if not mine and other is not None:
                found.append(DoubleOwnership(d.partition, at, other, d.member, d.offset))
        return found

    def down(self, until: float) -> list[tuple[float, float]]:
        """The spans, before ``until``, in which nobody fetched any partition, once some partition had been
        fetched."""
        spans: list[tuple[float, float]] = []
        fetched, began, down_since = 0, False, None
        for time, change in sorted(self.changes):
            if time >= until:
                break
            before, fetched = fetched, fetched + change
            began = began or fetched > 0
            if began and before > 0 and fetched == 0:
                down_since = time
            elif before == 0 and fetched > 0 and down_since is not None:
                spans.append((down_since, time))
                down_since = None
        if down_since is not None:
            spans.append((down_since, until))
        return spans

    def finish(self) -> tuple[Pause, ...]:
        unfinished = [Pause(p, start, None, before, None, scene) for p, (start, before, scene) in self.open.items()]
        return tuple(sorted(self.pauses + unfinished, key=lambda pause: (pause.start, pause.partition)))


def measure(protocol: str, events: Sequence[Event], produced: Sequence[Produced], deliveries: Sequence[Delivery],
            topic: str, group: str | None = None) -> ProtocolMeasures:
    """The figures of one protocol's run. ``topic`` is the run's topic (other topics' partitions are ignored);
    ``group``: the run's group, whose members' events name them ``<group>_<member>`` where their deliveries name
    them ``<member>``."""
    ordered = sorted(events, key=lambda e: (e.timestamp, e.line))
    if not ordered:
        empty = _figures(produced, deliveries, 0, 0, (), 0.0, [], 0.0, [])
        return ProtocolMeasures(protocol, empty, (), (), (), 0.0)
    timeline = build_timeline(ordered)
    origin: datetime = timeline.origin or ordered[0].timestamp

    def at(event: Event) -> float:
        return (event.timestamp - origin).total_seconds()

    scenes = [(at(e), _int(e.fields.get("scene")) or 0, str(e.fields.get("title") or "")) for e in ordered
              if e.name == SCENE]
    draining_at = min((at(e) for e in ordered if e.name == DRAINING), default=float("inf"))

    def scene_at(time: float) -> int:
        current = 0
        for start, number, _ in scenes:
            if start <= time:
                current = number
        return current

    fetching = _Fetching(draining_at)
    failures = []
    last_words: dict[str, str] = {}  # a member's fatal error, said before it ended
    running: list[tuple[float, str, str | None]] = []  # (time, member, group.protocol; None: it is gone)
    for event in ordered:
        member = event.consumer_id
        if member is None:
            continue
        time, name = at(event), event.name
        scene = scene_at(time)
        if name == ev.CONSUMER_SUBSCRIBED:
            running.append((time, member, str(event.fields.get("group_protocol") or "classic")))
        elif name in _STOP_ALL:
            running.append((time, member, None))
        if name == ev.REBALANCE_STOP_FETCHERS:
            start = time - _duration_s(event)
            fetching.stop(member, set(fetching.by_member[member]), start, scene_at(start))
        elif name == REVOKE_WORK:
            start = time - _duration_s(event)
            held = set(fetching.by_member[member])
            fetching.stop(member, held, start, scene_at(start))
            fetching.start(member, sorted(held & set(_partitions(event.fields.get("kept"), topic))), time, scene)
        elif name == ev.REBALANCE_RELEASE:
            fetching.stop(member, _partitions(event.fields.get("released"), topic), time - _duration_s(event), scene)
        elif name == ev.CONSUMER_FATAL_ERROR:
            last_words[member] = str(event.fields.get("reason") or "")
        elif name == ev.SESSION_EXPIRED:
            dropped = _partitions(event.fields.get("dropped"), topic)
            fetching.stop(member, set(dropped) | set(fetching.by_member[member]), time, scene)
        elif name in _STOP_ALL:
            fetching.stop(member, set(fetching.by_member[member]), time, scene)
            if name == DIED:
                failures.append(MemberFailure(member, time, _int(event.fields.get("returncode")),
                                              last_words.get(member)))
        elif name == ev.REBALANCE_COMPLETED:
            owned = set(_partitions(event.fields.get("owned"), topic))
            fetching.stop(member, fetching.by_member[member] - owned, time, scene)
            fetching.start(member, sorted(owned), time, scene)
    pauses = fetching.finish()
    prefix = f"{group}_" if group else ""
    timed = [(replace(d, member=prefix + d.member), d.at - origin.timestamp()) for d in deliveries if d.at is not None]
    double = tuple(sorted((replace(o, old=o.old.removeprefix(prefix), new=o.new.removeprefix(prefix))
                           for o in fetching.overlaps + fetching.late(timed)), key=lambda o: (o.at, o.partition)))
    end = timeline.end
    down = [(start, stop, scene_at(start)) for start, stop in fetching.down(min(draining_at, end))]
    rounds = [(r.start, r.end, sum(x.failed_attempts for x in r.rebalances))
              for r in rebalance_rounds(timeline) if r.start < draining_at]

    scene_figures = []
    for index, (start, number, title) in enumerate(scenes):
        stop = scenes[index + 1][0] if index + 1 < len(scenes) else draining_at
        in_scene = [r for r in rounds if start <= r[0] < stop]
        scene_pauses = [p for p in pauses if p.scene == number]
        settled = max([r[1] for r in in_scene] + [p.end if p.end is not None else end for p in scene_pauses],
                      default=start)
        scene_figures.append(SceneFigures(number, title, start, _figures(
            [m for m in produced if m.scene == number], deliveries, len(in_scene), sum(r[2] for r in in_scene),
            scene_pauses, end, [t for t, s in fetching.moves if s == number], (settled - start) * 1000,
            [d for d in down if d[2] == number]), _group_protocols(running, stop)))
    total = _figures(produced, deliveries, len(rounds), sum(r[2] for r in rounds), pauses, end,
                     [t for t, _ in fetching.moves], sum(s.figures.settle_ms for s in scene_figures), down)
    return ProtocolMeasures(protocol, total, tuple(scene_figures), pauses, tuple(failures), end, double)


def _group_protocols(running: Sequence[tuple[float, str, str | None]],
                     until: float) -> tuple[tuple[str, str], ...]:
    """Each member running at ``until`` and its group protocol, by member."""
    now: dict[str, str | None] = {}
    for time, member, protocol in running:
        if time <= until:
            now[member] = protocol
    return tuple(sorted((member, protocol) for member, protocol in now.items() if protocol is not None))


def _partitions(value: object, topic: str) -> list[int]:
    return [ref.partition for ref in partition_refs(value) if ref.topic == topic]


def _figures(produced: Sequence[Produced], deliveries: Sequence[Delivery], rebalances: int, failed_attempts: int,
             pauses: Sequence[Pause], end: float, moves: Sequence[float], settle_ms: float,
             down: Sequence[tuple[float, float, int]]) -> Figures:
    """Deliveries count for the messages in ``produced`` only: per scene, the messages produced in that scene.
    ``down``: the spans (start, end, scene) in which the group fetched nothing."""
    ids = identity(produced)
    wanted = {ids.produced(m) for m in produced}
    counts: Mapping[Hashable, int] = Counter(ids.delivered(d) for d in deliveries if ids.delivered(d) in wanted)
    durations = [p.duration_s(end) for p in pauses]
    return Figures(
        produced=len(wanted),
        delivered=len(counts),
        lost=len(wanted) - len(counts),
        duplicates=sum(n - 1 for n in counts.values()),
        rebalances=rebalances,
        failed_attempts=failed_attempts,
        partition_seconds_paused=round(sum(durations), 3),
        max_pause_ms=round(max(durations, default=0.0) * 1000, 1),
        paused_partitions=len({p.partition for p in pauses}),
        moved_partitions=len(moves),
        settle_ms=round(settle_ms, 1),
        downtime_ms=round(sum(end - start for start, end, _ in down) * 1000, 1),
    )
