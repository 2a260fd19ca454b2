"""``spark.read.format("zkconsumer_groups")`` on local Spark against the real ZooKeeper and broker: the table agrees
with ``groups describe --json`` for the same groups, with the owner's liveness and member count on top; the regex
filter; bad options fail on the driver naming the option; a malformed znode is reported, not a failed task."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from structlog.testing import capture_logs
from support import produce, wait_for

from zkconsumer.errors import UsageError
from zkconsumer.kafka.topics import create_topic
from zkconsumer.spark.group_rows import COLUMNS, owner_consumer, select_groups, split_groups, table_rows
from zkconsumer.spark.groups_source import parse_options, read_groups_table
from zkconsumer.tools.offset_checker import GroupOffsets, PartitionOffsetRow, describe_group, json_rows
from zkconsumer.types import TopicPartition
from zkconsumer.zk.client import zookeeper

#: the first Spark test of a run starts the session's JVM and Python workers: over a minute on a busy 2-core machine
pytestmark = pytest.mark.timeout(300)

REGISTRATION = b'{"version":1,"subscription":{"%s":1},"pattern":"static","timestamp":"1"}'


def fleet(zk, bootstrap: str, topic: str) -> None:
    """Three groups on one 3-partition topic: ``orders-live`` with a live member owning partition 0 and a dead
    owner on 1; ``orders-idle`` with no parsable member, an offset and a malformed one; ``billing`` for the filter."""
    create_topic(bootstrap, topic, 3)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic}/partitions/2/state"))
    produce(bootstrap, topic, [f"a{i}".encode() for i in range(5)], partition=0)  # one batch: Tansu's mark says 1
    produce(bootstrap, topic, [f"b{i}".encode() for i in range(3)], partition=1, batch_each=True)
    zk.create("/consumers/orders-live/ids/orders-live_c1", REGISTRATION % topic.encode(), makepath=True,
              ephemeral=True)
    zk.create(f"/consumers/orders-live/owners/{topic}/0", b"orders-live_c1-0", makepath=True)
    zk.create(f"/consumers/orders-live/owners/{topic}/1", b"orders-live_dead-0")
    zk.create(f"/consumers/orders-live/offsets/{topic}/0", b"3", makepath=True)
    zk.create(f"/consumers/orders-live/offsets/{topic}/1", b"1")
    zk.create("/consumers/orders-idle/ids/orders-idle_broken", b"{not json", makepath=True, ephemeral=True)
    zk.create(f"/consumers/orders-idle/offsets/{topic}/0", b"5", makepath=True)
    zk.create(f"/consumers/orders-idle/offsets/{topic}/1", b"not-a-number")
    zk.create(f"/consumers/billing/offsets/{topic}/2", b"0", makepath=True)


def as_dicts(rows) -> list[dict]:
    return sorted((row.asDict() for row in rows), key=lambda r: (r["group"], r["topic"], r["partition"]))


def test_the_table_is_groups_describe_with_liveness(spark, zk, kafka_zk, bootstrap_servers, topic_name):
    fleet(zk, bootstrap_servers, topic_name)
    before = datetime.now()
    df = (spark.read.format("zkconsumer_groups").option("zookeeper.connect", kafka_zk)
          .option("groupsPerPartition", "2").load())
    assert df.columns == list(COLUMNS)
    table = as_dicts(df.collect())
    after = datetime.now()

    # Every column groups describe has, with the same values (as `groups describe --json` prints them).
    with zookeeper(kafka_zk) as client:
        described = [row for group in ("billing", "orders-idle", "orders-live")
                     for row in json_rows(describe_group(client, group).offsets.rows)]
    assert [{k: r[k] for k in described[0]} for r in table] == described
    live = [r for r in table if r["group"] == "orders-live"]
    assert [(r["offset"], r["log_size"], r["lag"], r["owner"], r["owner_alive"], r["members"]) for r in live] == [
        (3, 5, 2, "orders-live_c1-0", True, 1),
        (1, 3, 2, "orders-live_dead-0", False, 1),
        (None, 0, None, None, None, 1),
    ]
    idle = {r["partition"]: r for r in table if r["group"] == "orders-idle"}
    assert (idle[0]["lag"], idle[1]["offset"], idle[1]["lag"]) == (0, None, None)  # the malformed offset is null
    assert {r["members"] for r in idle.values()} == {1}  # a malformed registration is still a registered member
    assert all(before - timedelta(seconds=1) <= r["read_at"] <= after for r in table)

    # The filter matches whole names; log sizes asked of a given broker are the same.
    spark.read.format("zkconsumer_groups").option("zookeeper.connect", kafka_zk).option("GROUPS", "orders-.*") \
        .option("bootstrap.servers", bootstrap_servers).load().createOrReplaceTempView("orders_lag")
    top = spark.sql("SELECT `group`, sum(lag) AS lag FROM orders_lag GROUP BY `group` ORDER BY lag DESC").collect()
    assert [(r["group"], r["lag"]) for r in top] == [("orders-live", 4), ("orders-idle", 0)]
    nothing = spark.read.format("zkconsumer_groups").option("zookeeper.connect", kafka_zk).option("groups", "orders")
    assert nothing.load().count() == 0


def test_an_executor_read_reports_malformed_znodes_and_asks_each_partition_once(zk, kafka_zk, bootstrap_servers,
                                                                                  topic_name):
    """What one Spark task does, run in this process so its events can be seen."""
    fleet(zk, bootstrap_servers, topic_name)
    options = parse_options({"zookeeper.connect": kafka_zk})
    with capture_logs() as events:
        rows = read_groups_table(options, ("billing", "gone", "orders-idle", "orders-live"))
    assert len(rows) == 9
    malformed = [(e["group"], e["path"]) for e in events if e["event"] == "znode.malformed"]
    assert malformed == [("orders-idle", "/consumers/orders-idle/ids/orders-idle_broken"),
                         ("orders-idle", f"/consumers/orders-idle/offsets/{topic_name}/1")]
    [read] = [e for e in events if e["event"] == "spark.groups_read"]
    assert {k: read[k] for k in ("groups", "vanished", "rows", "partitions", "malformed", "log_sizes_unknown")} == {
        "groups": 4, "vanished": 1, "rows": 9, "partitions": 3, "malformed": 2, "log_sizes_unknown": 0}


def test_bad_options_fail_on_the_driver_naming_the_option(spark):
    reader = spark.read.format("zkconsumer_groups")
    with pytest.raises(Exception, match="option 'zookeeper.connect' is required"):
        reader.load()
    with pytest.raises(Exception, match="option 'groups' is not a valid regex"):
        reader.option("zookeeper.connect", "127.0.0.1:1").option("groups", "orders-(").load()
    unreachable = (spark.read.format("zkconsumer_groups").option("zookeeper.connect", "127.0.0.1:1")
                   .option("zookeeper.connection.timeout.ms", "500").load())
    with pytest.raises(Exception) as failed:
        unreachable.collect()
    # Spark shows the planner's traceback; its last line is the cause, in one line
    cause = [line for line in str(failed.value).splitlines() if line.startswith("zkconsumer.errors.")]
    assert len(cause) == 1
    assert cause[0].startswith("zkconsumer.errors.ServerUnavailableError: ZooKeeper at 127.0.0.1:1 did not answer")


@pytest.mark.parametrize(("options", "message"), [
    ({"zookeeper.connect": " "}, "option 'zookeeper.connect' is required"),
    ({"zookeeper.connect": "zk:2181", "groupsPerPartition": "0"}, "option 'groupsPerPartition' must be a positive"),
    ({"zookeeper.connect": "zk:2181", "socket.timeout.ms": "5s"}, "option 'socket.timeout.ms' must be a positive"),
    ({"zookeeper.connect": "zk:2181", "group": "orders"}, "unknown option 'group'"),
])
def test_option_errors_name_the_option(options, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        parse_options(options)


def test_rows_groups_and_splits_are_pure():
    parsed = parse_options({"Zookeeper.Connect": "zk:2181/kafka", "GROUPS": "a.*", "groupsperpartition": "2"})
    assert (parsed.zookeeper_connect, parsed.groups_per_partition, parsed.socket_timeout_s) == ("zk:2181/kafka", 2, 5)
    assert select_groups(["b", "ab", "a", "a-1"], parsed.groups) == ["a", "a-1", "ab"]
    assert split_groups(["a", "b", "c", "d", "e"], 2) == [("a", "b"), ("c", "d"), ("e",)]
    assert owner_consumer("g_host-1700000000000-ab12cd34-10") == "g_host-1700000000000-ab12cd34"
    offsets = GroupOffsets("g", (
        PartitionOffsetRow("g", "t", 0, 7, None, "g_a-0"),
        PartitionOffsetRow("g", "t", 1, -1, None, "g_gone-0"),
        PartitionOffsetRow("g", "t", 2, None, None, None),
    ), members=("g_a", "g_b"))
    at = datetime(2024, 1, 1, tzinfo=UTC)
    rows = table_rows(offsets, {TopicPartition("t", 0): 10, TopicPartition("t", 1): 4}, at)
    assert [(r.offset, r.log_size, r.lag, r.owner_alive, r.members) for r in rows] == [
        (7, 10, 3, True, 2), (-1, 4, None, False, 2), (None, None, None, None, 2)]
