"""The application's cost of giving partitions up, for both kinds of member process: what a real consumer does
before a partition it processed goes to another member (flush the state it built from it to a store, commit its own
offsets synchronously, drop a cache), which the comparison's members, holding no state, would otherwise not pay.

KIP-429's case for incremental rebalancing rests on that cost: an eager protocol pays it for every partition of
every member at every rebalance, an incremental one only for the partitions that move. The cost is spent as a sleep,
as I/O-bound work (a flush to a store) spends it: the member's consumption stops meanwhile, as a real application's
does, since the legacy connector calls its listener with every fetcher stopped and librdkafka runs ``on_revoke``
inside ``poll()``.

Where it is spent: a legacy member in the connector's rebalance listener
(:meth:`~zkconsumer.consumer.rebalance_listener.ConsumerRebalanceListener.before_releasing_partitions`, Kafka 0.10's
``beforeReleasingPartitions``: step 3, ``rebalance.listener_before_release``); a modern member in its ``on_revoke``
callback, after committing and before giving the partitions up (written as the same step). Only when the member
gives up at least one partition; and not when it leaves the group cleanly (the legacy connector calls no listener at
shutdown, so neither kind spends it there: an application flushes before it leaves, whoever coordinates the group).
"""

from __future__ import annotations

import argparse
import time

from zkconsumer.consumer.rebalance_listener import ConsumerRebalanceListener
from zkconsumer.members.application import Runner
from zkconsumer.scenarios.model import MAX_REVOKE_MS
from zkconsumer.types import ConsumerThreadId


class RevokeCost:
    """``ms`` milliseconds spent each time the member gives up at least one partition (0: nothing)."""

    def __init__(self, ms: int) -> None:
        self.ms = ms

    def spend(self, giving_up: int) -> bool:
        """Spend the cost when ``giving_up`` partitions is at least one; whether it was spent."""
        if self.ms <= 0 or giving_up <= 0:
            return False
        time.sleep(self.ms / 1000)
        return True


class RevokeListener(ConsumerRebalanceListener):
    """A legacy member's listener: the cost spent before releasing what it owned (nothing on its first rebalance),
    and the user's application told (:mod:`zkconsumer.members.application`): what the member gives up, then what it
    owns once the group decided."""

    def __init__(self, cost: RevokeCost, app: Runner | None = None) -> None:
        self.cost = cost
        self.app = app

    def before_releasing_partitions(self, partition_ownership: dict[str, set[int]]) -> None:
        self.cost.spend(sum(len(partitions) for partitions in partition_ownership.values()))
        if self.app is not None:
            self.app.revoked((t, p) for t, ps in partition_ownership.items() for p in ps)

    def before_starting_fetchers(self, consumer_id: str,
                                 global_partition_assignment: dict[str, dict[int, ConsumerThreadId]]) -> None:
        if self.app is not None:
            self.app.assigned((t, p) for t, owners in global_partition_assignment.items()
                              for p, thread in owners.items() if thread.consumer == consumer_id)


def revoke_ms(text: str) -> int:
    """``--revoke-ms``'s value: a whole number of milliseconds from 0 to :data:`MAX_REVOKE_MS`."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number of milliseconds: {text!r}") from None
    if not 0 <= value <= MAX_REVOKE_MS:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_REVOKE_MS} ms, not {value}")
    return value
