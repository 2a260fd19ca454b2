"""Servers of the ensemble lost under a group: the members' sessions move to another server (kazoo's connection
handling, and the connector's above it) and the group settles with one owner per partition and keeps consuming."""

from __future__ import annotations

import threading

import pytest
from consumer.test_connector import owners
from support import CONNECTOR_GROUP as GROUP
from support import connector_config as config
from support import mirrored_topic, produce, take, wait_for
from time_scale import bounded, scaled

from zkconsumer import ConsumerRebalanceListener, create_connector
from zkconsumer.embedded.ensemble import LocalEnsemble

pytestmark = pytest.mark.servers


def session_of(client) -> int | None:
    """The client's session id while it is connected (kazoo has none to give while it reconnects)."""
    client_id = client.client_id if client.connected else None
    return client_id[0] if client_id else None


class KillLeaderWhenArmed(ConsumerRebalanceListener):
    """Kills the ensemble's leader from inside a rebalance of its member: between the release of its partitions and
    the claims of the new ones, once armed."""

    def __init__(self, ensemble: LocalEnsemble) -> None:
        self.ensemble = ensemble
        self.armed = threading.Event()
        self.killed: list[int] = []

    def before_releasing_partitions(self, partition_ownership):
        if self.armed.is_set() and not self.killed:
            leader = self.ensemble.leader()
            assert leader is not None, self.ensemble.modes()
            self.ensemble.kill_server(leader)
            self.killed.append(leader)


# Every client loses its server while the ensemble elects, and a member whose claim meets an owner that is still
# reconnecting must retry until that owner has released. So the members' retries span the session timeout, as Kafka
# advised sizing rebalance.max.retries x rebalance.backoff.ms: 30 backoffs of 200 ms are 6 s, the default
# zookeeper.session.timeout.ms, before the attempts' own time. The suite's usual four retries end within about a
# second, which an election on a loaded machine can outlast.
SPANS_AN_ELECTION = {"rebalance.max.retries": 30}


# Its waits, summed: 15 + 15 s for the topic and the owners, 2 x 20 s to take, 3 x 30 s to settle, 3 x 20 s to take,
# 30 s to restart the server and 30 s for the quorum (280 s).
@pytest.mark.timeout(320)
def test_the_leader_killed_during_a_rebalance_leaves_one_owner_per_partition_and_consumption_going(
        zookeeper_ensemble, zk, kafka_zk, bootstrap_servers, topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 4)
    killer = KillLeaderWhenArmed(zookeeper_ensemble)
    members = []
    try:
        first = create_connector(config(kafka_zk, "c1", **SPANS_AN_ELECTION), listener=killer)
        members.append(first)
        streams = [first.create_message_streams({topic: 1})[topic][0]]
        second = create_connector(config(kafka_zk, "c2", **SPANS_AN_ELECTION))
        members.append(second)
        streams.append(second.create_message_streams({topic: 1})[topic][0])
        wait_for(lambda: [owner for _, owner in owners(zk, topic)] == ["group1_c1-0"] * 2 + ["group1_c2-0"] * 2)
        before = [f"before-{p}".encode() for p in range(4)]
        for p in range(4):
            produce(bootstrap_servers, topic, [before[p]], partition=p)
        got = take(streams[0], 2) + take(streams[1], 2)
        assert sorted(m.message for m in got) == before

        # A third member joins; the first one's rebalance kills the leader between its release and its claims.
        killer.armed.set()
        third = create_connector(config(kafka_zk, "c3", **SPANS_AN_ELECTION))
        members.append(third)
        streams.append(third.create_message_streams({topic: 1})[topic][0])
        wait_for(lambda: killer.killed, timeout=30)
        assert zookeeper_ensemble.modes()[killer.killed[0]] == "down"

        # Settled: one owner znode per partition, as the range assignment of three members says, and every member's
        # own view (its topic registry) the same as the znodes.
        expected = [("0", "group1_c1-0"), ("1", "group1_c1-0"), ("2", "group1_c2-0"), ("3", "group1_c3-0")]
        wait_for(lambda: owners(zk, topic) == expected, timeout=30)
        wait_for(lambda: [sorted(m.topic_registry.get(topic, {})) for m in members] == [[0, 1], [2], [3]], timeout=30)
        assert sorted(zk.get_children(f"/consumers/{GROUP}/ids")) == ["group1_c1", "group1_c2", "group1_c3"]
        assert zookeeper_ensemble.leader() not in (None, killer.killed[0])

        # Consumption goes on, each partition to its owner, with two servers of three.
        after = [f"after-{p}".encode() for p in range(4)]
        for p in range(4):
            produce(bootstrap_servers, topic, [after[p]], partition=p)
        taken = [take(stream, count) for stream, count in zip(streams, (2, 1, 1), strict=True)]
        assert [sorted(m.partition for m in got) for got in taken] == [[0, 1], [2], [3]]
        assert sorted(m.message for got in taken for m in got) == after
    finally:
        for member in reversed(members):
            member.shutdown()
        for sid in killer.killed:  # the session's ensemble whole again for the next test
            zookeeper_ensemble.start_server(sid, timeout=scaled(30))
        zookeeper_ensemble.wait_for_quorum(scaled(30))


# Its waits, summed: 15 + 15 s for the topic and the owners, 3 x 30 s for the servers' restarts (and their stops),
# 30 s for the sessions, 2 x 20 s to take (190 s).
@pytest.mark.timeout(240)
def test_a_rolling_restart_keeps_the_members_sessions_their_partitions_and_consumption(
        zookeeper_ensemble, zk, kafka_zk, bootstrap_servers, topic_name):
    """Every server restarted in turn, the leader last (as operators roll an ensemble): each member's session moves
    to a running server and survives, so its registration (same session), its partitions and its stream stay."""
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    with create_connector(config(kafka_zk, "c1")) as first, create_connector(config(kafka_zk, "c2")) as second:
        streams = [c.create_message_streams({topic: 1})[topic][0] for c in (first, second)]
        expected = [("0", "group1_c1-0"), ("1", "group1_c2-0")]
        wait_for(lambda: owners(zk, topic) == expected)
        sessions = [session_of(c.zk) for c in (first, second)]

        restarted = zookeeper_ensemble.rolling_restart(timeout=bounded(30))

        assert sorted(restarted) == [1, 2, 3] and zookeeper_ensemble.leader() is not None
        # The last restart (the leader's) makes an election, during which the other servers drop their clients: the
        # members (and this test's client) connect again, to the sessions they had.
        wait_for(lambda: [session_of(c.zk) for c in (first, second)] == sessions and session_of(zk), timeout=30)
        for member, session in zip(("group1_c1", "group1_c2"), sessions, strict=True):
            assert zk.exists(f"/consumers/{GROUP}/ids/{member}").ephemeralOwner == session
        assert owners(zk, topic) == expected
        for p in range(2):
            produce(bootstrap_servers, topic, [f"after-{p}".encode()], partition=p)
        assert [[m.message for m in take(stream, 1)] for stream in streams] == [[b"after-0"], [b"after-1"]]
