"""Connect's EagerAssignor: connectors sorted by name dealt round robin over the workers sorted by id, then the
tasks continuing the same circular iterator (as Kafka's ``EagerAssignor.performTaskAssignment``)."""

from __future__ import annotations

import pytest

from zkconsumer.connect.eager_assignor import EagerAssignor
from zkconsumer.connect.model import ClusterConfig, ConnectAssignmentError, TaskId, Work


def dealt(config: dict[str, int], workers: list[str]) -> dict[str, tuple[list[str], list[str]]]:
    return {a.worker_id: (list(a.assigned.sorted_connectors()), [str(t) for t in a.assigned.sorted_tasks()])
            for a in EagerAssignor().assign(ClusterConfig(config), workers)}


def test_tasks_continue_the_iterator_the_connectors_left():
    # connectors sorted: a -> w1, b -> w2; the tasks continue at w3: a-0 -> w3, a-1 -> w1, b-0 -> w2
    assert dealt({"b": 1, "a": 2}, ["w3", "w1", "w2"]) == {
        "w1": (["a"], ["a-1"]),
        "w2": (["b"], ["b-0"]),
        "w3": ([], ["a-0"]),
    }


def test_one_task_connectors_on_an_even_cluster_spread_both_kinds():
    """The reason connectors and tasks are dealt apart: dealt together, with two workers every connector would
    land on w1 and every task on w2. Dealt apart, the tasks start where the connectors stopped."""
    assert dealt({"c1": 1, "c2": 1, "c3": 1, "c4": 1}, ["w1", "w2"]) == {
        "w1": (["c1", "c3"], ["c1-0", "c3-0"]),
        "w2": (["c2", "c4"], ["c2-0", "c4-0"]),
    }
    assert dealt({"c1": 1, "c2": 1, "c3": 1}, ["w1", "w2"]) == {
        "w1": (["c1", "c3"], ["c2-0"]),
        "w2": (["c2"], ["c1-0", "c3-0"]),
    }


def test_tasks_in_number_order_not_text_order():
    result = EagerAssignor().assign(ClusterConfig({"c": 12}), ["w1", "w2", "w3"])
    # the connector takes w1, so task 0 goes to w2: w2 gets 0, 3, 6, 9; w3 1, 4, 7, 10; w1 2, 5, 8, 11
    by_worker = {a.worker_id: [t.task for t in a.assigned.sorted_tasks()] for a in result}
    assert by_worker == {"w1": [2, 5, 8, 11], "w2": [0, 3, 6, 9], "w3": [1, 4, 7, 10]}
    assert TaskId("c", 10) > TaskId("c", 9)


def test_every_worker_is_told_even_with_nothing_and_nothing_is_revoked():
    result = EagerAssignor().assign(ClusterConfig({"c": 0}), ["w2", "w1"])
    assert [a.worker_id for a in result] == ["w1", "w2"]
    assert result[0].assigned == Work.of(["c"]) and result[1].assigned == Work()
    assert all(not a.revoked and a.delay_ms == 0 for a in result)


@pytest.mark.parametrize("workers, message", [([], "no worker"), (["w1", "w1"], "appears twice")])
def test_bad_membership_is_refused(workers, message):
    with pytest.raises(ConnectAssignmentError, match=message):
        EagerAssignor().assign(ClusterConfig({"c": 1}), workers)


def test_a_negative_task_count_is_refused():
    with pytest.raises(ConnectAssignmentError, match="negative task count"):
        ClusterConfig({"c": -1})
