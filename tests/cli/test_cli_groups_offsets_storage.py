"""``groups describe --offsets-storage`` and ``groups list --bootstrap-server`` against the real ZooKeeper and broker,
with offsets written straight into each store: which store's offsets are shown, the Kafka columns, where each
group's offsets live (and that a group with offsets in Kafka is also listed at the broker), and bad input."""

from __future__ import annotations

import json
import uuid

from support import produce, wait_for

from zkconsumer import cli
from zkconsumer.kafka.group_offsets import GroupOffsetsClient
from zkconsumer.kafka.topics import create_topic
from zkconsumer.tools.offset_checker import BOTH_HEADER
from zkconsumer.types import TopicPartition


class Ran:
    """What a command did: its exit status and its output."""

    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def in_process(capsys):
    """The command run in this process, as ``zkconsumer`` runs it (a child process costs more to start)."""
    def run(zk_connect: str, *args: str) -> Ran:
        capsys.readouterr()
        status = cli.main([*args, "--zookeeper", zk_connect])
        out, err = capsys.readouterr()
        return Ran(status, out, err)
    return run


def test_describe_each_store_and_list_where_offsets_live(zk, kafka_zk, bootstrap_servers, topic_name, capsys):
    run = in_process(capsys)
    suffix = uuid.uuid4().hex[:6]
    both, zk_only, kafka_only, neither = (f"{name}-{suffix}" for name in ("both", "zk", "kafka", "none"))
    other = f"{topic_name}-b"
    for topic in (topic_name, other):
        create_topic(bootstrap_servers, topic, 1)
        wait_for(lambda topic=topic: zk.exists(f"/brokers/topics/{topic}/partitions/0/state"))
    produce(bootstrap_servers, topic_name, [b"a", b"b", b"c", b"d"])
    zk.create(f"/consumers/{both}/offsets/{topic_name}/0", b"1", makepath=True)
    zk.create(f"/consumers/{zk_only}/offsets/{topic_name}/0", b"2", makepath=True)
    for group in (kafka_only, neither):
        zk.create(f"/consumers/{group}/ids", makepath=True)
    kafka = GroupOffsetsClient(bootstrap_servers, 5)
    for group in (both, kafka_only):
        assert kafka.commit(group, {TopicPartition(topic_name, 0): 3, TopicPartition(other, 0): 0}).refused == {}

    default = json.loads(run(kafka_zk, "groups", "describe", "--group", both, "--json").stdout)
    assert [(r["topic"], r["offset"], r["lag"]) for r in default] == [(topic_name, 1, 3)]
    assert "kafka_offset" not in default[0]

    got = run(kafka_zk, "groups", "describe", "--group", both, "--json", "--offsets-storage", "both")
    assert (got.returncode, got.stderr) == (0, "")
    assert [(r["topic"], r["offset"], r["kafka_offset"], r["log_size"], r["lag"], r["kafka_lag"])
            for r in json.loads(got.stdout)] == [(topic_name, 1, 3, 4, 3, 1), (other, None, 0, 0, None, 0)]
    table = run(kafka_zk, "groups", "describe", "--group", both, "--offsets-storage", "both").stdout.splitlines()
    assert table[0] == BOTH_HEADER
    assert table[1].split() == [both, topic_name, "0", "1", "3", "4", "3", "1", "none"]

    kafka_view = json.loads(run(kafka_zk, "groups", "describe", "--group", kafka_only, "--json",
                                "--offsets-storage", "kafka").stdout)
    assert [(r["topic"], r["offset"], r["lag"]) for r in kafka_view] == [(topic_name, 3, 1), (other, 0, 0)]

    listed = run(kafka_zk, "groups", "list", "--bootstrap-server", bootstrap_servers)
    assert listed.returncode == 0, listed.stderr
    lines = [line.split() for line in listed.stdout.splitlines()]
    ours = [line for line in lines if line[0] in (both, zk_only, kafka_only, neither)]
    # the two columns scripts read, as they were; then where the group lives, its type and state at the broker
    assert [line[:2] for line in ours] == sorted(
        [[both, "both"], [zk_only, "zookeeper"], [kafka_only, "kafka"], [neither, "none"]])
    assert ours == sorted([[both, "both", "zookeeper+broker", "classic", "Empty"],
                           [zk_only, "zookeeper", "zookeeper", "-", "-"],
                           [kafka_only, "kafka", "zookeeper+broker", "classic", "Empty"],
                           [neither, "none", "zookeeper", "-", "-"]])
    # every other group is one the broker's coordinator knows and this test's ZooKeeper does not
    assert all(line[2] == "broker" for line in lines if line not in ours)
    assert run(kafka_zk, "groups", "list").stdout.split() == sorted([both, zk_only, kafka_only, neither])

    bad = run(kafka_zk, "groups", "describe", "--group", both, "--offsets-storage", "mysql")
    assert (bad.returncode, bad.stdout) == (2, "")
    assert bad.stderr == "zkconsumer groups: --offsets-storage 'mysql' is not one of zookeeper, kafka, both\n"
    down = run(kafka_zk, "groups", "describe", "--group", both, "--offsets-storage", "both",
               "--bootstrap-server", "127.0.0.1:1", "--socket-timeout-ms", "300")
    assert down.returncode == 1 and len(down.stderr.splitlines()) == 1, down.stderr
    assert down.stderr.startswith(f"zkconsumer groups: cannot fetch the offsets of group {both} at 127.0.0.1:1")
