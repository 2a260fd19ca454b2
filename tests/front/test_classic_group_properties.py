"""Properties of the classic group coordinator under random clients: random sequences of joins, syncs, heartbeats,
commits, leaves and waits, by dynamic and static members speaking old and new JoinGroup versions."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from classic_group_driver import GROUP, Driver
from hypothesis import event, given, settings
from hypothesis import strategies as st

from zkconsumer.front.groups.classic_group_messages import (
    DeleteGroups,
    DescribeGroups,
    ErrorCode,
    GroupState,
    Heartbeat,
    HeartbeatResponse,
    JoinGroup,
    JoinGroupResponse,
    LeaveGroup,
    LeaveGroupResponse,
    LeavingMember,
    ListGroups,
    OffsetCommit,
    OffsetCommitVerdict,
    Protocol,
    Request,
    Response,
    SyncGroup,
    SyncGroupResponse,
)

SETTINGS = settings(max_examples=150, deadline=None)
PROTOCOL_CHOICES = [
    (Protocol("range", b"r"),),
    (Protocol("cooperative-sticky", b"c"), Protocol("range", b"r")),
    (Protocol("roundrobin", b"rr"), Protocol("range", b"r")),
]
WAITS = [1, 200, 3_000, 9_000, 20_000, 45_000, 300_000]
HEARTBEAT_MS = 3_000
CLIENTS = 4
OPS = st.lists(
    st.tuples(
        st.sampled_from(["join", "join", "sync", "sync", "heartbeat", "heartbeat", "commit", "leave", "wait", "wait"]),
        st.integers(0, CLIENTS - 1),
        st.integers(0, 100),
    ),
    min_size=8,
    max_size=60,
)


@dataclass
class Client:
    """What a client remembers from its answers. An obedient one also reacts as client libraries do (rejoin with the
    id it was given or on REBALANCE_IN_PROGRESS, sync after its JoinGroup answer); the other does only what the
    random steps say."""

    instance: str | None
    obedient: bool
    member_id: str = ""
    generation: int = -1
    leader_of: list[str] = field(default_factory=list)
    protocols: tuple[Protocol, ...] = PROTOCOL_CHOICES[0]
    version: int = 5

    def forget(self) -> None:
        self.member_id, self.generation, self.leader_of = "", -1, []


@dataclass
class Simulation:
    tick_every_deadline: bool
    driver: Driver = field(default_factory=Driver)
    clients: list[Client] = field(default_factory=list)
    sent_by: dict[int, int] = field(default_factory=dict)
    seen: set[int] = field(default_factory=set)
    highest_generation: int = -1  # no group yet

    def __post_init__(self) -> None:
        self.clients = [Client(instance=f"box-{i}" if i % 2 else None, obedient=i < CLIENTS - 1)
                        for i in range(CLIENTS)]

    def wait(self, ms: int) -> None:
        """Time passes; obedient members heartbeat every 3 s meanwhile, as their background threads would."""
        end = self.driver.now + ms
        while self.driver.now < end:
            self.advance_to(min(end, self.driver.now + HEARTBEAT_MS))
            for who, c in enumerate(self.clients):
                if c.obedient and c.member_id and c.generation >= 0:
                    self.driver.heartbeat(c.member_id, c.generation, instance=c.instance)
                    self.track(who, max(self.driver.issued))
            self.learn()

    def advance_to(self, t: int) -> None:
        d = self.driver
        if self.tick_every_deadline:
            d.advance_to(t)
        else:
            d.now = t
            d.record(d.coordinator.tick(d.now))

    def learn(self) -> None:
        """Clients read their new answers and react, until nothing new comes back."""
        for _ in range(100):
            fresh = [(rid, r) for rid, r in self.driver.answers.items() if rid not in self.seen]
            if not fresh:
                return
            for rid, response in fresh:
                self.seen.add(rid)
                who = self.sent_by[rid]
                self.read(who, response)

    def read(self, who: int, response: Response) -> None:
        client = self.clients[who]
        code = getattr(response, "error_code", ErrorCode.none)
        if isinstance(response, JoinGroupResponse):
            if code is ErrorCode.member_id_required:
                client.member_id = response.member_id
                if client.obedient:
                    self.join(who)
            elif code is ErrorCode.none:
                client.member_id, client.generation = response.member_id, response.generation_id
                is_leader = response.leader == response.member_id and not response.skip_assignment
                client.leader_of = [m.member_id for m in response.members] if is_leader else []
                if client.obedient:
                    self.sync(who)
            elif code in (ErrorCode.unknown_member_id, ErrorCode.fenced_instance_id, ErrorCode.illegal_generation):
                client.forget()
        elif isinstance(response, (SyncGroupResponse, HeartbeatResponse, OffsetCommitVerdict)):
            if code in (ErrorCode.unknown_member_id, ErrorCode.fenced_instance_id):
                client.forget()
            elif code is ErrorCode.rebalance_in_progress and client.obedient and not isinstance(
                    response, OffsetCommitVerdict):
                self.join(who)
        elif isinstance(response, LeaveGroupResponse):
            client.forget()

    def track(self, who: int, rid: int) -> None:
        self.sent_by[rid] = who

    def join(self, who: int, arg: int | None = None) -> None:
        c = self.clients[who]
        if arg is not None:
            c.protocols = PROTOCOL_CHOICES[arg % len(PROTOCOL_CHOICES)]
            c.version = [3, 5, 9][arg % 3]
        self.track(who, self.driver.join(
            c.member_id, instance=c.instance, protocols=c.protocols, version=c.version, session_ms=10_000,
            rebalance_ms=20_000 + 10_000 * (who % 2), client=f"client{who}"))

    def sync(self, who: int) -> None:
        c = self.clients[who]
        assignments = {m: f"for-{m}".encode() for m in c.leader_of}
        self.track(who, self.driver.sync(c.member_id, c.generation, assignments, instance=c.instance))

    def step(self, op: str, who: int, arg: int) -> None:
        d, c = self.driver, self.clients[who]
        if op == "join":
            self.join(who, arg)
        elif op == "sync" and c.member_id:
            self.sync(who)
        elif op == "heartbeat" and c.member_id:
            d.heartbeat(c.member_id, c.generation, instance=c.instance)
            self.track(who, max(d.issued))
        elif op == "commit":
            d.commit(c.member_id, c.generation, instance=c.instance if c.member_id else None)
            self.track(who, max(d.issued))
        elif op == "leave" and c.member_id:
            self.track(who, d.leave(LeavingMember(c.member_id, c.instance)))
        elif op == "wait":
            self.wait(WAITS[arg % len(WAITS)])
        self.learn()
        self.check()

    def check(self) -> None:
        d = self.driver
        coordinator = d.coordinator
        generation = coordinator.generation_of(GROUP)
        assert generation >= self.highest_generation, "the generation went back"
        self.highest_generation = max(self.highest_generation, generation)
        state = coordinator.state_of(GROUP)
        members = coordinator.members_of(GROUP)
        if state is GroupState.STABLE:
            assert all(coordinator.assignment_of(GROUP, m) for m in members), "a stable member without assignment"
        if state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            assert members and coordinator.protocol_of(GROUP) is not None
        if state is GroupState.EMPTY:
            assert not members
        leader = coordinator.leader_of(GROUP)
        assert (leader in members) if members else leader is None
        waiting = coordinator.awaiting_requests()
        assert waiting <= d.issued - d.answers.keys() - d.dropped
        unanswered = d.issued - d.answers.keys() - d.dropped
        assert unanswered <= waiting, "a request neither answered nor waiting"

    def drain(self) -> None:
        """Every client falls silent; the clock runs past every deadline."""
        d = self.driver
        for _ in range(1_000):
            deadline = d.coordinator.next_deadline_ms()
            if deadline is None:
                break
            d.advance_to(deadline)
            self.check()
        assert d.coordinator.next_deadline_ms() is None, "timers keep re-arming with every client silent"


def run(ops: list[tuple[str, int, int]], tick_every_deadline: bool = True) -> Simulation:
    sim = Simulation(tick_every_deadline)
    for op, who, arg in ops:
        sim.step(op, who, arg)
    return sim


@SETTINGS
@given(OPS)
def test_invariants_hold_and_every_request_is_answered_once_the_clock_passes_every_deadline(
        ops: list[tuple[str, int, int]]) -> None:
    sim = run(ops)
    reached = {e.fields["to"] for e in sim.driver.events_named("front.group.state_changed")}
    event(f"reached Stable: {'Stable' in reached}; generations: {min(sim.highest_generation, 3)}+")
    sim.drain()
    d = sim.driver
    assert d.coordinator.awaiting_requests() == set()
    assert d.issued == d.answers.keys() | d.dropped
    assert d.coordinator.state_of(GROUP) in (GroupState.EMPTY, GroupState.DEAD)
    assert d.coordinator.members_of(GROUP) == []
    assert d.coordinator.pending_members_of(GROUP) == []


@SETTINGS
@given(OPS)
def test_the_outcome_does_not_depend_on_how_often_the_edge_ticks(ops: list[tuple[str, int, int]]) -> None:
    every_deadline = run(ops, tick_every_deadline=True).driver
    only_when_asked = run(ops, tick_every_deadline=False).driver
    assert every_deadline.answers == only_when_asked.answers
    assert every_deadline.dropped == only_when_asked.dropped
    assert [(e.name, e.at_ms, e.fields) for e in every_deadline.events] == [
        (e.name, e.at_ms, e.fields) for e in only_when_asked.events]


NAMES = st.sampled_from(["", "g", "c-u1", "c-u2", "box-1-u3", "x"])
MAYBE = st.one_of(st.none(), st.sampled_from(["", "box-1", "box-2"]))
NUMBERS = st.sampled_from([-(2**31), -1, 0, 1, 2, 5_999, 6_000, 45_000, 2**31 - 1])
PROTOCOL_LISTS = st.lists(st.builds(Protocol, st.sampled_from(["", "range", "roundrobin"]), st.binary(max_size=3)),
                          max_size=3).map(tuple)
ANY_REQUEST = st.one_of(
    st.builds(JoinGroup, st.just(0), NAMES, NAMES, st.sampled_from(["", "consumer", "connect"]), PROTOCOL_LISTS,
              NUMBERS, NUMBERS, st.integers(0, 9), MAYBE),
    st.builds(SyncGroup, st.just(0), NAMES, NUMBERS, NAMES, MAYBE, MAYBE, MAYBE,
              st.lists(st.tuples(NAMES, st.binary(max_size=2)), max_size=3).map(tuple)),
    st.builds(Heartbeat, st.just(0), NAMES, NUMBERS, NAMES, MAYBE),
    st.builds(LeaveGroup, st.just(0), NAMES, st.lists(st.builds(LeavingMember, NAMES, MAYBE), max_size=3).map(tuple)),
    st.builds(OffsetCommit, st.just(0), NAMES, NUMBERS, NAMES, MAYBE, api_version=st.integers(0, 9)),
    st.builds(DescribeGroups, st.just(0), st.lists(NAMES, max_size=2).map(tuple)),
    st.builds(ListGroups, st.just(0), st.lists(st.sampled_from(["stable", "EMPTY", "x"]), max_size=2).map(tuple),
              st.lists(st.sampled_from(["classic", "consumer"]), max_size=1).map(tuple)),
    st.builds(DeleteGroups, st.just(0), st.lists(NAMES, max_size=2).map(tuple)),
)


@SETTINGS
@given(st.lists(st.tuples(ANY_REQUEST, st.sampled_from([0, 1, 3_000, 50_000])), max_size=40))
def test_arbitrary_requests_never_break_the_coordinator(requests: list[tuple[Request, int]]) -> None:
    d = Driver()
    for request, wait in requests:
        d.advance(wait)
        d.send(replace(request, request_id=d.next_id()))
    for _ in range(1_000):
        if (deadline := d.coordinator.next_deadline_ms()) is None:
            break
        d.advance_to(deadline)
    assert d.issued == d.answers.keys() | d.dropped
