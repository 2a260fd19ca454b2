"""The online upgrade of a live classic group to a consumer group, as Kafka 4.x does it, on the pure coordinators: the
conversion (members kept at the classic generation with their assignments), the classic members answered from the
consumer group (REBALANCE_IN_PROGRESS while they must move, their assignment in SyncGroup), the policy, and a
classic group that cannot convert."""

from __future__ import annotations

import struct

import pytest
from msgspec.structs import replace

from zkconsumer.assignors.topic_ids import generated_topic_id
from zkconsumer.front.groups import classic_group_messages as classic
from zkconsumer.front.groups.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.front.groups.consumer_group import ConsumerGroupConfig, ConsumerGroupCoordinator
from zkconsumer.front.groups.consumer_group_messages import (
    ConsumerGroupHeartbeat,
    ConsumerGroupState,
    ErrorCode,
    MemberState,
    TopicMetadata,
)
from zkconsumer.front.groups.group_records import (
    ClassicGroupRecord,
    ClassicMemberRecord,
    decode,
    encode_key,
    encode_value,
)
from zkconsumer.kafka.consumer_protocol import decode_assignment, decode_subscription, encode_assignment
from zkconsumer.types import TopicPartition

GROUP, TOPIC, PARTITIONS = "g", "t", 4
TOPIC_ID = generated_topic_id(TOPIC)


def subscription(*owned: int, topic: str = TOPIC) -> bytes:
    """A ConsumerProtocol v1 Subscription of ``topic`` owning ``owned``."""
    name = topic.encode()
    head = struct.pack(f">hih{len(name)}si", 1, 1, len(name), name, -1)
    return head + struct.pack(f">ih{len(name)}si{len(owned)}i", 1, len(name), name, len(owned), *owned)


def classic_record(generation: int = 5, protocol_type: str = "consumer") -> ClassicGroupRecord:
    members = (
        ClassicMemberRecord("a", None, "ca", "/h", 60_000, 10_000, subscription(0, 1),
                            encode_assignment({TOPIC: frozenset({0, 1})})),
        ClassicMemberRecord("b", None, "cb", "/h", 60_000, 10_000, subscription(2, 3),
                            encode_assignment({TOPIC: frozenset({2, 3})})))
    return ClassicGroupRecord(protocol_type, generation, "cooperative-sticky", "a", members)


def coordinator(policy: str = "bidirectional") -> ConsumerGroupCoordinator:
    consumers = ConsumerGroupCoordinator(ConsumerGroupConfig(migration_policy=policy))
    consumers.set_topics([TopicMetadata(TOPIC, TOPIC_ID, PARTITIONS)], 0)
    return consumers


def join(member_id: str, *owned: int, now: int = 0) -> classic.JoinGroup:
    return classic.JoinGroup(0, GROUP, member_id, "consumer",
                             (classic.Protocol("cooperative-sticky", subscription(*owned)),), 10_000, 60_000, 5)


def assigned(response: classic.SyncGroupResponse) -> set[int]:
    return {tp.partition for tp in decode_assignment(response.assignment)}


def test_consumer_protocol_bytes_read_back():
    assert decode_subscription(subscription(1, 2)).owned == (TopicPartition(TOPIC, 1), TopicPartition(TOPIC, 2))
    assert decode_assignment(encode_assignment({TOPIC: frozenset({3, 1})})) == (TopicPartition(TOPIC, 1),
                                                                                TopicPartition(TOPIC, 3))


def test_a_converted_group_keeps_every_member_at_the_generation_with_its_assignment():
    consumers = coordinator()
    assert consumers.upgrade_refused(GROUP, classic_record(), 0)[0] is None
    events = consumers.upgrade(GROUP, classic_record(), "Stable", 0)
    assert [e.name for e in events][-1] == "front.consumer_group.upgraded"
    assert consumers.state_of(GROUP) is ConsumerGroupState.STABLE
    assert consumers.group_epoch_of(GROUP) == consumers.assignment_epoch_of(GROUP) == 5
    a = consumers.member_reconciliation(GROUP, "a")
    assert a is not None and a.member_epoch == 5 and a.assigned == {TOPIC_ID: frozenset({0, 1})}
    beat, _ = consumers.classic_heartbeat(classic.Heartbeat(0, GROUP, 5, "a"), 1)
    assert beat.error_code == ErrorCode.none  # nothing moves until the group epoch does
    stale, _ = consumers.classic_heartbeat(classic.Heartbeat(0, GROUP, 4, "a"), 1)
    assert stale.error_code == ErrorCode.illegal_generation


def test_classic_members_move_over_to_a_new_consumer_member_without_a_partition_owned_twice():
    consumers = coordinator()
    consumers.upgrade(GROUP, classic_record(), "Stable", 0)
    outcome = consumers.heartbeat(ConsumerGroupHeartbeat(GROUP, "c", 0, rebalance_timeout_ms=60_000,
                                                         subscribed_topic_names=(TOPIC,), owned={}, api_version=1), 1)
    assert outcome.response.error_code == ErrorCode.none and consumers.group_epoch_of(GROUP) == 6
    assert outcome.response.assignment == {}  # every partition is still the classic members'
    mine = dict(outcome.response.assignment)
    owned = {"a": {0, 1}, "b": {2, 3}}
    generation = {"a": 5, "b": 5}
    for _ in range(4):  # the classic members heartbeat, rejoin, sync and revoke as a cooperative client does
        for member in ("a", "b"):
            beat, _ = consumers.classic_heartbeat(classic.Heartbeat(0, GROUP, generation[member], member), 2)
            if beat.error_code == ErrorCode.none:
                continue
            assert beat.error_code == ErrorCode.rebalance_in_progress
            joined, _ = consumers.classic_join(join(member, *sorted(owned[member])), 2)
            assert joined.error_code == ErrorCode.none and joined.leader == "" and not joined.members
            generation[member] = joined.generation_id
            synced, _ = consumers.classic_sync(classic.SyncGroup(0, GROUP, joined.generation_id, member), 2)
            assert synced.error_code == ErrorCode.none and synced.protocol_name == "cooperative-sticky"
            owned[member] = assigned(synced)
        outcome = consumers.heartbeat(ConsumerGroupHeartbeat(
            GROUP, "c", outcome.response.member_epoch, owned=mine, api_version=1), 3)
        mine = dict(outcome.response.assignment) if outcome.response.assignment is not None else mine
    assert consumers.state_of(GROUP) is ConsumerGroupState.STABLE
    assert len(mine.get(TOPIC_ID, frozenset())) == 1
    taken = [p for ps in owned.values() for p in ps] + list(mine[TOPIC_ID])
    assert sorted(taken) == list(range(PARTITIONS))
    rec = consumers.member_reconciliation(GROUP, "a")
    assert rec is not None and rec.state is MemberState.STABLE and rec.member_epoch == 6


def test_a_classic_member_commits_with_its_generation_at_any_version_and_leaves_with_leave_group():
    consumers = coordinator()
    consumers.upgrade(GROUP, classic_record(), "Stable", 0)
    assert consumers.offset_commit_error(GROUP, "a", 5, api_version=2) == ErrorCode.none
    assert consumers.offset_commit_error(GROUP, "a", 4, api_version=2) == ErrorCode.illegal_generation
    left, _ = consumers.classic_leave(classic.LeaveGroup(0, GROUP, (classic.LeavingMember("a"),)), 1)
    assert left.error_code == ErrorCode.none and consumers.members_of(GROUP) == ["b"]


def test_a_converted_group_s_record_keeps_its_classic_members():
    consumers = coordinator()
    consumers.upgrade(GROUP, classic_record(), "Stable", 0)
    record = consumers.record_of(GROUP)
    assert record is not None
    _, read = decode(encode_key("front", GROUP), encode_value(record))
    again = coordinator()
    assert read is not None and not isinstance(read, ClassicGroupRecord)
    again.load(GROUP, read, 0)
    beat, _ = again.classic_heartbeat(classic.Heartbeat(0, GROUP, 5, "b"), 1)
    assert beat.error_code == ErrorCode.none


@pytest.mark.parametrize(("policy", "protocol_type", "refused", "reason"), [
    ("downgrade", "consumer", "because online upgrade is disabled", "group.consumer.migration.policy is downgrade"),
    ("disabled", "consumer", "because online upgrade is disabled", "group.consumer.migration.policy is disabled"),
    ("upgrade", "connect", "because the group does not use the consumer embedded protocol", "protocol type 'connect'"),
])
def test_an_upgrade_the_policy_or_the_protocol_refuses(policy, protocol_type, refused, reason):
    consumers = coordinator(policy)
    message, events = consumers.upgrade_refused(GROUP, classic_record(protocol_type=protocol_type), 0)
    assert message == f"Cannot upgrade classic group {GROUP} to consumer group {refused}."
    assert [e.name for e in events] == ["front.consumer_group.upgrade_refused"]
    assert reason in events[0].fields["reason"]
    assert not consumers.has_group(GROUP)


def test_an_upgrade_is_refused_where_an_assignment_carries_an_assignor_s_user_data():
    """Kafka 4.0 on (KAFKA-18134): a consumer group keeps no assignor user data, so a group whose assignor writes some
    (a custom one) stays classic; an empty user data is none."""
    assignment = encode_assignment({TOPIC: frozenset({0, 1})})
    with_user_data = assignment[:-4] + struct.pack(">i", 3) + b"abc"
    empty_user_data = assignment[:-4] + struct.pack(">i", 0)
    record = classic_record()
    custom = replace(record, members=(replace(record.members[0], assignment=with_user_data), record.members[1]))
    message, events = coordinator().upgrade_refused(GROUP, custom, 0)
    assert message is not None and "because an unsupported custom assignor is in use" in message
    assert [e.fields["reason"] for e in events] == ["a member's assignment carries an assignor's user data"]
    plain = replace(record, members=(replace(record.members[0], assignment=empty_user_data), record.members[1]))
    assert coordinator().upgrade_refused(GROUP, plain, 0)[0] is None


def test_the_classic_coordinator_hands_over_a_group_mid_round_answering_its_waiting_joins():
    groups = ClassicGroupCoordinator(ClassicGroupConfig(initial_rebalance_delay_ms=0))
    step = groups.handle(classic.JoinGroup(1, GROUP, "", "consumer", (classic.Protocol("range", subscription()),),
                                           10_000, 60_000, 3), 0)
    assert step.effects  # the first member's round completes at once, no initial delay
    record, state, step = groups.hand_over(GROUP, 1)
    assert record is not None and len(record.members) == 1 and state == "CompletingRebalance"
    assert GROUP not in groups.group_ids()


def upgraded_with_a_consumer_member(policy: str = "bidirectional") -> ConsumerGroupCoordinator:
    """The converted group, a consumer-protocol member ``c`` joined, every member moved to the new target."""
    consumers = coordinator(policy)
    consumers.upgrade(GROUP, classic_record(), "Stable", 0)
    outcome = consumers.heartbeat(ConsumerGroupHeartbeat(GROUP, "c", 0, rebalance_timeout_ms=60_000,
                                                         subscribed_topic_names=(TOPIC,), owned={}, api_version=1), 1)
    assert outcome.response.error_code == ErrorCode.none
    return consumers


def test_the_last_consumer_member_leaving_turns_the_group_classic_again_and_it_rebalances():
    consumers = upgraded_with_a_consumer_member()
    assert consumers.downgrade(GROUP, 2)[0] is None  # a consumer-protocol member remains
    consumers.heartbeat(ConsumerGroupHeartbeat(GROUP, "c", -1, api_version=1), 3)
    record, events = consumers.downgrade(GROUP, 3)
    assert record is not None and [e.name for e in events] == ["front.consumer_group.downgraded"]
    assert not consumers.has_group(GROUP)
    assert record.generation == 6 and [m.member_id for m in record.members] == ["a", "b"]
    assert record.protocol == "cooperative-sticky" and record.protocol_type == "consumer"
    held = [tp.partition for m in record.members for tp in decode_assignment(m.assignment)]
    assert len(held) == len(set(held))
    groups = ClassicGroupCoordinator(ClassicGroupConfig())
    groups.adopt(GROUP, record, 3)
    assert groups.state_of(GROUP) is classic.GroupState.PREPARING_REBALANCE and groups.generation_of(GROUP) == 6
    step = groups.handle(classic.Heartbeat(1, GROUP, 6, "a"), 4)
    assert [e.response.error_code for e in step.effects] == [ErrorCode.rebalance_in_progress]  # type: ignore[union-attr]


def test_the_upgrade_policy_keeps_a_group_of_classic_members_a_consumer_group():
    consumers = upgraded_with_a_consumer_member("upgrade")
    consumers.heartbeat(ConsumerGroupHeartbeat(GROUP, "c", -1, api_version=1), 3)
    assert consumers.downgrade(GROUP, 3) == (None, ())
    assert consumers.members_of(GROUP) == ["a", "b"]


# --- where the front followed Kafka 4.4 once both were run (tests/front/test_differential_*.py) ---------------------


def member_epoch(consumers: ConsumerGroupCoordinator, member_id: str) -> int:
    rec = consumers.member_reconciliation(GROUP, member_id)
    assert rec is not None
    return rec.member_epoch


def consumer_join(member_id: str, instance_id: str | None = None, now: int = 1) -> tuple[ConsumerGroupHeartbeat, int]:
    return ConsumerGroupHeartbeat(GROUP, member_id, 0, instance_id=instance_id, rebalance_timeout_ms=60_000,
                                  subscribed_topic_names=(TOPIC,), owned={}, api_version=1), now


def static_record() -> ClassicGroupRecord:
    record = classic_record()
    return replace(record, members=tuple(replace(m, group_instance_id=f"i-{m.member_id}") for m in record.members))


def test_a_consumer_member_takes_a_classic_static_member_s_instance_at_once():
    """A static member's instance coming back with the consumer protocol replaces the classic member at once, its
    assignment and all: a classic static member never says it leaves (Kafka lets either side classic replace; two
    consumer-protocol members only after the old one's -2)."""
    consumers = coordinator()
    consumers.upgrade(GROUP, static_record(), "Stable", 0)
    outcome = consumers.heartbeat(*consumer_join("a2", "i-a"))
    assert outcome.response.error_code == ErrorCode.none
    assert consumers.members_of(GROUP) == ["b", "a2"]
    assert outcome.response.assignment == {TOPIC_ID: frozenset({0, 1})}
    assert [e.name for e in outcome.events].count("front.consumer_group.static_member_replaced") == 1
    assert consumers.group_epoch_of(GROUP) == 5, "a replacement is no rebalance"
    # and the new member speaks the consumer protocol: it commits with its member epoch at OffsetCommit v9
    assert consumers.offset_commit_error(GROUP, "a2", outcome.response.member_epoch, api_version=8) == \
        ErrorCode.unsupported_version


def test_a_classic_member_takes_a_consumer_static_member_s_instance_at_once():
    consumers = coordinator()
    consumers.upgrade(GROUP, static_record(), "Stable", 0)
    consumers.heartbeat(*consumer_join("c", "i-c"))
    request = classic.JoinGroup(0, GROUP, "", "consumer", (classic.Protocol("range", subscription()),), 10_000,
                                60_000, 5, group_instance_id="i-c")
    joined, events = consumers.classic_join(request, 2)
    assert joined.error_code == ErrorCode.none
    assert "c" not in consumers.members_of(GROUP) and joined.member_id in consumers.members_of(GROUP)
    assert [e.name for e in events].count("front.consumer_group.static_member_replaced") == 1


def test_a_classic_member_is_asked_to_rejoin_only_once_every_partition_it_waits_for_is_free():
    """Kafka's ``waitingOnUnreleasedPartition``: an eager member revokes everything at each rejoin, so asking it once
    per partition freed would cost it a round each. Two consumer-protocol members hold three partitions each of six; a
    classic member joins and is given one of each: it is asked to rejoin once both are free, not after the first."""
    six, six_id = "six", generated_topic_id("six")
    consumers = ConsumerGroupCoordinator(ConsumerGroupConfig())
    consumers.set_topics([TopicMetadata(six, six_id, 6)], 0)

    def beat(member: str, owned: frozenset[int], now: int) -> frozenset[int]:
        rec = consumers.member_reconciliation(GROUP, member)
        outcome = consumers.heartbeat(ConsumerGroupHeartbeat(
            GROUP, member, rec.member_epoch if rec else 0, rebalance_timeout_ms=60_000 if rec is None else -1,
            subscribed_topic_names=(six,) if rec is None else None, owned={six_id: owned}, api_version=1), now)
        assert outcome.response.error_code == ErrorCode.none
        assignment = outcome.response.assignment
        return owned if assignment is None else assignment.get(six_id, frozenset())

    owned = {"x": beat("x", frozenset(), 1)}
    owned["y"] = beat("y", frozenset(), 2)
    for now in (3, 4):
        for member in ("x", "y"):
            owned[member] = beat(member, owned[member], now)
    assert sorted(len(ps) for ps in owned.values()) == [3, 3]
    joined, _ = consumers.classic_join(classic.JoinGroup(0, GROUP, "m", "consumer", (
        classic.Protocol("range", subscription(topic=six)),), 10_000, 60_000, 3), 5)
    assert joined.error_code == ErrorCode.none
    target = consumers.target_of(GROUP, "m")[six_id]
    assert all(len(owned[m] & target) == 1 for m in ("x", "y"))
    owned["x"] = beat("x", owned["x"] - target, 6)  # x lets its partition go
    waiting, _ = consumers.classic_heartbeat(classic.Heartbeat(0, GROUP, joined.generation_id, "m"), 7)
    assert waiting.error_code == ErrorCode.none, "y still holds the other one: not asked to rejoin yet"
    owned["y"] = beat("y", owned["y"] - target, 8)
    free, _ = consumers.classic_heartbeat(classic.Heartbeat(0, GROUP, joined.generation_id, "m"), 9)
    assert free.error_code == ErrorCode.rebalance_in_progress


def test_a_classic_member_s_sync_behind_the_group_epoch_is_answered_rebalance_in_progress():
    consumers = coordinator()
    consumers.upgrade(GROUP, classic_record(), "Stable", 0)
    joined, _ = consumers.classic_join(join("a", 0, 1), 1)
    consumers.heartbeat(*consumer_join("c", now=2))  # the group epoch moves before a syncs
    synced, _ = consumers.classic_sync(classic.SyncGroup(0, GROUP, joined.generation_id, "a"), 3)
    assert synced.error_code == ErrorCode.rebalance_in_progress


@pytest.mark.parametrize("step", ["rejoin", "sync"])
def test_a_classic_member_that_does_not_rejoin_or_sync_within_its_rebalance_timeout_is_fenced(step):
    """Kafka's join and sync timeouts of a consumer group's classic members: told to rejoin (here, a consumer member
    joined), it must send its JoinGroup within its rebalance timeout (60 s here), and its SyncGroup within it after
    its JoinGroup's answer, though its heartbeats keep its session alive."""
    consumers = coordinator()
    consumers.upgrade(GROUP, classic_record(), "Stable", 0)
    consumers.heartbeat(*consumer_join("c", now=1))
    beat, _ = consumers.classic_heartbeat(classic.Heartbeat(0, GROUP, 5, "a"), 2)
    assert beat.error_code == ErrorCode.rebalance_in_progress
    generation = 5
    if step == "sync":
        joined, _ = consumers.classic_join(join("a", 0, 1), 3)
        generation = joined.generation_id
    for now in range(5_000, 60_000, 5_000):  # heartbeats within its 10 s session
        consumers.classic_heartbeat(classic.Heartbeat(0, GROUP, generation, "a"), now)
    assert "a" in consumers.members_of(GROUP)
    events = consumers.tick(64_000)
    assert "a" not in consumers.members_of(GROUP)
    assert [e.fields["member_id"] for e in events if e.name == "front.consumer_group.member_fenced"] == ["a"]


def test_a_loaded_consumer_group_gives_its_classic_members_the_consumer_session():
    """Kafka's ``onLoaded`` arms ``group.consumer.session.timeout.ms`` for every member of a consumer group, a classic
    one's too: a classic member that does not come back after a restart expires after that, not its own session."""
    consumers = ConsumerGroupCoordinator(ConsumerGroupConfig(session_timeout_ms=45_000))
    consumers.set_topics([TopicMetadata(TOPIC, TOPIC_ID, PARTITIONS)], 0)
    consumers.upgrade(GROUP, classic_record(), "Stable", 0)  # classic sessions of 10 s
    record = consumers.record_of(GROUP)
    again = ConsumerGroupCoordinator(ConsumerGroupConfig(session_timeout_ms=45_000))
    again.set_topics([TopicMetadata(TOPIC, TOPIC_ID, PARTITIONS)], 0)
    assert record is not None
    again.load(GROUP, record, 100_000)
    again.tick(100_000 + 44_000)
    assert again.members_of(GROUP) == ["a", "b"]
    again.classic_heartbeat(classic.Heartbeat(0, GROUP, 5, "a"), 100_000 + 44_500)  # its own session from here
    expired = again.tick(100_000 + 45_000)
    assert [e.fields["member_id"] for e in expired if e.name == "front.consumer_group.member_expired"] == ["b"]
    assert [e.fields["member_id"] for e in again.tick(100_000 + 44_500 + 10_000)
            if e.name == "front.consumer_group.member_expired"] == ["a"]


def test_a_transactional_commit_naming_no_member_is_taken_by_a_live_consumer_group():
    """Kafka 4.0 on (KAFKA-18060): TxnOffsetCommit needs no member id, generation or instance id; a plain commit
    naming none is still refused by a group with members."""
    consumers = coordinator()
    consumers.heartbeat(*consumer_join("c"))
    assert consumers.offset_commit_error(GROUP, "", -1, api_version=3, transactional=True) == ErrorCode.none
    assert consumers.offset_commit_error(GROUP, "", -1, api_version=9) == ErrorCode.unknown_member_id
    assert consumers.offset_commit_error(GROUP, "", -1, api_version=3, transactional=True,
                                         instance_id="i") == ErrorCode.unknown_member_id
