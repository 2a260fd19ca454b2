"""How fast our assignors are, next to kafka-python's StickyPartitionAssignor on the same inputs.

Run: ``.venv/bin/python benchmarks/assignors.py [--quick] [--repeat N] [--server-only]``. Each line gives the best of
N runs of ``assign`` alone (inputs are built outside the timing; kafka-python gets its user data as
objects, so it is not charged for decoding either), the ratio kafka-python / ours, and the issue's
target. ``--quick`` skips kafka-python on the 1,000-member inputs, where it needs tens of seconds.
This is a benchmark, not a test: nothing here fails on slowness.

The last section times KIP-848's server-side ``consumer-uniform`` and ``consumer-range`` (``--server-only``
runs just that): there is no Python peer to compare with, since Kafka runs them inside the broker's group
coordinator. "One member leaves" feeds the fresh result back as the coordinator's target assignment.
"""

from __future__ import annotations

import argparse
import platform
import random
import time
from collections import namedtuple
from collections.abc import Callable
from dataclasses import replace

from bench_support import machine

from zkconsumer.assignors import AssignmentInput, AssignmentResult, Member, create
from zkconsumer.assignors.sticky_general import balance_score

try:
    from kafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
    from kafka.structs import TopicPartition as KafkaTopicPartition
except ImportError:  # kafka-python is a test extra
    StickyPartitionAssignor = None

_KafkaMember = namedtuple("_KafkaMember", "member_id metadata")


class _Cluster:
    """The two calls kafka-python's sticky assignor makes on ClusterMetadata."""

    def __init__(self, partitions: dict[str, int]) -> None:
        self._partitions = partitions

    def topics(self, exclude_internal_topics: bool = True) -> set[str]:
        return set(self._partitions)

    def partitions_for_topic(self, topic: str) -> set[int] | None:
        count = self._partitions.get(topic)
        return None if count is None else set(range(count))


def kafka_python_run(request: AssignmentInput) -> Callable[[], object]:
    cluster = _Cluster(dict(request.partitions))
    members = [
        _KafkaMember(m.member_id, StickyPartitionAssignor._metadata(
            list(m.subscription),
            [KafkaTopicPartition(tp.topic, tp.partition) for tp in m.owned] if m.owned else None,
            -1 if m.generation is None else m.generation,
        ))
        for m in request.members
    ]
    return lambda: StickyPartitionAssignor().assign(cluster, members)


def ours_run(strategy: str, request: AssignmentInput) -> Callable[[], object]:
    assignor = create(strategy)
    return lambda: assignor.assign(request)


def best_of(run: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def quality(request: AssignmentInput, counts_and_sets: dict[str, set[tuple[str, int]]]) -> str:
    """Balance score (sum of pairwise count differences) and partitions moved away from their owner."""
    counts = [len(parts) for parts in counts_and_sets.values()]
    moved = sum(1 for m in request.members for tp in m.owned
                if (tp.topic, tp.partition) not in counts_and_sets[m.member_id])
    return f"{balance_score(counts)}/{moved}"


def ours_sets(result: AssignmentResult) -> dict[str, set[tuple[str, int]]]:
    return {m: {(tp.topic, tp.partition) for tp in parts} for m, parts in result.assignment.items()}


def theirs_sets(result: dict) -> dict[str, set[tuple[str, int]]]:
    return {m: {(tp.topic, tp.partition) for tp in a.partitions()} for m, a in result.items()}


def uniform(members: int, topics: int, partitions: int) -> AssignmentInput:
    names = [f"topic{t:02d}" for t in range(topics)]
    return AssignmentInput({t: partitions for t in names},
                           tuple(Member(f"consumer-{i:04d}", topics=tuple(names)) for i in range(members)))


def half_subscriptions(members: int, topics: int, partitions: int, seed: int = 7) -> AssignmentInput:
    rng = random.Random(seed)
    names = [f"topic{t:02d}" for t in range(topics)]
    return AssignmentInput({t: partitions for t in names}, tuple(
        Member(f"consumer-{i:04d}", topics=tuple(sorted(rng.sample(names, topics // 2)))) for i in range(members)))


def legacy(consumers: int, streams: int, topics: int, partitions: int) -> AssignmentInput:
    names = [f"topic{t:02d}" for t in range(topics)]
    return AssignmentInput({t: partitions for t in names}, tuple(
        Member(f"group_consumer-{i:03d}", streams=dict.fromkeys(names, streams)) for i in range(consumers)))


def one_leaves(request: AssignmentInput, strategy: str = "sticky") -> AssignmentInput:
    """Everyone reports what the fresh assignment gave it (generation 1); the first member is gone."""
    result = create(strategy).assign(request)
    return replace(request, members=tuple(
        replace(m, owned=result.assignment[m.member_id], generation=1) for m in request.members[1:]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip kafka-python on the 1,000-member inputs")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement, best kept (default 3)")
    parser.add_argument("--server-only", action="store_true", help="only the KIP-848 server-side assignors")
    args = parser.parse_args()
    print(f"{platform.python_implementation()} {platform.python_version()} on {machine()}")
    if args.server_only:
        server_side(args.repeat)
        return
    if StickyPartitionAssignor is None:
        print("kafka-python is not installed: no comparison")

    big = uniform(1000, 10, 1000)
    half = half_subscriptions(200, 20, 50)
    cases = [
        ("1,000 members x 10 topics x 1,000 partitions, fresh", big, 0.2, True),
        ("1,000 members x 10 x 1,000, one member leaves", one_leaves(big), 0.2, True),
        ("200 members, random half of 20 topics x 50, fresh", half, 0.1, False),
        ("200 members, random half of 20 x 50, one member leaves", one_leaves(half), 0.1, False),
    ]
    print("score/moved: balance score and partitions taken from their owner, ours vs kafka-python's "
          "(cooperative-sticky: first round, transfers withheld)")
    print(f"{'case':58} {'strategy':20} {'ours':>9} {'kafka-python':>13} {'ratio':>8}  {'target':8} score/moved")
    for label, request, target, huge in cases:
        theirs, their_quality = None, "-"
        if StickyPartitionAssignor is not None and not (huge and args.quick):
            theirs, their_result = best_of(kafka_python_run(request), 1 if huge else args.repeat)
            their_quality = quality(request, theirs_sets(their_result))
        for strategy in ("sticky", "cooperative-sticky"):
            ours, result = best_of(ours_run(strategy, request), args.repeat)
            shown = f"{theirs:12.3f}s" if theirs is not None else f"{'skipped':>13}"
            ratio = f"{theirs / ours:7.0f}x" if theirs is not None else f"{'-':>8}"
            print(f"{label:58} {strategy:20} {ours:8.4f}s {shown} {ratio}  < {target:<5} s "
                  f"{quality(request, ours_sets(result))} vs {their_quality}")

    legacy_request = legacy(100, 16, 10, 1000)
    for strategy in ("legacy-range", "legacy-roundrobin"):
        ours, _ = best_of(ours_run(strategy, legacy_request), args.repeat)
        print(f"{'100 consumers x 16 streams x 10,000 partitions (10 topics)':58} {strategy:20} {ours:8.4f}s "
              f"{'(no peer)':>13} {'-':>8}  < 0.1 s")
    server_side(args.repeat)


def server_side(repeat: int) -> None:
    """KIP-848's server-side assignors; balance score and partitions moved against the previous target."""
    big = uniform(1000, 10, 1000)
    half = half_subscriptions(200, 20, 50)
    print("KIP-848 server-side assignors (no peer implementation in Python)")
    print(f"{'case':58} {'strategy':20} {'ours':>9}  score/moved")
    for strategy in ("consumer-uniform", "consumer-range"):
        for label, request in (
            ("1,000 members x 10 topics x 1,000 partitions, fresh", big),
            ("1,000 members x 10 x 1,000, one member leaves", one_leaves(big, strategy)),
            ("200 members, random half of 20 topics x 50, fresh", half),
            ("200 members, random half of 20 x 50, one member leaves", one_leaves(half, strategy)),
        ):
            ours, result = best_of(ours_run(strategy, request), repeat)
            print(f"{label:58} {strategy:20} {ours:8.4f}s  {quality(request, ours_sets(result))}")


if __name__ == "__main__":
    main()
