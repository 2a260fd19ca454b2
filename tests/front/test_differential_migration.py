"""Moving a group between the classic protocol and KIP-848 at Apache Kafka 4.x and at the front, compared by what
confluent-kafka's consumers observe (:mod:`differential`): the online upgrade and downgrade with classic and
consumer members mixed, static members changing protocol, how a classic member of a consumer group is paced."""

from __future__ import annotations

import uuid

import pytest
from differential import (
    CONSUMER,
    PROTOCOLS,
    Coordinator,
    Member,
    Observed,
    closing,
    differences,
    listed,
    play,
    report,
    settle,
    settled,
    split_evenly,
)

pytestmark = pytest.mark.servers


def new_group() -> str:
    return f"g-{uuid.uuid4().hex[:6]}"


def kinds(member: Member, since: int) -> list[tuple[str, int]]:
    return [(kind, count) for kind, count, _ in member.shape(since)]


@pytest.mark.timeout(120)
@pytest.mark.parametrize("protocol", ["range", "cooperative-sticky"])
def test_the_online_upgrade_and_downgrade_with_classic_and_consumer_members(pair, protocol):
    """Two classic members on six partitions, then a consumer-protocol member joins (the group becomes a consumer group,
    its classic members staying; uniform gives each member two, whatever its order of members), then it leaves (the
    group is classic again and rebalances)."""
    settings = PROTOCOLS[protocol]

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(6), new_group()
        with closing([Member(c, group, [topic], settings), Member(c, group, [topic], settings)]) as members:
            settle(members, lambda: split_evenly(members, 6))
            marks = [len(m.calls) for m in members]
            members.append(Member(c, group, [topic], CONSUMER))
            upgraded = settle(members, lambda: split_evenly(members, 6))
            facts: dict[str, object] = {
                "upgraded_classic": sorted(kinds(m, mark) for m, mark in zip(members[:2], marks, strict=True)),
                # given its partitions as each is freed: two callbacks or one, by when the classic members' revocations
                # fall between its heartbeats
                "upgraded_consumer": (sorted({kind for kind, _ in kinds(members[2], 0)}),
                                      sum(n for _, n in kinds(members[2], 0))),
                "type_upgraded": listed(c, group),
                "epochs_upgraded": [m.generation() for m in members]}
            marks = [len(m.calls) for m in members[:2]]
            members[2].close()
            downgraded = settle(members[:2], lambda: split_evenly(members[:2], 6))
            facts |= {"downgraded": sorted(kinds(m, mark) for m, mark in zip(members[:2], marks, strict=True)),
                      "type_downgraded": listed(c, group),
                      "generations_downgraded": [m.generation() for m in members[:2]],
                      "errors": sorted({e for m in members for e in m.errors})}
            return Observed(facts, {"upgrade": upgraded, "downgrade": downgraded})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
def test_a_static_classic_member_coming_back_with_the_consumer_protocol(pair):
    """A rolling upgrade of a statically-membered classic group: a member closes (a static member sends no
    LeaveGroup) and its instance comes back at once with ``group.protocol=consumer``. Kafka lets it replace the
    classic member at once (either side classic: ``getOrMaybeSubscribeStaticConsumerGroupMember``)."""
    settings = PROTOCOLS["range"]

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(4), new_group()
        members = [Member(c, group, [topic], settings, "a"), Member(c, group, [topic], settings, "b")]
        with closing(members):
            settle(members, lambda: split_evenly(members, 4))
            mark = len(members[1].calls)
            members[0].close()
            back = Member(c, group, [topic], CONSUMER, "a")
            members.append(back)
            took = settled(members[1:], lambda: split_evenly(members[1:], 4), timeout=15)
            return Observed({"back": kinds(back, 0), "other": kinds(members[1], mark), "type": listed(c, group),
                             "errors": sorted(set(back.errors + members[1].errors)), "settled": took is not None},
                            {"replace": took or -1.0})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
def test_a_static_consumer_member_coming_back_with_the_classic_protocol(pair):
    """The way back: a consumer group of a classic static member and a consumer-protocol static member (the latter's
    join upgraded the group); the consumer-protocol member closes (epoch -2, its instance kept) and comes back with
    the classic protocol. It replaces its instance, and the group, classic members only, is a classic group again at
    once, without a rebalance (Kafka's ``validateOnlineDowngradeWithReplacedMemberId``)."""
    settings = PROTOCOLS["range"]

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(4), new_group()
        members = [Member(c, group, [topic], settings, "b")]
        with closing(members):
            settle(members, lambda: split_evenly(members, 4))
            members.insert(0, Member(c, group, [topic], CONSUMER, "a"))
            settle(members, lambda: split_evenly(members, 4))
            mark = len(members[1].calls)
            members[0].close()
            back = Member(c, group, [topic], settings, "a")
            members.append(back)
            took = settled(members[1:], lambda: split_evenly(members[1:], 4), timeout=15)
            return Observed({"back": kinds(back, 0), "other": kinds(members[1], mark), "type": listed(c, group),
                             "errors": sorted(set(back.errors + members[1].errors)), "settled": took is not None,
                             "generations": [m.generation() for m in members[1:]]},
                            {"replace": took or -1.0})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}


@pytest.mark.timeout(120)
def test_a_classic_member_waiting_on_partitions_of_two_members_rejoins_once_all_are_free(pair):
    """An eager classic member joins a consumer group of two consumer-protocol members holding three partitions each;
    its target takes one from each, and one of them takes two seconds to revoke (its callback commits, say). Kafka
    asks the classic member to rejoin once every partition it waits for is free (``waitingOnUnreleasedPartition``), so
    it revokes and is given once, not once per partition freed."""

    def story(c: Coordinator) -> Observed:
        topic, group = c.topic(6), new_group()
        members = [Member(c, group, [topic], CONSUMER), Member(c, group, [topic], CONSUMER, revoke_s=2.0)]
        with closing(members):
            settle(members, lambda: split_evenly(members, 6))
            members[1].poll_in_background()
            members.append(Member(c, group, [topic], PROTOCOLS["range"]))
            took = settle(members, lambda: split_evenly(members, 6))
            return Observed({"classic": kinds(members[2], 0), "errors": sorted(set(members[2].errors))},
                            {"join": took})

    observed = play(pair, story)
    print(report(observed))
    assert differences(observed) == {}
