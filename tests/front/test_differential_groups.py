"""The group stories of the classic protocol and KIP-848 at Apache Kafka 4.x and at the front, compared by what
confluent-kafka's consumers observe (:mod:`differential`): a member joining a stable group, two joining an empty
one, KIP-848 moving only what moves, a static member's bounce, a session expiring."""

from __future__ import annotations

import uuid

import pytest
from differential import (
    CONSUMER,
    CONSUMER_SESSION_MS,
    PROTOCOLS,
    SESSION_MS,
    ChildMember,
    Coordinator,
    Member,
    Observed,
    closing,
    differences,
    play,
    report,
    settle,
    split_evenly,
)
from time_scale import bounded

pytestmark = pytest.mark.servers


def new_group() -> str:
    return f"g-{uuid.uuid4().hex[:6]}"


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_a_member_joining_a_stable_group(pair, protocol):
    """The joining member's callbacks are compared where they carry partitions: under cooperative-sticky its first
    round gives it nothing (its share is still the first member's), and whether it is called back for that empty
    assignment depends on whether its SyncGroup reached the coordinator before the first member, having revoked,
    joined again (after, it is answered REBALANCE_IN_PROGRESS at either coordinator and joins the next round)."""
    settings = PROTOCOLS[protocol]

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(4), new_group()
        with closing([Member(c, group, [topic], settings)]) as members:
            first = settle(members, lambda: split_evenly(members, 4))
            members.append(Member(c, group, [topic], settings))
            joined = settle(members, lambda: split_evenly(members, 4))
            second = [call for call in members[1].shape() if call[1]]
            return Observed({"first": members[0].shape(), "second": second},
                            {"first": first, "join": joined})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", sorted(PROTOCOLS))
def test_two_members_joining_an_empty_group(pair, protocol):
    """Classic: both join within the initial delay, one round, generation 1. KIP-848: whichever heartbeat comes first
    creates the group, so what each was given on the way differs from run to run; where they end does not."""
    settings = PROTOCOLS[protocol]

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(4), new_group()
        with closing([Member(c, group, [topic], settings), Member(c, group, [topic], settings)]) as members:
            took = settle(members, lambda: split_evenly(members, 4))
            if settings is CONSUMER:
                facts: dict[str, object] = {"epochs": sorted(m.generation() for m in members)}
            else:
                facts = {"members": sorted(m.shape() for m in members)}
            return Observed(facts, {"join": took})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
def test_kip848_moves_only_what_moves(pair):
    """Three consumer-protocol members on six partitions, two each; a fourth joins. Uniform's quotas are 2, 2, 1, 1,
    the extra partitions going to the members first in its (random) order of member ids: the new member gets one or
    two. What holds at both coordinators whatever the order: the partitions moved are exactly those the new member is
    given, each revoked by its owner (one each) before it is given, and the others see no callback at all."""

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(6), new_group()
        with closing([Member(c, group, [topic], CONSUMER) for _ in range(3)]) as members:
            settle(members, lambda: split_evenly(members, 6))
            marks = [len(m.calls) for m in members]
            members.append(Member(c, group, [topic], CONSUMER))
            took = settle(members, lambda: split_evenly(members, 6))
            old = [[(kind, count) for kind, count, _ in m.shape(mark)]
                   for m, mark in zip(members[:3], marks, strict=True)]
            given = len(members[3].assigned())
            # the kinds of callback only: a new member given two partitions gets them in one callback or in two,
            # as its two owners' revocations reach the coordinator before one of its heartbeats or between two
            return Observed({"new_member": sorted({kind for kind, count, _ in members[3].shape() if count}),
                             "moved_is_given": sum(count for calls in old for kind, count in calls
                                                   if kind == "revoke") == given,
                             "revoking": sorted({tuple(calls) for calls in old if calls}),
                             "untouched": sum(1 for calls in old if not calls) == 3 - given,
                             "epochs": sorted(m.generation() for m in members)}, {"join": took})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", ["range", "consumer"])
def test_a_static_member_bounced_within_its_session(pair, protocol):
    """Two static members; one closes and its instance comes back at once (a rolling restart): no rebalance, the other
    member sees nothing, the new instance is given what the old one had, at the same generation."""
    settings = PROTOCOLS[protocol]

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(4), new_group()
        members = [Member(c, group, [topic], settings, "a"), Member(c, group, [topic], settings, "b")]
        with closing(members):
            settle(members, lambda: split_evenly(members, 4))
            before, mark = (sorted(members[0].assigned()), members[0].generation()), len(members[1].calls)
            members[0].close()
            bounced = Member(c, group, [topic], settings, "a")
            members.append(bounced)
            took = settle([members[1], bounced], lambda: bounced.assigned() and split_evenly(members[1:], 4))
            return Observed({"closing": members[0].shape()[-1:], "bounced": bounced.shape(),
                             "same_partitions": (sorted(bounced.assigned()), bounced.generation()) == before,
                             "other": members[1].shape(mark), "errors": bounced.errors + members[1].errors},
                            {"bounce": took})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", ["cooperative-sticky", "consumer"])
def test_a_member_killed_is_expired_after_its_session(pair, protocol):
    """A member's process is SIGKILLed: its partitions go to the survivor once its session times out (the member's
    ``session.timeout.ms``, or ``group.consumer.session.timeout.ms``)."""
    settings = PROTOCOLS[protocol]
    session_s = (CONSUMER_SESSION_MS if settings is CONSUMER else SESSION_MS) / 1000

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(4), new_group()
        child = ChildMember(c, group, [topic], settings)
        try:
            assert child.assigned.wait(bounded(30)), f"the child member was never assigned at {c.name}"
            with closing([Member(c, group, [topic], settings)]) as (survivor,):
                settle([survivor], lambda: len(survivor.assigned()) == 2)
                mark = len(survivor.calls)
                child.kill()
                took = settle([survivor], lambda: len(survivor.assigned()) == 4)
                return Observed({"survivor": survivor.shape(mark)}, {"expiry": took})
        finally:
            child.kill()

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}
    for name, seen in observed.items():  # a lower bound holds on any machine
        assert seen.settle_s["expiry"] >= session_s * 0.8, name
