"""Made-up groups that look like a ZooKeeper-era fleet, for the benchmark and tests (``snapshot --synthetic N``).

Deterministic for a seed: the same ``(n, seed)`` gives the same lines. The distributions, chosen to resemble what
such fleets hold (many small groups, a few big ones, most of them healthy), are:

* Topics: a pool of ``max(20, n // 4)`` topics named ``topic-<i>``; partition counts drawn from
  1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64 with weights 6, 10, 8, 14, 8, 14, 10, 12, 6, 8, 4 (per cent).
* Members per group: ``round(lognormal(mu=0.9, sigma=0.75))``, at least 1, at most 64 (median about 2.5, one group in
  a hundred above 14).
* Topics per group: 1 (60 %), 2 (25 %), 3 (10 %), 4 or 5 (5 %), drawn from the pool.
* Streams per topic per member: 1 (70 %), 2 (20 %), 4 (10 %), the same for every member of a group in 80 % of the
  groups, otherwise drawn per member.
* Subscriptions: every member static on the group's topics (90 %); a whitelist regex matching them (5 %); one
  member also subscribing to one more topic (5 %, the case the legacy round-robin refuses).
* Owners: what the legacy range assignment gives (a settled group), then, per group: 6 % have a member that died
  and still owns its partitions (its registration gone, its owner znodes not yet); 4 % have a partition unowned;
  2 % have a partition owned by a live thread other than its assignee (a rebalance caught half-way).
* Offsets: committed for every owned partition in ZooKeeper for ``zookeeper`` and ``both`` storages, which are
  drawn as zookeeper 75 %, both 12 %, kafka 8 %, none 5 %.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from types import MappingProxyType

from zkconsumer.assignors.legacy_range import LegacyRangeAssignor
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.fleet.snapshot import CommittedOffset, GroupRecord, Owner, Registration

PARTITION_COUNTS = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64)
PARTITION_WEIGHTS = (6, 10, 8, 14, 8, 14, 10, 12, 6, 8, 4)
READ_AT = "2026-01-01T00:00:00.000Z"


def synthetic_groups(n: int, seed: int = 0) -> Iterator[GroupRecord]:
    rng = random.Random(seed)
    pool = max(20, n // 4)
    counts = {f"topic-{i}": rng.choices(PARTITION_COUNTS, PARTITION_WEIGHTS)[0] for i in range(pool)}
    names = list(counts)
    width = len(str(max(n - 1, 0)))
    for index in range(n):
        yield _group(rng, f"group-{index:0{width}d}", names, counts)


def _group(rng: random.Random, group: str, names: list[str], counts: dict[str, int]) -> GroupRecord:
    size = max(1, min(64, round(math.exp(rng.gauss(0.9, 0.75)))))
    topics = sorted(rng.sample(names, rng.choices((1, 2, 3, rng.choice((4, 5))), (60, 25, 10, 5))[0]))
    shared_streams = rng.random() < 0.8
    streams = rng.choices((1, 2, 4), (70, 20, 10))[0]
    kind = rng.choices(("static", "whitelist", "extra"), (90, 5, 5))[0]
    members = []
    for m in range(size):
        count = streams if shared_streams else rng.choices((1, 2, 4), (70, 20, 10))[0]
        member_topics = list(topics)
        if kind == "extra" and m == 0:
            member_topics.append(rng.choice([t for t in names if t not in topics]))
        per_topic = dict.fromkeys(sorted(member_topics), count)
        if kind == "whitelist":
            subscription, pattern = {"|".join(topics): count}, "white_list"
        else:
            subscription, pattern = per_topic, "static"
        members.append(Registration(f"{group}_c{m}", pattern, MappingProxyType(subscription),
                                    MappingProxyType(per_topic)))
    partitions = {t: counts[t] for t in sorted({t for m in members for t in m.streams})}
    request = AssignmentInput(partitions, tuple(Member(m.consumer_id, streams=m.streams) for m in members))
    result = LegacyRangeAssignor().assign(request)
    owners = {tp: thread for thread, tps in result.assignment.items() for tp in tps}
    registered = [m.consumer_id for m in members]
    if size > 1 and rng.random() < 0.06:  # a member died; its owner znodes outlive it until its session expires
        dead = rng.randrange(size)
        members.pop(dead)
        registered.pop(dead)
    if owners and rng.random() < 0.04:
        owners.pop(rng.choice(sorted(owners)))
    if len(owners) > 1 and rng.random() < 0.02:
        first, second = rng.sample(sorted(owners), 2)
        if owners[first] != owners[second]:
            owners[first] = owners[second]
    storage = rng.choices(("zookeeper", "both", "kafka", "none"), (75, 12, 8, 5))[0]
    offsets: tuple[CommittedOffset, ...] = ()
    if storage in ("zookeeper", "both"):
        offsets = tuple(CommittedOffset(tp.topic, tp.partition, rng.randrange(1_000_000)) for tp in sorted(owners))
    return GroupRecord(
        group=group,
        read_at=READ_AT,
        registered=tuple(sorted(registered)),
        members=tuple(members),
        partitions=MappingProxyType(partitions),
        owners=tuple(Owner(tp.topic, tp.partition, thread) for tp, thread in sorted(owners.items())),
        offsets=offsets,
        offsets_storage=storage,
    )
