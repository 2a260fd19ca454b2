"""The KIP-848 consumer group coordinator against Kafka 4.x's behaviour, one behaviour per test, on a simulated clock.

:class:`Driver` plays the members as Kafka's consumer does: it keeps the member id and epoch each response gives, owns
exactly the assignment the last response carried (revoking and taking partitions at once), and reports that as its
owned partitions on its next heartbeat.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pytest

from zkconsumer.assignors.topic_ids import Uuid, generated_topic_id
from zkconsumer.front.groups.classic_group_messages import GroupEvent, ListedGroup
from zkconsumer.front.groups.consumer_group import (
    SERVER_ASSIGNORS,
    ConsumerGroupConfig,
    ConsumerGroupCoordinator,
    ServerAssignor,
)
from zkconsumer.front.groups.consumer_group_messages import (
    ConsumerGroupDescribe,
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupState,
    DescribedTopicPartitions,
    ErrorCode,
    MemberState,
    TopicMetadata,
    topic_id_of,
    wire_topic_id,
)

GROUP = "g"
REBALANCE_MS = 60_000
SESSION_MS = 45_000
NOTHING: dict[Uuid, frozenset[int]] = {}


def tid(topic: str) -> Uuid:
    return generated_topic_id(topic)


def tps(topic: str, *partitions: int) -> dict[Uuid, frozenset[int]]:
    return {tid(topic): frozenset(partitions)}


def flat(partitions: Mapping[Uuid, Iterable[int]]) -> set[tuple[Uuid, int]]:
    return {(t, p) for t, ps in partitions.items() for p in ps}


@dataclass
class Client:
    member_id: str
    epoch: int = 0
    owned: dict[Uuid, frozenset[int]] = field(default_factory=dict)
    instance_id: str | None = None


class Driver:
    def __init__(self, config: ConsumerGroupConfig | None = None, topics: Mapping[str, int] | None = None,
                 assignors: Mapping[str, ServerAssignor] = SERVER_ASSIGNORS) -> None:
        ids = itertools.count(1)
        self.coordinator = ConsumerGroupCoordinator(config, new_member_id=lambda: f"m{next(ids)}", assignors=assignors)
        self.now = 0
        self.events: list[GroupEvent] = []
        self.clients: dict[str, Client] = {}
        self.set_topics(topics if topics is not None else {"t": 6})

    def set_topics(self, topics: Mapping[str, int]) -> None:
        self.events += self.coordinator.set_topics(
            [TopicMetadata(name, tid(name), count) for name, count in topics.items()], self.now)

    def send(self, request: ConsumerGroupHeartbeat) -> ConsumerGroupHeartbeatResponse:
        outcome = self.coordinator.heartbeat(request, self.now)
        self.events += outcome.events
        response = outcome.response
        if response.error_code == ErrorCode.none and response.member_id and response.member_epoch >= 0:
            client = self.clients.setdefault(response.member_id, Client(response.member_id))
            client.epoch = response.member_epoch
            client.instance_id = request.instance_id or client.instance_id
            if response.assignment is not None:
                client.owned = {t: frozenset(ps) for t, ps in response.assignment.items()}
        elif response.error_code == ErrorCode.none and response.member_id:
            self.clients.pop(response.member_id, None)
        return response

    def join(self, member_id: str = "", topics: tuple[str, ...] = ("t",), *, instance_id: str | None = None,
             assignor: str | None = None, rebalance_timeout_ms: int = REBALANCE_MS,
             api_version: int = 0) -> ConsumerGroupHeartbeatResponse:
        return self.send(ConsumerGroupHeartbeat(
            GROUP, member_id, 0, instance_id=instance_id, rebalance_timeout_ms=rebalance_timeout_ms,
            subscribed_topic_names=topics, server_assignor=assignor, owned={}, api_version=api_version))

    def hb(self, member_id: str, *, epoch: int | None = None, owned: Mapping[Uuid, frozenset[int]] | None = None,
           report: bool = True, topics: tuple[str, ...] | None = None, instance_id: str | None = None,
           assignor: str | None = None) -> ConsumerGroupHeartbeatResponse:
        """A regular heartbeat; by default with the member's epoch and owned partitions as it last learnt them."""
        client = self.clients.get(member_id, Client(member_id))
        return self.send(ConsumerGroupHeartbeat(
            GROUP, member_id, client.epoch if epoch is None else epoch,
            instance_id=instance_id if instance_id is not None else client.instance_id,
            subscribed_topic_names=topics, server_assignor=assignor,
            owned=(dict(client.owned) if owned is None else dict(owned)) if report else None))

    def leave(self, member_id: str, epoch: int = -1) -> ConsumerGroupHeartbeatResponse:
        client = self.clients.get(member_id, Client(member_id))
        return self.send(ConsumerGroupHeartbeat(GROUP, member_id, epoch, instance_id=client.instance_id))

    def advance(self, ms: int) -> tuple[GroupEvent, ...]:
        self.now += ms
        events = self.coordinator.tick(self.now)
        self.events += events
        return events

    def settle(self, members: Iterable[str] | None = None, rounds: int = 6) -> None:
        """Every member heartbeats with what it owns until nothing changes."""
        for _ in range(rounds):
            for member_id in list(members if members is not None else self.clients):
                self.hb(member_id)
                self.assert_exclusive()

    def assert_exclusive(self) -> None:
        seen: dict[tuple[Uuid, int], str] = {}
        for client in self.clients.values():
            for tp in flat(client.owned):
                assert tp not in seen, f"{tp} owned by {seen[tp]} and {client.member_id}"
                seen[tp] = client.member_id

    def state(self) -> ConsumerGroupState:
        return self.coordinator.state_of(GROUP)

    def rec_state(self, member_id: str) -> MemberState:
        rec = self.coordinator.member_reconciliation(GROUP, member_id)
        assert rec is not None
        return rec.state

    def named(self, name: str) -> list[GroupEvent]:
        return [e for e in self.events if e.name == f"front.consumer_group.{name}"]


def owned_count(d: Driver, member_id: str) -> int:
    return len(flat(d.clients[member_id].owned))


# --- joining, the group epoch and the target assignment ---------------------------------------------------------------


def test_a_first_member_gets_a_generated_id_epoch_two_and_every_partition_at_once() -> None:
    d = Driver()
    response = d.join()
    assert response.error_code == ErrorCode.none
    assert response.member_id == "m1"
    assert response.member_epoch == 2
    assert response.heartbeat_interval_ms == 5_000
    assert response.assignment == tps("t", 0, 1, 2, 3, 4, 5)
    assert d.coordinator.group_epoch_of(GROUP) == 2
    assert d.coordinator.assignment_epoch_of(GROUP) == 2
    assert d.state() == ConsumerGroupState.STABLE
    assert [(e.fields["from"], e.fields["to"]) for e in d.named("state_changed")] == [("Empty", "Stable")]
    assert [e.fields["reason"] for e in d.named("epoch_bumped")] == ["member_joined"]
    computed = d.named("target_assignment_computed")
    assert [(e.fields["epoch"], e.fields["assignor"]) for e in computed] == [(2, "uniform")]


def test_a_member_id_the_client_generated_is_kept_and_from_v1_it_is_required() -> None:
    d = Driver()
    assert d.join("client-made-id", api_version=1).member_id == "client-made-id"
    refused = d.join("", api_version=1)
    assert refused.error_code == ErrorCode.invalid_request
    assert refused.error_message == "MemberId can't be empty."
    assert d.coordinator.members_of(GROUP) == ["client-made-id"]


def test_a_second_member_waits_until_the_first_has_revoked_what_it_is_given() -> None:
    d = Driver()
    a = d.join().member_id
    assert a is not None
    b_response = d.join()
    b = b_response.member_id
    assert b is not None
    assert d.coordinator.group_epoch_of(GROUP) == 3
    assert b_response.member_epoch == 3
    assert b_response.assignment == {}, "its target partitions are still a's"
    assert d.rec_state(b) == MemberState.UNRELEASED_PARTITIONS
    assert d.state() == ConsumerGroupState.RECONCILING

    a_response = d.hb(a)
    assert a_response.member_epoch == 2, "a stays at its epoch until it has revoked"
    assert d.rec_state(a) == MemberState.UNREVOKED_PARTITIONS
    kept = flat(a_response.assignment or {})
    assert len(kept) == 3
    revoked = d.named("partitions_revoked")
    assert [e.fields["member_id"] for e in revoked] == [a]

    assert d.hb(b).assignment is None, "nothing released yet: b's assignment does not change"
    assert d.hb(a).member_epoch == 3, "a reported the revoked partitions gone: it moves to the target epoch"
    assert d.rec_state(a) == MemberState.STABLE
    given = d.hb(b)
    assert flat(given.assignment or {}) == flat(tps("t", *range(6))) - kept
    assert d.rec_state(b) == MemberState.STABLE
    assert d.state() == ConsumerGroupState.STABLE
    d.assert_exclusive()


def test_a_member_that_does_not_report_its_partitions_is_not_taken_to_have_revoked_them() -> None:
    d = Driver()
    a = d.join().member_id
    assert a is not None
    d.join()
    d.hb(a)
    assert d.rec_state(a) == MemberState.UNREVOKED_PARTITIONS
    assert d.hb(a, report=False).member_epoch == 2
    assert d.rec_state(a) == MemberState.UNREVOKED_PARTITIONS


def test_the_previous_target_is_the_stickiness_input_of_uniform() -> None:
    d = Driver()
    a, b = d.join().member_id, d.join().member_id
    assert a is not None and b is not None
    d.settle()
    before = {m: flat(d.clients[m].owned) for m in (a, b)}
    c = d.join().member_id
    assert c is not None
    d.settle()
    for member_id in (a, b):
        assert owned_count(d, member_id) == 2
        assert flat(d.clients[member_id].owned) <= before[member_id], "a member keeps what it had, up to its quota"
    assert owned_count(d, c) == 2


def test_a_subscription_change_bumps_the_group_epoch_and_an_unchanged_heartbeat_does_not() -> None:
    d = Driver(topics={"t": 6, "u": 2})
    a = d.join().member_id
    assert a is not None
    d.hb(a, topics=("t",))
    assert d.coordinator.group_epoch_of(GROUP) == 2
    response = d.hb(a, topics=("t", "u"))
    assert d.coordinator.group_epoch_of(GROUP) == 3
    assert d.named("epoch_bumped")[-1].fields["reason"] == "subscription_changed"
    assert flat(response.assignment or {}) == flat(tps("t", *range(6))) | flat(tps("u", 0, 1))


def test_new_partitions_of_a_subscribed_topic_bump_the_group_epoch_at_the_next_heartbeat() -> None:
    d = Driver(topics={"t": 2, "other": 1})
    a = d.join().member_id
    assert a is not None
    d.set_topics({"t": 2, "other": 3})
    d.hb(a)
    assert d.coordinator.group_epoch_of(GROUP) == 2, "a topic nobody subscribes to changes nothing"
    d.set_topics({"t": 4, "other": 3})
    assert d.coordinator.group_epoch_of(GROUP) == 2, "the group notices at its next heartbeat"
    response = d.hb(a)
    assert d.coordinator.group_epoch_of(GROUP) == 3
    assert d.named("epoch_bumped")[-1].fields["reason"] == "metadata_changed"
    assert response.assignment == tps("t", 0, 1, 2, 3)


def test_a_topic_created_after_the_subscription_is_assigned_once_it_exists() -> None:
    d = Driver(topics={})
    a = d.join().member_id
    assert a is not None
    assert d.clients[a].owned == {}
    d.set_topics({"t": 3})
    assert d.hb(a).assignment == tps("t", 0, 1, 2)


# --- regex subscriptions ---------------------------------------------------------------------------------------------


def join_by_regex(d: Driver, member_id: str, regex: str, names: tuple[str, ...] = ()) -> ConsumerGroupHeartbeatResponse:
    return d.send(ConsumerGroupHeartbeat(GROUP, member_id, 0, rebalance_timeout_ms=REBALANCE_MS,
                                         subscribed_topic_names=names, subscribed_topic_regex=regex, owned={},
                                         api_version=1))


def test_a_regex_subscribes_to_the_topics_it_matches_whole_and_to_new_ones_at_the_next_heartbeat() -> None:
    d = Driver(topics={"orders": 2, "orders-eu": 1, "audit": 1})
    response = join_by_regex(d, "a", "orders.*")
    assert response.assignment == {**tps("orders", 0, 1), **tps("orders-eu", 0)}
    assert join_by_regex(d, "b", "order").assignment == {}, "a regex matches a whole topic name"
    d.set_topics({"orders": 2, "orders-eu": 1, "audit": 1, "orders-us": 1})
    d.hb("a")
    assert d.named("epoch_bumped")[-1].fields["reason"] == "metadata_changed"
    assert tid("orders-us") in d.clients["a"].owned
    described = d.coordinator.describe(ConsumerGroupDescribe((GROUP,))).groups[0].members[0]
    assert (described.subscribed_topic_names, described.subscribed_topic_regex) == ((), "orders.*")


def test_an_empty_regex_is_no_regex_as_librdkafka_sends_it() -> None:
    d = Driver(topics={"t": 2, "u": 1})
    response = join_by_regex(d, "a", "", names=("t",))
    assert (response.error_code, response.assignment) == (ErrorCode.none, tps("t", 0, 1))
    d.send(ConsumerGroupHeartbeat(GROUP, "a", 2, rebalance_timeout_ms=REBALANCE_MS, subscribed_topic_names=("t",),
                                  subscribed_topic_regex="", owned=tps("t", 0, 1)))
    assert d.coordinator.group_epoch_of(GROUP) == 2


def test_changing_the_regex_bumps_the_group_epoch_and_revokes_what_it_no_longer_matches_at_once() -> None:
    d = Driver(topics={"t": 2, "u": 1})
    join_by_regex(d, "a", "t|u")
    assert flat(d.clients["a"].owned) == flat({**tps("t", 0, 1), **tps("u", 0)})
    owned = dict(d.clients["a"].owned)
    response = d.send(ConsumerGroupHeartbeat(GROUP, "a", 2, subscribed_topic_regex="u", owned=owned))
    assert d.named("epoch_bumped")[-1].fields["reason"] == "subscription_changed"
    assert response.assignment == tps("u", 0), "t's partitions are to be revoked"
    assert d.rec_state("a") == MemberState.UNREVOKED_PARTITIONS


def test_an_invalid_regex_is_refused() -> None:
    d = Driver()
    response = join_by_regex(d, "a", "t(")
    assert response.error_code == ErrorCode.invalid_regular_expression
    assert "t(" in (response.error_message or "")
    assert not d.coordinator.has_group(GROUP)


# --- server assignors -------------------------------------------------------------------------------------------------


def test_range_when_the_members_name_it_co_partitions_the_topics() -> None:
    d = Driver(topics={"a": 4, "b": 4})
    first = d.join(topics=("a", "b"), assignor="range").member_id
    second = d.join(topics=("a", "b"), assignor="range").member_id
    assert first is not None and second is not None
    d.settle()
    assert d.named("target_assignment_computed")[-1].fields["assignor"] == "range"
    for member_id in (first, second):
        owned = d.clients[member_id].owned
        assert owned[tid("a")] == owned[tid("b")], "range gives a member the same partition numbers of each topic"
        assert len(owned[tid("a")]) == 2
    assert d.coordinator.describe(ConsumerGroupDescribe((GROUP,))).groups[0].assignor_name == "range"


def test_the_most_named_assignor_wins_and_the_configured_first_is_the_default() -> None:
    d = Driver(ConsumerGroupConfig(assignors=("range", "uniform")))
    d.join()
    assert d.named("target_assignment_computed")[-1].fields["assignor"] == "range"
    d.join(assignor="uniform")
    assert d.named("target_assignment_computed")[-1].fields["assignor"] == "uniform"


def test_an_assignor_that_is_not_configured_is_refused() -> None:
    d = Driver(ConsumerGroupConfig(assignors=("uniform",)))
    response = d.join(assignor="range")
    assert response.error_code == ErrorCode.unsupported_assignor
    assert not d.coordinator.has_group(GROUP), "a refused first heartbeat creates no group"
    with pytest.raises(ValueError, match="group.consumer.assignors names sticky"):
        ConsumerGroupCoordinator(ConsumerGroupConfig(assignors=("sticky",)))
    with pytest.raises(ValueError, match="at least one"):
        ConsumerGroupConfig(assignors=())


# --- member epochs and their errors ---------------------------------------------------------------------------------


def test_a_greater_or_an_older_epoch_is_fenced_and_the_previous_epoch_with_owned_partitions_in_range_is_not() -> None:
    d = Driver()
    a = d.join().member_id
    assert a is not None
    d.join()
    d.settle()
    assert d.clients[a].epoch == 3
    too_new = d.hb(a, epoch=4)
    assert too_new.error_code == ErrorCode.fenced_member_epoch
    assert "greater member epoch (4)" in (too_new.error_message or "")
    previous_with_subset = d.hb(a, epoch=2)
    assert previous_with_subset.error_code == ErrorCode.none, "the response with the new epoch may have been lost"
    assert previous_with_subset.member_epoch == 3
    outside = d.hb(a, epoch=2, owned=tps("t", *range(6)))
    assert outside.error_code == ErrorCode.fenced_member_epoch
    rejected = d.named("heartbeat_rejected")
    assert [e.fields["error"] for e in rejected] == ["FENCED_MEMBER_EPOCH", "FENCED_MEMBER_EPOCH"]


def test_an_unknown_member_or_group_is_answered_as_kafka_answers() -> None:
    d = Driver()
    assert d.hb("nobody", epoch=1).error_code == ErrorCode.group_id_not_found
    d.join()
    assert d.hb("nobody", epoch=1).error_code == ErrorCode.unknown_member_id
    assert d.leave("nobody").error_code == ErrorCode.unknown_member_id


def test_a_known_member_rejoining_with_epoch_zero_gets_its_epoch_and_assignment_back() -> None:
    d = Driver()
    a = d.join("a").member_id
    assert a == "a"
    rejoined = d.join("a")
    assert rejoined.error_code == ErrorCode.none
    assert rejoined.member_epoch == 2
    assert rejoined.assignment == tps("t", *range(6))
    assert d.coordinator.group_epoch_of(GROUP) == 2, "the same subscription: nothing to rebalance"


@pytest.mark.parametrize(("request_", "message"), [
    (ConsumerGroupHeartbeat(" ", "m", 0, rebalance_timeout_ms=1, subscribed_topic_names=("t",), owned={}),
     "GroupId can't be empty."),
    (ConsumerGroupHeartbeat(GROUP, "m", 0, subscribed_topic_names=("t",), owned={}),
     "RebalanceTimeoutMs must be provided in first request."),
    (ConsumerGroupHeartbeat(GROUP, "m", 0, rebalance_timeout_ms=1, subscribed_topic_names=("t",),
                            owned=tps("t", 0)), "TopicPartitions must be empty when (re-)joining."),
    (ConsumerGroupHeartbeat(GROUP, "m", 0, rebalance_timeout_ms=1, owned={}),
     "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."),
    (ConsumerGroupHeartbeat(GROUP, "", 3), "MemberId can't be empty."),
    (ConsumerGroupHeartbeat(GROUP, "m", -2), "InstanceId can't be null."),
    (ConsumerGroupHeartbeat(GROUP, "m", -3), "MemberEpoch is invalid."),
    (ConsumerGroupHeartbeat(GROUP, "m", 0, instance_id="", rebalance_timeout_ms=1, subscribed_topic_names=("t",),
                            owned={}), "InstanceId can't be empty."),
])
def test_an_invalid_heartbeat_is_answered_invalid_request(request_: ConsumerGroupHeartbeat, message: str) -> None:
    d = Driver()
    response = d.send(request_)
    assert (response.error_code, response.error_message) == (ErrorCode.invalid_request, message)
    assert d.coordinator.group_ids() == []


@pytest.mark.parametrize("subscription", [{"subscribed_topic_names": ()}, {"subscribed_topic_regex": ""}])
def test_a_member_may_join_subscribed_to_nothing_and_subscribe_later(subscription: dict) -> None:
    """Kafka 4.0 on: an empty list of names, or an empty regex, in the first heartbeat joins the group with no
    partitions; and a member whose names become an empty list gives its partitions up."""
    d = Driver()
    joined = d.send(ConsumerGroupHeartbeat(GROUP, "m", 0, rebalance_timeout_ms=1_000, owned={}, **subscription))
    assert joined.error_code == ErrorCode.none and joined.member_epoch == 2
    assert not joined.assignment
    subscribed = d.send(ConsumerGroupHeartbeat(GROUP, "m", 2, subscribed_topic_names=("t",)))
    assert subscribed.error_code == ErrorCode.none and subscribed.assignment == tps("t", *range(6))
    emptied = d.send(ConsumerGroupHeartbeat(GROUP, "m", subscribed.member_epoch, subscribed_topic_names=(),
                                            owned=tps("t", *range(6))))
    assert emptied.error_code == ErrorCode.none and emptied.assignment == {}  # to revoke all it owns
    assert d.coordinator.group_epoch_of(GROUP) == 4


def test_the_group_max_size_refuses_a_new_member_but_not_a_known_one() -> None:
    d = Driver(ConsumerGroupConfig(max_size=1))
    a = d.join().member_id
    assert a is not None
    assert d.join().error_code == ErrorCode.group_max_size_reached
    assert d.hb(a).error_code == ErrorCode.none


# --- timeouts -------------------------------------------------------------------------------------------------------


def test_a_member_whose_session_expires_is_removed_and_its_partitions_go_to_the_others() -> None:
    d = Driver()
    a, b = d.join().member_id, d.join().member_id
    assert a is not None and b is not None
    d.settle()
    d.advance(SESSION_MS - 1_000)
    d.hb(a)
    d.advance(999)
    assert d.coordinator.members_of(GROUP) == [a, b]
    expired = d.advance(1)
    assert [(e.name, e.fields["member_id"], e.at_ms) for e in expired if e.name.endswith("member_expired")] == [
        ("front.consumer_group.member_expired", b, SESSION_MS)]
    assert d.coordinator.members_of(GROUP) == [a]
    assert d.state() == ConsumerGroupState.ASSIGNING, "the target is recomputed at the next heartbeat"
    d.clients.pop(b)
    assert d.hb(a).assignment == tps("t", *range(6))
    assert d.state() == ConsumerGroupState.STABLE


def test_the_session_timeout_and_heartbeat_interval_are_configurable() -> None:
    d = Driver(ConsumerGroupConfig(session_timeout_ms=10_000, heartbeat_interval_ms=2_000))
    assert d.join().heartbeat_interval_ms == 2_000
    assert d.coordinator.next_deadline_ms() == 10_000
    d.advance(10_000)
    assert d.coordinator.members_of(GROUP) == []
    assert d.state() == ConsumerGroupState.EMPTY


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced() -> None:
    d = Driver()
    a = d.join(rebalance_timeout_ms=20_000).member_id
    assert a is not None
    b = d.join().member_id
    assert b is not None
    d.hb(a, owned=tps("t", *range(6)))
    assert d.rec_state(a) == MemberState.UNREVOKED_PARTITIONS
    d.advance(10_000)
    d.hb(a, owned=tps("t", *range(6)))
    d.hb(b)
    d.advance(9_999)
    assert a in d.coordinator.members_of(GROUP), "still heartbeating, still within the rebalance timeout"
    fenced = [e for e in d.advance(1) if e.name == "front.consumer_group.member_fenced"]
    assert [(e.fields["member_id"], e.fields["rebalance_timeout_ms"]) for e in fenced] == [(a, 20_000)]
    assert d.hb(a, owned=tps("t", *range(6))).error_code == ErrorCode.unknown_member_id
    d.clients.pop(a)
    d.settle()
    assert d.clients[b].owned == tps("t", *range(6))


def test_timers_fire_at_their_own_deadlines_however_late_the_tick() -> None:
    d = Driver()
    d.join()
    d.advance(10_000)
    d.join()
    events = d.advance(100_000)
    assert [e.at_ms for e in events if e.name.endswith("member_expired")] == [SESSION_MS, SESSION_MS + 10_000]


# --- leaving and static members -------------------------------------------------------------------------------------


def test_leaving_removes_the_member_and_bumps_the_group_epoch() -> None:
    d = Driver()
    a, b = d.join().member_id, d.join().member_id
    assert a is not None and b is not None
    d.settle()
    response = d.leave(a)
    assert (response.error_code, response.member_id, response.member_epoch) == (ErrorCode.none, a, -1)
    assert d.coordinator.group_epoch_of(GROUP) == 4
    assert d.named("epoch_bumped")[-1].fields["reason"] == "member_left"
    d.settle()
    assert d.clients[b].owned == tps("t", *range(6))
    d.leave(b)
    assert d.state() == ConsumerGroupState.EMPTY
    assert d.coordinator.next_deadline_ms() is None


def test_a_static_member_leaving_with_minus_two_keeps_its_partitions_and_its_instance_takes_them_back() -> None:
    d = Driver()
    a = d.join(instance_id="i1").member_id
    b = d.join(instance_id="i2").member_id
    assert a is not None and b is not None
    d.settle()
    held = dict(d.clients[a].owned)
    epoch = d.coordinator.group_epoch_of(GROUP)
    response = d.leave(a, epoch=-2)
    assert (response.error_code, response.member_epoch) == (ErrorCode.none, -2)
    assert d.coordinator.group_epoch_of(GROUP) == epoch, "no rebalance while the instance is away"
    d.settle([b])
    assert flat(d.clients[b].owned).isdisjoint(flat(held))

    back = d.join(instance_id="i1")
    assert back.member_id != a
    assert back.assignment == held, "the new member id takes the instance's assignment at once"
    assert d.coordinator.group_epoch_of(GROUP) == epoch
    assert [e.fields["old_member_id"] for e in d.named("static_member_replaced")] == [a]
    assert d.coordinator.members_of(GROUP) == [b, back.member_id]


def test_an_instance_id_in_use_is_refused_to_another_member() -> None:
    d = Driver()
    a = d.join(instance_id="i1").member_id
    assert a is not None
    assert d.join(instance_id="i1").error_code == ErrorCode.unreleased_instance_id
    assert d.hb("impostor", epoch=1, instance_id="i1").error_code == ErrorCode.fenced_instance_id
    assert d.hb("x", epoch=1, instance_id="unknown").error_code == ErrorCode.unknown_member_id


def test_a_static_member_rejoins_under_its_own_member_id_only_after_leaving_with_minus_two() -> None:
    d = Driver()
    a = d.join("a", instance_id="i1").member_id
    assert a == "a"
    assert d.join("a", instance_id="i1").error_code == ErrorCode.unreleased_instance_id
    d.leave("a", epoch=-2)
    back = d.join("a", instance_id="i1")
    assert (back.error_code, back.member_epoch, back.assignment) == (ErrorCode.none, 2, tps("t", *range(6)))
    assert d.coordinator.members_of(GROUP) == ["a"]


def test_a_static_member_that_left_temporarily_is_removed_when_its_session_expires() -> None:
    d = Driver()
    a = d.join(instance_id="i1").member_id
    assert a is not None
    d.leave(a, epoch=-2)
    d.advance(SESSION_MS)
    assert d.coordinator.members_of(GROUP) == []
    assert d.hb(a, epoch=1, instance_id="i1").error_code == ErrorCode.unknown_member_id


def test_a_static_member_leaving_with_minus_one_leaves_for_good() -> None:
    d = Driver()
    a = d.join(instance_id="i1").member_id
    assert a is not None
    d.leave(a, epoch=-1)
    assert d.coordinator.members_of(GROUP) == []
    assert d.join(instance_id="i1").error_code == ErrorCode.none


# --- describe, list, delete, offsets --------------------------------------------------------------------------------


def test_describe_shows_the_epochs_the_assignor_and_each_members_assignment_and_target() -> None:
    d = Driver()
    a = d.send(ConsumerGroupHeartbeat(GROUP, "a", 0, instance_id="i", rack_id="r1", rebalance_timeout_ms=1_000,
                                      subscribed_topic_names=("t",), owned={}, client_id="cid", client_host="/1.2.3.4"))
    d.join("b")
    assert a.member_id == "a"
    response = d.coordinator.describe(ConsumerGroupDescribe((GROUP, "missing")))
    group, missing = response.groups
    assert missing.error_code == ErrorCode.group_id_not_found
    assert (group.group_state, group.group_epoch, group.assignment_epoch, group.assignor_name) == (
        "Reconciling", 3, 3, "uniform")
    first = group.members[0]
    assert (first.member_id, first.instance_id, first.rack_id, first.member_epoch, first.client_id, first.client_host,
            first.subscribed_topic_names) == ("a", "i", "r1", 2, "cid", "/1.2.3.4", ("t",))
    assert first.assignment == (DescribedTopicPartitions(tid("t"), "t", tuple(range(6))),)
    assert len(first.target_assignment[0].partitions) == 3
    assert d.coordinator.list_groups() == (ListedGroup(GROUP, "consumer", "Reconciling", "consumer"),)


def test_only_an_empty_group_can_be_deleted() -> None:
    d = Driver()
    a = d.join().member_id
    assert a is not None
    assert d.coordinator.delete_group(GROUP, d.now)[0] == ErrorCode.non_empty_group
    d.leave(a)
    code, events = d.coordinator.delete_group(GROUP, d.now)
    assert code == ErrorCode.none
    assert [(e.name, e.fields.get("to")) for e in events] == [
        ("front.consumer_group.state_changed", "Dead"), ("front.consumer_group.deleted", None)]
    assert d.coordinator.delete_group(GROUP, d.now)[0] == ErrorCode.group_id_not_found


def test_offset_commits_and_fetches_are_checked_against_the_member_epoch() -> None:
    d = Driver()
    a = d.join().member_id
    assert a is not None
    check = d.coordinator.offset_commit_error
    assert check(GROUP, a, 2, api_version=9) == ErrorCode.none
    assert check(GROUP, a, 1, api_version=9) == ErrorCode.stale_member_epoch
    assert check(GROUP, a, 2, api_version=8) == ErrorCode.unsupported_version
    assert check(GROUP, "nobody", 2, api_version=9) == ErrorCode.unknown_member_id
    assert d.coordinator.offset_fetch_error(GROUP, a, 2) == ErrorCode.none
    assert d.coordinator.offset_fetch_error(GROUP, a, 3) == ErrorCode.stale_member_epoch
    assert d.coordinator.offset_fetch_error(GROUP, None, -1) == ErrorCode.none
    d.leave(a)
    assert check(GROUP, "", -1, api_version=9) == ErrorCode.none, "an admin's commit to an empty group"


def test_topic_ids_convert_to_and_from_the_wire_form() -> None:
    topic_id = tid("t")
    assert topic_id_of(wire_topic_id(topic_id)) == topic_id
