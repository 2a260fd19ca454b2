"""The offsets a rebalance reads (step 6) come before its claim (step 8), as in Kafka. An old owner that commits and
releases between the two must not leave the new owner starting from the offset it read before that commit: that
would deliver again everything the old owner consumed since its last commit, with no fault at all, and it happens
whenever members join a group together (each one's claim waits for others' releases).

The interleaving is forced here, against the real ZooKeeper and broker: the new member's read of the offsets is
held (wrapped, the read itself untouched) until the old owner's owner znode is gone, which the old owner deletes
only after committing."""

from __future__ import annotations

import threading

from support import connector_config, mirrored_topic, produce, take, wait_for

from zkconsumer import create_connector
from zkconsumer.zk.reads import value_or_none


def test_a_commit_between_the_new_owner_s_read_and_its_claim_is_not_consumed_again(zk, kafka_zk, bootstrap_servers,
                                                                                      topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    produce(bootstrap_servers, topic, [f"first-{i}".encode() for i in range(10)])
    owner_path = f"/consumers/group1/owners/{topic}/0"
    # Auto-commit on, but its timer far away: the only commit of the old owner is the one before it releases.
    old = create_connector(connector_config(kafka_zk, "zz-old", **{"auto.commit.interval.ms": 600_000}))
    new = None
    try:
        old_stream = old.create_message_streams({topic: 1})[topic][0]
        assert [m.offset for m in take(old_stream, 10)] == list(range(10))

        # "aa-new" sorts first: the range assignor gives it the only partition once it registers.
        new = create_connector(connector_config(kafka_zk, "aa-new", **{"auto.commit.interval.ms": 600_000}))
        real_fetch = new._offsets.fetch
        held = threading.Event()

        def fetch_then_wait_for_the_release(partitions):
            result = real_fetch(partitions)
            if not held.is_set():
                held.set()
                wait_for(lambda: value_or_none(zk.get_async(owner_path)) is None, timeout=30)
            return result

        new._offsets.fetch = fetch_then_wait_for_the_release
        new_stream = new.create_message_streams({topic: 1})[topic][0]
        assert held.is_set()
        assert value_or_none(zk.get_async(owner_path))[0].decode() == "group1_aa-new-0"
        assert zk.get(f"/consumers/group1/offsets/{topic}/0")[0] == b"10"  # the old owner's commit

        produce(bootstrap_servers, topic, [f"second-{i}".encode() for i in range(3)])
        got = take(new_stream, 3)
        assert [(m.offset, m.message) for m in got] == [(10 + i, f"second-{i}".encode()) for i in range(3)]
    finally:
        if new is not None:
            new.shutdown()
        old.shutdown()


def test_when_the_second_read_fails_the_claimed_znodes_are_released_by_the_next_attempt(zk, kafka_zk, bootstrap_servers,
                                                                                         topic_name):
    """The read after the claim can fail (ZooKeeper going away): the attempt fails with the owner znodes created,
    and the next attempt's release must delete them, so they do not count as confirmed before that read. Left
    behind, with the assignment changed meanwhile, they would keep the partition owned by a member that does not
    fetch it, and no other member could claim it: its messages would never be delivered."""
    from kazoo.exceptions import ConnectionLoss
    from structlog.testing import capture_logs

    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 1)
    consumer = create_connector(connector_config(kafka_zk, "c1"))
    real_fetch = consumer._offsets.fetch
    calls: list[int] = []

    def second_read_fails_once(partitions):
        calls.append(1)
        if len(calls) == 2:  # the first attempt's read after its claim
            raise ConnectionLoss()
        return real_fetch(partitions)

    consumer._offsets.fetch = second_read_fails_once
    try:
        with capture_logs() as events:
            consumer.create_message_streams({topic: 1})
        mine = [{"topic": topic, "partition": 0}]
        failed = [e for e in events if e["event"] == "rebalance.attempt_failed"]
        assert [e["attempt"] for e in failed] == [1] and "ConnectionLoss" in failed[0]["reason"]
        released = [e for e in events if e["event"] == "rebalance.release" and e["attempt"] == 2]
        assert released and released[0]["released"] == mine
        claims = [e for e in events if e["event"] == "rebalance.claim" and e["attempt"] == 2]
        assert [c["partition"] for c in claims[0]["claimed"]] == [0] and claims[0]["already_ours"] == []
    finally:
        consumer.shutdown()
