"""What the two modern groups share: the front's request queue in front of a coordinator ticked at its deadlines (as
the front's edge arms its timer), members marked busy while they rebalance, and a kill and an expiry."""

from __future__ import annotations

from typing import Any, Protocol

from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.group_measures import GroupMeasures
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.request_queue import RequestQueue

#: the group and the topic every modern group's members name
GROUP = "storm"
TOPIC = "storm"


class _Member(Protocol):
    busy: bool


class ModernGroup:
    members: dict[str, Any]
    coordinator: Any

    def __init__(self, loop: EventLoop, parameters: StormParameters, partitions: int) -> None:
        self.loop = loop
        self.p = parameters
        self.front = RequestQueue(loop, parameters.network_rtt_ms)
        self.measures = GroupMeasures(loop, partitions)
        self._armed: set[int] = set()

    # --- what each protocol's group says ---------------------------------------------------------------------------

    def start(self, name: str) -> None:
        raise NotImplementedError

    def _die(self, member: Any) -> None:
        raise NotImplementedError

    def _next_deadline(self) -> int | None:
        raise NotImplementedError

    def _tick_coordinator(self) -> None:
        """Tick the coordinator now and hand out what its timers caused."""
        raise NotImplementedError

    # --- shared ----------------------------------------------------------------------------------------------------

    def unsettled(self) -> str:
        """What keeps the group from being stable, as it stands."""
        state = self.coordinator.state_of(GROUP)
        return (f"the coordinator's group {getattr(state, 'name', state)}; {self.measures.busy:,} members busy; "
                f"{self.measures.consuming:,} of {self.measures.partitions:,} partitions consuming")

    def kill(self, name: str) -> None:
        self._die(self.members[name])

    def expire(self, name: str) -> None:
        """A ZooKeeper session's expiry has no counterpart here: the member is lost and starts again."""
        self.kill(name)
        self.start(name)

    def _arm(self) -> None:
        """After every step: a tick at the coordinator's next deadline, unless one is already due then."""
        deadline = self._next_deadline()
        if deadline is not None and deadline not in self._armed:
            self._armed.add(deadline)
            self.loop.at(deadline, lambda: self._tick(deadline))

    def _tick(self, deadline: int) -> None:
        self._armed.discard(deadline)
        self._tick_coordinator()
        self._arm()

    def _busy(self, member: _Member, busy: bool) -> None:
        if member.busy != busy:
            member.busy = busy
            self.measures.busy += 1 if busy else -1
