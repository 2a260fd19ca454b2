"""One group's offset commits and reads, in order: an OffsetCommit's check by the coordinator and its write to the
broker are one step for its group, as Kafka checks a commit and appends it to ``__consumer_offsets`` under the group's
lock; and an OffsetFetch of the group reads only once the commits checked before it are written.

Without it a commit checked against generation N (or epoch E) and still on its way to the broker could land after a
rebalance to N+1 had let the partition's new owner read its offsets: the new owner would start from the offset before
that commit, and the late commit would then overwrite the new owner's own. Held per group id, so other groups' commits
never wait; a request of several groups (OffsetFetch v8 on) takes their locks in one order, so two never wait on each
other. A group's lock is dropped once nobody holds or waits for it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable


class OffsetOrder:
    """The per-group locks of one front's event loop."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    @contextlib.asynccontextmanager
    async def held(self, group_ids: Iterable[str]) -> AsyncIterator[None]:
        """The block runs with every group of ``group_ids`` to itself."""
        groups = sorted(set(group_ids))
        for group in groups:
            self._users[group] = self._users.get(group, 0) + 1
        taken: list[asyncio.Lock] = []
        try:
            for group in groups:
                lock = self._locks.setdefault(group, asyncio.Lock())
                # no timeout: held only across one check and one broker exchange, bounded by its caller
                await lock.acquire()
                taken.append(lock)
            yield
        finally:
            for lock in taken:
                lock.release()
            for group in groups:
                self._users[group] -= 1
                if not self._users[group]:
                    del self._users[group]
                    self._locks.pop(group, None)

    def __len__(self) -> int:
        """How many groups have a lock held or waited for."""
        return len(self._users)
