"""The coordinator facade returns the records to write: every group an input may have changed (the groups it names,
those whose timers fired meanwhile) is compared with its last record, so a change no event mentions is stored all
the same, a group's timer firing during another group's input is stored with that input, and nothing unchanged is
written again. Pure: no loop, no broker."""

from __future__ import annotations

import struct

import pytest

from zkconsumer.assignors.topic_ids import generated_topic_id
from zkconsumer.front.groups.classic_group import ClassicGroupConfig, ClassicGroupCoordinator
from zkconsumer.front.groups.classic_group_messages import (
    ErrorCode,
    GroupState,
    Heartbeat,
    JoinGroup,
    JoinGroupResponse,
    Protocol,
    SyncGroup,
    SyncGroupResponse,
)
from zkconsumer.front.groups.consumer_group import ConsumerGroupCoordinator
from zkconsumer.front.groups.consumer_group_messages import ConsumerGroupHeartbeat, TopicMetadata
from zkconsumer.front.groups.coordinator import CoordinatorResult, GroupCoordinator
from zkconsumer.front.groups.group_records import ClassicGroupRecord, decode, encode_key
from zkconsumer.kafka.consumer_protocol import encode_assignment

SESSION_MS = 10_000


def _coordinator(monkeypatch: pytest.MonkeyPatch, events: bool = True) -> GroupCoordinator:
    classic = ClassicGroupCoordinator(ClassicGroupConfig(initial_rebalance_delay_ms=0))
    if not events:  # a machine whose changes no event names
        monkeypatch.setattr(classic, "_event", lambda *args, **kwargs: None)
    return GroupCoordinator(classic, ConsumerGroupCoordinator())


def _stable(coordinator: GroupCoordinator, group: str, now_ms: int) -> tuple[str, list[CoordinatorResult]]:
    """One member joined and synced: the group Stable at generation 1."""
    joined = coordinator.join_group(JoinGroup(1, group, "", "consumer", (Protocol("range", b"m"),), SESSION_MS,
                                              SESSION_MS, api_version=3), now_ms)
    answer = joined.response(1)
    assert isinstance(answer, JoinGroupResponse) and answer.error_code is ErrorCode.none
    synced = coordinator.handle(SyncGroup(2, group, answer.generation_id, answer.member_id,
                                          assignments=((answer.member_id, b"a"),)), now_ms)
    assert coordinator.classic.state_of(group) is GroupState.STABLE
    return answer.member_id, [joined, synced]


def _record(result: CoordinatorResult, group: str) -> ClassicGroupRecord | None:
    values = [value for group_id, value in result.records if group_id == group]
    assert len(values) == 1, result.records
    _, record = decode(encode_key("front", group), values[0])
    assert record is None or isinstance(record, ClassicGroupRecord)
    return record


@pytest.mark.parametrize("events", [True, False], ids=["with events", "no event names the group"])
def test_a_round_s_outcome_is_returned_once_whether_or_not_an_event_names_the_group(monkeypatch, events):
    coordinator = _coordinator(monkeypatch, events)
    member, (joined, synced) = _stable(coordinator, "g", 1_000)
    assert joined.records == ()  # mid-round: stored once it has an outcome
    record = _record(synced, "g")
    assert record is not None and record.generation == 1 and [m.member_id for m in record.members] == [member]
    assert record.members[0].assignment == b"a"
    beat = coordinator.handle(Heartbeat(3, "g", 1, member), 2_000)
    assert beat.records == ()  # unchanged: not written again
    assert (not events) == (synced.events == ())


@pytest.mark.parametrize("events", [True, False], ids=["with events", "no event names the group"])
def test_a_group_whose_session_expires_during_another_group_s_input_is_stored_with_that_input(monkeypatch, events):
    coordinator = _coordinator(monkeypatch, events)
    _stable(coordinator, "expiring", 1_000)
    # The next input, for another group, comes after the member's session: its timer fires first.
    other = coordinator.join_group(JoinGroup(9, "other", "", "consumer", (Protocol("range", b"m"),), SESSION_MS,
                                             SESSION_MS, api_version=3), 1_000 + SESSION_MS + 1)
    record = _record(other, "expiring")
    assert coordinator.classic.state_of("expiring") is GroupState.EMPTY
    assert record is not None and record.members == () and record.generation == 2


def test_without_a_store_nothing_is_encoded(monkeypatch):
    coordinator = GroupCoordinator(ClassicGroupCoordinator(ClassicGroupConfig(initial_rebalance_delay_ms=0)),
                                   ConsumerGroupCoordinator(), keep_records=False)
    _, results = _stable(coordinator, "g", 1_000)
    assert all(result.records == () for result in results)


def test_a_record_whose_write_failed_is_returned_again_at_the_group_s_next_change(monkeypatch):
    coordinator = _coordinator(monkeypatch)
    member, (_, synced) = _stable(coordinator, "g", 1_000)
    assert _record(synced, "g") is not None
    coordinator.unwritten(["g"])
    left = coordinator.handle(Heartbeat(3, "g", 1, member), 2_000)  # nothing changed, but what is stored is unknown
    assert _record(left, "g") is not None



def _consumer_subscription(topic: str) -> bytes:
    """A ConsumerProtocol v0 Subscription of ``topic``."""
    name = topic.encode()
    return struct.pack(f">hih{len(name)}si", 0, 1, len(name), name, -1)


def test_a_classic_static_member_replacing_the_last_consumer_member_makes_the_group_classic_without_a_rebalance(
        monkeypatch):
    """Kafka's ``validateOnlineDowngradeWithReplacedMemberId``: a consumer-protocol static member that closed (epoch
    -2) comes back with the classic protocol; the group's members then all speak the classic protocol, so it is a
    classic group again at once, Stable, its members keeping their assignments (seen at Kafka 4.4:
    tests/front/test_differential_migration.py)."""
    coordinator = _coordinator(monkeypatch)
    coordinator.set_topics([TopicMetadata("t", generated_topic_id("t"), 4)], 0)
    protocols = (Protocol("range", _consumer_subscription("t")),)
    joined = coordinator.join_group(JoinGroup(1, "g", "", "consumer", protocols, SESSION_MS, SESSION_MS,
                                              api_version=5, group_instance_id="b"), 0).response(1)
    assert isinstance(joined, JoinGroupResponse) and joined.error_code is ErrorCode.none
    coordinator.handle(SyncGroup(2, "g", joined.generation_id, joined.member_id, group_instance_id="b", assignments=(
        (joined.member_id, encode_assignment({"t": frozenset(range(4))})),)), 0)
    heartbeat = ConsumerGroupHeartbeat("g", "a", 0, instance_id="a", rebalance_timeout_ms=SESSION_MS,
                                       subscribed_topic_names=("t",), owned={}, api_version=1)
    assert coordinator.consumer_group_heartbeat(3, heartbeat, 1).response(3).error_code == 0  # upgraded
    coordinator.consumer_group_heartbeat(4, ConsumerGroupHeartbeat("g", "a", -2, instance_id="a", api_version=1), 2)
    back = coordinator.join_group(JoinGroup(5, "g", "", "consumer", protocols, SESSION_MS, SESSION_MS, api_version=5,
                                            group_instance_id="a"), 3)
    answer = back.response(5)
    assert isinstance(answer, JoinGroupResponse) and answer.error_code is ErrorCode.none
    assert [e.name for e in back.events].count("front.consumer_group.downgraded") == 1
    assert not coordinator.consumer.has_group("g")
    assert coordinator.classic.state_of("g") is GroupState.STABLE, "no rebalance"
    synced = coordinator.handle(SyncGroup(6, "g", answer.generation_id, answer.member_id, group_instance_id="a"),
                                4).response(6)
    assert isinstance(synced, SyncGroupResponse) and synced.error_code is ErrorCode.none


def test_offset_delete_counts_a_consumer_group_whose_subscriptions_cannot_be_read_subscribed_to_every_topic(
        monkeypatch):
    """Kafka's ``ClassicGroup.isSubscribedToTopic``: a live group of protocol type ``consumer`` whose member's bytes do
    not read as ConsumerProtocol's keeps every topic's offsets (seen at Kafka 4.4:
    tests/front/test_differential_offsets.py)."""
    coordinator = _coordinator(monkeypatch)
    _stable(coordinator, "g", 0)  # its member's subscription: b"m", no ConsumerProtocol
    check = coordinator.offset_delete("g", offsets_kept=False)
    assert check.error_code is ErrorCode.none and check.is_subscribed("any-topic")


def test_a_heartbeat_a_live_classic_group_cannot_take_is_answered_and_said(monkeypatch):
    """GROUP_ID_NOT_FOUND is fatal to librdkafka's KIP-848 consumer (2.15 on), so the front says each one it gives:
    here a member at epoch 3 of a group that is a live classic one (only epoch 0 may upgrade it)."""
    coordinator = _coordinator(monkeypatch)
    _stable(coordinator, "g", 0)
    result = coordinator.consumer_group_heartbeat(3, ConsumerGroupHeartbeat("g", "x", 3, api_version=1), 1)
    answer = result.response(3)
    assert answer.error_code is ErrorCode.group_id_not_found
    assert answer.error_message == "Group g is not a consumer group."
    (said,) = [e for e in result.events if e.name == "front.consumer_group.heartbeat_rejected"]
    assert said.fields == {"member_id": "x", "member_epoch": 3, "error": "GROUP_ID_NOT_FOUND",
                           "message": "Group g is not a consumer group."}
