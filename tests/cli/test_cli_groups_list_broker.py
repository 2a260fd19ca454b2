"""``groups list --bootstrap-server`` against the real ZooKeeper and the front's coordinators: a legacy group
registered in ZooKeeper, a classic group (confluent-kafka, eager range) and a KIP-848 group
(``group.protocol=consumer``) each on one row with where it lives, its type and state, in the text and ``--json``;
a broker that does not list its groups is one warning, the ZooKeeper groups still shown."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import pytest
from confluent_kafka import Consumer, TopicPartition
from support import produce, wait_for

from zkconsumer import cli
from zkconsumer.kafka.group_listing import BrokerGroup
from zkconsumer.kafka.topics import create_topic
from zkconsumer.tools.groups_listing import GroupRow, format_rows, json_rows, merge_rows


def run(capsys, zk_connect: str, *args: str) -> tuple[int, str, str]:
    """The command in this process, as ``zkconsumer`` runs it (a child process costs more to start)."""
    capsys.readouterr()
    status = cli.main([*args, "--zookeeper", zk_connect])
    out, err = capsys.readouterr()
    return status, out, err


@contextmanager
def subscribed(bootstrap: str, topic: str, group: str, **extra: str) -> Iterator[Consumer]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                         **extra})
    consumer.subscribe([topic])
    try:
        yield consumer
    finally:
        consumer.close()


@pytest.mark.timeout(180)  # its waits, summed: 60 s for the groups to be Stable, 30 s to consume, 60 s to leave
def test_list_shows_zookeeper_classic_and_kip848_groups_with_their_type(zk, zk_chroot, bootstrap_servers, topic_name,
                                                                        capsys):
    suffix = uuid.uuid4().hex[:6]
    legacy, classic, modern = f"legacy-{suffix}", f"classic-{suffix}", f"kip848-{suffix}"
    create_topic(bootstrap_servers, topic_name, 2)
    produce(bootstrap_servers, topic_name, [b"a", b"b"])
    zk.create(f"/consumers/{legacy}/offsets/{topic_name}/0", b"1", makepath=True)
    with ExitStack() as stack:
        consumers = [
            stack.enter_context(subscribed(bootstrap_servers, topic_name, classic,
                                           **{"partition.assignment.strategy": "range"})),
            stack.enter_context(subscribed(bootstrap_servers, topic_name, modern, **{"group.protocol": "consumer"})),
        ]

        received = [0, 0]
        positions: list[dict[int, int]] = [{}, {}]  # each consumer's next offset of each partition it read

        def pump() -> list[int]:
            for i, consumer in enumerate(consumers):
                message = consumer.poll(0.1)
                if message is not None and message.error() is None:
                    received[i] += 1
                    positions[i][message.partition()] = message.offset() + 1
            return received

        def listed() -> dict[str, dict] | None:
            pump()
            status, out, err = run(capsys, zk_chroot, "groups", "list", "--bootstrap-server", bootstrap_servers,
                                   "--json")
            assert (status, err) == (0, "")
            rows = {row["group"]: row for row in json.loads(out)}
            stable = all(rows.get(g, {}).get("state") == "Stable" for g in (classic, modern))
            return rows if stable else None

        rows = wait_for(listed, timeout=60)
        assert isinstance(rows, dict)
        assert rows[legacy] == {"group": legacy, "offsets": "zookeeper", "lives_in": ["zookeeper"], "type": None,
                                "state": None}
        assert rows[classic] == {"group": classic, "offsets": "none", "lives_in": ["broker"], "type": "classic",
                                 "state": "Stable"}
        assert rows[modern] == {"group": modern, "offsets": "none", "lives_in": ["broker"], "type": "consumer",
                                "state": "Stable"}

        status, out, err = run(capsys, zk_chroot, "groups", "list", "--bootstrap-server", bootstrap_servers)
        assert (status, err) == (0, "")
        lines = {line.split()[0]: line.split() for line in out.splitlines()}
        assert lines[legacy] == [legacy, "zookeeper", "zookeeper", "-", "-"]
        assert lines[classic] == [classic, "none", "broker", "classic", "Stable"]
        assert lines[modern] == [modern, "none", "broker", "consumer", "Stable"]
        assert [line.split()[0] for line in out.splitlines()] == sorted(lines)

        # Committed offsets are where they were committed, and a group that leaves stays listed, Empty.
        # What each read, by offset: a rebalance between the reads and the commit (the group's membership settling)
        # would leave the client no stored offsets to commit.
        wait_for(lambda: pump() == [2, 2], timeout=30)
        for consumer, read in zip(consumers, positions, strict=True):
            consumer.commit(offsets=[TopicPartition(topic_name, p, o) for p, o in read.items()], asynchronous=False)

    def left() -> dict[str, dict] | None:
        status, out, _ = run(capsys, zk_chroot, "groups", "list", "--bootstrap-server", bootstrap_servers, "--json")
        rows = {row["group"]: row for row in json.loads(out)}
        return rows if all(rows[g]["state"] == "Empty" for g in (classic, modern)) else None

    after = wait_for(left, timeout=60)
    assert isinstance(after, dict)
    assert [(after[g]["offsets"], after[g]["type"]) for g in (classic, modern)] == [("kafka", "classic"),
                                                                                     ("kafka", "consumer")]

    # Without a broker, the ZooKeeper groups alone, names only (or as data).
    status, out, err = run(capsys, zk_chroot, "groups", "list")
    assert (status, out, err) == (0, f"{legacy}\n", "")
    status, out, err = run(capsys, zk_chroot, "groups", "list", "--json")
    assert (status, json.loads(out)) == (0, [{"group": legacy, "offsets": None, "lives_in": ["zookeeper"],
                                              "type": None, "state": None}])


def test_a_broker_that_does_not_list_its_groups_is_one_warning(zk, zk_chroot, capsys):
    zk.ensure_path("/consumers/alone")
    status, out, err = run(capsys, zk_chroot, "groups", "list", "--bootstrap-server", "127.0.0.1:1",
                           "--socket-timeout-ms", "500")
    assert (status, out.split()) == (0, ["alone", "unknown", "zookeeper", "-", "-"])
    assert len(err.splitlines()) == 1, err
    assert err.startswith("warning: the broker's groups are not listed, nor where offsets live: broker 127.0.0.1:1 "
                          "did not list its groups")


def test_rows_merge_both_sides_into_one_row_per_group():
    both = BrokerGroup("both", "classic", "Empty", simple=True)
    rows = merge_rows(["zk", "both"], [both, BrokerGroup("b", "consumer", "Stable", simple=False)],
                      {"zk": "zookeeper", "both": "both"})
    assert rows == (
        GroupRow("b", False, BrokerGroup("b", "consumer", "Stable", simple=False), "unknown"),
        GroupRow("both", True, both, "both"),
        GroupRow("zk", True, None, "zookeeper"),
    )
    assert format_rows(rows) == [
        "b     unknown    broker            consumer  Stable",
        "both  both       zookeeper+broker  classic   Empty",
        "zk    zookeeper  zookeeper         -         -",
    ]
    assert json_rows(rows)[1] == {"group": "both", "offsets": "both", "lives_in": ["zookeeper", "broker"],
                                  "type": "classic", "state": "Empty"}
    assert format_rows(merge_rows(["b", "a"], [], None)) == ["a", "b"]
