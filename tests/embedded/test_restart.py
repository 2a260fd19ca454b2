"""`zkconsumer local down` then `local up`: ZooKeeper and the (memory-storage) broker agree again, the groups'
offsets are kept and those past the end of the now empty logs are flagged, by `local up` and `groups describe`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import produce, zkconsumer_cli
from time_scale import scaled

from zkconsumer.embedded.reconciliation import (
    OffsetPastEnd,
    Reconciliation,
    RecordedTopic,
    offsets_past_end,
    topics_to_recreate,
)
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.tools.offset_checker import PartitionOffsetRow, past_end_warning
from zkconsumer.types import TopicPartition
from zkconsumer.zk import cluster
from zkconsumer.zk.client import zookeeper

TOPIC = "orders"


def test_recreated_are_the_recorded_topics_the_broker_lacks_and_should_have():
    recorded = {"orders": 3, "kept": 2, "doomed": 1, "__consumer_offsets": 50, "empty": 0}
    assert topics_to_recreate(recorded, in_broker={"kept"}, marked_for_deletion={"doomed"}) == [
        RecordedTopic("orders", 3)]
    assert topics_to_recreate({"kept": 2}, in_broker={"kept"}) == []


def test_offsets_past_the_end_are_those_beyond_a_known_end():
    t0, t1, t2 = (TopicPartition(TOPIC, p) for p in range(3))
    committed = {("g", t0): 8, ("g", t1): 0, ("h", t0): 3, ("h", t2): 9}
    ends = {t0: 3, t1: 0}  # t2's end unknown: not judged
    assert offsets_past_end(committed, ends) == (OffsetPastEnd("g", TOPIC, 0, 8, 3),)
    assert str(OffsetPastEnd("g", TOPIC, 0, 8, 3)) == "g orders-0 at 8, log end 3"


def test_the_summary_is_one_line_or_nothing():
    assert Reconciliation().summary() is None
    line = Reconciliation((RecordedTopic(TOPIC, 3),), (OffsetPastEnd("g", TOPIC, 0, 8, 0),)).summary()
    assert line is not None and "\n" not in line
    assert "orders (3 partitions)" in line and "1 committed offset past the log end" in line and "g" in line
    many = Reconciliation(tuple(RecordedTopic(f"t{i:02}", 1) for i in range(10))).summary() or ""
    assert many.endswith("t06 (1 partition), t07 (1 partition), ... (2 more)")


def test_describe_warns_of_every_offset_past_the_end():
    rows = [PartitionOffsetRow("g", TOPIC, 0, 8, 3, None), PartitionOffsetRow("g", TOPIC, 1, 2, 5, None),
            PartitionOffsetRow("g", TOPIC, 2, 4, 0, None, kafka_offset=1)]
    warning = past_end_warning(rows)
    assert warning is not None and "3 committed offsets past the log end" in warning
    assert warning.endswith(": [orders,0] 8 > 3, [orders,2] 4 > 0, [orders,2] 1 > 0 in Kafka")
    assert past_end_warning(rows[1:2]) is None
    assert "1 committed offset past" in (past_end_warning(rows[:1]) or "")


def test_the_default_run_directory_is_the_virtual_environment_s(tmp_path):
    if sys.prefix == sys.base_prefix:
        pytest.skip("the tests run outside a virtual environment")
    shown = zkconsumer_cli("local", "status", "--json", env={"ZKCONSUMER_RUN_DIR": ""})
    assert json.loads(shown.stdout)["run_dir"] == str(Path(sys.prefix) / "var" / "zkconsumer")
    chosen = zkconsumer_cli("local", "status", env={"ZKCONSUMER_RUN_DIR": str(tmp_path / "none")})
    assert chosen.stdout.splitlines() == [
        f"no local environment in {tmp_path / 'none'} ($ZKCONSUMER_RUN_DIR; start one with: zkconsumer local up)"]


def local(run_dir: Path, *args: str):
    return zkconsumer_cli(*args, "--run-dir", str(run_dir))


def up(run_dir: Path) -> tuple[dict[str, str], str]:
    started = local(run_dir, "local", "up", "--json")
    assert started.returncode == 0, started.stderr
    return json.loads(started.stdout), started.stderr


@pytest.mark.servers
def test_after_down_and_up_zookeeper_and_the_broker_agree_and_old_offsets_are_flagged(run_dir):
    endpoints, _ = up(run_dir)
    assert local(run_dir, "topics", "create", TOPIC, "--partitions", "2").returncode == 0
    for partition in (0, 1):
        produce(endpoints["bootstrap_servers"], TOPIC, [b"a", b"b"], partition=partition)
    consumed = local(run_dir, "consume", "--group", "ops5", "--topic", TOPIC, "--from-beginning",
                     "--max-messages", "4")
    assert consumed.returncode == 0, consumed.stderr
    with zookeeper(endpoints["zookeeper"]) as zk:
        assert [zk.get(f"/consumers/ops5/offsets/{TOPIC}/{p}")[0] for p in (0, 1)] == [b"2", b"2"]
    down = local(run_dir, "local", "down")
    assert "local.stopped" not in down.stderr  # the event is for the log file, the line for the operator
    assert down.stdout.splitlines() == [
        f"stopped bridge, front, broker, zookeeper (ZooKeeper's data and the logs kept in {run_dir})"]

    again = local(run_dir, "local", "up")
    assert again.returncode == 0, again.stderr
    said = again.stdout.splitlines()
    assert len(said) == 1 and said[0].startswith(f"up in {run_dir}: zookeeper "), again.stdout
    assert "local.started" not in again.stderr and "local.reconciled" not in again.stderr, again.stderr
    assert said[0].endswith("; stop it with: zkconsumer local down")
    flagged = [line for line in again.stderr.splitlines() if line.startswith("zkconsumer local: ")]
    assert len(flagged) == 1, again.stderr
    assert f"recreated 1 topic ZooKeeper records, with empty logs: {TOPIC} (2 partitions)" in flagged[0], flagged
    assert "2 committed offsets past the log end" in flagged[0] and "ops5" in flagged[0], flagged
    endpoints = json.loads(local(run_dir, "local", "up", "--json").stdout)  # running: the same, nothing redone

    broker = fetch_metadata(admin_client(endpoints["broker"]), endpoints["broker"])
    with zookeeper(endpoints["zookeeper"]) as zk:
        recorded = {t: len(cluster.read_topic(zk, t).partitions) for t in cluster.read_topic_names(zk)}
        assert zk.get(f"/consumers/ops5/offsets/{TOPIC}/0")[0] == b"2"  # kept as committed
    assert recorded == {t: len(m.partitions) for t, m in broker.topics.items() if not t.startswith("__")}
    assert recorded == {TOPIC: 2}
    described = local(run_dir, "topics", "describe")
    assert described.returncode == 0 and f"Topic:{TOPIC}\tPartitionCount:2" in described.stdout, described

    lag = local(run_dir, "groups", "describe", "--group", "ops5")
    assert lag.returncode == 0, lag.stderr
    rows = [line.split() for line in lag.stdout.splitlines()[1:]]
    assert [row[3:8] for row in rows] == [["2", "0", "-2", "(past", "end)"]] * 2, lag.stdout + lag.stderr
    assert (f"warning: 2 committed offsets past the log end (the log is shorter than what the group consumed; a "
            f"consumer resets by auto.offset.reset): [{TOPIC},0] 2 > 0, [{TOPIC},1] 2 > 0") in lag.stderr

    # One new message a partition: the log ends at 1, before the committed 2. As on Kafka, the group's consumer
    # resets by auto.offset.reset (smallest) and receives them, where it used to wait and print nothing.
    for partition in (0, 1):
        produce(endpoints["bootstrap_servers"], TOPIC, [f"new{partition}".encode()], partition=partition)
    # (auto.offset.reset as a property: --from-beginning with committed offsets is refused, as by Kafka's tool)
    after = local(run_dir, "consume", "--group", "ops5", "--topic", TOPIC, "--property", "auto.offset.reset=smallest",
                  "--max-messages", "2", "--timeout-ms", f"{scaled(20_000):.0f}")
    assert after.returncode == 0, after.stderr
    assert sorted(after.stdout.splitlines()) == ["new0", "new1"], after.stderr[-3000:]
    settled = local(run_dir, "groups", "describe", "--group", "ops5", "--json")
    assert [(r["offset"], r["log_size"], r["lag"]) for r in json.loads(settled.stdout)] == [(1, 1, 0)] * 2, (
        settled.stdout + settled.stderr)
    assert "past the log end" not in settled.stderr
