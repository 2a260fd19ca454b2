"""What a migration would change, per group: the analysis ``zkconsumer analyze fleet`` runs on Spark's executors.

Pure: one :class:`~zkconsumer.fleet.snapshot.GroupRecord` in, one :class:`GroupAnalysis` out, no I/O, so that it
runs wherever the group's line is (an executor, the benchmark's plain loop, a test) and gives the same numbers.

Today: the legacy assignment is recomputed from the registrations, with ``legacy-range`` and, when the members'
subscriptions allow it, ``legacy-roundrobin``; the one closer to the owner znodes found is the group's
(``legacy_strategy``; range on a tie: it is the default). Against it:

* ``unowned``: partitions of the subscribed topics with no owner znode (nobody consumes them);
* ``dead_owners``: owner znodes naming a thread of a consumer no longer registered (its session is gone or going;
  the partitions wait for it to expire);
* ``owned_twice``: partitions whose owner znode names a live thread other than the one the assignment gives them
  to: the owner still holds it while its assignee claims it, two threads of the group after one partition (the
  ownership conflict the legacy rebalance retries on);
* ``misassigned``: every owned partition whose owner differs from the recomputed assignment (dead or alive).

Tomorrow: :func:`zkconsumer.assignors.comparison.compare` runs ``range``, ``roundrobin``, ``sticky`` and
``cooperative-sticky`` on the same members, each live member owning what its threads own now, and the legacy
strategy as the baseline. Per strategy: ``spread`` (most minus fewest partitions per member), ``idle_members``,
``moved_partitions`` (partitions that change hands from today's live owners), and for cooperative-sticky
``revoked_first`` (what members give up in the first rebalance, before the follow-up assigns it) and ``rounds``.

``attention`` orders the groups an operator should look at first: the partitions not being consumed as they should
(unowned, owned by the dead, owned twice), plus one for each malformed znode and for a group that would not hold
still while it was read.
"""

from __future__ import annotations

from dataclasses import dataclass

from zkconsumer.assignors.comparison import StrategyReport, compare
from zkconsumer.assignors.model import AssignmentError, AssignmentInput, Member
from zkconsumer.assignors.registry import create
from zkconsumer.fleet.snapshot import GroupRecord
from zkconsumer.types import ConsumerThreadId, TopicPartition

MODERN_STRATEGIES = ("range", "roundrobin", "sticky", "cooperative-sticky")
LEGACY_STRATEGIES = ("legacy-range", "legacy-roundrobin")


@dataclass(frozen=True, slots=True)
class GroupRow:
    """A row of ``DIR/groups``."""

    group: str
    members: int  # registered consumer ids (a malformed registration still counts)
    threads: int  # consumer threads of the parsed registrations
    topics: int  # topics the members subscribe to
    partitions: int  # partitions of those topics
    owned: int  # owner znodes of those partitions
    unowned: int
    dead_owners: int
    owned_twice: int
    misassigned: int
    legacy_strategy: str
    offsets_storage: str
    committed_offsets: int
    malformed: int
    consistent: bool
    attention: int
    attention_reasons: str


@dataclass(frozen=True, slots=True)
class StrategyRow:
    """A row of ``DIR/strategies``: one strategy for one group. ``error`` when the strategy cannot assign it."""

    group: str
    strategy: str
    family: str
    spread: int
    thread_spread: int
    idle_members: int
    moved_partitions: int
    revoked_first: int | None  # cooperative-sticky only
    rounds: int
    error: str | None


@dataclass(frozen=True, slots=True)
class GroupAnalysis:
    group: GroupRow
    strategies: tuple[StrategyRow, ...]


def analyze_group(record: GroupRecord) -> GroupAnalysis:
    live = set(record.registered)
    owner_of: dict[TopicPartition, str] = {TopicPartition(o.topic, o.partition): o.thread for o in record.owners}
    owned_by: dict[str, list[TopicPartition]] = {}
    for tp, thread in sorted(owner_of.items()):
        owned_by.setdefault(ConsumerThreadId(thread).consumer, []).append(tp)
    subscribed = sorted({t for m in record.members for t in m.streams})
    partitions = {t: record.partitions.get(t, 0) for t in subscribed}
    universe = {TopicPartition(t, p) for t, count in partitions.items() for p in range(count)}

    legacy_members = tuple(Member(m.consumer_id, streams=m.streams) for m in record.members)
    legacy_name, legacy_owner = _legacy(AssignmentInput(partitions, legacy_members), owner_of)

    unowned = sum(1 for tp in universe if tp not in owner_of)
    dead = sum(1 for thread in owner_of.values() if ConsumerThreadId(thread).consumer not in live)
    owned_twice = sum(1 for tp, thread in owner_of.items()
                      if ConsumerThreadId(thread).consumer in live and legacy_owner.get(tp, thread) != thread)
    misassigned = sum(1 for tp, thread in owner_of.items() if legacy_owner.get(tp) != thread)
    reasons = [f"{count} {what}" for count, what in (
        (unowned, "unowned"), (dead, "owned by dead members"), (owned_twice, "owned twice"),
        (len(record.malformed), "malformed znodes")) if count]
    if not record.consistent:
        reasons.append("changed while read")
    row = GroupRow(
        group=record.group,
        members=len(record.registered),
        threads=record.threads,
        topics=len(subscribed),
        partitions=len(universe),
        owned=sum(1 for tp in owner_of if tp in universe),
        unowned=unowned,
        dead_owners=dead,
        owned_twice=owned_twice,
        misassigned=misassigned,
        legacy_strategy=legacy_name,
        offsets_storage=record.offsets_storage,
        committed_offsets=sum(1 for o in record.offsets if o.offset >= 0),
        malformed=len(record.malformed),
        consistent=record.consistent,
        attention=unowned + dead + owned_twice + len(record.malformed) + (0 if record.consistent else 1),
        attention_reasons=", ".join(reasons),
    )
    members = tuple(Member(m.consumer_id, topics=tuple(m.streams), streams=m.streams,
                           owned=tuple(owned_by.get(m.consumer_id, ()))) for m in record.members)
    reports = compare(AssignmentInput(partitions, members), (legacy_name, *MODERN_STRATEGIES))
    return GroupAnalysis(row, tuple(_strategy_row(record.group, report) for report in reports))


def _legacy(request: AssignmentInput, owner_of: dict[TopicPartition, str]) -> tuple[str, dict[TopicPartition, str]]:
    """The legacy strategy whose assignment is closest to the owners found, with its partition -> thread."""
    best: tuple[int, str, dict[TopicPartition, str]] | None = None
    for name in LEGACY_STRATEGIES:
        try:
            result = create(name).assign(request)
        except AssignmentError:
            continue  # roundrobin needs identical subscriptions
        assigned = {tp: thread for thread, tps in result.assignment.items() for tp in tps}
        differ = sum(1 for tp, thread in owner_of.items() if assigned.get(tp) != thread)
        if best is None or differ < best[0]:
            best = (differ, name, assigned)
    assert best is not None  # legacy-range assigns anything
    return best[1], best[2]


def _strategy_row(group: str, report: StrategyReport) -> StrategyRow:
    if report.error is not None:
        return StrategyRow(group, report.strategy, _family(report.strategy), 0, 0, 0, 0, None, 0, report.error)
    phases = report.cooperative
    return StrategyRow(
        group=group,
        strategy=report.strategy,
        family=report.family or _family(report.strategy),
        spread=report.member_spread,
        thread_spread=report.thread_spread,
        idle_members=len(report.idle_members),
        moved_partitions=report.moved,
        revoked_first=len(phases.revoked) if phases is not None else None,
        rounds=phases.rounds if phases is not None else 1,
        error=None,
    )


def _family(strategy: str) -> str:
    return "legacy" if strategy.startswith("legacy-") else "modern"
