"""The ZooKeeper-coordinated group of Kafka 0.10.0.1's high-level consumer, as this project's connector runs it,
simulated: a ZooKeeper ensemble (:mod:`.ensemble`), each member's kazoo connection (:mod:`.kazoo_connection`), watches
firing to every member, each member's rebalance in the nine steps of :mod:`zkconsumer.events.rebalance_steps`, the
assignment computed by the real legacy assignors.

A member's rebalance, per attempt (the ZooKeeper requests it sends in brackets; CPU costs from
:class:`~zkconsumer.storm.parameters.StormParameters`):

1. read the cluster [a read of ``/brokers/ids``];
2. stop its fetchers and commit its offsets (no messages are modelled, so no offset moved: nothing written);
3. the listener (no cost);
4. release its owner znodes [a multi-op of deletes per claim batch];
5. assign: read the group [the topic's ``getData`` and ``getChildren`` of ``ids``; then one ``getData`` a member listed
   and the topics' listing], then the assignor over the members ZooKeeper listed;
6. fetch the offsets [the topic's offsets listed, then, in a group that committed them, one ``getData`` per
   partition assigned];
7. rebuild the registry;
8. claim: the owners folder checked, every batch's multi-op of creates sent at once; a batch meeting an owner znode
   of another member fails whole (a conflict): the member reads that batch's owner znodes (a read each), deletes the
   batches it did create, and the attempt fails; after the claim, the offsets read again as in step 6;
9. start its fetchers: its partitions consume again; then the rebalance's own CPU beyond its steps
   (``rebalance_cpu_ms``), and the rebalance completes.

A failed attempt is retried after ``rebalance.backoff.ms``; after ``rebalance.max.retries`` failed attempts the
rebalance fails. A member's first rebalance, the one ``create_message_streams`` runs, then raises
ConsumerRebalanceFailedException to the application, as Kafka's did: the member (its application taken to keep the
connector) stays registered and owns nothing until a watch fires again. A later rebalance, the connector's rebalance
thread's, starts again at once (KAFKA-4228); with ``give_up_after_retries`` it too leaves the member owning nothing
until a watch fires (Kafka 0.10.0.1's watcher thread, which logs the failure and waits for the next trigger). A watch
firing during a rebalance is remembered and runs one more rebalance after it (the connector's rebalance thread).

An attempt fails three ways: an ownership conflict; a connection dropped while the attempt waits on an answer (kazoo
fails every request outstanding with a ConnectionLoss); or an answer the connector waited the whole session timeout
for (its bounded wait). A dropped connection is made again (to the next server of an ensemble at once, to the one
server after kazoo's retry delay); meanwhile requests wait in kazoo's queue, and the server has forgotten the
connection's watches, so the member's watch recipes read again and the connector rebalances if the group changed
meanwhile. The server expires a session only after hearing nothing from it for the session timeout (a killed member,
or a member disconnected that long); it then deletes the member's ephemerals and fires the watches, and a live member
learns of it when it connects again, registers again and rebalances (``handleNewSession``); a scenario's ``expire``
does the same at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from zkconsumer.assignors import registry
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.storm.ensemble import Ensemble
from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.group_measures import GroupMeasures
from zkconsumer.storm.kazoo_connection import DROP, PING, KazooConnection
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.request_queue import RequestQueue

TOPIC = "storm"
NO_OWNER = -1
#: watch notifications delivered together (see ``_fire_watches``)
WATCH_CHUNK = 32
#: reads of one connection's pipelined batch a server serves before it turns to the other connections' requests:
#: ZooKeeper's NIO threads read the ready connections in turn, so a member's thousands of offset reads are served
#: interleaved with the others' requests (and pings), not whole while every other client waits; approximated a chunk
#: at a time
READ_CHUNK = 10

Reply = Callable[[Any, float], None]


@dataclass
class _LegacyMember:
    name: str
    index: int
    conn: KazooConnection
    incarnation: int = 0  # bumped when the member dies or its session expires: older callbacks are dropped
    alive: bool = False
    rebalancing: bool = False
    pending: bool = False  # a watch fired during the rebalance
    registering: bool = False  # started (or its session renewed), its first rebalance not yet begun
    #: its first rebalance since it started is under way: the one ``create_message_streams`` runs and raises from
    initial: bool = False
    gave_up: bool = False  # its rebalance ran out of retries and was not started again: it owns nothing until a watch
    watching: bool = False  # its watch on the group's ids is set on its server
    recipes: bool = False  # its watch recipes exist (from its registration's reads on): they read again on reconnecting
    reconnecting: bool = False  # its connection dropped; busy until its watch recipes have read again
    session_lost: bool = False  # the server expired its session while it was disconnected
    fetching_suspended: bool = False  # disconnected a third of the session: the connector stopped its fetchers
    owned: list[int] = field(default_factory=list)  # the partitions of its last rebalance, consuming once started
    znodes: set[int] = field(default_factory=set)  # the owner znodes the server holds for it
    consuming: bool = False
    attempt: int = 0  # failed attempts of the present rebalance
    token: int = 0  # bumped when an attempt fails: the failed attempt's continuations stop
    waiting: int = 0  # the request the attempt waits on (0: none)
    requests: int = 0  # requests the member made, numbering ``waiting``
    seen: tuple[int, int] = (-1, -1)  # the group's (ids, topic) versions its watch recipes last read
    resend: Callable[[], None] | None = None  # its registration's request in flight, sent again after a drop
    queued: list[Callable[[], None]] = field(default_factory=list)  # requests made while disconnected


def _ignore(*_: object) -> None:
    pass


class LegacyGroup:
    """One group on one topic of ``partitions`` partitions, its members by name."""

    def __init__(self, loop: EventLoop, parameters: StormParameters, partitions: int, strategy: str = "legacy-range",
                 ) -> None:
        self.loop = loop
        self.p = parameters
        self.strategy = registry.create(strategy)
        # the members' one CPU when they share it (members_share_one_cpu), served in turn; their clients' work on
        # every request they send takes it too
        self.host = RequestQueue(loop, 0.0) if parameters.members_share_one_cpu else None
        self.zk = Ensemble(loop, parameters.zookeeper_servers, parameters.network_rtt_ms,
                           None if self.host is None or not parameters.zk_client_ms else self._client_sends)
        self.measures = GroupMeasures(loop, partitions)
        self.members: dict[str, _LegacyMember] = {}
        self.registered: dict[str, _LegacyMember] = {}  # /consumers/<group>/ids, as the server holds it
        self.owners: list[int] = [NO_OWNER] * partitions  # /consumers/<group>/owners/<topic>/<p>: a member's index
        self.ids_version = 0  # changes of /consumers/<group>/ids (a ChildrenWatch compares what it reads)
        self.topic_version = 0  # changes of the topic's znode (a DataWatch compares its version)
        self._by_index: list[_LegacyMember] = []
        self._assignments: dict[tuple[tuple[str, ...], int], dict[str, list[int]]] = {}
        # /consumers/<group> and its folders: there already in a group that ran before, else made by the first members
        self._group_exists = parameters.offsets_committed

    # --- the scenario's actions ------------------------------------------------------------------------------------

    def start(self, name: str) -> None:
        member = self.members.get(name)
        if member is None:
            index = len(self._by_index)
            member = self.members[name] = _LegacyMember(name, index, self._connection())
            self._by_index.append(member)
        else:
            member.conn = self._connection(member.conn.server)
        member.alive = True
        member.initial = True
        member.conn.opened(self.loop.now_ms, member.index % len(self.zk) if member.conn.generation == 0
                           else member.conn.server)
        self._watch_connection(member)
        self._register(member)

    def stop(self, name: str) -> None:
        """A clean shutdown: fetchers stop, owner znodes and registration deleted, the others' watches fire."""
        member = self.members[name]
        server = member.conn.server
        self._die(member)
        owned = self._owned_by(member)
        self.zk.write(server, self.p.zk_multi_op_ms * (len(owned) + 1), self.p.zk_write_ms,
                      lambda: self._drop_ephemerals(member), lambda *_: None, operations=len(owned) + 1)

    def kill(self, name: str) -> None:
        """The process dies: its ephemerals stay until its session expires on the server."""
        member = self.members[name]
        self._die(member)
        incarnation = member.incarnation
        self.loop.after(self.p.zookeeper_session_timeout_ms, lambda: self._server_expires(member, incarnation))

    def expire(self, name: str) -> None:
        member = self.members[name]
        if member.alive:
            self.measures.session_expiries += 1
            self._renew_session(member)

    def grow(self, partitions: int) -> None:
        """The topic gains partitions: its data watch fires in every member."""
        self.owners.extend([NO_OWNER] * partitions)
        self.measures.change_partitions(partitions)
        self.topic_version += 1
        self._fire_watches()

    def settled(self) -> bool:
        return self.measures.settled

    def unsettled(self) -> str:
        """What keeps the group from being stable, as it stands: the members still at it, and how far behind
        ZooKeeper is against the wait kazoo allows a ping."""
        alive = [m for m in self.members.values() if m.alive]
        busy = sum(1 for m in alive if m.rebalancing or m.pending or m.registering)
        down = sum(1 for m in alive if m.reconnecting)
        gave_up = sum(1 for m in alive if m.gave_up)
        idle = f", {gave_up:,} out of retries and waiting for a watch" if gave_up else ""
        ping_ms = KazooConnection(self.p.zookeeper_session_timeout_ms).half_read_timeout_ms
        return (f"{busy:,} of {len(alive):,} members rebalancing or due to, {down:,} reconnecting{idle}; "
                f"{self.measures.consuming:,} of {self.measures.partitions:,} partitions consuming; ZooKeeper "
                f"{self.zk.queue_ms() / 1000:,.1f} s behind (kazoo drops a connection whose ping is not answered "
                f"within {ping_ms / 1000:.2f} s)")

    # --- ZooKeeper's side ------------------------------------------------------------------------------------------

    def _add_registration(self, member: _LegacyMember) -> None:
        if member.name in self.registered:  # kazoo sent the create again after a drop: it exists, ours
            return
        # the others' watches fire; the member's own is set after its registration, and it rebalances anyway
        self.registered[member.name] = member
        self.ids_version += 1
        self._fire_watches(skip=member)

    def _drop_ephemerals(self, member: _LegacyMember) -> None:
        self._delete_owners(member, self._owned_by(member))
        if self.registered.pop(member.name, None) is not None:
            self.ids_version += 1
            self._fire_watches()

    def _fire_watches(self, skip: _LegacyMember | None = None) -> None:
        """The ids watch of every member watching fires: one notification each, sent by its server in turn as the
        change is applied (ahead of the requests queued there, which wait for the whole fan-out). A watch fires
        once: the member's watcher reads the children again, which sets it again, and then triggers the rebalance
        (kazoo's ``ChildrenWatch``), so the changes applied before that read are one trigger, not one each."""
        by_server: dict[int, list[tuple[_LegacyMember, int, int]]] = {}
        for m in self.registered.values():
            if m.alive and m.watching and m.conn.up and m is not skip:
                by_server.setdefault(m.conn.server, []).append((m, m.incarnation, m.conn.generation))
        for server, watching in by_server.items():
            self.zk.occupy(server, self.p.zk_watch_fire_ms * len(watching))
            self.measures.busy += len(watching)
            # delivered in chunks, each as its last notification arrives (at most WATCH_CHUNK x zk_watch_fire_ms
            # late), and read again together: a few events a chunk rather than a member keep a thousand members'
            # fan-outs cheap to simulate
            for start in range(0, len(watching), WATCH_CHUNK):
                chunk = watching[start:start + WATCH_CHUNK]
                for member, _, _ in chunk:
                    member.watching = False
                sent = self.loop.now_ms + self.p.zk_watch_fire_ms * (start + len(chunk))
                self.loop.at(sent + self.p.network_rtt_ms / 2, functools.partial(self._read_again, server, chunk))

    def _read_again(self, server: int, chunk: list[tuple[_LegacyMember, int, int]]) -> None:
        """The notifications arrive; the watchers' reads of the children, which set the watches again, and each
        member's trigger once the answer is back. Where the members share one CPU, each watcher takes its turn on it
        to handle the notification and send the read (kazoo's event thread): the changes applied meanwhile find no
        watch set, and are in that read. A member whose connection dropped meanwhile reads again when it is back."""
        live = [(m, g) for m, i, g in chunk if m.incarnation == i and m.alive and m.conn.generation == g]
        for member, _ in live:
            self._received(member)

        def watch_set() -> None:
            for member, generation in live:
                if member.conn.generation == generation:
                    member.watching = True
                    member.seen = (self.ids_version, self.topic_version)

        def trigger(*_: object) -> None:
            self.measures.busy -= len(chunk)
            for member, generation in live:
                if member.alive and member.conn.generation == generation:
                    self._received(member)
                    self._trigger(member)

        def read(*_: object) -> None:
            sending = [m for m, g in live if m.conn.generation == g]
            if not sending:
                self.measures.busy -= len(chunk)
                return
            for member in sending:
                member.conn.sent(self.loop.now_ms)
            first, last = self.zk.read(server, self.p.zk_read_ms * len(sending), watch_set, trigger,
                                       requests=len(sending))
            for member in sending:
                member.conn.answering(first, last)

        if self.host is None:
            read()
        else:
            self.host.request(self.p.step_fixed_ms * len(live), None, read)

    def _server_expires(self, member: _LegacyMember, incarnation: int) -> None:
        """A killed member's session ends a session timeout after the server last heard from it."""
        if member.incarnation == incarnation and not member.alive:
            self.measures.session_expiries += 1
            self._drop_ephemerals(member)

    def _owned_by(self, member: _LegacyMember) -> list[int]:
        return sorted(member.znodes)

    def _delete_owners(self, member: _LegacyMember, partitions: list[int]) -> None:
        for q in partitions:
            if self.owners[q] == member.index:
                self.owners[q] = NO_OWNER
        member.znodes.difference_update(partitions)

    # --- the member's connection (kazoo) -----------------------------------------------------------------------------

    def _connection(self, server: int = 0) -> KazooConnection:
        return KazooConnection(self.p.zookeeper_session_timeout_ms, server)

    def _zk(self, member: _LegacyMember, send: Callable[[int, Reply], tuple[float, float]], reply: Reply,
            sent: Callable[[float, float], None] | None = None) -> None:
        """A request through the member's connection: sent now if it is up (a request counts as a ping), else queued
        by kazoo until the connection is back; ``reply`` only if the connection it went on is still the member's
        (the answers to a dropped connection's requests are never read). ``sent(now, first answer)`` as it goes."""
        incarnation = member.incarnation

        def go() -> None:
            conn = member.conn
            generation = conn.generation
            conn.sent(self.loop.now_ms)

            def answered(result: Any, latency: float) -> None:
                if member.incarnation == incarnation and member.conn.generation == generation:
                    self._received(member)
                    reply(result, latency)

            first, last = send(conn.server, answered)
            conn.answering(first, last)
            if sent is not None:
                sent(self.loop.now_ms, first)

        if member.conn.up:
            go()
        else:
            member.queued.append(go)

    def _received(self, member: _LegacyMember) -> None:
        if member.conn.received(self.loop.now_ms):
            self._ping(member)

    def _ping(self, member: _LegacyMember) -> None:
        conn = member.conn
        conn.pinged(self.loop.now_ms, self.zk.ping(conn.server, self.p.zk_read_ms))

    def _watch_connection(self, member: _LegacyMember) -> None:
        """kazoo's loop for the member's connection: a check when its wait would end, ahead of time moved on as
        the member sends and reads (the check then waits again)."""
        incarnation, generation = member.incarnation, member.conn.generation

        def check() -> None:
            conn = member.conn
            if member.incarnation != incarnation or conn.generation != generation or not conn.up:
                return
            if self.loop.now_ms < conn.wait_ends_ms:
                self.loop.at(conn.wait_ends_ms, check)
                return
            due = conn.wait_ended(self.loop.now_ms)
            if due == DROP:
                self._drop(member)
                return
            if due == PING:
                self._ping(member)
            self.loop.at(conn.wait_ends_ms, check)

        self.loop.at(member.conn.wait_ends_ms, check)

    def _drop(self, member: _LegacyMember) -> None:
        """The ping went unanswered: kazoo drops the connection, fails every request outstanding (the attempt waiting
        on one fails; a registration's request is sent again) and connects again; the server forgets the
        connection's watches."""
        conn = member.conn
        conn.dropped()
        self.measures.connection_drops += 1
        member.watching = False
        if not member.reconnecting:
            member.reconnecting = True
            self.measures.busy += 1
        if member.waiting and member.rebalancing:
            self.measures.attempts_dropped += 1
            self._attempt_failed(member)
        incarnation, generation = member.incarnation, conn.generation

        def still_down() -> bool:
            return member.incarnation == incarnation and member.conn.generation == generation and not member.conn.up

        def suspended_too_long() -> None:
            # the connector: cut off a third of the session timeout, it stops fetching (the server may expire it)
            if still_down() and member.consuming:
                member.fetching_suspended = True
                self._stop_consuming(member)

        def server_expires() -> None:
            if still_down() and not member.session_lost:
                member.session_lost = True
                self.measures.session_expiries += 1
                self._drop_ephemerals(member)

        self.loop.after(self.p.zookeeper_session_timeout_ms / 3, suspended_too_long)
        self.loop.after(self.p.zookeeper_session_timeout_ms, server_expires)
        several = len(self.zk) > 1
        self.loop.after((0.0 if several else self.p.reconnect_delay_ms) + self.p.network_rtt_ms,
                        lambda: self._reconnected(member, incarnation, (conn.server + several) % len(self.zk)))

    def _reconnected(self, member: _LegacyMember, incarnation: int, server: int) -> None:
        if member.incarnation != incarnation or not member.alive:
            return
        if member.session_lost:  # kazoo's handshake says so: the connector starts a new session and registers again
            member.session_lost = False
            self._renew_session(member, server)
            return
        conn = member.conn
        conn.opened(self.loop.now_ms, server)
        self._watch_connection(member)
        queued, member.queued = member.queued, []
        for send in queued:
            send()
        if member.resend is not None:
            member.resend()
        if member.fetching_suspended:  # the connector: back on the same session, fetch again
            member.fetching_suspended = False
            self._trigger(member)
        if not member.recipes:
            self._reconnect_done(member)
            return
        # kazoo forgot the watches: its recipes read again; the connector is called only if the group changed
        changed = [False]

        def read_again() -> None:
            changed[0] = member.seen != (self.ids_version, self.topic_version)
            member.seen = (self.ids_version, self.topic_version)
            member.watching = True

        def answered(*_: object) -> None:
            if changed[0]:
                self._trigger(member)
            self._reconnect_done(member)

        self._zk(member, lambda s, reply: self.zk.read(s, self.p.zk_read_ms * self.p.reconnect_reads, read_again,
                                                        reply, requests=self.p.reconnect_reads), answered)

    def _reconnect_done(self, member: _LegacyMember) -> None:
        if member.reconnecting:
            member.reconnecting = False
            self.measures.busy -= 1

    # --- the member's side -----------------------------------------------------------------------------------------

    def _register(self, member: _LegacyMember) -> None:
        """In a group not yet in ZooKeeper, the registration meets no parent: the member checks and creates the
        group's folders first, one request after another; then the ephemeral registration, then its reads one after
        another, the watches set by the last two; the rebalance follows. A stage whose request a drop failed is sent
        again (kazoo's retry)."""
        member.registering = True
        self.measures.busy += 1
        creating = 0 if self._group_exists else self.p.new_group_requests
        stages: list[Callable[[Callable[[], None]], None]] = [self._one_read(member)] * creating
        stages.append(lambda then: self._zk(member, lambda s, reply: self.zk.write(
            s, self.p.zk_multi_op_ms, self.p.zk_write_ms, lambda: self._add_registration(member), reply),
            lambda *_: then()))
        stages += [self._one_read(member)] * max(self.p.registration_reads - 1, 0)
        if self.p.registration_reads:
            stages.append(self._one_read(member, self._watch_read(member)))

        def run(i: int) -> None:
            if i == creating:
                self._group_exists = True
            if i == len(stages):
                member.resend = None
                self._registered(member)
                return
            member.resend = functools.partial(stages[i], functools.partial(run, i + 1))
            member.resend()

        run(0)

    def _one_read(self, member: _LegacyMember, apply: Callable[[], None] | None = None,
                  ) -> Callable[[Callable[[], None]], None]:
        return lambda then: self._zk(member, lambda s, reply: self.zk.read(s, self.p.zk_read_ms, apply, reply),
                                     lambda *_: then())

    def _watch_read(self, member: _LegacyMember) -> Callable[[], None]:
        def watch_set() -> None:
            member.watching = True
            member.recipes = True
            member.seen = (self.ids_version, self.topic_version)
        return watch_set

    def _registered(self, member: _LegacyMember) -> None:
        """The watch reports the members as they are now (kazoo's first call, not a change): those that registered
        meanwhile are in the rebalance's read."""
        member.watching = member.recipes = True
        member.registering = False
        self.measures.busy -= 1
        self._trigger(member)

    def _die(self, member: _LegacyMember) -> None:
        member.incarnation += 1
        member.alive = member.watching = member.recipes = member.initial = member.gave_up = False
        member.conn.dropped()
        self._stop_consuming(member)
        self.measures.busy -= (member.rebalancing or member.pending) + member.registering + member.reconnecting
        member.rebalancing = member.pending = member.registering = member.reconnecting = False
        member.session_lost = member.fetching_suspended = False
        member.waiting, member.resend, member.queued = 0, None, []

    def _renew_session(self, member: _LegacyMember, server: int | None = None) -> None:
        """The session is gone: its ephemerals deleted (the server's), the member starts a new one and registers
        again."""
        server = member.conn.server if server is None else server
        self._die(member)
        self._drop_ephemerals(member)
        member.owned = []
        member.alive = True
        member.conn = self._connection(server)
        member.conn.opened(self.loop.now_ms, server)
        self._watch_connection(member)
        self._register(member)

    def _stop_consuming(self, member: _LegacyMember) -> None:
        if member.consuming:
            member.consuming = False
            self.measures.change_consuming(-len(member.owned))

    def _trigger(self, member: _LegacyMember) -> None:
        if member.rebalancing or member.registering:
            if member.rebalancing and not member.pending:
                member.pending = True
            return
        member.rebalancing = True
        member.gave_up = False
        self.measures.busy += 1
        member.attempt = 0
        self._attempt(member)

    def _after(self, member: _LegacyMember, delay_ms: float, then: Callable[[], None]) -> None:
        incarnation = member.incarnation
        self.loop.after(delay_ms, lambda: then() if member.incarnation == incarnation else None)

    def _client_sends(self, requests: int) -> None:
        assert self.host is not None
        self.host.occupy(self.p.zk_client_ms * requests)

    def _cpu(self, member: _LegacyMember, cost_ms: float, then: Callable[[], None]) -> None:
        """``cost_ms`` of the member's own CPU, then ``then`` (unless the attempt failed meanwhile): at once on a
        machine of its own, or in turn with the other members' work where they share one CPU (one process, one
        interpreter lock)."""
        token = member.token
        if self.host is None or cost_ms <= 0:
            self._after(member, cost_ms, lambda: then() if member.token == token else None)
            return
        incarnation = member.incarnation
        self.host.request(cost_ms, None, lambda *_: then() if member.incarnation == incarnation
                          and member.token == token else None)

    def _wait_on(self, member: _LegacyMember, then: Callable[[], None]) -> tuple[Reply, Callable[[float, float], None]]:
        """The attempt waits on a request: its answer continues the attempt. The connector's wait gives up after the
        session timeout without a first answer (a RequestTimeoutError, a ConnectionLoss: the attempt fails, the
        connection stays); known as the request goes, the server answering in order."""
        member.requests += 1
        number = member.waiting = member.requests
        token = member.token

        def gave_up() -> None:
            if member.waiting == number and member.token == token and member.rebalancing:
                self.measures.request_timeouts += 1
                self._attempt_failed(member)

        def sent(now_ms: float, first_ms: float) -> None:
            if member.waiting == number and first_ms - now_ms > self.p.zookeeper_session_timeout_ms:
                self._after(member, self.p.zookeeper_session_timeout_ms, gave_up)

        def reply(*_: object) -> None:
            if member.waiting == number and member.token == token:
                member.waiting = 0
                then()

        return reply, sent

    def _read(self, member: _LegacyMember, count: int, then: Callable[[], None],
              apply: Callable[[], None] | None = None) -> None:
        """``count`` reads sent together (kazoo's async reads, pipelined); ``apply()`` on the server as the first is
        served, ``then`` once the last is answered. A server takes a long batch ``READ_CHUNK`` reads at a time, each
        chunk reaching it as the one before is served, so the other connections' requests are served in between."""
        reply, sent = self._wait_on(member, then)
        number, token, incarnation = member.waiting, member.token, member.incarnation
        sizes = [min(READ_CHUNK, count - i) for i in range(0, count, READ_CHUNK)] or [count]

        def send(k: int) -> None:
            if (member.waiting, member.token, member.incarnation) != (number, token, incarnation):
                return  # the attempt failed meanwhile (a dropped connection): its other reads failed with it
            last = k == len(sizes) - 1

            def chunk(server: int, answered: Reply) -> tuple[float, float]:
                answers = self.zk.read(server, self.p.zk_read_ms * sizes[k], apply if k == 0 else None, answered,
                                       requests=sizes[k])
                if not last:  # the next chunk reaches the server as this one's last read is served
                    self.loop.at(max(self.loop.now_ms, answers[1] - self.p.network_rtt_ms), lambda: send(k + 1))
                return answers

            self._zk(member, chunk, reply if last else _ignore, sent if k == 0 else None)

        send(0)

    def _writes(self, member: _LegacyMember, sizes: list[int], apply: Callable[[int], bool],
                then: Callable[[list[bool]], None]) -> None:
        """Multi-ops of ``sizes`` operations sent together, ``apply(i)`` on the server for the i-th (False: it
        failed whole); ``then(results)`` once every one is answered."""
        if not sizes:
            then([])
            return
        results: list[bool] = [False] * len(sizes)
        answered = [0]
        done, sent = self._wait_on(member, lambda: then(results))

        def reply(i: int, ok: bool, latency: float) -> None:
            results[i] = ok
            answered[0] += 1
            if answered[0] == len(sizes):
                done(None, latency)

        for i, size in enumerate(sizes):
            self._zk(member, functools.partial(self._write_through, size, functools.partial(apply, i)),
                     functools.partial(reply, i), sent if i == 0 else None)

    def _write_through(self, size: int, apply: Callable[[], bool], server: int, reply: Reply) -> tuple[float, float]:
        return self.zk.write(server, self.p.zk_multi_op_ms * size, self.p.zk_write_ms, apply, reply, operations=size)

    def _batches(self, partitions: list[int]) -> list[list[int]]:
        b = self.p.claim_batch
        return [partitions[i:i + b] for i in range(0, len(partitions), b)]

    def _offset_reads(self, member: _LegacyMember, partitions: int, then: Callable[[], None]) -> None:
        """The topic's offsets listed; in a group that committed them, each partition's then read (pipelined)."""
        if self.p.offsets_committed and partitions:
            self._read(member, 1, lambda: self._read(member, partitions, then))
        else:
            self._read(member, 1, then)

    def _attempt(self, member: _LegacyMember) -> None:
        p = self.p

        def step1_read_cluster() -> None:
            self._read(member, 1, lambda: self._cpu(member, p.step_fixed_ms, step2_stop_fetchers))

        def step2_stop_fetchers() -> None:
            # the offsets' commit writes nothing: no messages are modelled, so no offset moved since the last one
            owned = len(member.owned)
            self._stop_consuming(member)
            cost = p.step_fixed_ms + (p.stop_fetchers_ms + p.fetchers_per_partition_ms * owned if owned else 0)
            self._cpu(member, cost, step4_release)

        def step4_release() -> None:
            # every owner znode it holds: its last rebalance's, and any a failed claim left
            batches = self._batches(self._owned_by(member))

            def release(i: int) -> bool:
                self._delete_owners(member, batches[i])
                return True

            def released(_: list[bool]) -> None:
                member.owned = []
                step5_assign()

            self._writes(member, [len(b) for b in batches], release, released)

        def step5_assign() -> None:
            # the member's own topic and the ids listed, the view the server's as they are served; then each
            # member's registration and the topics' listing
            view: list[tuple[str, ...]] = []
            self._read(member, 2, lambda: self._read(member, len(view[0]) + 1, lambda: assigned(view[0])),
                       apply=lambda: view.append(tuple(sorted(self.registered))))

        def assigned(view: tuple[str, ...]) -> None:
            mine = self._assignment(view).get(member.name, [])
            cost = p.step_fixed_ms + p.assign_per_partition_ms * len(self.owners) + p.assign_per_member_ms * len(view)
            self._cpu(member, cost, lambda: self._offset_reads(member, len(mine), lambda: self._cpu(
                member, p.registry_per_partition_ms * len(mine), lambda: step8_claim(mine))))

        def step8_claim(mine: list[int]) -> None:
            batches = self._batches(mine)

            def claim(i: int) -> bool:
                batch = batches[i]
                if any(self.owners[q] not in (NO_OWNER, member.index) for q in batch):
                    return False
                for q in batch:
                    self.owners[q] = member.index
                member.znodes.update(batch)
                return True

            def claimed(results: list[bool]) -> None:
                if all(results):
                    member.owned = mine
                    start = functools.partial(self._cpu, member, p.step_fixed_ms + p.fetchers_per_partition_ms
                                              * len(mine), lambda: step9_start_fetchers(mine))
                    if p.claim_reads > 1 and mine:
                        self._offset_reads(member, len(mine), start)
                    else:
                        start()
                    return
                self.measures.conflicts += 1
                created = [b for b, ok in zip(batches, results, strict=True) if ok]
                met = next(b for b, ok in zip(batches, results, strict=True) if not ok)

                def undo(i: int) -> bool:
                    self._delete_owners(member, created[i])
                    return True

                # the failed batch's owner znodes read (one read each, pipelined), to say whose they are
                self._read(member, len(met), lambda: self._writes(
                    member, [len(b) for b in created], undo, lambda _: self._attempt_failed(member)))

            # the owners folder checked, the batches sent; the offsets read again once they are ours
            send = functools.partial(self._writes, member, [len(b) for b in batches], claim, claimed)
            if p.claim_reads and batches:
                self._read(member, 1, send)
            else:
                send()

        def step9_start_fetchers(mine: list[int]) -> None:
            member.consuming = True
            self.measures.change_consuming(len(mine))
            self.measures.rebalances += 1
            self._cpu(member, p.rebalance_cpu_ms, lambda: self._rebalance_finished(member))

        step1_read_cluster()

    def _attempt_failed(self, member: _LegacyMember) -> None:
        """The attempt ends here; the next one after ``rebalance.backoff.ms`` (the connector sleeps after every
        failed attempt, the last too); after ``rebalance.max.retries`` of them the rebalance has failed."""
        member.token += 1
        member.waiting = 0
        member.attempt += 1

        def after_backoff() -> None:
            if member.attempt < self.p.rebalance_max_retries:
                self._attempt(member)
                return
            self.measures.retries_exhausted += 1
            if self.p.give_up_after_retries or member.initial:
                # Kafka 0.10.0.1's every rebalance, and the connector's first (create_message_streams raises
                # ConsumerRebalanceFailedException to the application, which is taken to keep the connector): the
                # member stays registered and owns nothing until the next watch fires
                member.initial = False
                member.gave_up = True
                self._rebalance_finished(member)
                return
            # the connector's later rebalances (KAFKA-4228): started again at once, covering any watch fired meanwhile
            member.pending = False
            member.attempt = 0
            self._attempt(member)

        self._after(member, self.p.rebalance_backoff_ms, after_backoff)

    def _rebalance_finished(self, member: _LegacyMember) -> None:
        """The rebalance ended (done, or given up); one more if a watch fired meanwhile."""
        member.rebalancing = member.initial = False
        if member.pending:
            member.pending = member.gave_up = False
            member.rebalancing = True
            member.attempt = 0
            self._attempt(member)
        else:
            self.measures.busy -= 1

    def _assignment(self, view: tuple[str, ...]) -> dict[str, list[int]]:
        """The real assignor's answer for the members in ``view`` (every member with the same view computes the
        same, so it is computed once)."""
        key = (view, len(self.owners))
        cached = self._assignments.get(key)
        if cached is None:
            request = AssignmentInput(partitions={TOPIC: len(self.owners)},
                                      members=tuple(Member(name, streams={TOPIC: 1}) for name in view))
            result = self.strategy.assign(request).by_member(request.members)
            cached = self._assignments[key] = {name: [tp.partition for tp in tps] for name, tps in result.items()}
        return cached

    @property
    def zookeeper_requests(self) -> int:
        return self.zk.requests

    @property
    def zookeeper_operations(self) -> int:
        return self.zk.operations
