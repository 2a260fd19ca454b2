"""``zkconsumer offsets migrate`` against the real ZooKeeper and broker: the plan (copy, unchanged, keep, skip), the
writes in each direction, --force, the refusal while the group is consumed, and bad input (one line, nothing
written). The brokers are found through their registrations in ZooKeeper, as the tool does by default."""

from __future__ import annotations

import json
import socket
import uuid

import pytest
from support import wait_for

from zkconsumer import cli
from zkconsumer.kafka.group_offsets import GroupOffsetsClient
from zkconsumer.kafka.topics import create_topic
from zkconsumer.tools.offsets_migration import (
    COPY,
    KEEP,
    OVERWRITE,
    SKIP,
    UNCHANGED,
    StoreOffsets,
    plan_migration,
)
from zkconsumer.types import TopicPartition


class Ran:
    """What a command did: its exit status and its output."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


@pytest.fixture
def migrate(capsys):
    """``zkconsumer offsets migrate`` run in this process, as the command runs (a child process costs more to start
    than the command takes)."""
    def run(zk_connect: str, *args: str) -> Ran:
        capsys.readouterr()
        status = cli.main(["offsets", "migrate", "--zookeeper", zk_connect, *args])
        out, err = capsys.readouterr()
        return Ran(status, out, err)
    return run


def test_the_plan_never_moves_an_offset_back_unless_forced():
    a, b, c, d, e = (TopicPartition("t", p) for p in range(5))
    source = StoreOffsets({a: 5, b: 3, c: 4, d: -1}, {e: "znode holds 'x'"}, {})
    target = StoreOffsets({a: -1, b: 7, c: 4}, {d: "znode holds 'y'"}, {})
    plan = {r.partition: (r.source, r.target, r.action) for r in plan_migration(source, target)}
    assert plan == {0: (5, None, COPY), 1: (3, 7, KEEP), 2: (4, 4, UNCHANGED), 3: (None, None, SKIP),
                    4: (None, None, SKIP)}
    forced = {r.partition: r.action for r in plan_migration(source, target, force=True)}
    assert forced == {0: COPY, 1: OVERWRITE, 2: UNCHANGED, 3: SKIP, 4: SKIP}


def test_migrate_to_kafka_and_back(zk, kafka_zk, bootstrap_servers, topic_name, migrate):
    group = f"migrate-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap_servers, topic_name, 3)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/2/state"))
    base = f"/consumers/{group}/offsets/{topic_name}"
    zk.create(f"{base}/0", b"5", makepath=True)
    zk.create(f"{base}/1", b"3")
    zk.create(f"{base}/2", b"oops")
    kafka = GroupOffsetsClient(bootstrap_servers, 5)
    t0, t1, t2 = (TopicPartition(topic_name, p) for p in range(3))
    assert kafka.commit(group, {t1: 7}).committed == {t1: 7}

    # The dry run shows the plan and writes nothing.
    dry = migrate(kafka_zk, "--group", group, "--to", "kafka", "--dry-run", "--json")
    assert (dry.returncode, dry.stderr) == (0, "")
    plan = json.loads(dry.stdout)
    assert (plan["from"], plan["to"], plan["written"]) == ("zookeeper", "kafka", 0)
    assert [(r["partition"], r["from"], r["to"], r["action"]) for r in plan["rows"]] == [
        (0, 5, None, "copy"), (1, 3, 7, "keep"), (2, None, None, "skip")]
    assert "holds 'oops'" in plan["rows"][2]["note"]
    assert kafka.fetch(group, [t0]).offsets == {t0: -1}

    # For real: partition 0 copied, partition 1 left alone (Kafka is ahead), the malformed znode untouched.
    done = migrate(kafka_zk, "--group", group, "--to", "kafka")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].split() == ["TOPIC", "PARTITION", "FROM", "(zookeeper)", "TO", "(kafka)",
                                                   "ACTION", "NOTE"]
    assert done.stdout.splitlines()[-1] == "1 offsets written to kafka; 1 left alone (the target is ahead)"
    assert kafka.fetch(group, [t0, t1, t2]).offsets == {t0: 5, t1: 7, t2: -1}
    forced = migrate(kafka_zk, "--group", group, "--to", "kafka", "--force")
    assert forced.returncode == 0 and forced.stdout.splitlines()[-1] == "1 offsets written to kafka"
    assert kafka.fetch(group, [t0, t1]).offsets == {t0: 5, t1: 3}

    # Back to ZooKeeper (the rollback): Kafka went on; ZooKeeper gets the newer offsets, conditionally.
    assert kafka.commit(group, {t0: 9, t1: 4}).committed == {t0: 9, t1: 4}
    zk.set(f"{base}/1", b"6")  # ahead in ZooKeeper: kept
    back = migrate(kafka_zk, "--group", group, "--to", "zookeeper", "--json")
    assert back.returncode == 0, back.stderr
    rows = json.loads(back.stdout)["rows"]
    assert [(r["partition"], r["from"], r["to"], r["action"]) for r in rows] == [(0, 9, 5, "copy"),
                                                                                (1, 4, 6, "keep")]
    assert (zk.get(f"{base}/0")[0], zk.get(f"{base}/1")[0], zk.get(f"{base}/2")[0]) == (b"9", b"6", b"oops")


def test_migrate_refuses_a_consumed_group_and_bad_input(zk, kafka_zk, bootstrap_servers, topic_name, migrate):
    group = f"migrate-{uuid.uuid4().hex[:8]}"
    create_topic(bootstrap_servers, topic_name, 1)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic_name}/partitions/0/state"))
    zk.create(f"/consumers/{group}/offsets/{topic_name}/0", b"2", makepath=True)
    zk.create(f"/consumers/{group}/ids/{group}_c1", b"{}", makepath=True, ephemeral=True)
    kafka = GroupOffsetsClient(bootstrap_servers, 5)
    tp = TopicPartition(topic_name, 0)

    refused = migrate(kafka_zk, "--group", group, "--to", "kafka")
    assert refused.returncode == 1
    assert refused.stderr.splitlines() == [
        f"warning: group {group} is being consumed: 1 member registered in /consumers/{group}/ids ({group}_c1); "
        f"migrate refuses without --force",
        f"zkconsumer offsets: group {group} is being consumed (1 member registered in /consumers/{group}/ids "
        f"({group}_c1)); stop its consumers or use --force; nothing written",
    ]
    assert kafka.fetch(group, [tp]).offsets == {tp: -1}

    for args, message in [
        (("--to", "mysql"), "zkconsumer offsets: --to 'mysql' is not a store: use zookeeper or kafka"),
        (("--to", "KAFKA"), "zkconsumer offsets: --to 'KAFKA' is not a store: use zookeeper or kafka"),
    ]:
        bad = migrate(kafka_zk, "--group", group, *args)
        assert (bad.returncode, bad.stdout, bad.stderr) == (2, "", message + "\n")
    bad = migrate(kafka_zk, "--group", "", "--to", "kafka")
    assert bad.returncode == 2 and bad.stderr.startswith("zkconsumer offsets: group id '' is not valid")
    assert len(bad.stderr.splitlines()) == 1
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{s.getsockname()[1]}"
    down = migrate(kafka_zk, "--group", group, "--to", "kafka", "--force", "--bootstrap-server", closed,
                   "--socket-timeout-ms", "500")
    assert down.returncode == 1 and len(down.stderr.splitlines()) == 1, down.stderr
    assert down.stderr.startswith(f"zkconsumer offsets: cannot fetch the offsets of group {group} at {closed}")
    assert kafka.fetch(group, [tp]).offsets == {tp: -1}


@pytest.mark.parametrize("group", ["a b", ".."])
def test_a_group_id_zookeeper_cannot_hold_is_refused_before_anything_is_read(group, migrate):
    bad = migrate("127.0.0.1:1", "--group", group, "--to", "zookeeper")
    assert bad.returncode == 2 and len(bad.stderr.splitlines()) == 1
    assert "is not valid for a ZooKeeper consumer group" in bad.stderr
