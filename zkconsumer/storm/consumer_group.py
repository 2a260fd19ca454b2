"""A KIP-848 consumer group (:class:`ConsumerGroup`): members (ConsumerGroupHeartbeat) simulated against the front's
own consumer group coordinator (:class:`zkconsumer.front.groups.consumer_group.ConsumerGroupCoordinator`), whose
server-side assignor (``uniform`` by default) and reconciliation are the real code's; the members and the network
are the simulation's.

A member, as Kafka's consumer: joins with epoch 0 and its subscription, heartbeats every
``group.consumer.heartbeat.interval.ms`` (the answer's interval), and when an answer carries an assignment it gives
up what is no longer its own and takes what is new, then heartbeats at once to report what it owns (the coordinator
hands a partition to a member only once its previous owner reported it gone). A fenced or unknown member loses its
partitions and joins again.
"""

from __future__ import annotations

from collections.abc import Callable

from zkconsumer.assignors.topic_ids import generated_topic_id
from zkconsumer.front.groups.consumer_group import ConsumerGroupConfig, ConsumerGroupCoordinator
from zkconsumer.front.groups.consumer_group_messages import (
    ConsumerGroupHeartbeat,
    ConsumerGroupHeartbeatResponse,
    ConsumerGroupState,
    ErrorCode,
    TopicMetadata,
)
from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.modern_group import GROUP, TOPIC, ModernGroup
from zkconsumer.storm.parameters import StormParameters

TOPIC_ID = generated_topic_id(TOPIC)
LEAVE_EPOCH = -1


class _Kip848Member:
    def __init__(self, name: str) -> None:
        self.name = name
        self.member_id = f"{name}-id"
        self.alive = False
        self.incarnation = 0
        self.epoch = 0
        self.owned: frozenset[int] = frozenset()
        self.busy = False
        self.interval_ms = 0.0


class ConsumerGroup(ModernGroup):
    """One KIP-848 group on one topic, its members naming ``assignor`` (``uniform`` or ``range``)."""

    def __init__(self, loop: EventLoop, parameters: StormParameters, partitions: int, assignor: str = "uniform",
                 config: ConsumerGroupConfig | None = None) -> None:
        super().__init__(loop, parameters, partitions)
        self.assignor = assignor
        self.coordinator = ConsumerGroupCoordinator(config or ConsumerGroupConfig())
        self.members: dict[str, _Kip848Member] = {}
        self._set_topics()

    # --- the scenario's actions ------------------------------------------------------------------------------------

    def start(self, name: str) -> None:
        member = self.members.setdefault(name, _Kip848Member(name))
        member.alive, member.epoch, member.owned = True, 0, frozenset()
        self._busy(member, True)
        self._heartbeat(member, joining=True)

    def stop(self, name: str) -> None:
        member = self.members[name]
        self._die(member)
        self._send(member, ConsumerGroupHeartbeat(GROUP, member.member_id, LEAVE_EPOCH, api_version=1), None)

    def grow(self, partitions: int) -> None:
        """The front refreshes the coordinator's topic view; the next heartbeat of any member bumps the epoch."""
        self.measures.change_partitions(partitions)
        self._set_topics()

    def settled(self) -> bool:
        return self.measures.settled and self.coordinator.state_of(GROUP) is ConsumerGroupState.STABLE

    # --- the front's side ------------------------------------------------------------------------------------------

    def _set_topics(self) -> None:
        self.coordinator.set_topics([TopicMetadata(TOPIC, TOPIC_ID, self.measures.partitions)], int(self.loop.now_ms))

    def _send(self, member: _Kip848Member, request: ConsumerGroupHeartbeat,
              on: Callable[[ConsumerGroupHeartbeatResponse], None] | None) -> None:
        incarnation = member.incarnation

        def served() -> ConsumerGroupHeartbeatResponse:
            response = self.coordinator.heartbeat(request, int(self.loop.now_ms)).response
            self._arm()
            return response

        def answered(response: ConsumerGroupHeartbeatResponse, _: float) -> None:
            if on is not None and member.incarnation == incarnation:
                on(response)

        self.front.request(self.p.coordinator_request_ms, served, answered)

    def _next_deadline(self) -> int | None:
        return self.coordinator.next_deadline_ms()

    def _tick_coordinator(self) -> None:
        self.coordinator.tick(int(self.loop.now_ms))

    # --- the member's side -----------------------------------------------------------------------------------------

    def _die(self, member: _Kip848Member) -> None:
        member.incarnation += 1
        member.alive = False
        self._busy(member, False)
        self.measures.change_consuming(-len(member.owned))
        member.owned = frozenset()

    def _heartbeat(self, member: _Kip848Member, joining: bool = False) -> None:
        request = ConsumerGroupHeartbeat(
            GROUP, member.member_id, member.epoch,
            rebalance_timeout_ms=self.p.rebalance_timeout_ms if joining else -1,
            subscribed_topic_names=(TOPIC,) if joining else None,
            server_assignor=self.assignor if joining else None,
            owned={TOPIC_ID: member.owned}, client_id=member.name, client_host="/sim", api_version=1)
        self._send(member, request, lambda response: self._answered(member, response))

    def _answered(self, member: _Kip848Member, response: ConsumerGroupHeartbeatResponse) -> None:
        if response.error_code is not ErrorCode.none:
            self._die(member)  # fenced or unknown: its partitions are lost, it joins again
            self.start(member.name)
            return
        member.epoch = response.member_epoch
        member.interval_ms = response.heartbeat_interval_ms
        if response.assignment is None or frozenset(response.assignment.get(TOPIC_ID, ())) == member.owned:
            self._busy(member, False)
            self._next_heartbeat(member, member.interval_ms)
            return
        target = frozenset(response.assignment.get(TOPIC_ID, ()))
        revoked, added = member.owned - target, target - member.owned
        self._busy(member, True)
        self.measures.change_consuming(-len(revoked))
        member.owned = member.owned - revoked

        def reconciled() -> None:
            member.owned = target
            self.measures.change_consuming(len(added))
            self.measures.rebalances += 1
            self._heartbeat(member)  # report what it owns now

        self._next_heartbeat(member, self.p.modern_per_partition_ms * (len(revoked) + len(added)), reconciled)

    def _next_heartbeat(self, member: _Kip848Member, delay_ms: float,
                        then: Callable[[], None] | None = None) -> None:
        incarnation = member.incarnation
        action = then or (lambda: self._heartbeat(member))
        self.loop.after(delay_ms, lambda: action() if member.incarnation == incarnation else None)
