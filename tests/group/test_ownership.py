"""Owner znodes and offset znodes against a real ZooKeeper: atomic claims, session-checked release, commits that
write only changes and never move an offset back over someone else's."""

from __future__ import annotations

from kazoo.client import KazooClient

from zkconsumer.group.offset_store import ZooKeeperOffsetStore
from zkconsumer.group.ownership import claim_partitions, current_holders, release_partitions
from zkconsumer.types import TopicPartition
from zkconsumer.zk.client import close_client, open_client

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))


def owners(zk: KazooClient, group: str = "g") -> list[tuple[str, str]]:
    base = "/consumers/g/owners/t"
    if not zk.exists(base):
        return []
    return [(p, zk.get(f"{base}/{p}")[0].decode()) for p in sorted(zk.get_children(base))]


def test_claims_are_all_or_nothing(zk, zk_chroot):
    other = open_client(zk_chroot)
    try:
        other.create("/consumers/g/owners/t/1", b"g_other-0", ephemeral=True, makepath=True)
        result = claim_partitions(zk, "g", {T0: "g_me-0", T1: "g_me-0", T2: "g_me-1"})
        assert not result.ok
        assert dict(result.conflicts) == {T1: "g_other-0"}
        assert owners(zk) == [("1", "g_other-0")]  # nothing of ours left behind
    finally:
        close_client(other)
    result = claim_partitions(zk, "g", {T0: "g_me-0", T1: "g_me-0", T2: "g_me-1"})
    assert result.ok and set(result.claimed) == {T0, T1, T2}
    assert owners(zk) == [("0", "g_me-0"), ("1", "g_me-0"), ("2", "g_me-1")]
    assert zk.get("/consumers/g/owners/t/0")[1].ephemeralOwner == zk.client_id[0]


def test_our_own_node_counts_as_claimed_even_with_other_data(zk):
    """The KAFKA-1387 case: a create that reached the server before the connection dropped."""
    zk.create("/consumers/g/owners/t/0", b"g_me-0", ephemeral=True, makepath=True)
    zk.create("/consumers/g/owners/t/1", b"g_me-7", ephemeral=True, makepath=True)
    result = claim_partitions(zk, "g", {T0: "g_me-0", T1: "g_me-0", T2: "g_me-0"})
    assert result.ok
    assert result.claimed == (T2,)
    assert set(result.already_ours) == {T0, T1}
    assert owners(zk) == [("0", "g_me-0"), ("1", "g_me-0"), ("2", "g_me-0")]


def test_a_stale_node_with_our_thread_id_but_another_session_is_a_conflict(zk, zk_chroot):
    """Kafka accepted identical data; a previous run's node would vanish later and silently un-own the partition."""
    previous_run = open_client(zk_chroot)
    try:
        previous_run.create("/consumers/g/owners/t/0", b"g_me-0", ephemeral=True, makepath=True)
        result = claim_partitions(zk, "g", {T0: "g_me-0"})
        assert dict(result.conflicts) == {T0: "g_me-0"}
    finally:
        close_client(previous_run)


def test_release_deletes_only_our_nodes(zk, zk_chroot):
    claim_partitions(zk, "g", {T0: "g_me-0"})
    other = open_client(zk_chroot)
    try:
        other.create("/consumers/g/owners/t/1", b"g_other-0", ephemeral=True, makepath=True)
        released = release_partitions(zk, "g", [T0, T1, T2])
        assert released == (T0,)
        assert owners(zk) == [("1", "g_other-0")]
        assert current_holders(zk, "g", [T0, T1]) == {T1: "g_other-0"}
    finally:
        close_client(other)


def test_commit_writes_only_changed_offsets(zk):
    store = ZooKeeperOffsetStore(zk, "g")
    fetched = store.fetch([T0, T1])
    assert fetched.offsets == {T0: -1, T1: -1}
    assert store.commit({T0: 5, T1: -1}).written == {T0: 5}  # an invalid offset is never written
    assert zk.get("/consumers/g/offsets/t/0")[0] == b"5"
    mtime = zk.exists("/consumers/g/offsets/t/0").mzxid
    assert store.commit({T0: 5}).written == {}
    assert zk.exists("/consumers/g/offsets/t/0").mzxid == mtime
    assert store.commit({T0: 9}).written == {T0: 9}
    assert zk.get("/consumers/g/offsets/t/0")[0] == b"9"
    assert ZooKeeperOffsetStore(zk, "g").fetch([T0]).offsets == {T0: 9}


def test_commit_never_moves_back_over_a_higher_offset_written_meanwhile(zk):
    store = ZooKeeperOffsetStore(zk, "g")
    store.fetch([T0])
    store.commit({T0: 10})
    zk.set("/consumers/g/offsets/t/0", b"50")  # the partition's next owner moved on
    result = store.commit({T0: 20})
    assert result.written == {} and result.kept_higher == {T0: 50}
    assert zk.get("/consumers/g/offsets/t/0")[0] == b"50"
    zk.set("/consumers/g/offsets/t/0", b"3")  # an operator rewound it: a later commit of ours still wins
    assert store.commit({T0: 60}).written == {T0: 60}


def test_a_malformed_offset_is_reported_and_left_alone(zk):
    zk.create("/consumers/g/offsets/t/0", b"not-a-number", makepath=True)
    store = ZooKeeperOffsetStore(zk, "g")
    fetched = store.fetch([T0, T1])
    assert fetched.offsets == {T1: -1}
    assert fetched.malformed[T0].path == "/consumers/g/offsets/t/0"
    result = store.commit({T0: 4})
    assert T0 in result.malformed and result.written == {}
    assert zk.get("/consumers/g/offsets/t/0")[0] == b"not-a-number"
