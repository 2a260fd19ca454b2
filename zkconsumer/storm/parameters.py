"""What every simulated operation costs, in one dataclass, each default with where it came from.

Times are milliseconds of simulated time. "Measured" figures are this project's own runs on the 2-core reference
machine; "run A" is ``benchmarks/rebalance.py --partitions 1000,10000 --members 1,10`` with the members' rebalance
step events (their ``duration_ms``) kept, on 2026-11-28 (``docs/storm.md`` gives its figures); "Kafka" figures
are the client's or the broker's default setting; "assumed" figures are not yet calibrated (``docs/storm.md`` lists
them).
"""

from __future__ import annotations

from dataclasses import dataclass, fields


@dataclass(frozen=True, slots=True)
class StormParameters:
    # --- ZooKeeper, one server serving one request at a time -------------------------------------------------------
    #: a read (getData, getChildren, exists) on the server. Measured: ZooKeeper's process CPU per read over a burst
    #: of 4,000 pipelined reads (``benchmarks/storm_calibration.py``), 0.18 and 0.23 ms in two runs on 2026-11-28
    zk_read_ms: float = 0.2
    #: the transaction log's force (fsync) a write waits for, shared by every write that reaches the log while the
    #: force before it is under way (group commit); the server serves reads meanwhile. Measured: claims of one create
    #: a request (run A's ``legacy`` mode, one after another) took 1.9 ms a create for 1,000 and 2.0 ms for 10,000,
    #: round trip included
    zk_write_ms: float = 1.7
    #: the server's time for each create or delete (a multi-op's every one; a lone write is one). Measured: a lone
    #: member's claim of 10,000 owner znodes in 4 multi-ops took 300 ms in run A (step 8's ``duration_ms``):
    #: (300 - 4 x 1.7) / 10,000
    zk_multi_op_ms: float = 0.03
    #: a watch notification the server sends (one per watching member). Assumed
    zk_watch_fire_ms: float = 0.02
    #: owner znodes a claim puts in one multi-op. Measured: 10,000 partitions claimed in 4 multi-ops
    #: (``zookeeper.multi.max.bytes`` 512 KiB)
    claim_batch: int = 2_500
    #: reads a member sends one after another between its registration and its first rebalance, its watches set by
    #: the last two. Counted in this project's connector (``benchmarks/storm_calibration.py``'s request trace): the
    #: existence checks of the group's offsets and owners folders, the ids' ``ChildrenWatch``, the topic's
    #: ``DataWatch``
    registration_reads: int = 4
    #: requests a member starting in a group not yet in ZooKeeper sends one after another before its registration
    #: (the registration meeting no parent, the group's folders checked and created). Counted as
    #: ``registration_reads``: 26 requests of a lone member's join where 13 are modelled otherwise
    new_group_requests: int = 11
    #: reads of a member's claim beside its multi-ops: the owners folder's existence checked before, the offsets
    #: read again after (the connector's ``offsets_moved`` check). Counted as ``registration_reads``
    claim_reads: int = 2
    #: a request's round trip on the network, client to server and back. Measured on loopback (run A's step 1);
    #: a data centre's LAN adds about 0.2 ms
    network_rtt_ms: float = 0.3
    # --- the legacy member's rebalance, per step (the step's CPU; its ZooKeeper requests are modelled apart) --------
    #: steps 1-4 and 9: fixed cost of each step. Measured: steps 2-4 of a member owning nothing took 0.01-0.06 ms
    #: in run A
    step_fixed_ms: float = 0.05
    #: each rebalance's CPU beyond its steps' own, in the member's process, charged once its fetchers start (the
    #: leader finder woken for the new partitions: brokers read, metadata asked, fetchers handed) and before the
    #: rebalance completes: the watch's handling, the events logged, the connector's threads woken and its answers
    #: handed between them. A lone member hides most of it in its waits on ZooKeeper; members sharing one process pay
    #: it in turn. Fitted
    #: (``calibration.fit_rebalance_cpu``) to the time to stable of the legacy calibration runs of several members
    #: (10 at once on 1,000 partitions, 9 into 1 on 10,000): 15.2 ms on 2026-11-28's quiet run of
    #: ``benchmarks/storm_calibration.py --repeat 2`` (14:56 UTC), replayed
    rebalance_cpu_ms: float = 15.2
    #: step 5 (assign): the assignor and the group snapshot, per partition. Measured: a lone member's step 5 took
    #: 5.3 ms on 1,000 partitions and 49.7 ms on 10,000 in run A
    assign_per_partition_ms: float = 0.005
    #: step 5: per member of the group (its registration parsed and sorted)
    assign_per_member_ms: float = 0.02
    #: steps 6-7 (fetch offsets, rebuild the registry), per partition assigned. Measured: a lone member's steps 6
    #: and 7 took 6.2 ms on 1,000 partitions and 57-146 ms on 10,000 in run A
    registry_per_partition_ms: float = 0.008
    #: steps 2 and 9 (stop and start fetchers, commit), per partition owned. Measured: a lone member's step 9 took
    #: 2.2 ms on 1,000 partitions and 55-116 ms on 10,000 in run A (step 2's stop taken as costly as the start)
    fetchers_per_partition_ms: float = 0.005
    #: step 2, once for a member that owns partitions: its fetcher threads stopped and joined. Measured: the owner's
    #: step 2 took 150 ms on 1,000 partitions and 206 ms on 10,000 when nine joined it in run A
    stop_fetchers_ms: float = 140.0
    #: whether the members' CPU steps share one CPU, served in turn: the calibration runs' members are threads of one
    #: Python process (one interpreter lock), where a fleet's members each have a machine of their own (False)
    members_share_one_cpu: bool = False
    #: a member's own CPU for each ZooKeeper request it sends (kazoo: the request written, its answer read and handed
    #: to the caller's thread), taken from the members' one CPU where they share it (and not modelled where each
    #: member has a machine of its own, where it only adds to the round trip). Measured by the calibration: this
    #: process's CPU over a burst of pipelined reads, per read
    zk_client_ms: float = 0.0
    #: ``rebalance.backoff.ms`` (Kafka 0.10.0.1's default)
    rebalance_backoff_ms: float = 2_000.0
    #: ``rebalance.max.retries`` (Kafka's default)
    rebalance_max_retries: int = 4
    #: ``zookeeper.session.timeout.ms`` (Kafka's default): a request answered later than this expires the session
    zookeeper_session_timeout_ms: float = 6_000.0
    # --- the modern protocols: members against the front's coordinators ---------------------------------------------
    #: the coordinator's work on one request (the front's event loop serves one at a time). Assumed; the front's CPU
    #: over a join of 30 members was 0.07 s (docs/performance.md), a few hundred requests
    coordinator_request_ms: float = 0.05
    #: ``session.timeout.ms`` of classic members (librdkafka's default)
    session_timeout_ms: int = 45_000
    #: ``heartbeat.interval.ms`` of classic members (librdkafka's default)
    heartbeat_interval_ms: float = 3_000.0
    #: ``max.poll.interval.ms``, the classic members' rebalance timeout (librdkafka's default)
    rebalance_timeout_ms: int = 300_000
    #: the classic leader's client-side assignor, per partition. Assumed as the legacy assignor's step 5
    client_assign_per_partition_ms: float = 0.005
    #: ``topic.metadata.refresh.interval.ms`` (librdkafka's default): when a classic leader sees a topic grow
    metadata_refresh_ms: float = 300_000.0
    #: a modern member giving up or taking a partition (its fetch state), per partition. Assumed
    modern_per_partition_ms: float = 0.001

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value < 0:
                raise ValueError(f"{f.name} must not be negative, got {value}")
        if self.claim_batch < 1:
            raise ValueError(f"claim_batch must be at least 1, got {self.claim_batch}")
