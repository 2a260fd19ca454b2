"""What one consumer should own after a rebalance, computed from a snapshot of its group (its step 5).

Pure: every member of a legacy group runs this same function over its own reading of ZooKeeper and claims
only its own share. Agreement between members rests entirely on their readings being equal; when they are not,
the claims conflict and the rebalance is retried. Keeping this a function of the snapshot is what lets tests,
the teaching demo and the comparison tools ask "what would the group do now" without running a consumer.
"""

from __future__ import annotations

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


def plan_rebalance(snapshot: GroupSnapshot, consumer_id: str, strategy: str = "range",
                   exclude_internal: bool = True) -> RebalancePlan:
    if consumer_id not in snapshot.members:
        raise NotRegisteredError(f"consumer {consumer_id} is not registered in group {snapshot.group}")
    streams = snapshot.streams_per_member(exclude_internal)
    my_topics = list(streams[consumer_id])
    members = tuple(Member(cid, streams=s) for cid, s in streams.items())
    # Like Kafka's AssignmentContext: partitions only of the topics this consumer subscribes to.
    request = AssignmentInput({t: len(snapshot.partitions.get(t, ())) for t in my_topics}, members)
    result = registry.create(STRATEGIES.get(strategy, strategy)).assign(request)
    mine: dict[TopicPartition, str] = {}
    everyone: dict[str, dict[int, str]] = {t: {} for t in my_topics}
    for thread, partitions in result.assignment.items():
        for tp in partitions:
            if tp.topic not in everyone:
                continue
            everyone[tp.topic][tp.partition] = thread
            if result.owner_member[thread] == consumer_id:
                mine[tp] = thread
    threads = {t: tuple(thread_id(consumer_id, n) for n in range(count)) for t, count in streams[consumer_id].items()}
    return RebalancePlan(
        consumer_id=consumer_id,
        strategy=strategy,
        members=tuple(snapshot.members),
        my_threads=MappingProxyType(threads),
        assignment=MappingProxyType({tp: mine[tp] for tp in sorted_partitions(mine)}),
        global_assignment=MappingProxyType({t: MappingProxyType(dict(sorted(p.items()))) for t, p in everyone.items()}),
    )
