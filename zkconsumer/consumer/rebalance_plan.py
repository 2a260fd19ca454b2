"""What one consumer should own after a rebalance, computed from a snapshot of its group (its step 5).

Pure: every member of a legacy group runs this same function over its own reading of ZooKeeper and claims
only its own share. Agreement between members rests entirely on their readings being equal; when they are not,
the claims conflict and the rebalance is retried. Keeping this a function of the snapshot is what lets tests,
the teaching demo and the comparison tools ask "what would the group do now" without running a consumer.

The group's decision is computed once per distinct input in a process (:func:`group_decision`, a small memo):
members that read the same group compute the same decision for every partition, and where one process runs many
members of a large group that decision is most of an attempt's CPU (twenty members of a 10,000-partition group
would each build the same 10,000-entry map in every attempt), taken under the interpreter's lock that their
ZooKeeper connections' threads wait for. Each member then takes its own share from the shared decision.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from zkconsumer.assignors import registry
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.errors import ZkConsumerError
from zkconsumer.group.snapshot import GroupSnapshot
from zkconsumer.types import TopicPartition, sorted_partitions, thread_id

#: ``partition.assignment.strategy`` values of the legacy consumer -> the assignor that implements each.
STRATEGIES = {"range": "legacy-range", "roundrobin": "legacy-roundrobin"}


class NotRegisteredError(ZkConsumerError):
    """Our own registration is not in the snapshot (it vanished, e.g. with an expired session)."""


@dataclass(frozen=True)
class RebalancePlan:
    consumer_id: str
    strategy: str
    members: tuple[str, ...]
    #: topic -> this consumer's thread ids for it
    my_threads: Mapping[str, tuple[str, ...]]
    #: this consumer's share: partition -> owning thread id, partitions in (topic, partition) order
    assignment: Mapping[TopicPartition, str]
    #: the whole group's decision for this consumer's topics: topic -> partition -> thread id
    global_assignment: Mapping[str, Mapping[int, str]]


@dataclass(frozen=True)
class GroupDecision:
    """The group's decision for one input, shared by every plan made from it (immutable)."""

    #: thread id -> its partitions, in the order the assignor lists them
    by_thread: Mapping[str, tuple[TopicPartition, ...]]
    #: topic -> partition -> thread id (``RebalancePlan.global_assignment``)
    everyone: Mapping[str, Mapping[int, str]]


#: what a decision depends on: the strategy, the partition counts of the deciding member's topics, and every member's
#: streams per topic, in the snapshot's order
DecisionKey = tuple[str, tuple[tuple[str, int], ...], tuple[tuple[str, tuple[tuple[str, int], ...]], ...]]


@functools.lru_cache(maxsize=8)
def group_decision(key: DecisionKey) -> GroupDecision:
    strategy, partitions, streams = key
    members = tuple(Member(cid, streams=dict(counts)) for cid, counts in streams)
    result = registry.create(strategy).assign(AssignmentInput(dict(partitions), members))
    everyone: dict[str, dict[int, str]] = {t: {} for t, _ in partitions}
    for thread, owned in result.assignment.items():
        for tp in owned:
            if tp.topic in everyone:
                everyone[tp.topic][tp.partition] = thread
    return GroupDecision(
        by_thread=result.assignment,
        everyone=MappingProxyType({t: MappingProxyType(dict(sorted(p.items()))) for t, p in everyone.items()}),
    )


def plan_rebalance(snapshot: GroupSnapshot, consumer_id: str, strategy: str = "range",
                   exclude_internal: bool = True) -> RebalancePlan:
    if consumer_id not in snapshot.members:
        raise NotRegisteredError(f"consumer {consumer_id} is not registered in group {snapshot.group}")
    streams = snapshot.streams_per_member(exclude_internal)
    my_topics = list(streams[consumer_id])
    # Like Kafka's AssignmentContext: partitions only of the topics this consumer subscribes to.
    partitions = tuple((t, len(snapshot.partitions.get(t, ()))) for t in my_topics)
    decision = group_decision((STRATEGIES.get(strategy, strategy), partitions,
                        tuple((cid, tuple(s.items())) for cid, s in streams.items())))
    threads = {t: tuple(thread_id(consumer_id, n) for n in range(count)) for t, count in streams[consumer_id].items()}
    mine = {tp: thread for thread in sorted({th for ths in threads.values() for th in ths})
            for tp in decision.by_thread.get(thread, ()) if tp.topic in decision.everyone}
    return RebalancePlan(
        consumer_id=consumer_id,
        strategy=strategy,
        members=tuple(snapshot.members),
        my_threads=MappingProxyType(threads),
        assignment=MappingProxyType({tp: mine[tp] for tp in sorted_partitions(mine)}),
        global_assignment=decision.everyone,
    )
