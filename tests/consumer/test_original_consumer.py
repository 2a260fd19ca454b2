"""Kafka's own ZooKeeper consumer and zkconsumer's in one group: Kafka 0.10.0.1's console consumer (the Scala
``ZookeeperConsumerConnector``, :mod:`original_consumer`) beside ``zkconsumer consume`` members, at two clusters: the
embedded environment (ZooKeeper, the broker behind the front, the bridge mirroring it as a ZooKeeper-mode cluster)
and a Kafka 3.9 broker in ZooKeeper mode (registered by Kafka itself; neither front nor bridge).

One story, each phase starting from what the previous left: (1) the original alone in the group and our connector
alone in a group of its own, each having consumed the same messages: their whole trees under ``/consumers/<group>``
are the same bytes but for the consumer ids and the registration's timestamp; (2) one of ours joins: both sides
compute the same range assignment and claim exactly their share, and the offsets each writes for its partitions are
the same bytes; (3) ours is killed: the original takes its partitions once the session expires; (4) another of ours
joins and (5) the original is killed: ours takes everything. Every message produced is printed by some member.

Members of both sides get the same settings, shorter than Kafka's defaults so the story takes seconds:
``auto.commit.interval.ms`` 200 (60000), ``zookeeper.session.timeout.ms`` 3000 (6000), ``rebalance.backoff.ms`` 500
(2000), ``rebalance.max.retries`` 10 (4: enough retries to outlast the other side's release on a busy machine).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import original_consumer
import pytest
from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError
from support import delete_tree, produce, require_kafka, take, wait_for
from time_scale import bounded

from zkconsumer import Whitelist
from zkconsumer.config import ConsumerConfig
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.kafka.topics import create_topic
from zkconsumer.zk.client import close_client, open_client

GROUP = "mixed"
ALONE_GROUP = "ours-alone"  # our connector's group in phases (0) and (1), beside the original's
PARTITIONS = 3
PER_BATCH = 4  # messages per partition in each batch
SETTINGS = {"auto.commit.interval.ms": 200, "zookeeper.session.timeout.ms": 3000, "rebalance.backoff.ms": 500,
            "rebalance.max.retries": 10}


@dataclass(frozen=True)
class Znode:
    """What a reader of a znode gets besides the times and counters: its data (``None``: null, as against ``b""``),
    whether it is ephemeral, and its ACL."""

    data: bytes | None
    ephemeral: bool
    acl: tuple


def group_tree(zk: KazooClient, group: str) -> dict[str, Znode]:
    """Every znode under ``/consumers/<group>``, by its path below the group (the group itself is ``""``)."""
    base = f"/consumers/{group}"
    tree: dict[str, Znode] = {}

    def read(relative: str) -> None:
        data, stat = zk.get(base + relative)
        tree[relative] = Znode(data, stat.ephemeralOwner != 0, tuple(zk.get_acls(base + relative)[0]))
        for child in sorted(zk.get_children(base + relative)):
            read(f"{relative}/{child}")

    read("")
    return tree


def member_ids(zk: KazooClient, group: str) -> list[str]:
    return sorted(zk.get_children(f"/consumers/{group}/ids"))


def owners(zk: KazooClient, group: str, topic: str) -> dict[int, str]:
    base = f"/consumers/{group}/owners/{topic}"
    return {int(p): zk.get(f"{base}/{p}")[0].decode() for p in zk.get_children(base)}


def offsets(zk: KazooClient, group: str, topic: str) -> dict[int, bytes]:
    base = f"/consumers/{group}/offsets/{topic}"
    return {int(p): zk.get(f"{base}/{p}")[0] for p in zk.get_children(base)}


def range_assignment(threads: list[str]) -> dict[int, str]:
    """Kafka's RangeAssignor over one topic: threads in string order, contiguous ranges, the first ones one more."""
    ordered = sorted(threads)
    share, extra = divmod(PARTITIONS, len(ordered))
    assignment, start = {}, 0
    for index, thread in enumerate(ordered):
        count = share + (1 if index < extra else 0)
        assignment.update({p: thread for p in range(start, start + count)})
        start += count
    return assignment


def settled(check):
    """A predicate over the group that is "not yet" while a znode vanishes under the reader."""
    def run():
        try:
            return check()
        except NoNodeError:
            return False
    return run


def spread_as_range(zk: KazooClient, topic: str, members: int):
    """The group once ``members`` members are registered and the owners are exactly the range assignment of their
    threads (one stream each): the assignment, else False."""
    def check():
        ids = member_ids(zk, GROUP)
        expected = range_assignment([f"{member}-0" for member in ids])
        return len(ids) == members and owners(zk, GROUP, topic) == expected and expected
    return settled(check)


def committed(zk: KazooClient, group: str, topic: str, count: int):
    return settled(lambda: offsets(zk, group, topic) == {p: str(count).encode() for p in range(PARTITIONS)})


def consumer_id_parts(group: str, consumer_id: str) -> tuple[str, int, str]:
    """``<group>_<host>-<ms>-<first 8 hex digits of a random UUID's high bits>``, as both sides make it."""
    match = re.fullmatch(rf"{re.escape(group)}_(?P<host>.+)-(?P<ms>\d{{13}})-(?P<uuid>[0-9a-f]{{8}})", consumer_id)
    assert match, consumer_id
    return match["host"], int(match["ms"]), match["uuid"]


def normalized(tree: dict[str, Znode], consumer_id: str) -> dict[str, Znode]:
    """The tree with what must differ between two members made equal: the consumer id (in the registration's name
    and in each owner's thread id) and the registration's timestamp."""
    def text(value: bytes | None) -> bytes | None:
        if value is None:
            return None
        value = value.replace(consumer_id.encode(), b"<consumer>")
        return re.sub(rb'"timestamp":"\d{13}"', b'"timestamp":"<ms>"', value)

    return {path.replace(consumer_id, "<consumer>"): Znode(text(node.data), node.ephemeral, node.acl)
            for path, node in tree.items()}


def batch(name: str) -> dict[int, list[str]]:
    return {p: [f"{name}-{p}-{i}" for i in range(PER_BATCH)] for p in range(PARTITIONS)}


def send(bootstrap: str, topic: str, messages: dict[int, list[str]]) -> set[str]:
    for partition, values in messages.items():
        produce(bootstrap, topic, [v.encode() for v in values], partition=partition)
    return {v for values in messages.values() for v in values}


def ours(tmp_path: Path, name: str, zookeeper: str, topic: str) -> tuple[subprocess.Popen, Path]:
    """A ``zkconsumer consume`` member: the same subscription as Kafka's tool (a whitelist of the topic, one stream),
    the same settings, the values printed one a line."""
    output = tmp_path / f"{name}.out"
    properties = [item for key, value in SETTINGS.items() for item in ("--property", f"{key}={value}")]
    with output.open("wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "zkconsumer", "consume", "--zookeeper", zookeeper,
                                    "--whitelist", topic, "--group", GROUP, *properties],
                                   stdout=out, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    return process, output


def printed(outputs: list[Path]) -> set[str]:
    return {line for path in outputs if path.exists() for line in path.read_text().splitlines()}


@dataclass(frozen=True)
class Cluster:
    """Where the story runs: the ZooKeeper connect string (with the chroot the broker is registered in), the
    bootstrap servers, a client of that ZooKeeper."""

    zookeeper: str
    bootstrap: str
    zk: KazooClient


@pytest.fixture(params=["embedded", "kafka-3.9"])
def cluster(request) -> Iterator[Cluster]:
    require_kafka(original_consumer.VARIANT)
    if request.param == "embedded":
        yield Cluster(request.getfixturevalue("kafka_zk"), request.getfixturevalue("bootstrap_servers"),
                      request.getfixturevalue("zk"))
        return
    broker = request.getfixturevalue("kafka_zookeeper_mode")
    # The broker's chroot is the session's: the groups of this test start empty, and are deleted after it.
    client = open_client(broker.zookeeper_connect)

    def delete_groups() -> None:
        for group in (GROUP, ALONE_GROUP):
            if client.exists(f"/consumers/{group}"):
                delete_tree(client, f"/consumers/{group}")

    try:
        delete_groups()
        yield Cluster(broker.zookeeper_connect, broker.bootstrap, client)
        delete_groups()
    finally:
        close_client(client)


@pytest.mark.timeout(480)  # its waits, summed: 60 s (0), 15 + 20 + 15 + 30 s (1), 100 s (2), 70 s (3), 170 s (4, 5)
def test_the_original_consumer_and_ours_share_a_group_take_over_from_each_other_and_write_the_same_znodes(
        cluster, tmp_path, topic_name):
    topic, zk, kafka_zk, bootstrap_servers = topic_name, cluster.zk, cluster.zookeeper, cluster.bootstrap
    started_ms = int(time.time() * 1000)
    # The topic does not exist yet: each whitelist waits for it.
    original = original_consumer.start(tmp_path, "original", zookeeper=kafka_zk, topic=topic, group=GROUP,
                                       properties=SETTINGS, from_beginning=True)
    alone = ZookeeperConsumerConnector(ConsumerConfig({
        "zookeeper.connect": kafka_zk, "group.id": ALONE_GROUP, "auto.offset.reset": "smallest",
        "consumer.timeout.ms": 200, **SETTINGS}))
    members: list[subprocess.Popen] = []
    outputs = [original.output]
    try:
        # (0) Each registered alone in its group, its whitelist matching no topic yet: the same tree. (Kafka's member
        # writes nothing after its registration when it has nothing to own; ours has finished joining.)
        [stream] = alone.create_message_streams_by_filter(Whitelist(topic), 1)
        [original_id] = wait_for(settled(lambda: member_ids(zk, GROUP)), timeout=60)  # a JVM's start on a busy machine
        [alone_id] = member_ids(zk, ALONE_GROUP)
        registered = normalized(group_tree(zk, GROUP), original_id)
        assert normalized(group_tree(zk, ALONE_GROUP), alone_id) == registered
        assert set(registered) == {"", "/ids", "/ids/<consumer>"}
        assert registered["/ids/<consumer>"].data == (
            f'{{"version":1,"subscription":{{"{topic}":1}},"pattern":"white_list","timestamp":"<ms>"}}'.encode())
        # What was made equal: the consumer ids have the same form and host, made while this test ran.
        (their_host, their_ms, _), (our_host, our_ms, _) = (consumer_id_parts(GROUP, original_id),
                                                            consumer_id_parts(ALONE_GROUP, alone_id))
        assert their_host == our_host
        assert started_ms <= min(their_ms, our_ms) and max(their_ms, our_ms) <= time.time() * 1000

        # (1) The topic appears, with a first batch: each consumes it alone and commits; the same tree again.
        create_topic(bootstrap_servers, topic, PARTITIONS)
        wait_for(lambda: zk.exists(f"/brokers/topics/{topic}/partitions/{PARTITIONS - 1}/state"))
        produced = send(bootstrap_servers, topic, batch("a"))
        assert len(take(stream, PARTITIONS * PER_BATCH)) == PARTITIONS * PER_BATCH
        wait_for(committed(zk, ALONE_GROUP, topic, PER_BATCH), timeout=15)
        wait_for(committed(zk, GROUP, topic, PER_BATCH), timeout=30)
        assert set(original.values()) == produced, original.log_tail()
        consumed = normalized(group_tree(zk, GROUP), original_id)
        assert normalized(group_tree(zk, ALONE_GROUP), alone_id) == consumed
        assert {path: node.data for path, node in consumed.items()
                if path.startswith((f"/owners/{topic}/", f"/offsets/{topic}/"))} == {
            **{f"/owners/{topic}/{p}": b"<consumer>-0" for p in range(PARTITIONS)},
            **{f"/offsets/{topic}/{p}": str(PER_BATCH).encode() for p in range(PARTITIONS)}}
        alone.shutdown()

        # (2) One of ours joins: both sides claim the range assignment of the two threads, no more, no less.
        first, first_output = ours(tmp_path, "ours-1", kafka_zk, topic)
        members.append(first)
        outputs.append(first_output)
        assignment = wait_for(spread_as_range(zk, topic, 2), timeout=40)
        produced |= send(bootstrap_servers, topic, batch("b"))
        wait_for(lambda: produced <= printed(outputs), timeout=30)
        # Each partition's offset is written by its owner, from both sides: the same bytes for the same position.
        wait_for(committed(zk, GROUP, topic, 2 * PER_BATCH), timeout=30)
        [ours_id] = set(member_ids(zk, GROUP)) - {original_id}
        tree = group_tree(zk, GROUP)

        def written(path: str, writer: str) -> Znode:
            return normalized({path: tree[path]}, writer)[path.replace(writer, "<consumer>")]

        assert written(f"/ids/{ours_id}", ours_id) == written(f"/ids/{original_id}", original_id)
        owner_nodes = {written(f"/owners/{topic}/{p}", thread.removesuffix("-0")) for p, thread in assignment.items()}
        offset_nodes = {tree[f"/offsets/{topic}/{p}"] for p in range(PARTITIONS)}
        assert len(owner_nodes) == 1 and len(offset_nodes) == 1, (owner_nodes, offset_nodes)

        # (3) Ours is killed: once its session expires, the original owns every partition and reads what follows.
        first.send_signal(signal.SIGKILL)
        first.wait(bounded(10))
        produced |= send(bootstrap_servers, topic, batch("c"))
        wait_for(spread_as_range(zk, topic, 1), timeout=40)
        assert member_ids(zk, GROUP) == [original_id]
        wait_for(lambda: produced <= printed(outputs), timeout=30)

        # (4) Another of ours joins, (5) the original is killed: ours owns everything and reads what follows.
        second, second_output = ours(tmp_path, "ours-2", kafka_zk, topic)
        members.append(second)
        outputs.append(second_output)
        wait_for(spread_as_range(zk, topic, 2), timeout=40)
        produced |= send(bootstrap_servers, topic, batch("d"))
        wait_for(lambda: produced <= printed(outputs), timeout=30)
        original.kill()
        produced |= send(bootstrap_servers, topic, batch("e"))
        assignment = wait_for(spread_as_range(zk, topic, 1), timeout=40)
        assert f"{original_id}-0" not in assignment.values()
        wait_for(lambda: produced <= printed(outputs), timeout=30)
        wait_for(committed(zk, GROUP, topic, 5 * PER_BATCH), timeout=30)
    finally:
        alone.shutdown()
        original.stop()
        for member in members:
            if member.poll() is None:
                member.send_signal(signal.SIGTERM)
        exits = [member.wait(bounded(30)) for member in members]
    assert exits[-1] == 0
