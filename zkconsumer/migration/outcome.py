"""A comparison's result as values a test asserts on: per protocol, what was produced, delivered, lost and
delivered twice (and where: partitions, offsets, members), what the group paused and moved, where its page, events and
application state are, and what the application failed on; with assertion helpers whose failure is one sentence
naming the protocol, how many messages, which partitions and offsets.

Pure: the measures and the run's records in, frozen dataclasses out. :mod:`zkconsumer.migration.comparison` builds
it after a run; :mod:`zkconsumer.testing` hands it to tests.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zkconsumer.members.application import FAILED_EVENT, delivery_text
from zkconsumer.migration.measures import Delivery, DoubleOwnership, Figures, MemberFailure, Produced, identity

#: at most this many offsets per partition in a sentence; the rest are counted
SHOWN_OFFSETS = 8


@dataclass(frozen=True, slots=True)
class Lost:
    """A message produced (acknowledged by the broker) that no member handed to the application."""

    partition: int
    offset: int  # -1 when the producer's report did not give it
    value: str


@dataclass(frozen=True, slots=True)
class Duplicate:
    """A message the members handed to the application more than once: ``times``, by ``members`` in order."""

    partition: int
    offset: int
    value: str
    times: int
    members: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ApplicationFailure:
    """A message (or a hook, ``hook``) the application raised on: how often, whether the member gave it up, the
    last error."""

    member: str
    partition: int | None
    offset: int | None
    attempts: int
    gave_up: bool
    error: str
    hook: str | None = None


@dataclass(frozen=True, slots=True)
class ProtocolOutcome:
    """One protocol's run: the figures of ``report.json`` and what lies behind them."""

    protocol: str
    produced: int
    delivered: int
    lost: int
    duplicates: int
    partition_seconds_paused: float
    longest_pause_ms: float
    rebalances: int
    moved_partitions: int
    lost_messages: tuple[Lost, ...]
    duplicated: tuple[Duplicate, ...]
    application_failures: tuple[ApplicationFailure, ...]
    member_failures: tuple[MemberFailure, ...]
    error: str | None  # the run stopped early, and why
    events: Path  # the protocol's events.jsonl
    state_dir: Path  # the application's own directory under this protocol
    # every message produced (acknowledged), for the state checks; left out of the repr
    produced_messages: tuple[Produced, ...] = field(default=(), repr=False)
    # a modern group's coordinator, by name and version (``Apache Kafka 4.4.0``, ``zkconsumer 0.1.0 (the front)``),
    # which every failure of the protocol names; None for a legacy group (ZooKeeper and its members)
    coordinator: str | None = None
    # every delivery, each member's in its order, for the order checks; left out of the repr
    delivered_messages: tuple[Delivery, ...] = field(default=(), repr=False)
    # the group's committed offsets by partition once its members left; None: not read (``committed_error`` says why)
    committed: Mapping[int, int] | None = None
    committed_error: str | None = None
    # every moment a partition was held by two members at once (:class:`~zkconsumer.migration.measures.DoubleOwnership`)
    double_ownership: tuple[DoubleOwnership, ...] = ()
    # time in which the group fetched no partition at all (a move's cutover stops every member), in ms
    downtime_ms: float = 0.0

    @property
    def named(self) -> str:
        """The protocol as a failure names it: ``range (at Apache Kafka 4.4.0)``."""
        return self.protocol if self.coordinator is None else f"{self.protocol} (at {self.coordinator})"


@dataclass(frozen=True, slots=True)
class ComparisonResult:
    """Every protocol's outcome, in the order played, and the report's files."""

    protocols: Mapping[str, ProtocolOutcome]
    report: Path  # report.json
    page: Path  # report.html

    def __getitem__(self, protocol: str) -> ProtocolOutcome:
        return self.protocols[protocol]

    def assert_nothing_lost(self) -> None:
        """Every protocol played to the end and delivered every message produced to the application."""
        for o in self.protocols.values():
            if o.error is not None:
                raise AssertionError(f"{o.named} stopped early: {o.error}")
            if o.lost:
                raise AssertionError(f"{o.named} lost {o.lost} of {o.produced} messages: "
                                     f"{where((m.partition, m.offset) for m in o.lost_messages)}"
                                     + _failures_note(o))

    def assert_duplicates_at_most(self, limit: int) -> None:
        """No protocol delivered more than ``limit`` messages again."""
        for o in self.protocols.values():
            if o.duplicates > limit:
                raise AssertionError(f"{o.named} delivered {o.duplicates} duplicates, more than {limit}: "
                                     f"{where((d.partition, d.offset) for d in o.duplicated)}")

    def assert_paused_at_most(self, *, partition_seconds: float | None = None,
                              longest_ms: float | None = None) -> None:
        """No protocol paused its partitions for more than ``partition_seconds`` in all, nor one for longer than
        ``longest_ms``."""
        for o in self.protocols.values():
            if partition_seconds is not None and o.partition_seconds_paused > partition_seconds:
                raise AssertionError(f"{o.named} paused partitions for {o.partition_seconds_paused:g} "
                                     f"partition-seconds, more than {partition_seconds:g}")
            if longest_ms is not None and o.longest_pause_ms > longest_ms:
                raise AssertionError(f"{o.named} paused a partition for {o.longest_pause_ms:g} ms, longer than "
                                     f"{longest_ms:g} ms")

    def assert_downtime_at_most(self, ms: float) -> None:
        """No protocol's group went without fetching any partition for more than ``ms`` in all (a move's cutover,
        an eager rebalance of every member)."""
        for o in self.protocols.values():
            if o.downtime_ms > ms:
                raise AssertionError(f"{o.named} fetched no partition at all for {o.downtime_ms:g} ms, more than "
                                     f"{ms:g} ms")

    def assert_no_application_failures(self) -> None:
        """The application raised on nothing, under any protocol."""
        for o in self.protocols.values():
            if o.application_failures:
                first = o.application_failures[0]
                raise AssertionError(f"{o.named}: the application raised on {len(o.application_failures)} "
                                     f"messages or hooks, first {_failure_place(first)}: {first.error}")

    def assert_rebalances_at_most(self, limit: int) -> None:
        """No protocol's group went through more than ``limit`` rebalances (rounds, as the report counts them)."""
        for o in self.protocols.values():
            if o.rebalances > limit:
                raise AssertionError(f"{o.named} rebalanced {o.rebalances} times, more than {limit}")

    def assert_order_per_key(self, read: Callable[[Path], Iterable[tuple[Any, Any]]] | None = None) -> None:
        """Within each key, messages were seen in the order produced (:func:`out_of_order` says precisely what counts
        as out of order; seeing a message again, as a rebalance replays from the committed offset, does not).
        Without ``read``: the members' deliveries, in the order they handed them to the application (all members'
        in one sequence by the times they wrote, each member's apart where a member wrote none). With
        ``read(state_dir)``: the ``(key, value)`` pairs the application kept, in the order it processed them (an
        application that buffers and reorders shows only there)."""
        for o in self.protocols.values():
            found = (_state_out_of_order(o, read(o.state_dir)) if read is not None
                     else _deliveries_out_of_order(o))
            if found:
                count, first = found
                raise AssertionError(f"{o.named}: {'the application processed' if read else 'its members delivered'} "
                                     f"{count} message{'s' if count > 1 else ''} out of order within their key, first "
                                     f"{first}")

    def assert_no_double_ownership(self) -> None:
        """No partition was held by two members at once: as the members' events say (a member began to fetch a
        partition another still fetched) and as their deliveries say (a member delivered a message of a partition
        after its own fetching of it had ended, while another member held it)."""
        for o in self.protocols.values():
            if not o.double_ownership:
                continue
            first = o.double_ownership[0]
            partitions = sorted({d.partition for d in o.double_ownership})
            what = (f"{first.new} began to fetch partition {first.partition} at {first.at:.3f} s while {first.old} "
                    f"still did" if first.offset is None else
                    f"{first.new} delivered partition {first.partition} offset {first.offset} at {first.at:.3f} s, "
                    f"after its own fetching of it had ended, while {first.old} held it")
            raise AssertionError(f"{o.named} had partition{'s' if len(partitions) > 1 else ''} "
                                 f"{', '.join(map(str, partitions))} held by two members at once "
                                 f"({len(o.double_ownership)} times): first {what}")

    def assert_committed_equals_consumed(self) -> None:
        """At the end, each group's committed offset of every partition is one past the last offset its members
        delivered (the next to consume), and nothing is committed where nothing was delivered."""
        for o in self.protocols.values():
            if o.committed is None:
                raise AssertionError(f"{o.named}: its committed offsets could not be read ({o.committed_error})")
            wrong = committed_against_consumed(o.committed, o.delivered_messages)
            if wrong:
                shown = "; ".join(wrong[:SHOWN_OFFSETS]) + (f" and {len(wrong) - SHOWN_OFFSETS} more"
                                                            if len(wrong) > SHOWN_OFFSETS else "")
                raise AssertionError(f"{o.named} committed other than it consumed on {len(wrong)} "
                                     f"partition{'s' if len(wrong) > 1 else ''}: {shown}")

    def assert_state_complete(self, read: Callable[[Path], Iterable[str | bytes]]) -> None:
        """The application's own state accounts for every message: ``read(state_dir)`` gives the values it kept
        (as produced, ``<protocol>:<sequence>``), and every value produced under the protocol must be among them."""
        for o in self.protocols.values():
            kept = {v.decode() if isinstance(v, bytes) else v for v in read(o.state_dir)}
            missing = [m for m in o.produced_messages if m.value not in kept]
            if missing:
                raise AssertionError(f"{o.named}: the application lost {len(missing)} of {o.produced} messages "
                                     f"(not in its state): {where((m.partition, m.offset) for m in missing)}")

    def assert_same_state(self, read: Callable[[Path], Any]) -> None:
        """``read(state_dir)`` is the same under every protocol (the application built the same state)."""
        states = {name: read(o.state_dir) for name, o in self.protocols.items()}
        first, *others = states
        for name in others:
            if states[name] != states[first]:
                raise AssertionError(f"the application's state under {name} differs from under {first}: "
                                     f"{_difference(states[first], states[name])}")


def outcome(protocol: str, total: Figures, produced: Sequence[Produced], deliveries: Sequence[Delivery],
            events: Sequence[Mapping[str, Any]], failures: Sequence[MemberFailure], error: str | None,
            events_path: Path, state_dir: Path, coordinator: str | None = None,
            committed: Mapping[int, int] | None = None, committed_error: str | None = None,
            double_ownership: Sequence[DoubleOwnership] = ()) -> ProtocolOutcome:
    """One protocol's outcome from its figures (:func:`zkconsumer.migration.measures.measure`), what was produced
    and delivered, and its events (for the application's failures: ``application.failed``); ``coordinator``: a
    modern group's, by name and version; ``committed``: its offsets once its members left."""
    ids = identity(produced)
    wanted = {ids.produced(m) for m in produced}
    by_message: dict[Any, list[Delivery]] = defaultdict(list)
    for d in deliveries:
        if ids.delivered(d) in wanted:
            by_message[ids.delivered(d)].append(d)
    lost = tuple(Lost(m.partition, m.offset, m.value) for m in produced if ids.produced(m) not in by_message)
    duplicated = tuple(Duplicate(ds[0].partition, ds[0].offset, ds[0].value, len(ds), tuple(d.member for d in ds))
                       for ds in by_message.values() if len(ds) > 1)
    return ProtocolOutcome(
        protocol=protocol, produced=total.produced, delivered=total.delivered, lost=total.lost,
        duplicates=total.duplicates, partition_seconds_paused=total.partition_seconds_paused,
        longest_pause_ms=total.max_pause_ms, rebalances=total.rebalances, moved_partitions=total.moved_partitions,
        lost_messages=tuple(sorted(lost, key=lambda m: (m.partition, m.offset))),
        duplicated=tuple(sorted(duplicated, key=lambda d: (d.partition, d.offset))),
        application_failures=application_failures(events), member_failures=tuple(failures), error=error,
        events=events_path, state_dir=state_dir, produced_messages=tuple(produced), coordinator=coordinator,
        delivered_messages=tuple(deliveries), committed=None if committed is None else dict(committed),
        committed_error=committed_error, double_ownership=tuple(double_ownership),
        downtime_ms=total.downtime_ms)


def out_of_order(sightings: Iterable[tuple[Hashable, int]]) -> list[tuple[int, int]]:
    """The sightings that are out of order within their key: each as (its index in ``sightings``, the later
    position of its key seen before it).

    A sighting is ``(key, position)``: a message of ``key`` seen (delivered, processed), ``position`` its place
    among its key's messages in the order produced. A sighting is out of order when its message is seen for the
    first time after a message of its key produced later was seen. Seeing a message again is not: a rebalance
    replays a partition from its committed offset, a suffix of what was seen, and then goes on in order (those are
    duplicates, :meth:`ComparisonResult.assert_duplicates_at_most`). A key's messages skipped are not either (they
    are lost, :meth:`ComparisonResult.assert_nothing_lost`)."""
    seen: dict[Hashable, set[int]] = defaultdict(set)
    latest: dict[Hashable, int] = {}
    found = []
    for index, (key, position) in enumerate(sightings):
        if position in seen[key]:
            continue
        top = latest.get(key, -1)
        if position < top:
            found.append((index, top))
        else:
            latest[key] = position
        seen[key].add(position)
    return found


def key_positions(produced: Sequence[Produced]) -> dict[Produced, int]:
    """Each keyed message's place among its key's messages, in the order produced (its sequence number, else where
    it was written)."""
    by_key: dict[str, list[Produced]] = defaultdict(list)
    for m in produced:
        if m.key is not None:
            by_key[m.key].append(m)
    return {m: n for ms in by_key.values()
            for n, m in enumerate(sorted(ms, key=lambda m: (m.sequence, m.partition, m.offset)))}


def _deliveries_out_of_order(o: ProtocolOutcome) -> tuple[int, str] | None:
    """The members' deliveries in one sequence, by their times, where every member gave them (the application is all
    of its members: a new owner's first messages must not be older than what the old one handed over); else each
    member's apart, in its own order."""
    positions = key_positions(o.produced_messages)
    ids = identity(o.produced_messages)
    by_id = {ids.produced(m): m for m in positions}
    timed = bool(o.delivered_messages) and all(d.at is not None for d in o.delivered_messages)
    ordered = sorted(o.delivered_messages, key=lambda d: d.at or 0.0) if timed else o.delivered_messages
    sequences: dict[str, list[tuple[str, Produced]]] = defaultdict(list)
    for d in ordered:
        m = by_id.get(ids.delivered(d))
        if m is not None:
            sequences["" if timed else d.member].append((d.member, m))
    count, first = 0, None
    for seen in sequences.values():
        found = out_of_order((m.key, positions[m]) for _, m in seen)
        if found and first is None:
            index, top = found[0]
            member, m = seen[index]
            later = next(x for x in positions if x.key == m.key and positions[x] == top)
            first = (f"key {m.key!r}: partition {m.partition} offset {m.offset} after offset {later.offset}, by "
                     f"{member}")
        count += len(found)
    return None if first is None else (count, first)


def _state_out_of_order(o: ProtocolOutcome, kept: Iterable[tuple[Any, Any]]) -> tuple[int, str] | None:
    positions = key_positions(o.produced_messages)
    candidates: dict[tuple[str, str], list[int]] = defaultdict(list)
    values: dict[tuple[str, int], str] = {}
    for m, n in sorted(positions.items(), key=lambda item: item[1]):
        assert m.key is not None  # key_positions keeps keyed messages only
        candidates[(m.key, m.value)].append(n)
        values[(m.key, n)] = m.value
    taken: dict[str, set[int]] = defaultdict(set)
    sightings: list[tuple[str, int]] = []
    for raw_key, raw_value in kept:
        key, value = _text(raw_key), _text(raw_value)
        places = candidates.get((key, value)) if key is not None and value is not None else None
        if key is None or not places:
            continue  # not a keyed message produced under this protocol
        fresh = [n for n in places if n not in taken[key]]
        position = fresh[0] if fresh else places[0]
        taken[key].add(position)
        sightings.append((key, position))
    found = out_of_order(sightings)
    if not found:
        return None
    index, top = found[0]
    key, position = sightings[index]
    return len(found), f"key {key!r}: value {values[(key, position)]!r} after value {values[(key, top)]!r}"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return delivery_text(value) if isinstance(value, bytes) else str(value)


def committed_against_consumed(committed: Mapping[int, int], deliveries: Iterable[Delivery]) -> list[str]:
    """Each partition whose committed offset is not one past the last offset delivered, in words."""
    last: dict[int, int] = {}
    for d in deliveries:
        last[d.partition] = max(d.offset, last.get(d.partition, -1))
    wrong = []
    for p in sorted(set(last) | set(committed)):
        expected, got = (last[p] + 1 if p in last else None), committed.get(p)
        if got == expected:
            continue
        consumed = f"consumed up to offset {last[p]} ({expected} expected)" if p in last else "nothing consumed"
        wrong.append(f"partition {p} {'nothing' if got is None else got} committed, {consumed}")
    return wrong


def application_failures(events: Iterable[Mapping[str, Any]]) -> tuple[ApplicationFailure, ...]:
    """The ``application.failed`` events folded per message (or hook) and member: attempts, given up, last error."""
    folded: dict[tuple[Any, ...], ApplicationFailure] = {}
    for e in events:
        if e.get("event") != FAILED_EVENT:
            continue
        member, hook = str(e.get("consumer_id") or ""), e.get("hook")
        partition, offset = e.get("partition"), e.get("offset")
        key = (member, hook, partition, offset)
        before = folded.get(key)
        folded[key] = ApplicationFailure(
            member, partition if isinstance(partition, int) else None, offset if isinstance(offset, int) else None,
            (before.attempts if before else 0) + 1, bool(e.get("gave_up")), str(e.get("error") or ""),
            str(hook) if hook else None)
    return tuple(folded.values())


def where(places: Iterable[tuple[int, int]]) -> str:
    """``partition 0 offsets 3, 13 and 23; partition 2 offset 7`` (at most :data:`SHOWN_OFFSETS` offsets a
    partition, then how many more)."""
    offsets: dict[int, list[int]] = defaultdict(list)
    for partition, offset in places:
        offsets[partition].append(offset)
    parts = []
    for partition in sorted(offsets):
        found = sorted(offsets[partition])
        shown = ", ".join(str(o) if o >= 0 else "?" for o in found[:SHOWN_OFFSETS])
        more = f" and {len(found) - SHOWN_OFFSETS} more" if len(found) > SHOWN_OFFSETS else ""
        parts.append(f"partition {partition} offset{'s' if len(found) > 1 else ''} {shown}{more}")
    return "; ".join(parts)


def _failure_place(failure: ApplicationFailure) -> str:
    if failure.hook is not None:
        return f"its {failure.hook} hook in {failure.member}"
    return (f"partition {failure.partition} offset {failure.offset} in {failure.member} ({failure.attempts} "
            f"attempt{'s' if failure.attempts > 1 else ''}{', given up' if failure.gave_up else ''})")


def _failures_note(o: ProtocolOutcome) -> str:
    given_up = [f for f in o.application_failures if f.gave_up and f.hook is None]
    if not given_up:
        return ""
    return f" ({len(given_up)} given up after the application raised on every attempt: {given_up[0].error})"


def _difference(a: Any, b: Any) -> str:
    """What differs between two states, briefly: for mappings the first keys that differ, else both reprs."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        keys = sorted((k for k in set(a) | set(b) if a.get(k) != b.get(k)), key=str)
        shown = ", ".join(f"{k!r}: {a.get(k)!r} against {b.get(k)!r}" for k in keys[:5])
        return f"{len(keys)} keys differ ({shown}{', ...' if len(keys) > 5 else ''})"
    if isinstance(a, Iterable) and isinstance(b, Iterable) and not isinstance(a, (str, bytes)):
        ca, cb = Counter(a), Counter(b)
        return f"{sum((ca - cb).values())} items only in the first, {sum((cb - ca).values())} only in the second"
    return f"{a!r} against {b!r}"
