"""What a simulated group is measured by, whatever its protocol: partitions consuming, partition-seconds paused,
members busy rebalancing, and the moment the group is stable.

A partition is consuming while a member that owns it has its fetchers running on it; the paused figure integrates
the partitions not consuming over time. The group is stable when every partition is consuming and no member is
busy (rebalancing, due to rebalance, or with a notification still on its way to it).
"""

from __future__ import annotations

from dataclasses import dataclass

from zkconsumer.storm.event_loop import EventLoop


@dataclass
class GroupMeasures:
    loop: EventLoop
    partitions: int
    consuming: int = 0
    busy: int = 0
    paused_ms: float = 0.0  # partition-milliseconds paused since the last reset
    rebalances: int = 0  # rebalances completed by members (legacy), or rounds/epochs of the group (modern)
    conflicts: int = 0
    retries_exhausted: int = 0
    session_expiries: int = 0
    request_timeouts: int = 0  # ZooKeeper answers the connector waited the whole session timeout for, given up
    connection_drops: int = 0  # ZooKeeper connections kazoo dropped, a ping unanswered
    attempts_dropped: int = 0  # rebalance attempts failed by a connection dropped while they waited on an answer
    _since_ms: float = 0.0

    def _accrue(self) -> None:
        now = self.loop.now_ms
        self.paused_ms += (self.partitions - self.consuming) * (now - self._since_ms)
        self._since_ms = now

    def change_consuming(self, delta: int) -> None:
        self._accrue()
        self.consuming += delta

    def change_partitions(self, delta: int) -> None:
        self._accrue()
        self.partitions += delta

    def reset_paused(self) -> None:
        self._accrue()
        self.paused_ms = 0.0

    def paused_partition_seconds(self) -> float:
        self._accrue()
        return self.paused_ms / 1000

    @property
    def settled(self) -> bool:
        return self.busy == 0 and self.consuming == self.partitions
