"""The ZooKeeper-coordinated group of Kafka 0.10.0.1's high-level consumer, as this project's connector runs it,
simulated: one ZooKeeper server with a request queue, watches firing to every member, each member's rebalance
in the nine steps of :mod:`zkconsumer.events.rebalance_steps`, the assignment computed by the real legacy assignors.

A member's rebalance, per attempt (the ZooKeeper requests it sends in brackets; CPU costs from
:class:`~zkconsumer.storm.parameters.StormParameters`):

1. read the cluster [a read of ``/brokers/ids``];
2. stop its fetchers and commit its offsets (no messages are modelled, so no offset moved: nothing written);
3. the listener (no cost);
4. release its owner znodes [a multi-op of deletes per claim batch];
5. assign: read the group's registrations [``getChildren`` of ``ids``, one ``getData`` a member, the topic's
   ``getData``], then the assignor over the members ZooKeeper listed at that moment;
6. fetch the offsets [a ``getChildren`` of the topic's offsets];
7. rebuild the registry;
8. claim: every batch's multi-op of creates sent at once; a batch meeting an owner znode of another member fails
   whole (a conflict): the member reads that batch's owner znodes (a read each), deletes the batches it did
   create, and retries the rebalance after ``rebalance.backoff.ms``; after ``rebalance.max.retries`` failed attempts
   it gives up (Kafka's ``ConsumerRebalanceFailedException``) and owns nothing until the next watch;
9. start its fetchers: its partitions consume again; then the rebalance's own CPU beyond its steps
   (``rebalance_cpu_ms``), and the rebalance completes.

A watch firing during a rebalance is remembered and runs one more rebalance after it (Kafka's watcher thread).
A request answered later than ``zookeeper.session.timeout.ms`` after it was sent is given up by the member (the
connector's bounded wait, a ConnectionLoss): the attempt fails and is retried after ``rebalance.backoff.ms``. A
session expires (``expire`` in a scenario, or a session timeout after a member is killed): the server deletes its
ephemerals (registration and owner znodes) and fires the watches, and a live member registers again and rebalances
(``handleNewSession``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field

from zkconsumer.assignors import registry
from zkconsumer.assignors.model import AssignmentInput, Member
from zkconsumer.storm.event_loop import EventLoop
from zkconsumer.storm.group_measures import GroupMeasures
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.request_queue import RequestQueue

TOPIC = "storm"
NO_OWNER = -1
#: watch notifications delivered together (see ``_fire_watches``)
WATCH_CHUNK = 32


@dataclass
class _LegacyMember:
    name: str
    index: int
    incarnation: int = 0  # bumped when the member dies or its session expires: older callbacks are dropped
    alive: bool = False
    rebalancing: bool = False
    pending: bool = False  # a watch fired during the rebalance
    registering: bool = False  # started (or its session renewed), its first rebalance not yet begun
    watching: bool = False  # its watch on the group's ids is set: from its registration's reads on
    owned: list[int] = field(default_factory=list)  # the partitions of its last rebalance, consuming once started
    znodes: set[int] = field(default_factory=set)  # the owner znodes the server holds for it
    consuming: bool = False
    attempt: int = 0


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
        self.zk = RequestQueue(loop, parameters.network_rtt_ms,
                               None if self.host is None or not parameters.zk_client_ms else self._client_sends)
        self.measures = GroupMeasures(loop, partitions)
        self.members: dict[str, _LegacyMember] = {}
        self.registered: dict[str, _LegacyMember] = {}  # /consumers/<group>/ids, as the server holds it
        self.owners: list[int] = [NO_OWNER] * partitions  # /consumers/<group>/owners/<topic>/<p>: a member's index
        self._by_index: list[_LegacyMember] = []
        self._assignments: dict[tuple[tuple[str, ...], int], dict[str, list[int]]] = {}
        self._group_exists = False  # /consumers/<group> and its folders, created by the first members

    # --- the scenario's actions ------------------------------------------------------------------------------------

    def start(self, name: str) -> None:
        member = self.members.get(name)
        if member is None:
            member = self.members[name] = _LegacyMember(name, len(self._by_index))
            self._by_index.append(member)
        member.alive = True
        self._register(member)

    def stop(self, name: str) -> None:
        """A clean shutdown: fetchers stop, owner znodes and registration deleted, the others' watches fire."""
        member = self.members[name]
        self._die(member)
        owned = self._owned_by(member)
        self.zk.write(self.p.zk_multi_op_ms * (len(owned) + 1), self.p.zk_write_ms,
                      lambda: self._drop_ephemerals(member), lambda *_: None, operations=len(owned) + 1)

    def kill(self, name: str) -> None:
        """The process dies: its ephemerals stay until its session expires on the server."""
        member = self.members[name]
        self._die(member)
        self.loop.after(self.p.zookeeper_session_timeout_ms, lambda: self._server_expires(member))

    def expire(self, name: str) -> None:
        member = self.members[name]
        if member.alive:
            self._session_expired(member)

    def grow(self, partitions: int) -> None:
        """The topic gains partitions: its data watch fires in every member."""
        self.owners.extend([NO_OWNER] * partitions)
        self.measures.change_partitions(partitions)
        self._fire_watches()

    def settled(self) -> bool:
        return self.measures.settled

    # --- ZooKeeper's side ------------------------------------------------------------------------------------------

    def _register(self, member: _LegacyMember) -> None:
        incarnation = member.incarnation
        member.registering = True
        self.measures.busy += 1

        def registered(_: object, latency: float) -> None:
            if member.incarnation == incarnation and member.alive:  # a late answer is waited for (kazoo retries)
                # the watch reports the members as they are now (kazoo's first call, not a change): those that
                # registered meanwhile are in the rebalance's read
                member.registering = False
                member.watching = True
                self.measures.busy -= 1
                self._trigger(member)

        # the ephemeral registration, then its reads one after another, the watches set by the last two; the
        # rebalance follows
        def reads(left: int) -> Callable[[object, float], None]:
            if left <= 0:
                return registered
            return lambda *_: self.zk.request(self.p.zk_read_ms, lambda: None, reads(left - 1))

        def register(*_: object) -> None:
            self._group_exists = True
            self.zk.write(self.p.zk_multi_op_ms, self.p.zk_write_ms, lambda: self._add_registration(member),
                          reads(self.p.registration_reads))

        # in a group not yet in ZooKeeper, the registration meets no parent: the member checks and creates the
        # group's folders first, one request after another
        creating = 0 if self._group_exists else self.p.new_group_requests

        def create(left: int) -> Callable[..., None]:
            if left <= 0:
                return register
            return lambda *_: self.zk.request(self.p.zk_read_ms, lambda: None, create(left - 1))

        create(creating)()

    def _add_registration(self, member: _LegacyMember) -> None:
        # the others' watches fire; the member's own is set after its registration, and it rebalances anyway
        self._fire_watches(skip=member)
        self.registered[member.name] = member

    def _drop_ephemerals(self, member: _LegacyMember) -> None:
        self._delete_owners(member, self._owned_by(member))
        if self.registered.pop(member.name, None) is not None:
            self._fire_watches()

    def _fire_watches(self, skip: _LegacyMember | None = None) -> None:
        """The ids watch of every member watching fires: one notification each, sent by the server in turn as the
        change is applied (ahead of the requests queued behind it, which wait for the whole fan-out). A watch fires
        once: the member's watcher reads the children again, which sets it again, and then triggers the rebalance
        (kazoo's ``ChildrenWatch``), so the changes applied before that read are one trigger, not one each."""
        watching = [(m, m.incarnation) for m in self.registered.values() if m.alive and m.watching and m is not skip]
        self.zk.occupy(self.p.zk_watch_fire_ms * len(watching))
        self.measures.busy += len(watching)
        # delivered in chunks, each as its last notification arrives (at most WATCH_CHUNK x zk_watch_fire_ms late),
        # and read again together: a few events a chunk rather than a member keep a thousand members' fan-outs
        # cheap to simulate
        for start in range(0, len(watching), WATCH_CHUNK):
            chunk = watching[start:start + WATCH_CHUNK]
            for member, _ in chunk:
                member.watching = False
            sent = self.loop.now_ms + self.p.zk_watch_fire_ms * (start + len(chunk))
            self.loop.at(sent + self.zk.half_rtt_ms, functools.partial(self._read_again, chunk))

    def _read_again(self, chunk: list[tuple[_LegacyMember, int]]) -> None:
        """The watchers' reads of the children, which set the watches again, and each member's trigger once the answer
        is back. Where the members share one CPU, each watcher takes its turn on it to handle the notification and
        send the read (kazoo's event thread): the changes applied meanwhile find no watch set, and are in that read."""
        live = [(m, i) for m, i in chunk if m.incarnation == i and m.alive]

        def watch_set() -> None:
            for member, incarnation in live:
                if member.incarnation == incarnation and member.alive:
                    member.watching = True

        def trigger(*_: object) -> None:
            self.measures.busy -= len(chunk)
            for member, incarnation in live:
                if member.incarnation == incarnation and member.alive:
                    self._trigger(member)

        def read(*_: object) -> None:
            self.zk.request(self.p.zk_read_ms * len(live), watch_set, trigger, requests=len(live))

        if self.host is None:
            read()
        else:
            self.host.request(self.p.step_fixed_ms * len(live), lambda: None, read)

    def _server_expires(self, member: _LegacyMember) -> None:
        if not member.alive:
            self.measures.session_expiries += 1
            self._drop_ephemerals(member)

    def _owned_by(self, member: _LegacyMember) -> list[int]:
        return sorted(member.znodes)

    def _delete_owners(self, member: _LegacyMember, partitions: list[int]) -> None:
        for q in partitions:
            if self.owners[q] == member.index:
                self.owners[q] = NO_OWNER
        member.znodes.difference_update(partitions)

    # --- the member's side -----------------------------------------------------------------------------------------

    def _die(self, member: _LegacyMember) -> None:
        member.incarnation += 1
        member.alive = member.watching = False
        self._stop_consuming(member)
        self.measures.busy -= (member.rebalancing or member.pending) + member.registering
        member.rebalancing = member.pending = member.registering = False

    def _current(self, member: _LegacyMember, incarnation: int, latency: float) -> bool:
        """Whether an answer still concerns this member's rebalance attempt. One later than the session timeout
        was given up by the client (the connector's bounded wait: a ConnectionLoss): the attempt fails, and is
        retried after ``rebalance.backoff.ms``."""
        if member.incarnation != incarnation or not member.alive:
            return False
        if latency > self.p.zookeeper_session_timeout_ms:
            self.measures.request_timeouts += 1
            self._attempt_failed(member)
            return False
        return True

    def _session_expired(self, member: _LegacyMember) -> None:
        self.measures.session_expiries += 1
        self._die(member)
        self._drop_ephemerals(member)
        member.owned = []
        member.alive = True
        self._register(member)

    def _stop_consuming(self, member: _LegacyMember) -> None:
        if member.consuming:
            member.consuming = False
            self.measures.change_consuming(-len(member.owned))

    def _trigger(self, member: _LegacyMember) -> None:
        if member.rebalancing:
            if not member.pending:
                member.pending = True
            return
        member.rebalancing = True
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
        """``cost_ms`` of the member's own CPU, then ``then``: at once on a machine of its own, or in turn with the
        other members' work where they share one CPU (one process, one interpreter lock)."""
        if self.host is None or cost_ms <= 0:
            self._after(member, cost_ms, then)
            return
        incarnation = member.incarnation
        self.host.request(cost_ms, lambda: None, lambda *_: then() if member.incarnation == incarnation else None)

    def _read(self, member: _LegacyMember, count: int, then: Callable[[], None],
              apply: Callable[[], None] = lambda: None) -> None:
        """``count`` reads sent together (kazoo's async reads, pipelined); ``apply()`` on the server as the first is
        served, ``then`` once the last is answered."""
        incarnation = member.incarnation
        self.zk.request(self.p.zk_read_ms * count, apply,
                        lambda _, latency: then() if self._current(member, incarnation, latency) else None,
                        requests=count)

    def _writes(self, member: _LegacyMember, sizes: list[int], apply: Callable[[int], bool],
                then: Callable[[list[bool]], None]) -> None:
        """Multi-ops of ``sizes`` operations sent together, ``apply(i)`` on the server for the i-th (False: it
        failed whole); ``then(results)`` once every one is answered."""
        if not sizes:
            then([])
            return
        incarnation = member.incarnation
        results: list[bool] = [False] * len(sizes)
        answered = [0]

        def reply(i: int, ok: bool, latency: float) -> None:
            results[i] = ok
            answered[0] += 1
            if answered[0] == len(sizes) and self._current(member, incarnation, latency):
                then(results)

        for i, size in enumerate(sizes):
            self.zk.write(self.p.zk_multi_op_ms * size, self.p.zk_write_ms, functools.partial(apply, i),
                          functools.partial(reply, i), operations=size)

    def _batches(self, partitions: list[int]) -> list[list[int]]:
        b = self.p.claim_batch
        return [partitions[i:i + b] for i in range(0, len(partitions), b)]

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
            # every owner znode it holds: its last rebalance's, and any a claim that timed out left
            batches = self._batches(self._owned_by(member))

            def release(i: int) -> bool:
                self._delete_owners(member, batches[i])
                return True

            def released(_: list[bool]) -> None:
                member.owned = []
                step5_assign()

            self._writes(member, [len(b) for b in batches], release, released)

        def step5_assign() -> None:
            # getChildren of ids, the registrations, the topic: the view is the server's when the first is served
            view: list[tuple[str, ...]] = []
            self._read(member, len(self.registered) + 2, lambda: assigned(view[0]),
                       apply=lambda: view.append(tuple(sorted(self.registered))))

        def assigned(view: tuple[str, ...]) -> None:
            mine = self._assignment(view).get(member.name, [])
            cost = p.step_fixed_ms + p.assign_per_partition_ms * len(self.owners) + p.assign_per_member_ms * len(view)
            self._cpu(member, cost, lambda: self._read(member, 1, lambda: self._cpu(
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
                        self._read(member, 1, start)
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
        member.attempt += 1
        if member.attempt >= self.p.rebalance_max_retries:
            self.measures.retries_exhausted += 1
            self._rebalance_finished(member)
            return
        self._after(member, self.p.rebalance_backoff_ms, lambda: self._attempt(member))

    def _rebalance_finished(self, member: _LegacyMember) -> None:
        """The rebalance ended (done, or out of retries); one more if a watch fired meanwhile."""
        member.rebalancing = False
        if member.pending:
            member.pending = False
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
