"""The front's group coordinator: one facade over the classic and the KIP-848 state machines, deciding everything a
group request can be answered with, as Kafka's ``GroupMetadataManager`` and ``OffsetMetadataManager`` decide it.

Which machine answers (routing by group id, one group id never in both), the rules by which an empty group of one
protocol gives way to a new member of the other, the online **upgrade** (a new KIP-848 member of a live classic group)
and **downgrade** (a consumer group left with classic members only), and the validation of offset commits, fetches,
deletions and transactional commits: all here, so the wire adapter (:mod:`zkconsumer.front.proxy.group_apis`) only
maps kio's entities, and the runtime (:mod:`.coordinator_runtime`) only drives time and writes.

Every input returns one :class:`CoordinatorResult`, as each of Kafka's handlers returns a ``CoordinatorResult``:

* ``effects``: the answers, to this request (keyed by the request id the caller gave it) and to earlier ones that
  were waiting (a JoinGroup waits for its round), or a request dropped unanswered;
* ``records``: each group's record to write, encoded, or ``None`` for its tombstone;
* ``events``: what happened, for the log and the trace.

**The records are the only thing stored.** Which groups an input may have changed is known from the input itself: the
group ids it names, the groups whose timers fired while it was handled (:meth:`.GroupTimers.fired_groups`) and those
its events name. For each of them the facade compares the group's record with the one it last returned and returns
the new one if it differs: a change no event mentions is stored all the same. A classic group in the middle of a round
is stored once the round has an outcome (Empty or Stable), where Kafka stores it. Without a store
(``keep_records=False``) nothing is encoded.

Pure: the clock comes in with every input, and nothing here waits or does I/O. What the broker knows (the groups it
keeps offsets for) is handed in by the caller where a decision needs it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from zkconsumer.events import catalogue as ev
from zkconsumer.front.groups import classic_group_messages as classic
from zkconsumer.front.groups.classic_group import ClassicGroupCoordinator
from zkconsumer.front.groups.classic_group_messages import Effect, GroupEvent, Respond, Response, Step
from zkconsumer.front.groups.consumer_group import ConsumerGroupCoordinator, heartbeat_rejected
from zkconsumer.front.groups.consumer_group_messages import (
    ConsumerGroupDescribe,
    ConsumerGroupDescribeResponse,
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupState,
    TopicMetadata,
)
from zkconsumer.front.groups.group_records import ClassicGroupRecord, GroupRecord, encode_value
from zkconsumer.kafka.consumer_protocol import ProtocolInvalid, decode_subscription

#: a member left its consumer group by these (by any means): the group may become classic again
_MEMBER_GONE = frozenset({ev.FRONT_CONSUMER_GROUP_MEMBER_LEFT, ev.FRONT_CONSUMER_GROUP_MEMBER_EXPIRED,
                          ev.FRONT_CONSUMER_GROUP_MEMBER_FENCED})
#: the protocol type of Kafka's consumers, the only one whose groups OffsetDelete reads the subscriptions of
CONSUMER_PROTOCOL_TYPE = "consumer"
#: the request id of a request the facade makes of a machine itself (its answer goes to nobody)
_OWN = -1
#: a group of which no record was returned yet
_NEVER = object()
#: what was stored of a group is unknown (its write failed): its next record is returned whatever it is
_UNKNOWN = object()
#: the machines :meth:`GroupCoordinator.tick` ticks, each on its own so that one failing stops not the other
MACHINES = ("consumer", "classic")


@dataclass(frozen=True)
class CoordinatorResult:
    """What one input caused: answers, records to write, events (see the module's docstring)."""

    effects: tuple[Effect, ...] = ()
    #: ``(group id, encoded record or None for a tombstone)``, in the order to write them
    records: tuple[tuple[str, bytes | None], ...] = ()
    events: tuple[GroupEvent, ...] = ()

    def response(self, request_id: int) -> Response | None:
        """The answer this input gave the request ``request_id`` (``None``: none yet, or it was dropped)."""
        return next((e.response for e in self.effects if isinstance(e, Respond) and e.request_id == request_id),
                    None)


@dataclass
class _Outcome:
    """What an input has caused so far, while the facade handles it."""

    effects: list[Effect] = field(default_factory=list)
    events: list[GroupEvent] = field(default_factory=list)
    touched: set[str] = field(default_factory=set)
    #: the record to write for a group instead of what the machines hold of it (a group converted back)
    given: dict[str, GroupRecord] = field(default_factory=dict)

    def step(self, step: Step) -> None:
        self.effects.extend(e for e in step.effects if e.request_id != _OWN)
        self.events.extend(step.events)

    def respond(self, request_id: int, response: Response | ConsumerGroupHeartbeatResponse
                | ConsumerGroupDescribeResponse) -> None:
        self.effects.append(Respond(request_id, response))  # type: ignore[arg-type]


@dataclass(frozen=True)
class OffsetDeleteCheck:
    """OffsetDelete's verdict on a group (``Group.validateOffsetDelete``): its error, and the topics whose offsets it
    keeps because the group subscribes to them (``GROUP_SUBSCRIBED_TO_TOPIC``): those named, or every topic."""

    error_code: classic.ErrorCode
    subscribed: frozenset[str] = frozenset()
    every_topic: bool = False

    def is_subscribed(self, topic: str) -> bool:
        """``Group.isSubscribedToTopic``."""
        return self.every_topic or topic in self.subscribed


class GroupCoordinator:
    """Every group of one front, classic and KIP-848 (see the module's docstring)."""

    def __init__(self, classic_groups: ClassicGroupCoordinator, consumer_groups: ConsumerGroupCoordinator,
                 keep_records: bool = True) -> None:
        self.classic = classic_groups
        self.consumer = consumer_groups
        self.keep_records = keep_records
        #: each group's record as last returned (``None``: its tombstone), or _UNKNOWN
        self._returned: dict[str, object] = {}

    # --- the classic group APIs -----------------------------------------------------------------------------------

    def handle(self, request: classic.Request, now_ms: int) -> CoordinatorResult:
        """A classic group API's request (its ``request_id`` the caller's), by whichever machine has the group."""
        if isinstance(request, classic.JoinGroup):
            return self.join_group(request, now_ms)
        if isinstance(request, (classic.SyncGroup, classic.Heartbeat, classic.LeaveGroup)):
            return self._classic_api(request, now_ms)
        if isinstance(request, classic.OffsetCommit):
            return self.offset_commit(request, now_ms)
        if isinstance(request, classic.DeleteGroups):
            return self.delete_groups(request, now_ms)
        if isinstance(request, classic.DescribeGroups):
            return self.describe_groups(request, now_ms)
        return self.list_groups(request, now_ms)

    def join_group(self, request: classic.JoinGroup, now_ms: int) -> CoordinatorResult:
        """JoinGroup: an empty consumer group gives way to a new member's classic group, as in Kafka 3.7 on (its
        offsets stay with the group id); a classic member of a live consumer group joins it
        (``classicGroupJoinToConsumerGroup``), and where it took the place of the group's last consumer-protocol
        member (a static member coming back with the classic protocol) the group is classic again at once, without a
        rebalance (``validateOnlineDowngradeWithReplacedMemberId``); any other goes to the classic machine."""
        out = _Outcome(touched={request.group_id})
        consumers = self.consumer
        if (consumers.has_group(request.group_id) and not request.member_id
                and consumers.state_of(request.group_id) is ConsumerGroupState.EMPTY):
            _, events = consumers.delete_group(request.group_id, now_ms)
            self._consumer_events(out, events, now_ms)
        if consumers.has_group(request.group_id):
            response, events = consumers.classic_join(request, now_ms)
            out.respond(request.request_id, response)
            self._consumer_events(out, events, now_ms)
            if any(e.name == ev.FRONT_CONSUMER_GROUP_STATIC_MEMBER_REPLACED for e in events):
                self._downgrade(out, request.group_id, now_ms, rebalance=False)
        else:
            out.step(self.classic.handle(request, now_ms))
        return self._result(out)

    def _classic_api(self, request: classic.SyncGroup | classic.Heartbeat | classic.LeaveGroup,
                     now_ms: int) -> CoordinatorResult:
        """SyncGroup, Heartbeat, LeaveGroup: a classic member of a consumer group is answered by it."""
        out = _Outcome(touched={request.group_id})
        consumers = self.consumer
        if consumers.has_group(request.group_id):
            response: Response
            if isinstance(request, classic.SyncGroup):
                response, events = consumers.classic_sync(request, now_ms)
            elif isinstance(request, classic.Heartbeat):
                response, events = consumers.classic_heartbeat(request, now_ms)
            else:
                response, events = consumers.classic_leave(request, now_ms)
            out.respond(request.request_id, response)
            self._consumer_events(out, events, now_ms)
        else:
            out.step(self.classic.handle(request, now_ms))
        return self._result(out)

    def describe_groups(self, request: classic.DescribeGroups, now_ms: int,
                        offsets_kept: Iterable[str] = ()) -> CoordinatorResult:
        """DescribeGroups, by the classic machine (a consumer group is Dead to it, as Kafka answers up to v5); a group
        neither machine runs whose offsets the broker keeps (``offsets_kept``) is Empty, as Kafka loads it."""
        out = _Outcome()
        described = self._classic_answer(out, replace(request, request_id=_OWN), now_ms)
        assert isinstance(described, classic.DescribeGroupsResponse)
        kept = set(offsets_kept)
        out.respond(request.request_id, classic.DescribeGroupsResponse(tuple(
            replace(g, state=classic.GroupState.EMPTY.value, protocol_type="")
            if g.state == classic.GroupState.DEAD.value and not self.consumer.has_group(g.group_id)
            and g.group_id in kept else g for g in described.groups)))
        return self._result(out)

    def list_groups(self, request: classic.ListGroups, now_ms: int,
                    offsets_kept: Iterable[str] = ()) -> CoordinatorResult:
        """ListGroups: the classic groups, the consumer groups, and the groups whose offsets only the broker keeps
        (``offsets_kept``; committed before the front started, or by an administrator), listed as Kafka lists a
        group it loaded from ``__consumer_offsets`` with offsets only: Empty, no protocol type."""
        out = _Outcome()
        listed = self._classic_answer(out, replace(request, request_id=_OWN), now_ms)
        assert isinstance(listed, classic.ListGroupsResponse)
        states, types = request.states_filter, request.types_filter
        rows = list(listed.groups) + [g for g in self.consumer.list_groups() if _listed(g, states, types)]
        known = {g.group_id for g in rows} | set(self.classic.group_ids()) | set(self.consumer.group_ids())
        rows += [row for row in (classic.ListedGroup(group_id, "", classic.GroupState.EMPTY.value)
                                 for group_id in dict.fromkeys(offsets_kept) if group_id not in known)
                 if _listed(row, states, types)]
        out.respond(request.request_id, classic.ListGroupsResponse(listed.error_code, tuple(rows)))
        return self._result(out)

    def delete_groups(self, request: classic.DeleteGroups, now_ms: int) -> CoordinatorResult:
        """DeleteGroups: each group by its machine (only an empty group may go). The broker keeps the offsets: the
        caller deletes them there for the groups :func:`deleted_in_broker` names."""
        out = _Outcome(touched=set(request.group_ids))
        results: dict[str, classic.ErrorCode] = {}
        classic_ids = []
        for group_id in request.group_ids:
            if self.consumer.has_group(group_id):
                code, events = self.consumer.delete_group(group_id, now_ms)
                self._consumer_events(out, events, now_ms)
                results[group_id] = code
            else:
                classic_ids.append(group_id)
        if classic_ids:
            deleted = self._classic_answer(out, classic.DeleteGroups(_OWN, tuple(classic_ids)), now_ms)
            assert isinstance(deleted, classic.DeleteGroupsResponse)
            results.update(deleted.results)
        out.respond(request.request_id, classic.DeleteGroupsResponse(tuple(results.items())))
        return self._result(out)

    # --- offsets ----------------------------------------------------------------------------------------------------

    def offset_commit(self, request: classic.OffsetCommit, now_ms: int) -> CoordinatorResult:
        """Whether an OffsetCommit (or, ``transactional``, a TxnOffsetCommit: KIP-447) may be stored: a classic
        group's generation and member, a consumer group's member epoch (a transactional commit's stale epoch answered
        ILLEGAL_GENERATION, as Kafka answers it there). Answered with an :class:`~.OffsetCommitVerdict`."""
        out = _Outcome(touched={request.group_id})
        if self.consumer.has_group(request.group_id):
            code = self.consumer.offset_commit_error(request.group_id, request.member_id, request.generation_id,
                                                     request.api_version, transactional=request.transactional,
                                                     instance_id=request.group_instance_id)
            if request.transactional and code == classic.ErrorCode.stale_member_epoch:
                code = classic.ErrorCode.illegal_generation
            out.respond(request.request_id, classic.OffsetCommitVerdict(code))
        else:
            out.step(self.classic.handle(request, now_ms))
        return self._result(out)

    def offset_fetch_error(self, group_id: str, member_id: str | None, member_epoch: int) -> classic.ErrorCode:
        """Whether an OffsetFetch naming a member of a consumer group may read (v9's member fields); a classic group's
        reads are never refused."""
        if not self.consumer.has_group(group_id):
            return classic.ErrorCode.none
        return self.consumer.offset_fetch_error(group_id, member_id, member_epoch)

    def offset_delete(self, group_id: str, offsets_kept: bool) -> OffsetDeleteCheck:
        """``Group.validateOffsetDelete`` and the topics ``isSubscribedToTopic`` names, of whichever machine has the
        group: the group must exist (GROUP_ID_NOT_FOUND; ``offsets_kept``: the broker keeps offsets for it, Kafka's
        simple group, Empty) and, a classic group that is not Empty, use the consumer protocol (NON_EMPTY_GROUP)."""
        if self.consumer.has_group(group_id):
            return OffsetDeleteCheck(classic.ErrorCode.none, self.consumer.subscribed_topics(group_id))
        classics = self.classic
        state = classics.state_of(group_id) if group_id in classics.group_ids() else classic.GroupState.DEAD
        if state is classic.GroupState.EMPTY:
            return OffsetDeleteCheck(classic.ErrorCode.none)
        if state is not classic.GroupState.DEAD:
            record = classics.record_of(group_id)
            if record is None or record.protocol_type != CONSUMER_PROTOCOL_TYPE:
                return OffsetDeleteCheck(classic.ErrorCode.non_empty_group)
            try:
                return OffsetDeleteCheck(classic.ErrorCode.none, frozenset(
                    name for m in record.members for name in decode_subscription(m.subscription).topics))
            except ProtocolInvalid:  # a consumer group Kafka cannot read counts as subscribed to every topic
                return OffsetDeleteCheck(classic.ErrorCode.none, every_topic=True)
        if offsets_kept:
            return OffsetDeleteCheck(classic.ErrorCode.none)
        return OffsetDeleteCheck(classic.ErrorCode.group_id_not_found)

    # --- KIP-848 ----------------------------------------------------------------------------------------------------

    def set_topics(self, topics: Iterable[TopicMetadata], now_ms: int) -> CoordinatorResult:
        """The cluster's topics as the edge now sees them; groups notice a change at their next heartbeat."""
        out = _Outcome()
        self._consumer_events(out, self.consumer.set_topics(topics, now_ms), now_ms)
        return self._result(out)

    def consumer_group_heartbeat(self, request_id: int, request: ConsumerGroupHeartbeat,
                                 now_ms: int) -> CoordinatorResult:
        """ConsumerGroupHeartbeat: a new member of a live classic group upgrades it (Kafka's online upgrade) or is
        refused GROUP_ID_NOT_FOUND with why; an empty classic group gives way to a new member (its offsets stay with
        the group id); then the consumer machine answers, and a member that left may turn the group classic again."""
        group_id = request.group_id
        out = _Outcome(touched={group_id})
        classics = self.classic
        if group_id in classics.group_ids() and classics.state_of(group_id) is not classic.GroupState.DEAD:
            if classics.state_of(group_id) is not classic.GroupState.EMPTY:
                refused = (self._upgrade(out, group_id, now_ms) if request.member_epoch == 0
                           else f"Group {group_id} is not a consumer group.")
                if refused is not None:
                    code = classic.ErrorCode.group_id_not_found
                    out.events.append(heartbeat_rejected(group_id, now_ms, request.member_id, request.member_epoch,
                                                         code, refused))
                    out.respond(request_id, ConsumerGroupHeartbeatResponse(
                        code, refused, member_epoch=0, heartbeat_interval_ms=0))
                    return self._result(out)
            elif request.member_epoch == 0:
                out.step(classics.handle(classic.DeleteGroups(_OWN, (group_id,)), now_ms))
        outcome = self.consumer.heartbeat(request, now_ms)
        out.respond(request_id, outcome.response)
        self._consumer_events(out, outcome.events, now_ms)
        return self._result(out)

    def _upgrade(self, out: _Outcome, group_id: str, now_ms: int) -> str | None:
        """Kafka's online upgrade of a live classic group to a consumer group (``validateOnlineUpgrade``,
        ``convertToConsumerGroup``): why it cannot happen, in Kafka's words, or ``None`` once it did. The classic
        machine hands the group over (its waiting requests answered REBALANCE_IN_PROGRESS) and the consumer machine
        takes it in."""
        record = self.classic.record_of(group_id)
        if record is None:
            return f"Group {group_id} is not a consumer group."
        refused, events = self.consumer.upgrade_refused(group_id, record, now_ms)
        out.events.extend(events)
        if refused is not None:
            return refused
        handed, state, step = self.classic.hand_over(group_id, now_ms)
        assert handed is not None
        out.step(step)
        self._consumer_events(out, self.consumer.upgrade(group_id, handed, state, now_ms), now_ms)
        return None

    def consumer_group_describe(self, request: ConsumerGroupDescribe) -> ConsumerGroupDescribeResponse:
        """ConsumerGroupDescribe, as of the last input (it changes nothing)."""
        return self.consumer.describe(request)

    # --- time and durable state -----------------------------------------------------------------------------------

    def tick(self, now_ms: int, machine: str) -> CoordinatorResult:
        """Fire the timers of ``machine`` (one of :data:`MACHINES`) due by ``now_ms``, each at its deadline: members
        expired or fenced (maybe a consumer group turned classic), rounds completed."""
        out = _Outcome()
        if machine == "consumer":
            self._consumer_events(out, self.consumer.tick(now_ms), now_ms)
        else:
            out.step(self.classic.tick(now_ms))
        return self._result(out)

    def next_deadline_ms(self) -> int | None:
        """The earliest timer's deadline of both machines, or ``None`` when nothing waits on time."""
        return min((d for d in (self.classic.next_deadline_ms(), self.consumer.next_deadline_ms()) if d is not None),
                   default=None)

    def load(self, groups: Mapping[str, GroupRecord], now_ms: int) -> CoordinatorResult:
        """Take in the groups replayed from their records (before anyone is answered): each member given a whole
        session from ``now_ms``, as Kafka's ``onLoaded``; the records are known stored."""
        out = _Outcome()
        for group_id, record in groups.items():
            if isinstance(record, ClassicGroupRecord):
                out.step(self.classic.load(group_id, record, now_ms))
            else:
                out.events.extend(self.consumer.load(group_id, record, now_ms))
            if self.keep_records:
                self._returned[group_id] = encode_value(record)
        self.classic.fired_groups()
        self.consumer.fired_groups()
        return CoordinatorResult(tuple(out.effects), (), tuple(out.events))

    def unwritten(self, group_ids: Iterable[str]) -> None:
        """The records last returned of ``group_ids`` were not stored: their next ones are returned whatever they are,
        a tombstone too."""
        for group_id in group_ids:
            self._returned[group_id] = _UNKNOWN

    def record_of(self, group_id: str) -> GroupRecord | None:
        """The group's record as it stands (``None``: no group of that id, or nothing of it to keep)."""
        if self.consumer.has_group(group_id):
            return self.consumer.record_of(group_id)
        return self.classic.record_of(group_id)

    # --- plumbing ---------------------------------------------------------------------------------------------------

    def _classic_answer(self, out: _Outcome, request: classic.Request, now_ms: int) -> Response:
        """The classic machine's answer to a request the facade makes of it itself (numbered ``_OWN``), the rest of
        its step taken into ``out``."""
        step = self.classic.handle(request, now_ms)
        out.step(step)
        return step.responses()[_OWN]

    def _consumer_events(self, out: _Outcome, events: Iterable[GroupEvent], now_ms: int) -> None:
        """Take the consumer machine's events, and convert back the groups a member left (Kafka's
        ``validateOnlineDowngradeWithFencedMembers``, ``convertToClassicGroup``): a group left with classic members
        only becomes classic when the policy allows it, its classic record written in the consumer group's place in
        one write, never a tombstone first, so that a replay finds the one or the other."""
        check = list(events)
        out.events.extend(check)
        while check:  # a downgrade's own events (its timers fired first) are looked at in turn
            gone = sorted({event.group_id for event in check if event.name in _MEMBER_GONE})
            check = []
            for group_id in gone:
                check.extend(self._downgrade(out, group_id, now_ms, rebalance=True))

    def _downgrade(self, out: _Outcome, group_id: str, now_ms: int, rebalance: bool) -> tuple[GroupEvent, ...]:
        """The consumer group handed to the classic machine if its members all speak the classic protocol (and the
        policy and ``group.max.size`` allow it), rebalancing there or not; the consumer machine's events of it."""
        record, events = self.consumer.downgrade(group_id, now_ms, self.classic.config.max_size)
        out.events.extend(events)
        if record is not None:
            out.step(self.classic.adopt(group_id, record, now_ms, rebalance=rebalance))
            out.given[group_id] = record
            out.touched.add(group_id)
        return events

    def _result(self, out: _Outcome) -> CoordinatorResult:
        fired = self.classic.fired_groups() | self.consumer.fired_groups()
        if not self.keep_records:
            return CoordinatorResult(tuple(out.effects), (), tuple(out.events))
        touched = out.touched | fired | {event.group_id for event in out.events}
        records: list[tuple[str, bytes | None]] = []
        for group_id in sorted(touched):
            if group_id in out.given:
                record: GroupRecord | None = out.given[group_id]
            elif not self.consumer.has_group(group_id) and not self.classic.settled(group_id):
                continue  # mid-round: stored once it has an outcome
            else:
                record = self.record_of(group_id)
            value = None if record is None else encode_value(record)
            last = self._returned.get(group_id, _NEVER)
            if value == last or (value is None and last is _NEVER):
                continue  # unchanged, or gone without anything of it ever stored
            self._returned[group_id] = value
            records.append((group_id, value))
        return CoordinatorResult(tuple(out.effects), tuple(records), tuple(out.events))


def deleted_in_broker(response: classic.DeleteGroupsResponse) -> tuple[str, ...]:
    """The groups whose offsets the broker is to delete after DeleteGroups: those deleted here, and those no machine
    runs (offsets only)."""
    return tuple(group_id for group_id, code in response.results
                 if code in (classic.ErrorCode.none, classic.ErrorCode.group_id_not_found))


def with_broker_deletions(response: classic.DeleteGroupsResponse,
                          broker: Sequence[tuple[str, int]]) -> tuple[tuple[str, int], ...]:
    """DeleteGroups' answer, error codes by Kafka's numbers, once the broker deleted the offsets: the broker's answer
    stands for a group no machine runs, as the group is the broker's alone."""
    answers = dict(broker)
    return tuple((group_id, answers[group_id] if code == classic.ErrorCode.group_id_not_found
                  and group_id in answers else int(code)) for group_id, code in response.results)


def _listed(group: classic.ListedGroup, states: Sequence[str], types: Sequence[str]) -> bool:
    """ListGroups' v4 state and v5 type filters, case-insensitive, empty meaning all (as the classic rows)."""
    return ((not states or group.state.lower() in {s.lower() for s in states})
            and (not types or group.group_type.lower() in {t.lower() for t in types}))


__all__ = ["MACHINES", "CoordinatorResult", "GroupCoordinator", "OffsetDeleteCheck", "deleted_in_broker",
           "with_broker_deletions"]
