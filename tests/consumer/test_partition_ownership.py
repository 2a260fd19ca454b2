"""The connector's ownership state (:mod:`zkconsumer.consumer.partition_ownership`) on its own: the rebalance's steps
in their orders (a completed attempt, a conflict, a claim or a release that raised, a session lost), what each
release is asked to delete, and the invariants, which hold after every step and each of which can fail.

:class:`InvariantsAtSteps` checks the same invariants inside a real connector, before every step of its rebalances
(``tests/consumer/test_step_gate.py``, ``tests/consumer/test_connector.py``'s session expiry)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from types import MappingProxyType

import pytest
from time_scale import bounded, scaled

from zkconsumer.consumer.partition_ownership import PartitionOwnership, Registry
from zkconsumer.consumer.partition_topic_info import ChunkQueue, PartitionTopicInfo
from zkconsumer.consumer.step_gate import StepContext
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.events.rebalance_steps import RebalanceStep
from zkconsumer.group.owner_claims import ClaimResult, HeldZnodes
from zkconsumer.types import TopicPartition

SESSION = 0x1234
P0, P1, P2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
QUEUE = ChunkQueue(2, "t/c-0")


@dataclass
class InvariantsAtSteps:
    """A step gate that checks the ownership invariants of :attr:`connector` before each step of its rebalances (the
    fetched partitions are its fetcher manager's); :attr:`violations` keeps the step and what failed."""

    connector: ZookeeperConsumerConnector | None = None
    checked: list[str] = field(default_factory=list)
    violations: list[tuple[str, list[str]]] = field(default_factory=list)

    def __call__(self, step: RebalanceStep, context: StepContext) -> None:
        connector = self.connector
        if connector is None:
            return
        problems = connector._ownership.violations(connector._fetcher.partitions())
        self.checked.append(step.name)
        if problems:
            self.violations.append((step.name, problems))


def share(*partitions: TopicPartition, thread: str = "c-0") -> tuple[Registry, dict[TopicPartition, str]]:
    registry: Registry = {}
    for tp in partitions:
        registry.setdefault(tp.topic, {})[tp.partition] = PartitionTopicInfo(tp.topic, tp.partition, QUEUE, 5, 5,
                                                                             1024, "client")
    return registry, {tp: thread for tp in partitions}


def held(*partitions: TopicPartition) -> HeldZnodes:
    return HeldZnodes(SESSION, MappingProxyType(dict.fromkeys(partitions, 0)))


def claimed(*partitions: TopicPartition) -> ClaimResult:
    return ClaimResult(claimed=partitions, batches=1, held=held(*partitions))


CONFLICT = ClaimResult(conflicts=MappingProxyType({P0: "other-0"}), batches=1)


class Deleter:
    """A release's deleting callback: records what it was asked to delete, and may fail as ZooKeeper can."""

    def __init__(self, fails: bool = False) -> None:
        self.fails = fails
        self.calls: list[tuple[set[TopicPartition], HeldZnodes | None]] = []

    def __call__(self, partitions: set[TopicPartition], held: HeldZnodes | None) -> int:
        self.calls.append((set(partitions), held))
        if self.fails:
            raise ConnectionError("connection lost")
        return len(partitions)


def complete(ownership: PartitionOwnership, *partitions: TopicPartition) -> Registry:
    """One attempt that claims ``partitions`` and publishes them, checking the invariants after each step."""
    registry, threads = share(*partitions)
    ownership.release(Deleter())
    assert ownership.violations() == []
    ownership.claiming(threads)
    assert ownership.violations() == []
    ownership.claimed(threads, claimed(*partitions))
    assert ownership.violations() == []
    ownership.publish(registry, threads)
    assert ownership.violations(fetched=partitions) == []
    return registry


def test_a_new_ownership_owns_nothing_and_holds_its_invariants():
    ownership = PartitionOwnership()
    assert ownership.owned() == {} and ownership.current().registry == {}
    assert ownership.unconfirmed() == frozenset() and ownership.held() is None
    assert ownership.violations() == []


def test_a_completed_attempt_owns_its_share_and_the_next_release_deletes_it_unread():
    ownership = PartitionOwnership()
    registry = complete(ownership, P0, P1)
    assert ownership.owned() == {P0: "c-0", P1: "c-0"}
    assert ownership.current().registry is registry
    assert ownership.current().infos() == [registry["t"][0], registry["t"][1]]
    assert ownership.unconfirmed() == frozenset()  # confirmed by the publication
    assert ownership.held() == held(P0, P1)
    deleting = Deleter()
    assert ownership.release(deleting) == 2
    assert deleting.calls == [({P0, P1}, held(P0, P1))]
    assert ownership.owned() == {} and ownership.current().registry == {} and ownership.held() is None
    assert ownership.violations() == []
    # nothing released is still fetched: what the fetchers had is no longer owned
    assert ownership.violations(fetched=[P0]) == ["fetched and not owned: t-0"]


def test_the_claims_stay_unconfirmed_from_the_claim_until_the_publication():
    ownership = PartitionOwnership()
    _, threads = share(P0, P1)
    ownership.claiming(threads)
    assert ownership.unconfirmed() == {P0, P1}
    ownership.claimed(threads, claimed(P0, P1))
    assert ownership.unconfirmed() == {P0, P1}  # the read after the claim may still fail the attempt
    assert ownership.violations() == []


def test_a_conflict_leaves_nothing_unconfirmed_nor_held():
    ownership = PartitionOwnership()
    complete(ownership, P2)
    ownership.release(Deleter())
    _, threads = share(P0, P1)
    ownership.claiming(threads)
    ownership.claimed(threads, CONFLICT)
    assert ownership.unconfirmed() == frozenset() and ownership.held() is None and ownership.owned() == {}
    deleting = Deleter()
    ownership.release(deleting)
    assert deleting.calls == [(set(), None)]


def test_a_claim_that_raised_is_released_by_the_next_attempt():
    ownership = PartitionOwnership()
    _, threads = share(P0, P1)
    ownership.claiming(threads)  # then the multi-op raised: it may have been applied
    assert ownership.violations() == []
    deleting = Deleter()
    ownership.release(deleting)
    assert deleting.calls == [({P0, P1}, None)]
    assert ownership.unconfirmed() == frozenset()


def test_a_release_that_raised_keeps_what_it_had_to_release_but_never_trusts_the_held_znodes_again():
    ownership = PartitionOwnership()
    complete(ownership, P0)
    _, more = share(P1)
    ownership.claiming(more)  # an unconfirmed claim besides (its claimed() never came)
    failing = Deleter(fails=True)
    with pytest.raises(ConnectionError):
        ownership.release(failing)
    assert failing.calls == [({P0, P1}, held(P0))]
    assert ownership.owned() == {P0: "c-0"} and ownership.unconfirmed() == {P1} and ownership.held() is None
    again = Deleter()
    ownership.release(again)
    assert again.calls == [({P0, P1}, None)]  # read first: the half-done release may have deleted some
    assert ownership.violations() == []


def test_a_lost_session_forgets_what_was_owned_and_the_next_release_covers_it():
    ownership = PartitionOwnership()
    complete(ownership, P0, P1)
    assert ownership.forget() == {P0: "c-0", P1: "c-0"}
    assert ownership.owned() == {} and ownership.current().registry == {}
    assert ownership.unconfirmed() == {P0, P1}
    assert ownership.held() == held(P0, P1)  # of the old session: release_partitions ignores it then
    assert ownership.violations() == []
    deleting = Deleter()
    ownership.release(deleting)
    assert deleting.calls == [({P0, P1}, held(P0, P1))]
    complete(ownership, P2)
    assert ownership.owned() == {P2: "c-0"}


def test_each_invariant_can_fail():
    registry, threads = share(P0)
    mismatched = PartitionOwnership()
    mismatched.publish(registry, {P0: "c-0", P1: "c-0"})
    assert not mismatched.registry_matches_threads()
    assert mismatched.violations() == ["the registry and the owner threads name different partitions"]

    both = PartitionOwnership()
    both.publish(registry, threads)
    both.claiming([P0])
    assert not both.unconfirmed_not_owned()
    assert both.violations() == ["unconfirmed and owned: t-0"]

    stray = PartitionOwnership()
    stray.claiming([P0])
    stray.claimed([P0], claimed(P0, P2))
    assert not stray.held_are_claimed()
    assert stray.violations() == ["held znodes of partitions neither owned nor unconfirmed"]

    fetching = PartitionOwnership()
    fetching.publish(registry, threads)
    assert fetching.fetched_are_owned([P0]) and not fetching.fetched_are_owned([P0, P2])


def test_a_publication_replaces_the_pair_whole_so_a_reader_keeps_a_consistent_one():
    ownership = PartitionOwnership()
    first = complete(ownership, P0)
    before = ownership.current()
    complete(ownership, P1, P2)
    assert before.registry is first and dict(before.threads) == {P0: "c-0"}  # untouched by the next publication
    assert not ownership.is_current(first["t"][0])
    assert ownership.is_current(ownership.current().registry["u"][0])
    registry, _ = share(P1)  # another info for an owned partition is not the registry's
    assert not ownership.is_current(registry["t"][1])


def test_no_step_changes_the_ownership_while_it_is_locked():
    ownership = PartitionOwnership()
    complete(ownership, P0)
    registry, threads = share(P1)
    published = threading.Event()

    def publish() -> None:
        ownership.publish(registry, threads)
        published.set()

    with ownership.locked() as locked:
        assert set(locked["t"]) == {0}
        other = threading.Thread(target=publish, daemon=True)
        other.start()
        assert not published.wait(scaled(0.2))  # waits for the lock (a commit in progress)
        assert ownership.owned() == {P0: "c-0"}
    assert published.wait(bounded(5))
    assert ownership.owned() == {P1: "c-0"}
    other.join(bounded(5))
