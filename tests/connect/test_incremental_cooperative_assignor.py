"""Connect's IncrementalCooperativeAssignor on hand-made rounds, each with the exact assignment Kafka's algorithm
gives (KIP-415; ``IncrementalCooperativeAssignor.performTaskAssignment``): workers keep what they run, load
balancing revokes toward the ceiling in one round and assigns in the follow-up, deleted and duplicated work is
revoked, and a departed worker's work waits for the delay and goes back to it if it returned."""

from __future__ import annotations

from zkconsumer.connect.incremental_cooperative_assignor import (
    CooperativeOutcome,
    IncrementalCooperativeAssignor,
    LeaderState,
    shares,
)
from zkconsumer.connect.model import ClusterConfig, TaskId, Work, Worker

ASSIGNOR = IncrementalCooperativeAssignor(max_delay_ms=300_000)


def work(*names: str) -> Work:
    """``work("a", "a-0")``: connectors by name, tasks as connector-number."""
    connectors = [n for n in names if "-" not in n]
    tasks = [TaskId(n.rsplit("-", 1)[0], int(n.rsplit("-", 1)[1])) for n in names if "-" in n]
    return Work.of(connectors, tasks)


def names(w: Work) -> list[str]:
    return [*w.sorted_connectors(), *(str(t) for t in w.sorted_tasks())]


def told(outcome: CooperativeOutcome) -> dict[str, tuple[list[str], list[str]]]:
    """Per worker: (what to start, what to stop)."""
    return {a.worker_id: (names(a.assigned), names(a.revoked)) for a in outcome.assignments}


def apply(members: list[Worker], outcome: CooperativeOutcome) -> list[Worker]:
    by_id = {a.worker_id: a for a in outcome.assignments}
    return [Worker(m.worker_id, (m.running - by_id[m.worker_id].revoked) | by_id[m.worker_id].assigned)
            for m in members]


def test_first_assignment_fills_the_least_loaded_round_robin():
    outcome = ASSIGNOR.assign(ClusterConfig({"c1": 4}), [Worker("w2"), Worker("w1"), Worker("w3")])
    assert told(outcome) == {
        "w1": (["c1", "c1-0", "c1-3"], []),
        "w2": (["c1-1"], []),
        "w3": (["c1-2"], []),
    }
    assert outcome.new == work("c1", "c1-0", "c1-1", "c1-2", "c1-3") and not outcome.lost


def test_a_joining_worker_costs_two_rounds_and_only_the_moved_tasks_stop():
    config = ClusterConfig({"a": 3, "b": 3})
    members = [Worker("w1", work("a", "a-0", "a-1", "a-2")), Worker("w2", work("b", "b-0", "b-1", "b-2")),
               Worker("w3")]
    state = LeaderState(previous=config.work(), previous_members=frozenset({"w1", "w2"}))
    first = ASSIGNOR.assign(config, members, state)
    # 6 tasks over 3 workers: ceil 2, so each loaded worker gives up its first task; connectors (2 over 3, ceil 1)
    # stay; the revoked tasks are not assigned in this round
    assert told(first) == {"w1": ([], ["a-0"]), "w2": ([], ["b-0"]), "w3": ([], [])}
    assert first.state.revoked_in_previous
    members = apply(members, first)
    second = ASSIGNOR.assign(config, members, first.state)
    assert told(second) == {"w1": ([], []), "w2": ([], []), "w3": (["a-0", "b-0"], [])}
    assert not second.state.revoked_in_previous


def test_revocation_never_in_two_rounds_in_a_row():
    config = ClusterConfig({"a": 4})
    members = [Worker("w1", work("a", "a-0", "a-1", "a-2", "a-3")), Worker("w2")]
    state = LeaderState(previous=config.work(), previous_members=frozenset({"w1"}), revoked_in_previous=True)
    outcome = ASSIGNOR.assign(config, members, state)
    assert told(outcome) == {"w1": ([], []), "w2": ([], [])}
    again = ASSIGNOR.assign(config, members, outcome.state)
    assert told(again) == {"w1": ([], ["a-0", "a-1"]), "w2": ([], [])}


def test_deleted_work_is_revoked_from_whoever_runs_it_and_nothing_else_moves():
    config = ClusterConfig({"b": 2})
    members = [Worker("w1", work("a", "a-1", "b-0")), Worker("w2", work("b", "a-0", "b-1"))]
    state = LeaderState(previous=work("a", "b", "a-0", "a-1", "b-0", "b-1"), previous_members=frozenset({"w1", "w2"}))
    outcome = ASSIGNOR.assign(config, members, state)
    assert told(outcome) == {"w1": ([], ["a", "a-1"]), "w2": ([], ["a-0"])}
    assert outcome.deleted == work("a", "a-0", "a-1")


def test_work_two_workers_report_is_revoked_from_both_then_assigned_once():
    config = ClusterConfig({"a": 2})
    members = [Worker("w1", work("a", "a-0", "a-1")), Worker("w2", work("a-1"))]
    state = LeaderState(previous=config.work(), previous_members=frozenset({"w1", "w2"}))
    first = ASSIGNOR.assign(config, members, state)
    assert told(first) == {"w1": ([], ["a-1"]), "w2": ([], ["a-1"])}
    second = ASSIGNOR.assign(config, apply(members, first), first.state)
    assert told(second) == {"w1": ([], []), "w2": (["a-1"], [])}


def test_lost_work_without_a_departure_is_reassigned_at_once():
    """A worker missing from nobody but reporting less (it missed an assignment): no delay."""
    config = ClusterConfig({"a": 2})
    members = [Worker("w1", work("a", "a-0")), Worker("w2")]
    state = LeaderState(previous=config.work(), previous_members=frozenset({"w1", "w2"}))
    outcome = ASSIGNOR.assign(config, members, state)
    assert told(outcome) == {"w1": ([], []), "w2": (["a-1"], [])}
    assert outcome.lost == work("a-1") and outcome.delay_ms == 0


def test_a_bounced_worker_gets_its_own_work_back_after_the_delay():
    config = ClusterConfig({"a": 3, "b": 3})
    before = {"w1": work("a", "a-0", "a-2", "b-1"), "w2": work("b", "a-1", "b-0", "b-2")}
    state = LeaderState(previous=config.work(), previous_members=frozenset(before))
    # w2 leaves at t=0: its work is lost, held back for the whole delay, nothing moves
    gone = ASSIGNOR.assign(config, [Worker("w1", before["w1"])], state, now_ms=0)
    assert told(gone) == {"w1": ([], [])}
    assert gone.lost == before["w2"] and gone.delay_ms == 300_000 and gone.state.scheduled_ms == 300_000
    # it comes back empty at t=60 s: a candidate; still nothing moves, the delay is what is left of it
    back = ASSIGNOR.assign(config, [Worker("w1", before["w1"]), Worker("w2")], gone.state, now_ms=60_000)
    assert told(back) == {"w1": ([], []), "w2": ([], [])}
    assert back.delay_ms == 240_000 and back.state.candidates == ("w2",)
    # the delay expires: the lost work goes to the worker that came back, exactly its own
    due = ASSIGNOR.assign(config, [Worker("w1", before["w1"]), Worker("w2")], back.state, now_ms=300_000)
    assert told(due) == {"w1": ([], []), "w2": (names(before["w2"]), [])}
    assert due.delay_ms == 0 and due.state.scheduled_ms is None


def test_work_lost_for_good_goes_to_the_least_loaded_when_the_delay_expires():
    config = ClusterConfig({"a": 2, "b": 2, "c": 2})
    before = {"w1": work("a", "a-0", "b-0"), "w2": work("b", "a-1", "b-1"), "w3": work("c", "c-0", "c-1")}
    state = LeaderState(previous=config.work(), previous_members=frozenset(before))
    alive = [Worker("w1", before["w1"]), Worker("w2", before["w2"])]
    gone = ASSIGNOR.assign(config, alive, state, now_ms=0)
    early = ASSIGNOR.assign(config, alive, gone.state, now_ms=299_999)
    assert told(early) == {"w1": ([], []), "w2": ([], [])}
    due = ASSIGNOR.assign(config, alive, early.state, now_ms=300_000)
    # no candidate: the lost work is new; connector c to w1 (1 connector each, w1 first by id), tasks c-0 -> w1,
    # c-1 -> w2 (2 tasks each)
    assert told(due) == {"w1": (["c", "c-0"], []), "w2": (["c-1"], [])}


def test_shares_are_the_fewest_and_most_a_balanced_worker_holds():
    assert shares(900, 5) == (180, 180)
    assert shares(7, 3) == (2, 3)
    assert shares(0, 4) == (0, 0)
