"""PartitionOwnership: what one connector owns, claims and holds, kept by one object under one lock.

Kafka's ``ZookeeperConsumerConnector`` kept its ``topicRegistry`` (partition -> ``PartitionTopicInfo``) and changed
it in the rebalance: released after the fetchers were closed, replaced only once every owner znode of the new share
was created (``reflectPartitionOwnershipDecision``), then handed to the fetchers; cleared when the session expired.
This object holds that registry and what the connector adds to it, and is changed only by the rebalance's steps,
through the methods named after them:

* the **registry** (topic -> partition -> :class:`~zkconsumer.consumer.partition_topic_info.PartitionTopicInfo`) and
  the **owner threads** (partition -> the thread whose stream it feeds), published together and replaced whole,
  never changed in place, so that a reader without the lock (:meth:`current`) always sees a pair that belongs
  together;
* the **unconfirmed claims**: partitions whose owner znodes an attempt may have created without learning so (a
  claim that failed with an error: its multi-op may have been applied), or that a new session may hold (a claim
  that raced an expiry); the next release covers them too, and deletes only what our session holds;
* the **held znodes** (:class:`~zkconsumer.group.owner_claims.HeldZnodes`): the versions the last successful claim
  left, so that the release deletes them unread; taken before each release, so that a release that fails half-way
  never trusts them again.

Its lock also keeps a commit from overlapping a change of ownership (:meth:`PartitionOwnership.locked`): what a
commit writes is for partitions still ours, and commits do not overlap each other.

The invariants (:meth:`PartitionOwnership.violations`), true whenever no step is half-way through:

1. the registry and the owner threads name the same partitions;
2. a claim is unconfirmed or owned, never both (an unconfirmed claim is released before anything is claimed again);
3. the held znodes are of partitions owned or unconfirmed: what a claim created is in the registry, or will be
   released;
4. everything the fetchers fetch is owned: nothing released (or forgotten with the session) is still fetched.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from zkconsumer.consumer.partition_topic_info import PartitionTopicInfo
from zkconsumer.group.owner_claims import ClaimResult, HeldZnodes
from zkconsumer.types import TopicPartition

Registry = dict[str, dict[int, PartitionTopicInfo]]

T = TypeVar("T")


@dataclass(frozen=True)
class Owned:
    """The registry and the owner threads of one publication (read-only by convention: they are replaced, never
    changed)."""

    registry: Registry = field(default_factory=dict)
    threads: Mapping[TopicPartition, str] = field(default_factory=dict)

    def infos(self) -> list[PartitionTopicInfo]:
        """Every owned partition's info: what the fetcher manager is handed."""
        return [info for ps in self.registry.values() for info in ps.values()]


class PartitionOwnership:
    """One connector's ownership state. The steps that change it run on the rebalance thread, one at a time (the
    connector's rebalance lock); the lock here orders them with commits and with the invariants' reading."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._owned = Owned()
        self._unconfirmed: set[TopicPartition] = set()
        self._held: HeldZnodes | None = None

    # --- reading ----------------------------------------------------------------------------------------

    def current(self) -> Owned:
        """What is owned now, without waiting for a commit or a release in progress."""
        return self._owned

    def owned(self) -> dict[TopicPartition, str]:
        """Owned partitions -> the thread whose queue each feeds (a copy)."""
        return dict(self._owned.threads)

    @contextlib.contextmanager
    def locked(self) -> Iterator[Registry]:
        """The registry, which no step publishes, releases or forgets until the block ends (a commit runs inside)."""
        with self._lock:
            yield self._owned.registry

    def is_current(self, info: PartitionTopicInfo) -> bool:
        """``info`` is the registry's for its partition: the partition is still ours, under this publication."""
        return self._owned.registry.get(info.topic, {}).get(info.partition) is info

    # --- the rebalance's steps --------------------------------------------------------------------------

    def release(self, deleting: Callable[[set[TopicPartition], HeldZnodes | None], T]) -> T:
        """Step 4: ``deleting(partitions, held)`` deletes the owner znodes of what is owned and of every unconfirmed
        claim (those in ``held`` unread); then nothing is owned or unconfirmed. The held znodes are taken first, so
        that a release that raises half-way leaves them unknown, and the rest as it was for the next release."""
        with self._lock:
            held, self._held = self._held, None
            result = deleting(set(self._owned.threads) | self._unconfirmed, held)
            self._owned = Owned()
            self._unconfirmed.clear()
        return result

    def claiming(self, claims: Collection[TopicPartition]) -> None:
        """Step 8, before the claim's requests: they may be applied without their answer reaching us, so the
        claims count as unconfirmed until published (:meth:`publish`) or withdrawn by a conflict (:meth:`claimed`)."""
        with self._lock:
            self._unconfirmed.update(claims)

    def claimed(self, claims: Collection[TopicPartition], result: ClaimResult) -> None:
        """Step 8, the claim answered: a successful claim's znodes are held until the next release; a conflict
        left none of the attempt's (the claim deleted them again), so its claims are no longer unconfirmed."""
        with self._lock:
            self._held = result.held if result.ok else None
            if not result.ok:
                self._unconfirmed.difference_update(claims)

    def publish(self, registry: Registry, threads: Mapping[TopicPartition, str]) -> None:
        """Step 9: own the new share, claimed in full (``threads``: partition -> thread, the registry's
        partitions); its claims are confirmed."""
        with self._lock:
            self._owned = Owned(registry, threads)
            self._unconfirmed.difference_update(threads)

    def forget(self) -> dict[TopicPartition, str]:
        """The session expired (or our registration vanished): own nothing, without releasing (our ephemerals went
        with the session). What was owned becomes unconfirmed: a claim that raced the expiry may have left znodes of
        the new session, which the next release deletes (it checks the session). Returns what was owned."""
        with self._lock:
            dropped = dict(self._owned.threads)
            self._owned = Owned()
            self._unconfirmed.update(dropped)
        return dropped

    # --- invariants -------------------------------------------------------------------------------------

    def registry_matches_threads(self) -> bool:
        """1. The registry and the owner threads name the same partitions."""
        owned = self._owned
        in_registry = {TopicPartition(t, p) for t, ps in owned.registry.items() for p in ps}
        return in_registry == set(owned.threads)

    def unconfirmed_not_owned(self) -> bool:
        """2. No claim is both unconfirmed and owned."""
        return self._unconfirmed.isdisjoint(self._owned.threads)

    def held_are_claimed(self) -> bool:
        """3. Every held znode is of a partition owned or unconfirmed."""
        held = self._held
        return held is None or all(tp in self._owned.threads or tp in self._unconfirmed for tp in held.versions)

    def fetched_are_owned(self, fetched: Collection[TopicPartition]) -> bool:
        """4. Everything fetched (the fetcher manager's partitions) is owned."""
        return all(tp in self._owned.threads for tp in fetched)

    def violations(self, fetched: Collection[TopicPartition] = ()) -> list[str]:
        """The invariants that do not hold, one line each (none when all hold), read under the lock."""
        with self._lock:
            checks = (
                (self.registry_matches_threads(), "the registry and the owner threads name different partitions"),
                (self.unconfirmed_not_owned(),
                 f"unconfirmed and owned: {_names(self._unconfirmed & self._owned.threads.keys())}"),
                (self.held_are_claimed(), "held znodes of partitions neither owned nor unconfirmed"),
                (self.fetched_are_owned(fetched),
                 f"fetched and not owned: {_names(set(fetched) - self._owned.threads.keys())}"),
            )
        return [problem for holds, problem in checks if not holds]

    def unconfirmed(self) -> frozenset[TopicPartition]:
        """The claims the next release covers besides what is owned."""
        with self._lock:
            return frozenset(self._unconfirmed)

    def held(self) -> HeldZnodes | None:
        """What the next release deletes unread (of the session that claimed it)."""
        return self._held


def _names(partitions: Collection[TopicPartition]) -> str:
    """Partitions as Kafka's logs name them: ``topic-partition``, in order."""
    return ", ".join(str(tp) for tp in sorted(partitions))
