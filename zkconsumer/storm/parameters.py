"""What every simulated operation costs and how the simulated members are configured, in one dataclass, each default
with where it came from (its field's ``source``, :func:`source`; ``docs/storm.md``'s parameter table is made from
them).

Times are milliseconds of simulated time. "Measured" figures are this project's own runs on the 2-core reference
machine. "Run A" is ``benchmarks/rebalance.py --partitions 1000,10000 --members 1,10`` with the members' rebalance
step events kept, on 2026-11-28: its records were not committed, so the defaults quoting it are as recorded then and
cannot be recomputed; the committed calibration record (``benchmarks/data/storm/calibration-*.json``, the run of
2026-12-02 13:54 UTC) fits the same step costs again from its own step events, and ``docs/storm.md``'s parameter
table shows both. "Kafka" and "kazoo" figures are the client's or the library's own defaults; "assumed" figures have
no measurement behind them.
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields
from typing import Any

SOURCE = "source"


def _p(default: Any, source: str) -> Any:
    return field(default=default, metadata={SOURCE: source})


@dataclass(frozen=True, slots=True)
class StormParameters:
    # --- ZooKeeper: an ensemble of servers, each serving one request at a time -------------------------------------
    zookeeper_servers: int = _p(3, "servers of the ensemble the members connect to, each member to one of them (kazoo "
                                   "picks a server at random; the model deals them in turn) and to the next when its "
                                   "connection drops; reads and pings served there, writes through the leader. A "
                                   "production ensemble: three (the calibration runs had one)")
    zk_read_ms: float = _p(0.2, "a read (getData, getChildren, exists) or a ping on a server. Measured: ZooKeeper's "
                                "process CPU per read over a burst of 4,000 pipelined reads "
                                "(`benchmarks/storm_calibration.py`), 0.18 and 0.23 ms in two loaded runs on "
                                "2026-11-28 (0.13 ms in the committed calibration record's); a ping is taken to "
                                "cost what a read does (assumed: the same request pipeline, no data)")
    zk_write_ms: float = _p(1.7, "the transaction log's force (fsync) a write waits for, shared by every write that "
                                 "reaches the log while the force before it is under way (group commit). Measured: "
                                 "claims of one create a request took 1.9 ms a create on 1,000 partitions and 2.0 ms "
                                 "on 10,000 in run A, round trip included")
    zk_multi_op_ms: float = _p(0.03, "the server's time for each create or delete (a multi-op's every one). "
                                     "Measured: a lone member's claim of 10,000 owner znodes in 4 multi-ops took "
                                     "300 ms in run A: (300 - 4 x 1.7) / 10,000")
    zk_watch_fire_ms: float = _p(0.02, "a watch notification a server sends (one per watching member connected to "
                                       "it). Assumed")
    claim_batch: int = _p(2_500, "owner znodes a claim puts in one multi-op. Measured: 10,000 partitions claimed in "
                                 "4 multi-ops (`zookeeper.multi.max.bytes` 512 KiB)")
    registration_reads: int = _p(4, "reads a member sends one after another between its registration and its first "
                                    "rebalance, its watches set by the last two. Counted in this project's "
                                    "connector's request trace (`benchmarks/storm_calibration.py`): the existence "
                                    "checks of the group's offsets and owners folders, the ids' `ChildrenWatch`, the "
                                    "topic's `DataWatch`")
    new_group_requests: int = _p(11, "requests a member starting in a group not yet in ZooKeeper sends one after "
                                     "another before its registration (the registration meeting no parent, the "
                                     "group's folders checked and created). Counted as `registration_reads`: 26 "
                                     "requests of a lone member's join where 13 are modelled otherwise")
    claim_reads: int = _p(2, "reads of a member's claim beside its multi-ops: the owners folder's existence checked "
                             "before, the offsets listed again after (the connector's `offsets_moved` check). "
                             "Counted as `registration_reads`")
    offsets_committed: bool = _p(True, "whether the group has run before: its folders exist and every partition has "
                                       "a committed offset, as when a deploy restarts the members. The connector "
                                       "then reads a member's every assigned partition's offset in step 6 and again "
                                       "after its claim (a read each, pipelined, beside the listing); a new group's "
                                       "listing finds none. The calibration runs' groups were new (false)")
    network_rtt_ms: float = _p(0.3, "a request's round trip on the network, client to server and back, and between "
                                    "two servers. Measured on loopback (run A's step 1); a data centre's LAN adds "
                                    "about 0.2 ms")
    # --- the member's ZooKeeper client (kazoo) ------------------------------------------------------------------------
    zookeeper_session_timeout_ms: float = _p(6_000.0, "`zookeeper.session.timeout.ms` (Kafka 0.10.0.1's default). "
                                                      "kazoo's read timeout is two thirds of it: a connection whose "
                                                      "ping stays unanswered is dropped about that long after its "
                                                      "last request (`storm/kazoo_connection.py`); the connector's "
                                                      "own wait on an answer gives up after the whole of it; the "
                                                      "server expires a session it has not heard from for that "
                                                      "long")
    reconnect_delay_ms: float = _p(100.0, "kazoo's wait before connecting again once every server of its list has "
                                          "been tried (its connection retry's first delay, `KazooRetry(delay=0.1)`, "
                                          "reset at every connection): with one server, every reconnection; with "
                                          "several, a dropped connection goes on to the next server at once")
    reconnect_reads: int = _p(3, "reads a member sends when its connection is back: kazoo forgets every watch at a "
                                 "drop, so the ids' `ChildrenWatch` reads the children again (and calls the "
                                 "connector, so a rebalance, only if they changed) and the topic's `DataWatch` reads "
                                 "its znode twice (its watcher's and its session listener's). Counted in kazoo's "
                                 "`recipe/watchers.py`")
    # --- the legacy member's rebalance, per step (the step's CPU; its ZooKeeper requests are modelled apart)
    step_fixed_ms: float = _p(0.05, "steps 1-4 and 9: fixed cost of each step. Measured: steps 2-4 of a member "
                                    "owning nothing took 0.01-0.06 ms in run A")
    rebalance_cpu_ms: float = _p(8.3, "each rebalance's CPU beyond its steps' own, in the member's process, charged "
                                       "once its fetchers start and before the rebalance completes (the watch "
                                       "handled, events logged, the connector's threads woken, the leader finder "
                                       "woken for the new partitions). Fitted (`calibration.fit_rebalance_cpu`) to "
                                       "the time to stable of the committed calibration record's legacy runs of "
                                       "several members, by the model as it is")
    assign_per_partition_ms: float = _p(0.005, "step 5 (assign): the assignor and the group snapshot, per "
                                               "partition. Measured: a lone member's step 5 took 5.3 ms on 1,000 "
                                               "partitions and 49.7 ms on 10,000 in run A")
    assign_per_member_ms: float = _p(0.02, "step 5: per member of the group (its registration parsed and sorted). "
                                           "Assumed")
    registry_per_partition_ms: float = _p(0.008, "steps 6-7 (fetch offsets, rebuild the registry), per partition "
                                                 "assigned. Measured: a lone member's steps 6 and 7 took 6.2 ms on "
                                                 "1,000 partitions and 57-146 ms on 10,000 in run A")
    fetchers_per_partition_ms: float = _p(0.005, "steps 2 and 9 (stop and start fetchers, commit), per partition "
                                                 "owned. Measured: a lone member's step 9 took 2.2 ms on 1,000 "
                                                 "partitions and 55-116 ms on 10,000 in run A (step 2's stop taken "
                                                 "as costly as the start)")
    stop_fetchers_ms: float = _p(140.0, "step 2, once for a member that owns partitions: its fetcher threads "
                                        "stopped and joined. Measured: the owner's step 2 took 150 ms on 1,000 "
                                        "partitions and 206 ms on 10,000 when nine joined it in run A")
    members_share_one_cpu: bool = _p(False, "whether the members' CPU steps share one CPU, served in turn: the "
                                            "calibration runs' members are threads of one Python process (one "
                                            "interpreter lock), where a fleet's members each have a machine of "
                                            "their own (false)")
    zk_client_ms: float = _p(0.0, "a member's own CPU for each ZooKeeper request it sends (kazoo), taken from the "
                                  "members' one CPU where they share it; not modelled where each member has a "
                                  "machine of its own. Measured by the calibration: the harness's CPU over a burst "
                                  "of pipelined reads, per read")
    start_interval_ms: float = _p(0.1, "members starting together start one after another this far apart (the k-th "
                                       "k times this after the first: a uniform spread). Measured for the "
                                       "calibration harness's \"at once\", a loop starting a thread per member: "
                                       "0.10-0.14 ms apart on the reference machine (10, 20 and 40 threads, load "
                                       "average 15). For a fleet, assumed: a deploy starting every member within "
                                       "a tenth of a millisecond a member (100 ms for 1,000) is the tightest herd, "
                                       "and the predictions at fleet size hold for that herd only; a deploy spread "
                                       "over D seconds is D / members apart (`--set start_interval_ms=`)")
    rebalance_backoff_ms: float = _p(2_000.0, "`rebalance.backoff.ms` (Kafka 0.10.0.1's default)")
    rebalance_max_retries: int = _p(4, "`rebalance.max.retries` (Kafka 0.10.0.1's default): the attempts of one "
                                       "rebalance before it fails")
    give_up_after_retries: bool = _p(False, "Kafka 0.10.0.1's watcher thread (KAFKA-4228): a member whose "
                                            "rebalance failed `rebalance.max.retries` times owns nothing until the "
                                            "next watch fires. False: this project's connector, whose rebalance "
                                            "thread starts the rebalance again at once. Either way a member's first "
                                            "rebalance, inside `create_message_streams`, raises to the application "
                                            "when it fails (as Kafka's did), and the member owns nothing until a "
                                            "watch fires: the application is assumed to keep the connector")
    # --- the modern protocols: members against the front's coordinators -----------------------------------------------
    coordinator_request_ms: float = _p(0.05, "the coordinator's work on one request (the front's event loop serves "
                                             "one at a time). Assumed; the front's CPU over a join of 30 members "
                                             "was 0.07 s (docs/performance.md), a few hundred requests")
    session_timeout_ms: int = _p(45_000, "`session.timeout.ms` of classic members (librdkafka's default)")
    heartbeat_interval_ms: float = _p(3_000.0, "`heartbeat.interval.ms` of classic members (librdkafka's "
                                               "default)")
    rebalance_timeout_ms: int = _p(300_000, "`max.poll.interval.ms`, the classic members' rebalance timeout "
                                            "(librdkafka's default)")
    client_assign_per_partition_ms: float = _p(0.005, "the classic leader's client-side assignor, per partition. "
                                                      "Assumed as the legacy assignor's step 5")
    metadata_refresh_ms: float = _p(300_000.0, "`topic.metadata.refresh.interval.ms` (librdkafka's default): when "
                                               "a classic leader sees a topic grow")
    modern_per_partition_ms: float = _p(0.001, "a modern member giving up or taking a partition (its fetch state), "
                                               "per partition. Assumed")

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if value < 0:
                raise ValueError(f"{f.name} must not be negative, got {value}")
        if self.claim_batch < 1:
            raise ValueError(f"claim_batch must be at least 1, got {self.claim_batch}")
        if self.zookeeper_servers < 1:
            raise ValueError(f"zookeeper_servers must be at least 1, got {self.zookeeper_servers}")
        if self.zookeeper_session_timeout_ms * 2 / 3 / 2 <= 205.0:
            raise ValueError("zookeeper_session_timeout_ms must leave kazoo's ping a wait beyond its jitter (over "
                             f"615 ms), got {self.zookeeper_session_timeout_ms:g}")


def source(f: Field[Any]) -> str:
    """Where a parameter's default came from."""
    return str(f.metadata.get(SOURCE, ""))
