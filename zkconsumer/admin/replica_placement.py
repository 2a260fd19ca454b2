"""Where a topic's partitions and their replicas go: Kafka's ``AdminUtils.assignReplicasToBrokers``, as
``kafka-topics.sh --zookeeper`` computed it on the client before Kafka 2.2. Pure.

The placement decides which broker leads each partition (the first replica is the preferred leader), and so which
broker a legacy consumer's fetcher talks to for it. The rules, reproduced exactly:

* **Rack-unaware.** Brokers sorted by id. A start index and a replica shift, both random, or both the fixed start
  index when one is given. Partition ``p``'s first replica is broker ``(p + start) % n``; the shift grows by one
  each time the partition id wraps the broker count, and replica ``j`` (after the first) sits at
  ``(first + 1 + (shift + j) % (n - 1)) % n``. So leaders are spread evenly, and the followers of consecutive
  partitions are spread too.
* **Rack-aware.** Brokers alternated by rack (racks sorted, brokers sorted within each: one from each rack in turn),
  the same walk with the shift multiplied by the number of racks, skipping a broker whose rack already holds a
  replica of the partition while some rack holds none, or which already holds one while some broker holds none.
* **Adding partitions** continues the existing topic: the start index is where partition 0's first replica sits
  among the sorted brokers, the first new id is the current partition count, the replication factor that of
  partition 0.
* **Errors** as Kafka raised them: partitions or replication factor not positive, a replication factor larger than
  the broker count, only some brokers with a rack (unless rack awareness is disabled), a manual assignment with
  duplicate or unknown brokers or unequal replication factors.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from zkconsumer.errors import UsageError

Assignment = dict[int, list[int]]


class AdminOperationError(UsageError):
    """A placement or assignment Kafka's admin tools refused (``AdminOperationException`` and its relatives)."""


class RackAwareMode(Enum):
    """How racks are used (Kafka's ``RackAwareMode``): ``ENFORCED`` refuses brokers with and without racks mixed,
    ``SAFE`` then ignores racks, ``DISABLED`` always ignores them (``--disable-rack-aware``)."""

    ENFORCED = "enforced"
    SAFE = "safe"
    DISABLED = "disabled"


@dataclass(frozen=True, order=True)
class BrokerMetadata:
    """A broker as placement sees it: its id and its rack (``None`` without one)."""

    id: int
    rack: str | None = None


def broker_metadatas(brokers: Sequence[BrokerMetadata],
                     mode: RackAwareMode = RackAwareMode.ENFORCED) -> list[BrokerMetadata]:
    """The brokers placement works on, sorted by id (Kafka's ``getBrokerMetadatas``)."""
    with_rack = [b for b in brokers if b.rack is not None]
    if mode is RackAwareMode.ENFORCED and with_rack and len(with_rack) < len(brokers):
        raise AdminOperationError("Not all brokers have rack information. Add --disable-rack-aware in command line "
                                  "to make replica assignment without rack information.")
    if mode is RackAwareMode.DISABLED or (mode is RackAwareMode.SAFE and len(with_rack) < len(brokers)):
        brokers = [BrokerMetadata(b.id) for b in brokers]
    return sorted(brokers, key=lambda b: b.id)


def assign_replicas_to_brokers(brokers: Sequence[BrokerMetadata], partitions: int, replication_factor: int,
                               fixed_start_index: int = -1, start_partition_id: int = -1,
                               rng: random.Random | None = None) -> Assignment:
    """Partition id -> its replicas, the first the preferred leader (Kafka's ``assignReplicasToBrokers``).

    ``brokers`` as :func:`broker_metadatas` returns them. ``fixed_start_index`` < 0 draws the start index and the
    replica shift from ``rng`` (a fresh ``random.Random()`` when none is given), as Kafka did.
    """
    if partitions <= 0:
        raise AdminOperationError("number of partitions must be larger than 0")
    if replication_factor <= 0:
        raise AdminOperationError("replication factor must be larger than 0")
    if replication_factor > len(brokers):
        raise AdminOperationError(f"replication factor: {replication_factor} larger than available brokers: "
                                  f"{len(brokers)}")
    rng = rng or random.Random()
    if all(b.rack is None for b in brokers):
        return _rack_unaware(partitions, replication_factor, [b.id for b in brokers], fixed_start_index,
                             start_partition_id, rng)
    if any(b.rack is None for b in brokers):
        raise AdminOperationError("Not all brokers have rack information for replica rack aware assignment")
    racks = {b.id: b.rack for b in brokers if b.rack is not None}
    return _rack_aware(partitions, replication_factor, racks, fixed_start_index, start_partition_id, rng)


def _start(count: int, fixed_start_index: int, rng: random.Random) -> tuple[int, int]:
    """The start index and the first replica shift: both the fixed index, or two draws in Kafka's order."""
    if fixed_start_index >= 0:
        return fixed_start_index, fixed_start_index
    start = rng.randrange(count)
    return start, rng.randrange(count)


def _walk(partitions: int, count: int, fixed_start_index: int, start_partition_id: int,
          rng: random.Random) -> Iterator[tuple[int, int, int]]:
    """(partition id, index of its first replica, replica shift) for each new partition: the leaders go round the
    ``count`` brokers from the start index, and the shift grows by one each time the partition id wraps them."""
    start, shift = _start(count, fixed_start_index, rng)
    partition = max(0, start_partition_id)
    for _ in range(partitions):
        if partition > 0 and partition % count == 0:
            shift += 1
        yield partition, (partition + start) % count, shift
        partition += 1


def _replica_index(first: int, shift: int, j: int, count: int) -> int:
    return (first + 1 + (shift + j) % (count - 1)) % count


def _rack_unaware(partitions: int, replication_factor: int, broker_ids: list[int], fixed_start_index: int,
                  start_partition_id: int, rng: random.Random) -> Assignment:
    n = len(broker_ids)
    result: Assignment = {}
    for partition, first, shift in _walk(partitions, n, fixed_start_index, start_partition_id, rng):
        replicas = [broker_ids[first]]
        replicas += [broker_ids[_replica_index(first, shift, j, n)] for j in range(replication_factor - 1)]
        result[partition] = replicas
    return result


def rack_alternated_brokers(racks: Mapping[int, str]) -> list[int]:
    """One broker from each rack in turn, racks in name order, brokers by id within a rack (Kafka's
    ``getRackAlternatedBrokerList``): ``{0: r1, 1: r3, 2: r3, 3: r2, 4: r2, 5: r1}`` -> ``[0, 3, 1, 5, 4, 2]``."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in racks.items():
        by_rack.setdefault(rack, []).append(broker)
    queues = [sorted(by_rack[rack]) for rack in sorted(by_rack)]
    result: list[int] = []
    depth = 0
    while len(result) < len(racks):
        result += [queue[depth] for queue in queues if depth < len(queue)]
        depth += 1
    return result


def _rack_aware(partitions: int, replication_factor: int, racks: Mapping[int, str], fixed_start_index: int,
                start_partition_id: int, rng: random.Random) -> Assignment:
    arranged = rack_alternated_brokers(racks)
    n, rack_count = len(arranged), len(set(racks.values()))
    result: Assignment = {}
    for partition, first, shift in _walk(partitions, n, fixed_start_index, start_partition_id, rng):
        leader = arranged[first]
        replicas, racks_used, brokers_used = [leader], {racks[leader]}, {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = arranged[_replica_index(first, shift * rack_count, k, n)]
                rack = racks[broker]
                k += 1
                # A rack already used while some rack has none, or a broker already used while some broker has
                # none, is skipped.
                if (rack not in racks_used or len(racks_used) == rack_count) and \
                        (broker not in brokers_used or len(brokers_used) == n):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
        result[partition] = replicas
    return result


def partitions_to_add(existing: Mapping[int, Sequence[int]], brokers: Sequence[BrokerMetadata],
                      total_partitions: int, rng: random.Random | None = None) -> Assignment:
    """The new partitions of a topic grown to ``total_partitions`` (Kafka's ``addPartitions`` without a manual
    assignment): the walk continues from where partition 0's leader sits, with partition 0's replication factor.

    Kafka looks the leader up among the brokers sorted by id, and uses that position as the start index even
    for the rack-alternated list, so a rack-aware topic's new leaders need not continue the old round-robin; the
    shift restarts from the start index too, so partitions added over several calls differ from the same ones
    placed in one call as soon as the ids wrap the broker count. Both are kept: they are what the legacy tool
    wrote, and what a cluster created with it holds."""
    if not existing:
        raise AdminOperationError("The topic does not exist")
    if 0 not in existing:
        raise AdminOperationError("the topic does not have partition with id 0, it should never happen")
    to_add = total_partitions - len(existing)
    if to_add <= 0:
        raise AdminOperationError("The number of partitions for a topic can only be increased")
    leader = existing[0][0]
    by_id = sorted(brokers, key=lambda b: b.id)
    start = next((i for i, b in enumerate(by_id) if b.id >= leader), 0)
    return assign_replicas_to_brokers(by_id, to_add, len(existing[0]), start, len(existing), rng)


_INT32 = range(-2**31, 2**31)
_JAVA_TRIMMED = "".join(chr(code) for code in range(33))  # String.trim drops every character up to the space


def _java_split(text: str, separator: str) -> list[str]:
    """``String.split`` as Java does it: trailing empty pieces are dropped (``"0:1,"`` is one partition), except
    that a text without the separator is returned whole (``""`` is one empty piece)."""
    pieces = text.split(separator)
    if len(pieces) == 1:
        return pieces
    while pieces and pieces[-1] == "":
        pieces.pop()
    return pieces


def _broker_ids(entry: str, partition: int) -> list[int]:
    """One partition's ``b1:b2:...``, each id as ``Integer.parseInt`` of the trimmed text accepts it (ASCII digits
    with an optional sign, 32 bits; Python's ``int`` would also take ``1_0`` and other scripts' digits)."""
    pieces = [piece.strip(_JAVA_TRIMMED) for piece in _java_split(entry, ":")]
    if not pieces or not all(re.fullmatch(r"[+-]?[0-9]+", piece) for piece in pieces) \
            or not all(int(piece) in _INT32 for piece in pieces):
        raise AdminOperationError(f"--replica-assignment: partition {partition} ({entry.strip()!r}) is not a "
                                  f"colon-separated list of broker ids")
    return [int(piece) for piece in pieces]


def _partition_entries(text: str) -> list[str]:
    entries = _java_split(text, ",")
    if not entries:
        raise AdminOperationError(f"--replica-assignment {text!r} lists no partitions")
    return entries


def parse_replica_assignment(text: str) -> Assignment:
    """``--replica-assignment`` of ``topics create``: partitions separated by commas, each partition's brokers by
    colons (``0:1,1:2`` = partition 0 on brokers 0 and 1, partition 1 on 1 and 2). Kafka's
    ``TopicCommand.parseReplicaAssignment``, with a readable error where it threw NumberFormatException (or
    wrote a partition without replicas, for an entry of colons alone)."""
    result: Assignment = {}
    for partition, entry in enumerate(_partition_entries(text)):
        brokers = _broker_ids(entry, partition)
        duplicates = sorted({b for b in brokers if brokers.count(b) > 1})
        if duplicates:
            raise AdminOperationError("Partition replica lists may not contain duplicate entries: "
                                      + ",".join(str(b) for b in duplicates))
        if len(brokers) != len(result.get(0, brokers)):
            raise AdminOperationError(f"Partition {partition} has different replication factor: {brokers}")
        result[partition] = brokers
    return result


def check_manual_assignment(assignment: Mapping[int, Sequence[int]], broker_ids: set[int],
                            replication_factor: int | None = None) -> None:
    """A manual assignment's brokers exist, none is listed twice for a partition, and every partition has the same
    replication factor: the checks of Kafka's ``getManualReplicaAssignment``, in its order (partition by
    partition, each against the first), then, when ``replication_factor`` is given (partitions added to a
    topic), ``addPartitions``' check against the topic's own."""
    first: int | None = None
    for partition, replicas in sorted(assignment.items()):
        if not replicas:
            raise AdminOperationError("replication factor must be larger than 0")
        if len(set(replicas)) != len(replicas):
            raise AdminOperationError(f"duplicate brokers in replica assignment: {list(replicas)}")
        if not set(replicas) <= broker_ids:
            raise AdminOperationError(f"some specified brokers not available. specified brokers: {list(replicas)} "
                                      f"available brokers: {sorted(broker_ids)}")
        first = len(replicas) if first is None else first
        if len(replicas) != first:
            raise AdminOperationError(f"partition {partition} has different replication factor: {list(replicas)}")
    if replication_factor is not None and first is not None and first != replication_factor:
        raise AdminOperationError("The replication factor in manual replication assignment is not equal to the "
                                  f"existing replication factor for the topic {replication_factor}")


def manual_partitions_to_add(text: str, existing_count: int) -> Assignment:
    """``topics alter --replica-assignment``: the string lists every partition, old ones included; the new ones
    are its tail, numbered from ``existing_count``. As Kafka's ``getManualReplicaAssignment``, the old entries
    are skipped unread; the tail is only parsed here, :func:`check_manual_assignment` checks it. A string with no
    tail is refused (Kafka 0.10 then added nothing and reported success)."""
    entries = _partition_entries(text)[existing_count:]
    if not entries:
        raise AdminOperationError(f"--replica-assignment lists no partition after the {existing_count} the topic "
                                  f"has")
    return {partition: _broker_ids(entry, partition)
            for partition, entry in enumerate(entries, start=existing_count)}


def leader_counts(assignment: Mapping[int, Sequence[int]]) -> dict[int, tuple[int, int]]:
    """Broker -> (partitions it leads, replicas it holds): the table ``topics place`` shows."""
    counts: dict[int, list[int]] = {}
    for replicas in assignment.values():
        for position, broker in enumerate(replicas):
            entry = counts.setdefault(broker, [0, 0])
            entry[1] += 1
            if position == 0:
                entry[0] += 1
    return {broker: (lead, held) for broker, (lead, held) in sorted(counts.items())}
