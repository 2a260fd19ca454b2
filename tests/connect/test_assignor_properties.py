"""Properties of Connect's two assignors over generated clusters (hypothesis, the fuzz tests' settings): after the
follow-up rebalance every connector and task is held exactly once and connectors and tasks are each balanced to
within one; the cooperative assignor revokes only from workers above their share, and only down to it; a departed
worker's work waits out the delay and goes back to it if it returns in time.

The cooperative clusters are grown as Connect's grow (connectors created, workers joining empty), each change
settled before the next: that is where Connect promises balance (it revokes for balance only toward a worker that
joined empty, so deleting connectors can leave a cluster uneven, as it does in Kafka)."""

from __future__ import annotations

from dataclasses import dataclass

from fuzzing import FUZZ
from hypothesis import given
from hypothesis import strategies as st

from zkconsumer.connect.eager_assignor import EagerAssignor
from zkconsumer.connect.incremental_cooperative_assignor import (
    IncrementalCooperativeAssignor,
    LeaderState,
    shares,
)
from zkconsumer.connect.model import ClusterConfig, Work, Worker, union

DELAY = 300_000
ASSIGNOR = IncrementalCooperativeAssignor(max_delay_ms=DELAY)
MAX_ROUNDS = 6


def assert_exactly_once(config: ClusterConfig, held: list[Work]) -> None:
    assert union(held) == config.work()
    assert sum(len(w.connectors) for w in held) == len(config.connectors)
    assert sum(len(w.tasks) for w in held) == len(config.work().tasks)


def assert_balanced(held: list[Work]) -> None:
    connectors = [len(w.connectors) for w in held]
    tasks = [len(w.tasks) for w in held]
    assert max(connectors) - min(connectors) <= 1, connectors
    assert max(tasks) - min(tasks) <= 1, tasks


@dataclass
class Cluster:
    """A cluster the cooperative leader has been running: its members, the config and the leader's state."""

    config: ClusterConfig
    members: list[Worker]
    state: LeaderState
    now: float = 0

    def round(self) -> tuple[dict[str, Work], dict[str, Work]]:
        """One round; returns what each worker was told to start and to stop, after checking the revocations."""
        outcome = ASSIGNOR.assign(self.config, self.members, self.state, self.now)
        held = {m.worker_id: m.running for m in self.members}
        check_revocations(self.config, held, outcome.deleted, {a.worker_id: a.revoked for a in outcome.assignments})
        self.state = outcome.state
        by_id = {a.worker_id: a for a in outcome.assignments}
        self.members = [Worker(m.worker_id, (m.running - by_id[m.worker_id].revoked) | by_id[m.worker_id].assigned)
                        for m in self.members]
        return ({a.worker_id: a.assigned for a in outcome.assignments},
                {a.worker_id: a.revoked for a in outcome.assignments})

    def settle(self) -> int:
        """Rounds until one revokes nothing (the follow-up of a revocation is the next round); returns how many."""
        for rounds in range(1, MAX_ROUNDS + 1):
            _, revoked = self.round()
            if not any(revoked.values()):
                return rounds
        raise AssertionError(f"no settled assignment after {MAX_ROUNDS} rounds")


def check_revocations(config: ClusterConfig, held: dict[str, Work], deleted: Work, revoked: dict[str, Work]) -> None:
    """Load-balancing revocations (whatever is not deleted work) come only from workers above their share (more
    than ``floor``, or than ``ceil`` for those keeping one of the ``total % workers`` places at ``ceil``), and take
    them down to that share exactly: never below ``floor``."""
    workers = len(held)
    for total, kind in ((len(config.connectors), "connectors"), (len(config.work().tasks), "tasks")):
        floor, ceil = shares(total, workers)
        kept_ceil = 0
        for worker, gone in revoked.items():
            balance = getattr(gone - deleted, kind)
            if not balance:
                continue
            mine = len(getattr(held[worker] - deleted, kind))
            left = mine - len(balance)
            assert mine > floor and left in (floor, ceil), (kind, mine, left, floor, ceil)
            kept_ceil += left == ceil and ceil != floor
        assert kept_ceil <= total % workers


# a growing cluster: workers join (empty) and connectors are created, in any order
EVENTS = st.lists(st.one_of(st.tuples(st.just("join"), st.integers(1, 3)),
                            st.tuples(st.just("create"), st.integers(1, 7))), min_size=1, max_size=8)


def grown(first_workers: int, events: list[tuple[str, int]]) -> Cluster:
    cluster = Cluster(ClusterConfig({}), [Worker(f"w{n:02d}") for n in range(first_workers)], LeaderState())
    for n, (kind, count) in enumerate(events):
        if kind == "join":
            start = len(cluster.members)
            cluster.members += [Worker(f"w{i:02d}") for i in range(start, start + count)]
        else:
            cluster.config = ClusterConfig({**cluster.config.connectors, f"c{n:02d}": count})
        cluster.settle()
        held = [m.running for m in cluster.members]
        assert_exactly_once(cluster.config, held)
        assert_balanced(held)
    return cluster


@FUZZ
@given(st.integers(1, 4), EVENTS)
def test_cooperative_growth_is_exact_and_balanced_after_the_follow_up(first_workers, events):
    grown(first_workers, events)


@FUZZ
@given(st.integers(1, 4), EVENTS)
def test_a_join_moves_only_what_revocation_freed(first_workers, events):
    """A worker joining: the first round starts nothing on the loaded workers and stops nothing on the new one,
    and everything started in the follow-up is what was stopped in the first round."""
    cluster = grown(first_workers, [*events, ("create", 3)])
    before = {m.worker_id: m.running for m in cluster.members}
    cluster.members.append(Worker("w99"))
    started, stopped = cluster.round()
    assert not any(started[w] for w in before) and not stopped["w99"]
    freed = union(stopped.values())
    follow_up, again = cluster.round()
    assert not any(again.values())
    assert union(follow_up.values()) == freed
    assert_exactly_once(cluster.config, [m.running for m in cluster.members])
    assert_balanced([m.running for m in cluster.members])


@FUZZ
@given(st.integers(2, 4), EVENTS, st.data())
def test_a_departed_workers_work_waits_out_the_delay_and_returns_to_it(first_workers, events, data):
    """Every other worker holds something (a connector with a task per worker is created last): a worker that is
    empty while the delay runs is a candidate for the lost work too, in Connect as here, and the first one seen
    gets the first share."""
    cluster = grown(first_workers, events)
    cluster.config = ClusterConfig({**cluster.config.connectors, "last": len(cluster.members)})
    cluster.settle()
    assert all(m.running for m in cluster.members)
    leaving = data.draw(st.sampled_from([m.worker_id for m in cluster.members[1:]]), label="leaving")
    own = next(m.running for m in cluster.members if m.worker_id == leaving)
    others = [m for m in cluster.members if m.worker_id != leaving]
    cluster.members = others
    cluster.now = 1_000
    started, _ = cluster.round()
    assert not any(started.values())  # nothing of the lost work moves
    returns_at = data.draw(st.floats(1_000, 1_000 + DELAY - 1), label="returns at")
    cluster.now = returns_at
    cluster.members = [*others, Worker(leaving)]
    started, _ = cluster.round()
    assert not any(started.values())  # back, but the delay is not over
    cluster.now = 1_000 + DELAY
    started, stopped = cluster.round()
    assert started == {**{m.worker_id: Work() for m in others}, leaving: own}
    assert not any(stopped.values())
    assert_exactly_once(cluster.config, [m.running for m in cluster.members])


@FUZZ
@given(st.integers(2, 4), EVENTS, st.data())
def test_work_lost_for_good_is_reassigned_only_when_the_delay_expires(first_workers, events, data):
    cluster = grown(first_workers, [*events, ("create", 4)])
    leaving = data.draw(st.sampled_from([m.worker_id for m in cluster.members[1:]]), label="leaving")
    cluster.members = [m for m in cluster.members if m.worker_id != leaving]
    cluster.now = 0
    cluster.round()
    cluster.now = DELAY - 1
    started, _ = cluster.round()
    assert not any(started.values())
    cluster.now = DELAY
    cluster.settle()
    assert_exactly_once(cluster.config, [m.running for m in cluster.members])
    assert_balanced([m.running for m in cluster.members])


@FUZZ
@given(st.integers(1, 9), st.dictionaries(st.text("abcxyz", min_size=1, max_size=4), st.integers(0, 12), max_size=12))
def test_eager_deals_everything_once_balanced(workers, connectors):
    config = ClusterConfig(connectors)
    result = EagerAssignor().assign(config, [f"w{n}" for n in range(workers)])
    held = [a.assigned for a in result]
    assert_exactly_once(config, held)
    assert_balanced(held)
    totals = [len(w) for w in held]
    assert max(totals) - min(totals) <= 1  # one iterator: connectors and tasks together are even too
