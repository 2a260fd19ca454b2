"""The values Kafka Connect's worker assignors take and return: connectors, tasks, workers and what each is told.

A Connect cluster is a group of workers; its leader hands out two kinds of work, connectors and their tasks, and
counts them separately (a connector is lighter than a task, so balancing them together would put all the tasks on
half the workers). So every set of work here is a pair of sets, :class:`Work`, and every balance is computed once
for connectors and once for tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from zkconsumer.errors import UsageError


class ConnectAssignmentError(UsageError):
    """The cluster cannot be assigned as given (no worker, a worker twice, a negative task count)."""


@dataclass(frozen=True, slots=True, order=True)
class TaskId:
    """Connect's ``ConnectorTaskId``: ordered by connector name, then task number (not as text: 10 after 9)."""

    connector: str
    task: int

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


@dataclass(frozen=True, slots=True)
class Work:
    """Connect's ``ConnectorsAndTasks``: some connectors and some tasks, as sets (the leader's set algebra)."""

    connectors: frozenset[str] = frozenset()
    tasks: frozenset[TaskId] = frozenset()

    @classmethod
    def of(cls, connectors: Iterable[str] = (), tasks: Iterable[TaskId] = ()) -> Work:
        return cls(frozenset(connectors), frozenset(tasks))

    def __or__(self, other: Work) -> Work:
        return Work(self.connectors | other.connectors, self.tasks | other.tasks)

    def __sub__(self, other: Work) -> Work:
        return Work(self.connectors - other.connectors, self.tasks - other.tasks)

    def __and__(self, other: Work) -> Work:
        return Work(self.connectors & other.connectors, self.tasks & other.tasks)

    def __bool__(self) -> bool:
        return bool(self.connectors or self.tasks)

    def __len__(self) -> int:
        return len(self.connectors) + len(self.tasks)

    def sorted_connectors(self) -> tuple[str, ...]:
        return tuple(sorted(self.connectors))

    def sorted_tasks(self) -> tuple[TaskId, ...]:
        return tuple(sorted(self.tasks))


EMPTY = Work()


def union(works: Iterable[Work]) -> Work:
    connectors: set[str] = set()
    tasks: set[TaskId] = set()
    for work in works:
        connectors |= work.connectors
        tasks |= work.tasks
    return Work(frozenset(connectors), frozenset(tasks))


@dataclass(frozen=True, slots=True)
class ClusterConfig:
    """What the config topic says should run: each connector's name and its number of tasks."""

    connectors: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        if not isinstance(self.connectors, MappingProxyType):
            object.__setattr__(self, "connectors", MappingProxyType(dict(self.connectors)))
        for name, count in self.connectors.items():
            if count < 0:
                raise ConnectAssignmentError(f"connector {name!r} has a negative task count ({count})")

    def tasks_of(self, connector: str) -> tuple[TaskId, ...]:
        return tuple(TaskId(connector, n) for n in range(self.connectors.get(connector, 0)))

    def work(self) -> Work:
        return Work.of(self.connectors, (t for c in self.connectors for t in self.tasks_of(c)))


@dataclass(frozen=True, slots=True)
class Worker:
    """A member as the leader sees it in JoinGroup: its id and the work it reports it holds (eager workers report
    nothing: they revoked everything before joining)."""

    worker_id: str
    running: Work = EMPTY


@dataclass(frozen=True, slots=True)
class WorkerAssignment:
    """What the leader tells one worker. Eager: ``assigned`` is everything it is to run. Incremental cooperative:
    ``assigned`` is what to start on top of what it keeps, ``revoked`` what to stop, and ``delay_ms`` when to
    rejoin if the leader is holding back lost work (Connect's ``ExtendedAssignment``)."""

    worker_id: str
    assigned: Work = EMPTY
    revoked: Work = EMPTY
    delay_ms: float = 0


def check_workers(worker_ids: Iterable[str]) -> tuple[str, ...]:
    """The ids, sorted as Connect sorts member ids (Java ``String`` order, the same as Python's for ASCII)."""
    ids = tuple(worker_ids)
    if not ids:
        raise ConnectAssignmentError("no worker to assign to")
    if len(set(ids)) != len(ids):
        raise ConnectAssignmentError("a worker appears twice")
    return tuple(sorted(ids))
