"""Properties of the KIP-848 consumer group coordinator under random members: random sequences of joins, heartbeats
reporting the partitions each member was told to own, subscription changes, leaves (static members' temporary ones
too), new partitions and waits long enough for sessions and rebalance timeouts to pass.

Members revoke as a consumer does, in their own time: told a smaller assignment, a member keeps the partitions it
must give up (committing, say) until a later heartbeat finishes the revocation, and reports them as owned meanwhile;
new partitions it owns as soon as it is told. So no partition is owned twice only if the coordinator holds a revoked
partition back until its owner reports it gone.

A member that the coordinator removes (session expired, fenced for not revoking in time) stops counting as an owner at
that moment: its partitions are no longer its own (its commits would be refused), and it learns so at its next
heartbeat, as a real consumer does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from hypothesis import given, settings
from hypothesis import strategies as st

from zkconsumer.assignors.topic_ids import Uuid, generated_topic_id
from zkconsumer.front.groups.classic_group_messages import GroupEvent
from zkconsumer.front.groups.consumer_group import ConsumerGroupConfig, ConsumerGroupCoordinator
from zkconsumer.front.groups.consumer_group_messages import (
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    ErrorCode,
    TopicMetadata,
)

SETTINGS = settings(max_examples=500, deadline=None)
GROUP = "g"
TOPICS = ("a", "b")
CLIENTS = 4
SESSION_MS = 45_000
REBALANCE_MS = 20_000
WAITS = [1, 1_000, 5_000, 19_999, 20_000, 30_000, 45_000, 100_000]
OPS = st.lists(
    st.tuples(
        st.sampled_from(["join", "join", "heartbeat", "heartbeat", "heartbeat", "heartbeat", "subscribe", "leave",
                         "wait", "wait", "grow", "delete"]),
        st.integers(0, CLIENTS - 1),
        st.integers(0, 1_000),
    ),
    min_size=5,
    max_size=60,
)
#: topic names and regex ("": none, as librdkafka sends it)
SUBSCRIPTIONS: list[tuple[tuple[str, ...], str]] = [
    (("a",), ""), (("b",), ""), (("a", "b"), ""), (("b", "a"), ""), ((), "a|b"), ((), "b.*"), (("a",), "b"),
]
ASSIGNORS = [None, None, "uniform", "range"]


@dataclass
class Member:
    """What one consumer knows: its member id and epoch, what it owns, and how it subscribes."""

    slot: int
    static: bool
    member_id: str = ""
    epoch: int = 0
    joined: bool = False
    away: bool = False  # a static member that left with -2 and will come back
    owned: dict[Uuid, frozenset[int]] = field(default_factory=dict)
    #: partitions the member was told to give up and still owns
    revoking: dict[Uuid, frozenset[int]] = field(default_factory=dict)
    topics: tuple[str, ...] = ("a",)
    regex: str = ""
    assignor: str | None = None
    incarnation: int = 0

    @property
    def instance_id(self) -> str | None:
        return f"instance-{self.slot}" if self.static else None

    def drop(self) -> None:
        self.joined = False
        self.owned = {}
        self.revoking = {}
        self.epoch = 0


@dataclass
class Simulation:
    coordinator: ConsumerGroupCoordinator = field(
        default_factory=lambda: ConsumerGroupCoordinator(ConsumerGroupConfig(session_timeout_ms=SESSION_MS)))
    members: list[Member] = field(default_factory=list)
    partitions: dict[str, int] = field(default_factory=lambda: {"a": 3, "b": 5})
    #: a topic deleted and created again gets a new id, as in Kafka
    topic_ids: dict[str, Uuid] = field(default_factory=lambda: {t: generated_topic_id(t) for t in TOPICS})
    now: int = 0
    epochs: dict[str, int] = field(default_factory=dict)
    group_epoch: int = 0
    #: fed the same inputs, never ticked; its answers must be the same
    shadow: ConsumerGroupCoordinator | None = None
    log: list[GroupEvent] = field(default_factory=list)
    shadow_log: list[GroupEvent] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.publish_topics()

    def publish_topics(self) -> None:
        topics = [TopicMetadata(name, self.topic_ids[name], count) for name, count in self.partitions.items()]
        self.after_events(self.coordinator.set_topics(topics, self.now))
        if self.shadow is not None:
            self.shadow_log += self.shadow.set_topics(topics, self.now)

    def after_events(self, events: tuple[GroupEvent, ...]) -> None:
        """Members the coordinator removed stop owning anything."""
        self.log += events
        for event in events:
            if event.name in ("front.consumer_group.member_expired", "front.consumer_group.member_fenced"):
                member_id = event.fields["member_id"]
                for member in self.members:
                    if member.member_id == member_id and (member.joined or member.away):
                        member.drop()
                        member.away = False

    def send(self, member: Member, request: ConsumerGroupHeartbeat) -> ConsumerGroupHeartbeatResponse:
        outcome = self.coordinator.heartbeat(request, self.now)
        self.after_events(outcome.events)
        response = outcome.response
        if self.shadow is not None:
            shadowed = self.shadow.heartbeat(request, self.now)
            self.shadow_log += shadowed.events
            assert shadowed.response == response
        if response.error_code == ErrorCode.none and request.member_epoch >= 0:
            assert response.member_id == member.member_id
            assert response.member_epoch >= self.epochs.get(member.member_id, 0), "a member epoch went back"
            self.epochs[member.member_id] = response.member_epoch
            member.epoch = response.member_epoch
            member.joined = True
            if response.assignment is not None:
                told = {t: frozenset(ps) for t, ps in response.assignment.items() if ps}
                member.revoking = {t: left for t, ps in member.owned.items() if (left := ps - told.get(t, frozenset()))}
                member.owned = {t: told.get(t, frozenset()) | member.revoking.get(t, frozenset())
                                for t in {*told, *member.revoking}}
        elif response.error_code in (ErrorCode.fenced_member_epoch, ErrorCode.unknown_member_id):
            member.drop()
        group_epoch = self.coordinator.group_epoch_of(GROUP)
        assert group_epoch >= self.group_epoch, "the group epoch went back"
        self.group_epoch = group_epoch
        return response

    def join(self, member: Member) -> None:
        member.incarnation += 1
        member.member_id = f"member-{member.slot}-{member.incarnation}"
        member.epoch = 0
        member.owned = {}
        member.away = False
        response = self.send(member, ConsumerGroupHeartbeat(
            GROUP, member.member_id, 0, instance_id=member.instance_id, rebalance_timeout_ms=REBALANCE_MS,
            subscribed_topic_names=member.topics, subscribed_topic_regex=member.regex, server_assignor=member.assignor,
            owned={}, api_version=1))
        assert response.error_code in (ErrorCode.none, ErrorCode.unreleased_instance_id), response

    def heartbeat(self, member: Member, subscribe: bool = False, revoked: bool = True) -> None:
        """A heartbeat reporting what the member owns; ``subscribe``: with its subscription; ``revoked``: it has
        finished giving up what it was told to."""
        if revoked:
            member.owned = {t: left for t, ps in member.owned.items()
                            if (left := ps - member.revoking.get(t, frozenset()))}
            member.revoking = {}
        self.send(member, ConsumerGroupHeartbeat(
            GROUP, member.member_id, member.epoch, instance_id=member.instance_id,
            subscribed_topic_names=member.topics if subscribe else None,
            subscribed_topic_regex=member.regex if subscribe else None, owned=dict(member.owned)))

    def leave(self, member: Member, temporarily: bool) -> None:
        epoch = -2 if temporarily else -1
        response = self.send(member, ConsumerGroupHeartbeat(GROUP, member.member_id, epoch,
                                                            instance_id=member.instance_id))
        if response.error_code == ErrorCode.none:
            member.drop()
            member.away = temporarily

    def wait(self, ms: int) -> None:
        """Time passes; the coordinator is ticked at each of its deadlines on the way, as the edge's timer does."""
        target = self.now + ms
        while (deadline := self.coordinator.next_deadline_ms()) is not None and deadline <= target:
            self.now = max(self.now, deadline)
            self.after_events(self.coordinator.tick(self.now))
        self.now = target
        self.after_events(self.coordinator.tick(self.now))

    def check_exclusive(self) -> None:
        seen: dict[tuple[Uuid, int], int] = {}
        for member in self.members:
            if not member.joined:
                assert not member.owned
            for topic_id, numbers in member.owned.items():
                for p in numbers:
                    assert (topic_id, p) not in seen, f"{topic_id}/{p} owned by {seen[(topic_id, p)]} and {member.slot}"
                    seen[(topic_id, p)] = member.slot
        held: set[tuple[Uuid, int]] = set()
        for member_id in self.coordinator.members_of(GROUP):
            rec = self.coordinator.member_reconciliation(GROUP, member_id)
            assert rec is not None
            mine = rec.held()
            assert held.isdisjoint(mine), "the coordinator gave a partition to two members"
            held |= mine

    def quiet(self) -> None:
        """Away static members come back; then everyone heartbeats, without time passing, until nothing moves."""
        for member in self.members:
            if member.away:
                self.join(member)
        for _ in range(8):
            for member in self.members:
                if member.joined:
                    self.heartbeat(member)
                    self.check_exclusive()


def run(sim: Simulation, ops: list[tuple[str, int, int]]) -> None:
    for op, slot, value in ops:
        member = sim.members[slot]
        if op == "join" and not member.joined:
            member.topics, member.regex = SUBSCRIPTIONS[value % len(SUBSCRIPTIONS)]
            member.assignor = ASSIGNORS[value // 7 % len(ASSIGNORS)]
            sim.join(member)
        elif op == "heartbeat" and member.joined:
            sim.heartbeat(member, revoked=value % 2 == 0)
        elif op == "subscribe" and member.joined:
            member.topics, member.regex = SUBSCRIPTIONS[value % len(SUBSCRIPTIONS)]
            sim.heartbeat(member, subscribe=True)
        elif op == "leave" and member.joined:
            sim.leave(member, temporarily=member.static and value % 2 == 0)
        elif op == "wait":
            sim.wait(WAITS[value % len(WAITS)])
        elif op == "grow" and TOPICS[value % 2] in sim.partitions:
            sim.partitions[TOPICS[value % 2]] += 1 + value % 3
            sim.publish_topics()
        elif op == "delete":
            topic = TOPICS[value % 2]
            if sim.partitions.pop(topic, None) is None:
                sim.partitions[topic] = 1 + value % 4
                sim.topic_ids[topic] = generated_topic_id(f"{topic} created at {sim.now} ({value})")
            sim.publish_topics()
        sim.check_exclusive()


@SETTINGS
@given(ops=OPS, statics=st.lists(st.booleans(), min_size=CLIENTS, max_size=CLIENTS))
def test_no_partition_is_owned_twice_epochs_never_go_back_and_a_quiet_group_owns_everything(
        ops: list[tuple[str, int, int]], statics: list[bool]) -> None:
    sim = Simulation()
    sim.members = [Member(slot, static) for slot, static in enumerate(statics)]
    run(sim, ops)
    sim.quiet()
    subscribed = {topic for m in sim.members if m.joined for topic in sim.partitions
                  if topic in m.topics or (m.regex and re.fullmatch(m.regex, topic))}
    expected = {(sim.topic_ids[t], p) for t in subscribed & set(sim.partitions) for p in range(sim.partitions[t])}
    owned = {(t, p) for m in sim.members for t, ps in m.owned.items() for p in ps}
    assert owned == expected, "a quiet group owns every subscribed partition"
    assert all(
        (rec := sim.coordinator.member_reconciliation(GROUP, m)) is not None and rec.is_reconciled_to(
            sim.coordinator.assignment_epoch_of(GROUP))
        for m in sim.coordinator.members_of(GROUP)
    ), "a quiet group is reconciled"
    if any(m.joined for m in sim.members):
        assert sim.coordinator.state_of(GROUP).value == "Stable"


@SETTINGS
@given(ops=OPS, statics=st.lists(st.booleans(), min_size=CLIENTS, max_size=CLIENTS))
def test_the_outcome_does_not_depend_on_how_often_the_edge_ticks(
        ops: list[tuple[str, int, int]], statics: list[bool]) -> None:
    """A second coordinator fed the same inputs but never ticked (its timers fire only when a heartbeat comes) answers
    every heartbeat alike and, ticked once at the end, has logged the same events at the same times."""
    sim = Simulation(shadow=ConsumerGroupCoordinator(ConsumerGroupConfig(session_timeout_ms=SESSION_MS)))
    sim.members = [Member(slot, static) for slot, static in enumerate(statics)]
    run(sim, ops)
    assert sim.shadow is not None
    sim.shadow_log += sim.shadow.tick(sim.now)
    sim.log += sim.coordinator.tick(sim.now)
    assert sim.shadow_log == sim.log
