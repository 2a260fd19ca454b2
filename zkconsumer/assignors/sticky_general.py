"""The sticky assignors' "general" builder, for groups whose members subscribe to different topics.

Kafka's ``GeneralAssignmentBuilder`` keeps every owned partition still subscribed, gives each unassigned
partition to the least-loaded eligible member, then moves partitions from members holding two or more
than an eligible peer until no such move is left, avoiding moves that undo earlier ones
(``PartitionMovements``), and keeps the result only if its balance score improved. We make the same
decisions with cheaper bookkeeping: per-topic heaps for "least-loaded eligible member", and a balance
check that is a per-topic maximum instead of a scan of every partition for every member, recomputed
only after a move.

Difference from Kafka: a partition is handed back to its owner of an older generation only if that
member still subscribes to the topic; Kafka does not check, and could assign a partition to a member
that no longer subscribes to its topic.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from zkconsumer.assignors.java_hash import first_in_hash_order, java_string_hash, topic_partition_hash
from zkconsumer.assignors.model import AssignmentInput
from zkconsumer.assignors.partition_space import PartitionSpace
from zkconsumer.assignors.sticky_ownership import Ownership, generation_of


class _MoveSet:
    """A ``HashSet<TopicPartition>`` whose first element is Java's (capacity only ever grows)."""

    __slots__ = ("items", "capacity")

    def __init__(self) -> None:
        self.items: dict[int, None] = {}
        self.capacity = 16

    def add(self, pid: int) -> None:
        self.items[pid] = None
        if len(self.items) > self.capacity * 0.75:
            self.capacity *= 2


class _Movements:
    """``PartitionMovements``: where each moved partition came from, to refuse ping-pong moves."""

    def __init__(self, space: PartitionSpace) -> None:
        self.space = space
        self.topic_hashes = [java_string_hash(t) for t in space.topics]
        self.moves: dict[int, tuple[str, str]] = {}
        self.by_topic: dict[int, dict[tuple[str, str], _MoveSet]] = {}

    def _remove(self, pid: int) -> tuple[str, str]:
        pair = self.moves.pop(pid)
        topic = self.space.topic_index[pid]
        pairs = self.by_topic[topic]
        del pairs[pair].items[pid]
        if not pairs[pair].items:
            del pairs[pair]
        if not pairs:
            del self.by_topic[topic]
        return pair

    def _add(self, pid: int, pair: tuple[str, str]) -> None:
        self.moves[pid] = pair
        self.by_topic.setdefault(self.space.topic_index[pid], {}).setdefault(pair, _MoveSet()).add(pid)

    def move(self, pid: int, old: str, new: str) -> None:
        if pid in self.moves:
            source, _ = self._remove(pid)
            if source != new:
                self._add(pid, (source, new))
        else:
            self._add(pid, (old, new))

    def partition_to_move(self, pid: int, old: str, new: str) -> int:
        """Rather than move ``pid`` old -> new, move back one that went new -> old earlier, if any."""
        pairs = self.by_topic.get(self.space.topic_index[pid])
        if pairs is None:
            return pid
        if pid in self.moves:
            old = self.moves[pid][0]
        reverse = pairs.get((new, old))
        if reverse is None:
            return pid
        candidates = list(reverse.items)
        topic_hash = self.topic_hashes[self.space.topic_index[pid]]
        number = self.space.number
        hashes = [topic_partition_hash(topic_hash, number[c]) for c in candidates]
        return candidates[first_in_hash_order(hashes, reverse.capacity)]


def balance_score(counts: list[int]) -> int:
    """Kafka's score: the sum over member pairs of the difference in partition counts (0 is perfect)."""
    ordered = sorted(counts)
    n = len(ordered)
    return sum(c * (2 * i - n + 1) for i, c in enumerate(ordered))


def general_assign(
    request: AssignmentInput, space: PartitionSpace, ownership: Ownership, key: Callable[[str], str | bytes]
) -> dict[str, list[int]]:
    members = {m.member_id: m for m in request.members}
    order = ownership.order
    topic_of = space.topic_index
    n_topics = len(space.topics)
    index_of_topic = {t: i for i, t in enumerate(space.topics)}

    potential: dict[str, list[int]] = {}
    consumers_of: list[list[str]] = [[] for _ in range(n_topics)]
    for member_id in order:
        topics = [index_of_topic[t] for t in dict.fromkeys(members[member_id].subscription) if t in index_of_topic]
        potential[member_id] = topics
        for t in topics:
            consumers_of[t].append(member_id)
    subscribed = {m: set(ts) for m, ts in potential.items()}

    # Owners of an older generation, to hand partitions back to them first when rebalancing.
    max_generation = max(generation_of(m) for m in request.members)
    previous: dict[int, tuple[str, int]] = {}
    for member_id in order:
        generation = generation_of(members[member_id])
        if generation < max_generation:
            for tp in members[member_id].owned:
                pid = space.id_of(tp)
                if pid is not None and (pid not in previous or generation > previous[pid][1]):
                    previous[pid] = (member_id, generation)

    current: dict[str, list[int]] = {}
    owner: dict[int, str] = {}
    assigned: set[int] = set()
    revocation_required = False
    for member_id in order:
        kept = []
        for pid in ownership.owned[member_id]:
            owner[pid] = member_id
            if topic_of[pid] in subscribed[member_id]:
                kept.append(pid)
            else:
                revocation_required = True
        current[member_id] = kept
        assigned.update(kept)

    topic_order = sorted(range(n_topics), key=lambda t: (len(consumers_of[t]), t))
    all_partitions = [pid for t in topic_order for pid in space.ids_of_topic(t)]
    unassigned = [pid for pid in all_partitions if pid not in assigned]
    initializing = not assigned

    # Least-loaded eligible member, ties by member id: counts only grow here, so stale heap entries are
    # simply refreshed when they surface.
    heaps: dict[int, list[tuple[int, str | bytes, str]]] = {}
    for pid in unassigned:
        t = topic_of[pid]
        heap = heaps.get(t)
        if heap is None:
            heap = [(len(current[m]), key(m), m) for m in consumers_of[t]]
            heapq.heapify(heap)
            heaps[t] = heap
        while True:
            count, k, member_id = heap[0]
            if count == len(current[member_id]):
                break
            heapq.heapreplace(heap, (len(current[member_id]), k, member_id))
        current[member_id].append(pid)
        owner[pid] = member_id

    def shared(pid: int) -> bool:
        return len(consumers_of[topic_of[pid]]) >= 2

    def can_participate(member_id: str) -> bool:
        mine = current[member_id]
        if len(mine) < sum(space.counts[space.topics[t]] for t in potential[member_id]):
            return True
        return any(shared(pid) for pid in mine)

    participating = [m for m in order if can_participate(m)]
    reassignable = [pid for pid in all_partitions if shared(pid)]
    reassignable_new = [pid for pid in unassigned if shared(pid)]
    before = {m: list(current[m]) for m in participating}
    movements = _Movements(space)
    state: dict[str, bool | None] = {"balanced": None}

    def is_balanced() -> bool:
        cached = state["balanced"]
        if cached is not None:
            return cached
        counts = [len(current[m]) for m in participating]
        result = True
        if counts and min(counts) < max(counts) - 1:
            # Unbalanced iff some member could take a partition of one of its topics from a member holding
            # two or more than it: compare, per topic, the most loaded holder with each subscriber.
            most_loaded = [-1] * n_topics
            for m in participating:
                c = len(current[m])
                for pid in current[m]:
                    if c > most_loaded[topic_of[pid]]:
                        most_loaded[topic_of[pid]] = c
            result = not any(
                most_loaded[t] > len(current[m]) + 1 for m in participating for t in potential[m]
            )
        state["balanced"] = result
        return result

    def move(pid: int, new: str) -> None:
        pid = movements.partition_to_move(pid, owner[pid], new)
        old = owner[pid]
        movements.move(pid, old, new)
        current[old].remove(pid)
        current[new].append(pid)
        owner[pid] = new
        state["balanced"] = None

    def perform(partitions: list[int]) -> bool:
        performed = False
        modified = True
        while modified:
            modified = False
            for pid in partitions:
                if is_balanced():
                    break
                holder = owner[pid]
                load = len(current[holder])
                prev = previous.get(pid)
                if prev is not None and topic_of[pid] in subscribed[prev[0]] and load > len(current[prev[0]]) + 1:
                    move(pid, prev[0])
                    performed = modified = True
                    continue
                candidates = consumers_of[topic_of[pid]]
                if min(len(current[m]) for m in candidates) < load - 1:
                    target = min(candidates, key=lambda m: (len(current[m]), key(m)))
                    move(pid, target)
                    performed = modified = True
        return performed

    if not revocation_required:
        perform(reassignable_new)
    performed = perform(reassignable)
    if (
        not initializing
        and performed
        and balance_score([len(current[m]) for m in participating])
        >= balance_score([len(before[m]) for m in participating])
    ):
        for m in participating:
            current[m] = before[m]
    return current
