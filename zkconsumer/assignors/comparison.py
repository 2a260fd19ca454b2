"""One scenario under several strategies, reduced to the numbers a migration decision needs.

A team moving a ZooKeeper-era group to the modern protocol wants to know how unevenly work will be
spread (per member, and per thread for the legacy assignors that hand out work by thread), how many
members or threads sit idle, and how many partitions change hands relative to what members own now,
which is what a rebalance costs. For ``cooperative-sticky`` the rebalance is played out over its rounds,
because which partitions wait for a second round is the point of choosing it.

Every strategy also says how the members live through the same membership change (:class:`RebalanceOutcome`),
which is the eager vs incremental cooperative lesson of Kafka Connect (KIP-415) and KIP-429 told for consumer
groups: an eager protocol (the legacy ZooKeeper consumer, and ``range``, ``roundrobin``, ``sticky`` on the modern
one) first revokes everything every member owns, so every partition pauses, then assigns everything; the
cooperative one revokes first only the partitions that move and assigns them in a follow-up rebalance, the others
being fetched throughout. KIP-848's consumer protocol (``consumer-uniform``, ``consumer-range``) has no rebalance
barrier: the coordinator computes the target, each member drops what it loses, and a partition that moves is
handed to its new owner once its previous owner has let it go; partitions nobody owned are started at once.
For these, ``owned`` is the coordinator's current target assignment, which is also what ``moved`` counts against.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from zkconsumer.assignors.cooperative_sticky import CooperativeStickyAssignor, cooperative_rounds
from zkconsumer.assignors.group_spec import ServerSideAssignor
from zkconsumer.assignors.model import AssignmentError, AssignmentInput, AssignmentResult, Family
from zkconsumer.assignors.registry import StrategyOptions, create
from zkconsumer.assignors.sticky_general import balance_score
from zkconsumer.types import TopicPartition


@dataclass(frozen=True, slots=True)
class MemberView:
    member_id: str
    partitions: tuple[TopicPartition, ...]
    threads: Mapping[str, tuple[TopicPartition, ...]]


@dataclass(frozen=True, slots=True)
class CooperativePhases:
    """``revoked`` in the first rebalance (partition, member giving it up); ``assigned_later`` in follow-ups."""

    rounds: int
    revoked: tuple[tuple[TopicPartition, str], ...]
    assigned_later: tuple[tuple[TopicPartition, str], ...]


@dataclass(frozen=True, slots=True)
class RebalanceOutcome:
    """The membership change from what members own to the strategy's assignment, as the members live it.

    ``revoked_first``: (partition, member) pairs stopped before anything is assigned. ``assigned_after``: pairs
    started once they were revoked (eager: the whole assignment, in the same rebalance; cooperative: what moves,
    in the follow-up). ``kept_fetching``: partitions owned before and fetched throughout the rebalance."""

    protocol: str  # "eager", "cooperative" or "consumer" (KIP-848)
    rebalances: int
    revoked_first: tuple[tuple[TopicPartition, str], ...]
    assigned_after: tuple[tuple[TopicPartition, str], ...]
    kept_fetching: int


@dataclass(frozen=True, slots=True)
class StrategyReport:
    """Metrics of one strategy; for modern strategies every member is a single consumer thread."""

    strategy: str
    family: Family | None = None
    members: tuple[MemberView, ...] = ()
    member_spread: int = 0
    thread_spread: int = 0
    balance_score: int = 0
    idle_members: tuple[str, ...] = ()
    idle_threads: tuple[str, ...] = ()
    moved: int = 0
    cooperative: CooperativePhases | None = None
    error: str | None = None
    rebalance: RebalanceOutcome | None = None


def compare(
    request: AssignmentInput, strategies: tuple[str, ...], options: StrategyOptions | None = None
) -> tuple[StrategyReport, ...]:
    """Reports in the order asked; a strategy whose precondition fails reports its error instead."""
    reports = []
    for name in strategies:
        assignor = create(name, options)
        phases = None
        try:
            if isinstance(assignor, CooperativeStickyAssignor):
                rounds = cooperative_rounds(request)
                result = rounds[-1].assignment
                phases = CooperativePhases(
                    rounds=len(rounds),
                    revoked=rounds[0].revoked,
                    assigned_later=tuple(sorted(pair for r in rounds[1:] for pair in r.added)),
                )
            else:
                result = assignor.assign(request)
        except AssignmentError as exc:
            reports.append(StrategyReport(strategy=name, error=str(exc)))
            continue
        protocol = "consumer" if isinstance(assignor, ServerSideAssignor) else None
        reports.append(_report(request, result, phases, protocol))
    return tuple(reports)


def _report(
    request: AssignmentInput, result: AssignmentResult, phases: CooperativePhases | None, protocol: str | None = None
) -> StrategyReport:
    by_member = result.by_member(request.members)
    threads: dict[str, dict[str, tuple[TopicPartition, ...]]] = {m.member_id: {} for m in request.members}
    for owner, partitions in result.assignment.items():
        threads[result.owner_member[owner]][owner] = tuple(sorted(partitions))
    views = tuple(MemberView(m, by_member[m], threads[m]) for m in sorted(by_member))
    member_counts = [len(v.partitions) for v in views]
    thread_counts = [len(p) for v in views for p in v.threads.values()]

    final_owner = {tp: member for member, parts in by_member.items() for tp in parts}
    previous_owners: dict[TopicPartition, set[str]] = {}
    for member in request.members:
        for tp in member.owned:
            previous_owners.setdefault(tp, set()).add(member.member_id)
    moved = sum(
        1 for tp, owners in previous_owners.items() if tp in final_owner and final_owner[tp] not in owners
    )
    owned = tuple(sorted({(tp, m.member_id) for m in request.members for tp in m.owned}))
    if protocol == "consumer":
        rebalance = _reconciled(owned, by_member)
    elif phases is None:
        rebalance = RebalanceOutcome("eager", 1, owned, tuple(sorted(
            (tp, member) for member, parts in by_member.items() for tp in parts)), 0)
    else:
        revoked = {tp for tp, _ in phases.revoked}
        rebalance = RebalanceOutcome("cooperative", phases.rounds, phases.revoked, phases.assigned_later,
                                     len({tp for tp, _ in owned} - revoked))
    return StrategyReport(
        strategy=result.strategy,
        family=result.family,
        members=views,
        member_spread=_spread(member_counts),
        thread_spread=_spread(thread_counts),
        balance_score=balance_score(member_counts),
        idle_members=tuple(v.member_id for v in views if not v.partitions),
        idle_threads=tuple(t for v in views for t, p in v.threads.items() if not p),
        moved=moved,
        cooperative=phases,
        rebalance=rebalance,
    )


def _reconciled(
    owned: tuple[tuple[TopicPartition, str], ...], by_member: Mapping[str, tuple[TopicPartition, ...]]
) -> RebalanceOutcome:
    """KIP-848's reconciliation: members revoke what they lose; a partition taken from another member is
    started once that member has revoked it; kept partitions are fetched throughout."""
    target = {(tp, member) for member, parts in by_member.items() for tp in parts}
    held = {tp for tp, _ in owned}
    owned_pairs = set(owned)
    revoked = tuple(pair for pair in owned if pair not in target)
    waiting = tuple(sorted(pair for pair in target if pair[0] in held and pair not in owned_pairs))
    return RebalanceOutcome("consumer", 1, revoked, waiting, sum(1 for pair in owned if pair in target))


def _spread(counts: list[int]) -> int:
    return max(counts) - min(counts) if counts else 0


def format_partitions(partitions: Iterable[TopicPartition]) -> str:
    """``t0[0-2,5] t1[0]``: runs of consecutive partitions per topic, readable at a thousand partitions."""
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    parts = []
    for topic, numbers in by_topic.items():
        runs: list[list[int]] = []
        for n in sorted(numbers):
            if runs and n == runs[-1][1] + 1:
                runs[-1][1] = n
            else:
                runs.append([n, n])
        parts.append(f"{topic}[{','.join(str(a) if a == b else f'{a}-{b}' for a, b in runs)}]")
    return " ".join(parts) or "-"
