"""KIP-848's server-side ``uniform`` assignor (``consumer-uniform``), as Kafka 4.x's group coordinator
runs it (``org.apache.kafka.coordinator.group.assignor.UniformAssignor``).

Two algorithms, chosen by the coordinator's subscription type:

- **homogeneous** (every member subscribes to the same topics): all subscribed partitions form one flat
  list, topics in the iteration order of a ``HashSet`` of their ids and partitions ascending. Members
  are walked in the members map's order, the first ``total % members`` of them getting one partition
  above ``total // members``; each keeps what its current *target* assignment holds up to that quota (its
  topics and partitions in their sets' iteration order) and gives up the rest; the partitions nobody
  holds, then the ones given up, are dealt out in flat-list order to the members still under quota, in
  map order. So the spare partitions of an uneven split go to the first members in map order, not to
  members that already hold them, and even a balanced group can move a partition.
- **heterogeneous**: members keep the partitions of topics they still subscribe to; the rest are dealt
  per topic (topics by partitions per subscriber, descending, then subscriber count, ascending, then id)
  to the least loaded subscriber (ties: map order); then bounded rounds (16 at most) move partitions
  from the most to the least loaded subscribers of each topic until no topic can be improved.

Stickiness is measured against the previous target assignment that the coordinator holds, not against
what members report owning. Only the rack-unaware path exists in Kafka 4.x's uniform assignor, so there
is nothing left out.
"""

from __future__ import annotations

from itertools import filterfalse

from zkconsumer.assignors.group_spec import GroupSpec, TargetAssignment, hash_set_order_of_ids
from zkconsumer.assignors.model import AssignmentError
from zkconsumer.assignors.topic_ids import Uuid

_MAX_ITERATION_COUNT = 16


def uniform_assign(spec: GroupSpec) -> TargetAssignment:
    """The new target assignment of every member of ``spec``."""
    if not spec.members:
        return {}
    if spec.homogeneous:
        return _homogeneous(spec)
    return _Heterogeneous(spec).build()


def _homogeneous(spec: GroupSpec) -> TargetAssignment:
    """The flat list is kept as runs of one topic's partitions (``unassigned``), and each member's quota is dealt
    from it by slices: the same order as one partition at a time, without a Python step per partition (a
    coordinator computes a target at every join: 1,000 members joining 100,000 partitions deal 10^8)."""
    topics = hash_set_order_of_ids(spec.members[0])
    if not topics:
        return {m.member_id: {} for m in spec.members}
    subscribed = set(topics)
    held: dict[Uuid, set[int]] = {topic_id: set() for topic_id in topics}
    for m in spec.members:
        for topic_id, parts in m.target:
            if topic_id in held:
                held[topic_id].update(parts)
    unassigned: list[tuple[Uuid, list[int]]] = []
    total = 0
    for topic_id in topics:
        count = spec.partition_count(topic_id)
        free = list(filterfalse(held[topic_id].__contains__, range(count)))
        if free:
            unassigned.append((topic_id, free))
        total += count

    minimum, extra = divmod(total, len(spec.members))
    result: dict[str, dict[Uuid, list[int]]] = {}
    unfilled: list[tuple[str, int]] = []
    for member in spec.members:
        quota = minimum
        if extra > 0:
            quota += 1
            extra -= 1
        kept: dict[Uuid, list[int]] = {}
        for topic_id, partitions in member.target:
            if topic_id not in subscribed:
                continue
            keep = min(quota, len(partitions))
            if keep:
                kept[topic_id] = list(partitions[:keep])
            if keep < len(partitions):
                unassigned.append((topic_id, list(partitions[keep:])))
            quota -= keep
        if quota > 0:
            unfilled.append((member.member_id, quota))
        result[member.member_id] = kept

    run, offset = 0, 0  # the next partition to deal: unassigned[run][1][offset]
    for member_id, quota in unfilled:
        kept = result[member_id]
        while quota > 0 and run < len(unassigned):
            topic_id, free = unassigned[run]
            dealt = free[offset:offset + quota]
            kept.setdefault(topic_id, []).extend(dealt)
            quota -= len(dealt)
            offset += len(dealt)
            if offset == len(free):
                run, offset = run + 1, 0
    if run < len(unassigned):
        raise AssignmentError("partitions were left unassigned")
    return {member_id: {t: frozenset(p) for t, p in topics_.items()} for member_id, topics_ in result.items()}


class _Heterogeneous:
    """``UniformHeterogeneousAssignmentBuilder``; members are numbered in map order."""

    def __init__(self, spec: GroupSpec) -> None:
        self.spec = spec
        self.members = [m.member_id for m in spec.members]
        self.sizes = [0] * len(self.members)
        self.subscribers: dict[Uuid, list[int]] = {}
        for index, member in enumerate(spec.members):
            for topic_id in member.subscribed:
                spec.partition_count(topic_id)
                self.subscribers.setdefault(topic_id, []).append(index)
        self.counts = {topic_id: spec.partition_count(topic_id) for topic_id in self.subscribers}
        self.owners = {topic_id: [-1] * count for topic_id, count in self.counts.items()}
        self.target: list[dict[Uuid, set[int]]] = [{} for _ in self.members]

    def build(self) -> TargetAssignment:
        if self.subscribers:
            self._keep_subscribed()
            self._assign_unassigned()
            self._balance()
        return {
            member_id: {t: frozenset(p) for t, p in self.target[index].items() if p}
            for index, member_id in enumerate(self.members)
        }

    def _topic_order(self, topic_ids: list[Uuid]) -> list[Uuid]:
        def key(topic_id: Uuid) -> tuple[float, int, Uuid]:
            subscribers = len(self.subscribers[topic_id])
            return (-(self.counts[topic_id] / subscribers), subscribers, topic_id)

        return sorted(topic_ids, key=key)

    def _keep_subscribed(self) -> None:
        for index, member in enumerate(self.spec.members):
            subscribed = set(member.subscribed)
            for topic_id, partitions in member.target:
                if topic_id not in subscribed:
                    continue
                self.target[index][topic_id] = set(partitions)
                self.sizes[index] += len(partitions)
                owners = self.owners[topic_id]
                for partition in partitions:
                    owners[partition] = index

    def _assign_unassigned(self) -> None:
        unassigned = {
            topic_id: [p for p, owner in enumerate(owners) if owner == -1] for topic_id, owners in self.owners.items()
        }
        balancer = _Balancer(self.sizes)
        for topic_id in self._topic_order([t for t, parts in unassigned.items() if parts]):
            balancer.initialize(self.subscribers[topic_id])
            for partition in unassigned[topic_id]:
                self._assign(topic_id, partition, balancer.next_least_loaded())

    def _assign(self, topic_id: Uuid, partition: int, index: int) -> None:
        owners = self.owners[topic_id]
        previous = owners[partition]
        if previous != -1:
            self.target[previous][topic_id].discard(partition)
            self.sizes[previous] -= 1
        self.target[index].setdefault(topic_id, set()).add(partition)
        owners[partition] = index
        self.sizes[index] += 1

    def _balance(self) -> None:
        topics = self._topic_order([t for t, subs in self.subscribers.items() if len(subs) >= 2])
        if not topics:
            return
        balancer = _Balancer(self.sizes)
        last_rebalanced = -1
        for _ in range(_MAX_ITERATION_COUNT):
            for position, topic_id in enumerate(topics):
                if position == last_rebalanced:
                    return  # a whole loop around the topics moved nothing
                if self._balance_topic(topic_id, balancer) > 0 or last_rebalanced == -1:
                    last_rebalanced = position

    def _balance_topic(self, topic_id: Uuid, balancer: _Balancer) -> int:
        if balancer.initialize(self.subscribers[topic_id]) <= 1:
            return 0
        owners = self.owners[topic_id]
        partitions = sorted(range(self.counts[topic_id]), key=lambda p: (owners[p], p))
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        for i, partition in enumerate(partitions):
            start.setdefault(owners[partition], i)
            end[owners[partition]] = i + 1
        moved = 0
        while not balancer.balanced():
            most = -1
            while True:
                most = balancer.next_most_loaded()
                if most == -1:
                    break
                if most not in end or end[most] - start[most] <= 0:
                    balancer.exclude_most_loaded()
                    continue
                break
            if most == -1:
                break
            end[most] -= 1
            partition = partitions[end[most]]
            least = balancer.next_least_loaded()
            if balancer.balanced():
                break
            self._assign(topic_id, partition, least)
            moved += 1
        return moved


class _Balancer:
    """``MemberAssignmentBalancer``: a least loaded range growing rightwards and a most loaded range
    growing leftwards over the subscribers sorted by load (ties: member index)."""

    def __init__(self, sizes: list[int]) -> None:
        self.sizes = sizes
        self.sorted: list[int] = []
        self.least_end = 0
        self.least_count = -1
        self.next_least = 0
        self.most_start = 0
        self.most_end = 0
        self.most_count = 1
        self.next_most = -1

    def initialize(self, members: list[int]) -> int:
        if not members:
            raise AssignmentError("cannot balance a topic without subscribers")
        sizes = self.sizes
        self.sorted = sorted(members, key=lambda m: (sizes[m], m))
        self.least_end = 0
        self.least_count = sizes[self.sorted[0]] - 1
        self.next_least = 0
        self.most_start = self.most_end = len(self.sorted)
        self.most_count = sizes[self.sorted[-1]] + 1
        self.next_most = len(self.sorted) - 1
        return sizes[self.sorted[-1]] - sizes[self.sorted[0]]

    def next_least_loaded(self) -> int:
        if self.next_least >= self.least_end:
            self.least_count += 1
            while self.least_end < len(self.sorted) and self.sizes[self.sorted[self.least_end]] == self.least_count:
                self.least_end += 1
            self.next_least = 0
        member = self.sorted[self.next_least]
        self.next_least += 1
        return member

    def next_most_loaded(self) -> int:
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_count = self.sizes[self.sorted[self.most_start - 1]]
            else:
                self.most_count -= 1
            while self.most_start > 0 and self.sizes[self.sorted[self.most_start - 1]] == self.most_count:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return -1
        member = self.sorted[self.next_most]
        self.next_most -= 1
        return member

    def exclude_most_loaded(self) -> None:
        i = self.next_most + 1
        self.sorted[i], self.sorted[self.most_end - 1] = self.sorted[self.most_end - 1], self.sorted[i]
        self.most_end -= 1

    def balanced(self) -> bool:
        return self.most_count - self.least_count <= 1
