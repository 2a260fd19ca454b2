"""The coordinators' durable state, pure: the records' codec and last-value-wins replay, and each coordinator's record
of a group taken in by a new coordinator (a restarted front) that goes on where the old one stopped, without a
rebalance, its members' sessions re-armed from the load as Kafka's ``onLoaded`` re-arms them."""

from __future__ import annotations

import msgspec
import pytest
from classic_group_driver import GROUP, SESSION_MS
from classic_group_driver import Driver as ClassicDriver
from test_consumer_group import Driver as ConsumerDriver
from test_consumer_group import tps

from zkconsumer.front.groups import classic_group_messages as m
from zkconsumer.front.groups.classic_group import ClassicGroupConfig
from zkconsumer.front.groups.consumer_group import ConsumerGroupConfig
from zkconsumer.front.groups.consumer_group_messages import ConsumerGroupState, MemberState
from zkconsumer.front.groups.group_records import (
    ClassicGroupRecord,
    ClassicMemberRecord,
    ConsumerGroupRecord,
    GroupRecord,
    RecordInvalid,
    decode,
    encode_key,
    encode_value,
    replay,
)

LOADED_AT = 1_000_000
FRONT = "127.0.0.1:19092"


def stored(record: GroupRecord | None) -> GroupRecord | None:
    """The record as the broker gives it back."""
    assert record is not None
    key, decoded = decode(encode_key(FRONT, GROUP), encode_value(record))
    assert (key.coordinator, key.group_id) == (FRONT, GROUP)
    return decoded


# --- the codec and the replay ---------------------------------------------------------------------------------------


def test_records_replay_last_value_wins_a_tombstone_deletes_and_another_front_s_records_are_left():
    first = ClassicGroupRecord("consumer", 3, "range", "m1", (
        ClassicMemberRecord("m1", None, "c1", "/127.0.0.1", 300_000, 45_000, b"sub\x00", b"asg\xff"),))
    second = ConsumerGroupRecord(group_epoch=7, assignment_epoch=7)
    groups: dict[str, GroupRecord] = {}
    for key, value in [("a", first), ("b", first), ("a", second), ("b", None), ("c", None)]:  # c: never seen
        replay(groups, FRONT, encode_key(FRONT, key), None if value is None else encode_value(value))
    replay(groups, FRONT, encode_key("127.0.0.1:29092", "a"), None)  # another front's group of the same id
    replay(groups, FRONT, encode_key("127.0.0.1:29092", "d"), encode_value(first))
    assert groups == {"a": second}


@pytest.mark.parametrize(("key", "value", "says"), [
    (None, b"", "without a key"),
    (b"g", b"", "not a coordinator and a group id"),
    (encode_key(FRONT, "g"), b"\x01\x02", "group 'g' of 127.0.0.1:19092"),
    (encode_key(FRONT, "g"), msgspec.msgpack.encode({"type": "other"}), "group 'g'"),
])
def test_a_record_the_front_did_not_write_is_named_in_one_line(key, value, says):
    with pytest.raises(RecordInvalid, match=says) as raised:
        replay({}, FRONT, key, value)
    assert "\n" not in str(raised.value)


# --- classic groups -------------------------------------------------------------------------------------------------


def restarted(driver: ClassicDriver) -> ClassicDriver:
    """A new coordinator that loaded the group's record at ``LOADED_AT``."""
    record = stored(driver.coordinator.record_of(GROUP))
    assert isinstance(record, ClassicGroupRecord)
    after = ClassicDriver(driver.config, now=LOADED_AT)
    after.record(after.coordinator.load(GROUP, record, LOADED_AT))
    return after


def test_a_stable_classic_group_goes_on_after_a_restart_without_a_rebalance():
    before = ClassicDriver()
    members = before.stable_group(2)
    generation = before.coordinator.generation_of(GROUP)
    assert before.coordinator.settled(GROUP)

    after = restarted(before)
    assert after.coordinator.state_of(GROUP) is m.GroupState.STABLE
    assert after.coordinator.generation_of(GROUP) == generation
    assert after.coordinator.members_of(GROUP) == members
    assert after.coordinator.leader_of(GROUP) == before.coordinator.leader_of(GROUP)
    for member in members:
        assert after.coordinator.assignment_of(GROUP, member) == before.coordinator.assignment_of(GROUP, member)
        assert after.heartbeat(member, generation) is m.ErrorCode.none
        assert after.commit(member, generation) is m.ErrorCode.none
    follower = members[1]
    rid = after.sync(follower, generation)
    assert after.sync_answer(rid).assignment == before.coordinator.assignment_of(GROUP, follower)
    assert after.event_names() == ["front.group.loaded"]
    assert after.coordinator.record_of(GROUP) == before.coordinator.record_of(GROUP)


def test_a_loaded_member_gets_a_whole_session_from_the_load():
    before = ClassicDriver()
    members = before.stable_group(2)
    after = restarted(before)
    generation = after.coordinator.generation_of(GROUP)
    after.advance(SESSION_MS - 1)
    assert after.heartbeat(members[0], generation) is m.ErrorCode.none
    assert after.events_named("front.group.member_expired") == []
    after.advance(1)  # the other member's session, from the load
    expired = after.events_named("front.group.member_expired")
    assert [(e.fields["member_id"], e.at_ms) for e in expired] == [(members[1], LOADED_AT + SESSION_MS)]


def test_a_classic_group_is_stored_only_between_rounds_and_empty_with_its_last_generation():
    driver = ClassicDriver()
    members = driver.stable_group(1)
    driver.join_new(client="late")  # a second member: a round starts
    assert driver.coordinator.state_of(GROUP) is m.GroupState.PREPARING_REBALANCE
    assert not driver.coordinator.settled(GROUP)
    driver.leave(m.LeavingMember(members[0]))
    driver.advance_until(lambda: driver.coordinator.state_of(GROUP) is m.GroupState.COMPLETING_REBALANCE)
    assert not driver.coordinator.settled(GROUP)
    (late,) = driver.coordinator.members_of(GROUP)
    driver.leave(m.LeavingMember(late))
    driver.advance_until(lambda: driver.coordinator.state_of(GROUP) is m.GroupState.EMPTY)
    record = driver.coordinator.record_of(GROUP)
    assert record is not None and record.members == () and record.generation == 3

    after = restarted(driver)
    assert after.coordinator.state_of(GROUP) is m.GroupState.EMPTY
    assert after.coordinator.next_deadline_ms() is None
    member, _ = after.join_new()
    after.advance_until(lambda: after.coordinator.state_of(GROUP) is m.GroupState.COMPLETING_REBALANCE)
    assert after.coordinator.generation_of(GROUP) == 4
    assert after.coordinator.members_of(GROUP) == [member]


def test_a_group_of_offsets_only_has_no_record():
    driver = ClassicDriver()
    assert driver.commit("", -1) is m.ErrorCode.none
    assert driver.coordinator.state_of(GROUP) is m.GroupState.EMPTY
    assert driver.coordinator.record_of(GROUP) is None


def test_a_loaded_group_over_the_max_size_rebalances():
    before = ClassicDriver()
    before.stable_group(3)
    record = stored(before.coordinator.record_of(GROUP))
    assert isinstance(record, ClassicGroupRecord)
    after = ClassicDriver(ClassicGroupConfig(max_size=2), now=LOADED_AT)
    after.record(after.coordinator.load(GROUP, record, LOADED_AT))
    assert after.coordinator.state_of(GROUP) is m.GroupState.PREPARING_REBALANCE


# --- KIP-848 groups -------------------------------------------------------------------------------------------------


def consumer_restarted(driver: ConsumerDriver, topics: dict[str, int]) -> ConsumerDriver:
    record = stored(driver.coordinator.record_of(GROUP))
    assert isinstance(record, ConsumerGroupRecord)
    after = ConsumerDriver(driver.coordinator.config, topics=topics)
    after.now = LOADED_AT
    after.events += after.coordinator.load(GROUP, record, LOADED_AT)
    after.clients = driver.clients  # the members go on with what they had
    return after


def test_a_stable_consumer_group_keeps_its_epochs_and_assignment_across_a_restart():
    before = ConsumerDriver(topics={"t": 6})
    first, second = before.join().member_id, before.join().member_id
    before.settle()
    assert before.state() is ConsumerGroupState.STABLE
    epoch = before.coordinator.group_epoch_of(GROUP)
    owned = {member: dict(before.clients[member].owned) for member in (first, second)}

    after = consumer_restarted(before, {"t": 6})
    assert after.state() is ConsumerGroupState.STABLE
    assert [e.name for e in after.events] == ["front.consumer_group.loaded"]
    for member in (first, second):
        response = after.hb(member)
        assert (response.error_code, response.member_epoch) == (0, epoch)
        assert response.assignment is None  # nothing new to say: the member keeps what it owns
        assert after.clients[member].owned == owned[member]
    assert after.coordinator.group_epoch_of(GROUP) == epoch
    assert not [e for e in after.events if e.name == "front.consumer_group.epoch_bumped"]
    assert after.coordinator.record_of(GROUP) == before.coordinator.record_of(GROUP)


def test_a_loaded_consumer_member_gets_a_whole_session_and_one_revoking_its_rebalance_timeout():
    config = ConsumerGroupConfig()
    before = ConsumerDriver(config, topics={"t": 6})
    first = before.join(rebalance_timeout_ms=10_000).member_id
    before.settle()
    second = before.join().member_id
    before.hb(first, owned=tps("t", 0, 1, 2, 3, 4, 5))  # told to revoke, not yet done
    assert before.rec_state(first) is MemberState.UNREVOKED_PARTITIONS

    after = consumer_restarted(before, {"t": 6})
    assert after.state() is ConsumerGroupState.RECONCILING
    fenced = after.advance(10_000)  # the revoking member's rebalance timeout, from the load
    assert [(e.name, e.fields["member_id"], e.at_ms) for e in fenced if e.name.endswith("fenced")] == [
        ("front.consumer_group.member_fenced", first, LOADED_AT + 10_000)]
    after.hb(second, epoch=after.clients[second].epoch)
    assert not [e for e in after.advance(config.session_timeout_ms - 10_001) if e.name.endswith("expired")]
    expired = after.advance(10_001)  # the second member's session, from its heartbeat
    assert [e.fields["member_id"] for e in expired if e.name.endswith("expired")] == [second]


def test_a_deleted_or_absent_consumer_group_has_no_record():
    driver = ConsumerDriver()
    assert driver.coordinator.record_of(GROUP) is None
