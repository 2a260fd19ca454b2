"""ConsumerRebalanceListener: the two hooks the legacy consumer called during a rebalance (its steps 3 and 9).

``before_releasing_partitions`` runs after fetchers stopped and (with auto-commit) offsets were committed, while
ownership is still held: the last moment to commit your own offsets so the next owner starts where you stopped
(MirrorMaker's use). ``before_starting_fetchers`` receives the decision of the whole group for this consumer's
topics, identical on every member that read the same snapshot. An exception from either fails the attempt.
"""

from __future__ import annotations

from zkconsumer.types import ConsumerThreadId


class ConsumerRebalanceListener:
    """Subclass and override either hook; both do nothing by default."""

    def before_releasing_partitions(self, partition_ownership: dict[str, set[int]]) -> None:
        """``partition_ownership``: topic -> partitions this consumer owned until now (empty on the first rebalance)."""

    def before_starting_fetchers(self, consumer_id: str,
                                 global_partition_assignment: dict[str, dict[int, ConsumerThreadId]]) -> None:
        """``global_partition_assignment``: topic -> partition -> owning thread, for every member of the group."""
