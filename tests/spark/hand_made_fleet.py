"""A hand-made fleet whose figures the fleet job's tests work out by hand, on ``local[2]`` and on a cluster master."""

from __future__ import annotations

from zkconsumer.fleet.snapshot import GroupRecord, Owner, Registration


def group(name: str, members: dict[str, int], owners: list[tuple[int, str]], partitions: int = 4,
          registered=None, storage: str = "zookeeper") -> GroupRecord:
    regs = tuple(Registration(cid, "static", {"t": n}, {"t": n}) for cid, n in members.items())
    return GroupRecord(name, "2026-01-01T00:00:00.000Z", tuple(registered or sorted(members)), regs, {"t": partitions},
                       tuple(Owner("t", p, thread) for p, thread in owners), offsets_storage=storage)


FLEET = [
    # settled: legacy range gives a-0 0,1 and b-0 2,3
    group("settled", {"a": 1, "b": 1}, [(0, "a-0"), (1, "a-0"), (2, "b-0"), (3, "b-0")]),
    # b died: partition 2 owned by the dead, 1 unowned, 0 owned twice (a-1 holds what a-0 is assigned)
    group("broken", {"a": 2}, [(0, "a-1"), (2, "b-0"), (3, "a-1")], registered=["a"], storage="kafka"),
    # three members on two partitions: one idle member
    group("crowded", {"a": 1, "b": 1, "c": 1}, [(0, "c-0"), (1, "c-0")], partitions=2, storage="none"),
]
