"""Owner znodes and offset znodes against a real ZooKeeper: atomic claims, session-checked release, commits that
write only changes and never move an offset back over someone else's."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import ConnectionLoss
from support import wait_for

from zkconsumer.embedded.zookeeper import LocalZooKeeper
from zkconsumer.errors import EnvironmentSetupError
from zkconsumer.group.offset_store import ZooKeeperOffsetStore
from zkconsumer.group.owner_claims import claim_partitions, release_partitions
from zkconsumer.types import TopicPartition
from zkconsumer.zk.client import close_client, open_client

T0, T1, T2 = (TopicPartition("t", p) for p in range(3))


def owners(zk: KazooClient, group: str = "g", topic: str = "t") -> list[tuple[str, str]]:
    base = f"/consumers/{group}/owners/{topic}"
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
        assert released.released == (T0,) and released.batches == 1
        assert owners(zk) == [("1", "g_other-0")]
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
    # the next commit (auto-commit, a moment later) would pass the version check, nobody having written since: still
    # theirs (a chaos run saw a paused member's auto-commit move a partition's offset back from 122 to 74 this way)
    assert store.commit({T0: 21}).written == {}
    assert zk.get("/consumers/g/offsets/t/0")[0] == b"50"
    assert store.commit({T0: 55}).written == {T0: 55}  # ahead of theirs: ours again
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


# --- many partitions: batches under the byte budget -------------------------------------------------------------

MANY = {TopicPartition("t", p): f"g_me-{p % 2}" for p in range(60)}
SMALL_BUDGET = 1_500  # about 15 owner znodes a batch


def test_a_claim_in_several_batches_owns_everything(zk):
    result = claim_partitions(zk, "g", MANY, max_bytes=SMALL_BUDGET)
    assert result.ok and set(result.claimed) == set(MANY)
    assert 3 < result.batches < 10
    assert owners(zk) == sorted((str(tp.partition), thread) for tp, thread in MANY.items())
    released = release_partitions(zk, "g", MANY, max_bytes=SMALL_BUDGET)
    assert set(released.released) == set(MANY)
    assert 1 < released.batches < result.batches  # a delete is smaller than a create: more of them fit a batch
    assert owners(zk) == []


@pytest.mark.parametrize("taken", [57, 2], ids=["in the last batch", "in the first batch"])
def test_a_conflict_in_any_batch_undoes_every_batch_of_the_claim(zk, zk_chroot, taken, monkeypatch):
    """The batches go out together: whichever one meets another member's owner znode, the others (applied before or
    after it) are deleted again, as their answers say they were applied: without reading their znodes first (a
    claim of thousands held them for seconds that way, every other member's claim meeting them meanwhile)."""
    existence_reads: list[str] = []
    exists_async = zk.exists_async
    monkeypatch.setattr(zk, "exists_async", lambda path, *a, **k: existence_reads.append(path) or exists_async(
        path, *a, **k))
    other = open_client(zk_chroot)
    try:
        other.create(f"/consumers/g/owners/t/{taken}", b"g_other-0", ephemeral=True, makepath=True)
        result = claim_partitions(zk, "g", MANY, max_bytes=SMALL_BUDGET)
        assert [path for path in existence_reads if path.startswith("/consumers/g/owners/t/")] == []
        assert not result.ok and dict(result.conflicts) == {TopicPartition("t", taken): "g_other-0"}
        assert result.batches > 3  # the other batches went through, then were deleted again
        assert owners(zk) == [(str(taken), "g_other-0")]
    finally:
        close_client(other)
    assert claim_partitions(zk, "g", MANY, max_bytes=SMALL_BUDGET).ok


def test_kafkas_way_is_one_create_per_partition_and_undoes_on_conflict(zk, zk_chroot):
    other = open_client(zk_chroot)
    try:
        other.create("/consumers/g/owners/t/5", b"g_other-0", ephemeral=True, makepath=True)
        result = claim_partitions(zk, "g", MANY, max_bytes=0)
        assert dict(result.conflicts) == {TopicPartition("t", 5): "g_other-0"}
        assert result.batches == len(MANY) + len(MANY) - 1  # every partition tried, then the 59 created deleted
        assert owners(zk) == [("5", "g_other-0")]
    finally:
        close_client(other)
    result = claim_partitions(zk, "g", MANY, max_bytes=0)
    assert result.ok and result.batches == len(MANY)
    assert release_partitions(zk, "g", MANY, max_bytes=0).batches == len(MANY)


def test_commits_in_batches_write_every_offset_and_keep_a_higher_foreign_one(zk):
    store = ZooKeeperOffsetStore(zk, "g", max_bytes=SMALL_BUDGET)
    store.fetch(MANY)
    first = store.commit({tp: 10 for tp in MANY})
    assert first.written == {tp: 10 for tp in MANY} and 3 < first.batches < 10
    zk.set("/consumers/g/offsets/t/42", b"99")  # the next owner moved on
    second = store.commit({tp: 20 for tp in MANY})
    assert second.kept_higher == {TopicPartition("t", 42): 99}
    assert second.written == {tp: 20 for tp in MANY if tp.partition != 42}
    assert second.batches > first.batches  # the batch that met it was written again one znode at a time
    assert ZooKeeperOffsetStore(zk, "g").fetch(MANY).offsets == {tp: 99 if tp.partition == 42 else 20 for tp in MANY}


class SmallRequestZooKeeper(LocalZooKeeper):
    """A server that refuses requests above 8 KiB (``jute.maxbuffer``), as one with a lowered limit does."""

    what = "ZooKeeper server (jute.maxbuffer=8192)"

    def argv(self) -> list[str]:
        java, *rest = super().argv()
        return [java, "-Djute.maxbuffer=8192", *rest]


@pytest.fixture(scope="module")
def small_zookeeper(tmp_path_factory) -> Iterator[str]:
    try:
        server = SmallRequestZooKeeper(Path(tmp_path_factory.mktemp("small-zookeeper")))
        server.start()
    except EnvironmentSetupError as exc:
        pytest.skip(f"needs a local ZooKeeper distribution: {exc}")
    try:
        yield server.connect
    finally:
        server.stop()


@pytest.mark.servers
def test_a_connection_dropped_mid_claim_fails_that_attempt_only_and_leaves_nothing(small_zookeeper):
    """The second batch is larger than the server takes: it closes the connection after the first was applied.
    The attempt fails, its first batch is deleted again once the session is back, and the session carries on."""
    zk = open_client(small_zookeeper, retry_forever=True)
    try:
        session = zk.client_id[0]
        claims = {TopicPartition("a", p): "g_me-0" for p in range(30)}  # about 2 KiB: the first batch
        claims[TopicPartition("b", 0)] = "g_" + "x" * 14_000  # alone in the second batch, above 8 KiB
        with pytest.raises(ConnectionLoss):
            claim_partitions(zk, "g", claims, max_bytes=16_000)
        wait_for(lambda: zk.connected)
        assert zk.client_id[0] == session
        assert owners(zk, topic="a") == [] and owners(zk, topic="b") == []
        assert zk.exists("/consumers/g/owners/a").cversion == 60  # the first batch's 30 were created, then deleted
        fitting = {tp: "g_me-0" for tp in claims}
        result = claim_partitions(zk, "g", fitting, max_bytes=16_000)
        assert result.ok and set(result.claimed) == set(fitting) and result.batches == 1
        assert len(owners(zk, topic="a")) == 30
    finally:
        close_client(zk)


def test_release_of_what_a_claim_of_this_session_holds_needs_no_read_and_survives_a_node_gone(zk):
    claimed = claim_partitions(zk, "g", MANY, max_bytes=SMALL_BUDGET)
    assert claimed.held.session == zk.client_id[0] and set(claimed.held.versions) == set(MANY)
    zk.delete("/consumers/g/owners/t/3")  # by hand: the batch holding it fails, and is released the checked way
    released = release_partitions(zk, "g", MANY, max_bytes=SMALL_BUDGET, held=claimed.held)
    assert set(released.released) == set(MANY) - {TopicPartition("t", 3)}
    assert owners(zk) == []


def test_what_another_session_held_is_never_trusted(zk, zk_chroot):
    other = open_client(zk_chroot)
    try:
        theirs = claim_partitions(other, "g", {T0: "g_other-0"})
        assert release_partitions(zk, "g", [T0], held=theirs.held) == release_partitions(zk, "g", [])
        assert owners(zk) == [("0", "g_other-0")]
    finally:
        close_client(other)
