"""``zkconsumer demo --topic-placement``: where the demo topic's partitions and their leaders would sit on a small
ZooKeeper-mode cluster, and why.

The demo itself runs on one broker, where every partition has the same leader. On a real ZooKeeper-era cluster
``kafka-topics.sh --zookeeper`` placed the replicas (Kafka's ``AdminUtils.assignReplicasToBrokers``), and the
placement decided which broker each consumer thread's fetcher talks to. This view computes that placement with
:mod:`zkconsumer.admin.replica_placement` for three brokers in two racks, with a fixed start index so the lesson is
the same every time, and tells it in words. Pure: lines out.
"""

from __future__ import annotations

from zkconsumer.admin.replica_placement import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    leader_counts,
    partitions_to_add,
    rack_alternated_brokers,
)

#: the cluster of the lesson: two brokers in one rack, one in the other
LESSON_BROKERS = (BrokerMetadata(1, "rack-a"), BrokerMetadata(2, "rack-a"), BrokerMetadata(3, "rack-b"))
LESSON_REPLICATION_FACTOR = 2
LESSON_START_INDEX = 0


def placement_lines(topic: str, partitions: int, added: int = 0, brokers: tuple[BrokerMetadata, ...] = LESSON_BROKERS,
                    replication_factor: int = LESSON_REPLICATION_FACTOR,
                    start_index: int = LESSON_START_INDEX) -> list[str]:
    """The lesson for a topic of ``partitions``, then ``added`` more as ``topics alter --zookeeper`` adds them."""
    racks = {b.id: b.rack for b in brokers if b.rack is not None}
    order = rack_alternated_brokers(racks)
    created = assign_replicas_to_brokers(sorted(brokers), partitions, replication_factor, start_index)
    grown = partitions_to_add(created, sorted(brokers), partitions + added) if added else {}
    assignment = {**created, **grown}
    rack_names = sorted(set(racks.values()))
    members = {rack: ", ".join(str(b) for b in sorted(i for i, r in racks.items() if r == rack)) for rack in rack_names}
    lines = [
        f"Where topic {topic!r} ({partitions} partitions, replication factor {replication_factor}) would sit on a "
        f"ZooKeeper-mode cluster of {len(brokers)} brokers in {len(rack_names)} racks",
        "(as `kafka-topics.sh --zookeeper` placed it: AdminUtils.assignReplicasToBrokers, start index "
        f"{start_index})",
        "",
        "  racks:  " + "; ".join(f"{rack}: brokers {members[rack]}" for rack in rack_names),
        "  walk:   " + " -> ".join(f"{b} ({racks[b]})" for b in order) + "   (one broker from each rack in turn)",
        "",
        f"  {'partition':<{len(topic) + 6}} leader  replicas  racks",
    ]
    for partition, replicas in sorted(assignment.items()):
        note = "   (added later: the walk goes on from partition 0's leader)" if partition in grown else ""
        lines.append(f"  {f'{topic}-{partition}':<{len(topic) + 6}} {replicas[0]:<7} "
                     f"{','.join(str(b) for b in replicas):<9} {','.join(str(racks[b]) for b in replicas)}{note}")
    counts = leader_counts(assignment)
    busiest, (_, most) = max(counts.items(), key=lambda item: item[1][1])
    lines += [
        "",
        "  leads:  " + ", ".join(f"broker {b} {lead}" for b, (lead, _) in counts.items())
        + "; holds: " + ", ".join(f"broker {b} {held}" for b, (_, held) in counts.items()),
        "",
        "Why: partition p's leader is broker number (p + start index) of the walk, so leadership goes round the",
        "racks and every broker leads about as many partitions as the others. Each further replica is taken along",
        "a walk shifted by the partition's round, skipping a broker whose rack already holds a replica while some",
        "rack holds none: every partition has a copy in each rack, so losing a whole rack loses no partition.",
        f"That is why broker {busiest} ({racks[busiest]}) holds {most} of the {sum(h for _, h in counts.values())} "
        "replicas: a rack with fewer brokers",
        "keeps the same share of the copies on fewer machines.",
        "The consumer thread that owns a partition fetches from its leader, so this placement is also how the",
        "fetching load of a group spreads over the brokers.",
    ]
    return lines
