"""Connect's ``EagerAssignor`` (``connect.protocol=default``, the only one before Kafka 2.3).

Every worker has stopped everything before it joins, so the leader assigns from scratch and ignores what anyone
ran: one circular iterator over the workers sorted by id deals the connectors sorted by name, and then, continuing
the same iterator, the tasks (connectors in sorted order, each connector's tasks in order). Connectors and tasks
are dealt apart because dealing a connector with its tasks unbalances clusters of one-task connectors: with an
even number of workers only every other worker would get tasks. The price is the stop-the-world: every rebalance
stops and restarts every task in the cluster.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import cycle

from zkconsumer.connect.model import ClusterConfig, TaskId, Work, WorkerAssignment, check_workers


@dataclass(frozen=True, slots=True)
class EagerAssignor:
    name: str = "eager"

    def assign(self, config: ClusterConfig, worker_ids: Iterable[str]) -> tuple[WorkerAssignment, ...]:
        """One assignment per worker, in worker order; ``assigned`` is all it runs, ``revoked`` is empty (the
        worker revoked everything itself before joining)."""
        workers = check_workers(worker_ids)
        dealer = cycle(workers)
        connectors: dict[str, list[str]] = {w: [] for w in workers}
        tasks: dict[str, list[TaskId]] = {w: [] for w in workers}
        ordered = sorted(config.connectors)
        for connector in ordered:
            connectors[next(dealer)].append(connector)
        for connector in ordered:
            for task in config.tasks_of(connector):
                tasks[next(dealer)].append(task)
        return tuple(WorkerAssignment(w, Work.of(connectors[w], tasks[w])) for w in workers)
