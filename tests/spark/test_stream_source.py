"""``format("zkconsumer")`` in local Spark against the real ZooKeeper and broker: a member of the group that reads
what it owns, commits it as a legacy member does, and, stopped and restarted from its checkpoint, writes every
message once into a file sink; without membership, every partition and only the commits; a filter waiting for its
topic; bad input failing ``load()`` in one line naming the cause."""

from __future__ import annotations

import json
import uuid

import pytest
from support import mirrored_topic, produce, wait_for

from zkconsumer.zk.reads import children

KAFKA_SCHEMA = ("struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp,"
                "timestampType:int>")


def load(spark, options: dict[str, str]):
    reader = spark.readStream.format("zkconsumer")
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


def committed(zk, group: str, topic: str) -> dict[int, bytes]:
    base = f"/consumers/{group}/offsets/{topic}"
    return {int(p): zk.get(f"{base}/{p}")[0] for p in children(zk, base)}


def sink_rows(spark, out) -> list[tuple[int, int, bytes]]:
    """What a file sink holds: read through its log, as any reader of the sink does."""
    return sorted((r.partition, r.offset, bytes(r.value))
                  for r in spark.read.parquet(str(out)).select("partition", "offset", "value").collect())


def sent(partition: int, first: int, end: int) -> list[tuple[int, int, bytes]]:
    return [(partition, i, f"{partition}-{i}".encode()) for i in range(first, end)]


def memory_rows(spark, name: str) -> list[tuple[int, int, bytes]]:
    return [(r.partition, r.offset, bytes(r.value)) for r in spark.sql(f"select * from {name}").collect()]


@pytest.mark.timeout(300)
def test_a_member_reads_what_it_owns_commits_it_and_resumes_from_its_checkpoint_exactly_once(
        spark, zk, kafka_zk, bootstrap_servers, topic_name, tmp_path):
    group = "spark-member"
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    for p in range(2):
        produce(bootstrap_servers, topic, [f"{p}-{i}".encode() for i in range(100)], partition=p)
    df = load(spark, {"zookeeper.connect": kafka_zk, "group.id": group, "topics": topic,
                      "startingOffsets": json.dumps({topic: {"0": 10}}), "auto.offset.reset": "smallest",
                      "maxOffsetsPerTrigger": "100"})
    assert df.schema.simpleString() == KAFKA_SCHEMA  # the Kafka source's rows: downstream code moves over unchanged
    out, checkpoint = tmp_path / "out", tmp_path / "checkpoint"

    def start():
        return (df.writeStream.format("parquet").option("path", str(out))
                .option("checkpointLocation", str(checkpoint)).trigger(processingTime="200 milliseconds").start())

    query = start()
    try:
        query.processAllAvailable()
        # partition 0 from the given offset, partition 1 (not given) by the group's rule: smallest
        assert sink_rows(spark, out) == sent(0, 10, 100) + sent(1, 0, 100)
        sizes = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
        assert max(sizes) <= 100 and sum(sizes) == 190 and len(sizes) >= 2  # maxOffsetsPerTrigger, exactly

        # a member as the legacy tools see one: its registration, its claims, its offsets
        (member,) = zk.get_children(f"/consumers/{group}/ids")
        registration = json.loads(zk.get(f"/consumers/{group}/ids/{member}")[0])
        assert registration["pattern"] == "static" and registration["subscription"] == {topic: 1}
        for p in range(2):
            assert zk.get(f"/consumers/{group}/owners/{topic}/{p}")[0] == f"{member}-0".encode()
        # committed at the next planning, once the batch is done (not one batch late)
        wait_for(lambda: committed(zk, group, topic) == {0: b"100", 1: b"100"}, timeout=30)
    finally:
        query.stop()
    wait_for(lambda: zk.get_children(f"/consumers/{group}/ids") == [], timeout=30)  # stopping leaves the group

    # Restarted from its checkpoint (startingOffsets no longer applies): every new message, once.
    for p in range(2):
        produce(bootstrap_servers, topic, [f"{p}-{i}".encode() for i in range(100, 140)], partition=p)
    query = start()
    try:
        query.processAllAvailable()
    finally:
        query.stop()
    assert sink_rows(spark, out) == sent(0, 10, 140) + sent(1, 0, 140)


@pytest.mark.timeout(300)
def test_without_membership_a_filter_waits_for_its_topic_and_a_malformed_offset_is_skipped(
        spark, zk, kafka_zk, bootstrap_servers, topic_name):
    group = "spark-none"
    topic = topic_name
    bad = f"/consumers/{group}/offsets/{topic}/1"
    zk.create(bad, b"not-an-offset", makepath=True)
    df = load(spark, {"zookeeper.connect": kafka_zk, "group.id": group, "whitelist": topic, "membership": "none",
                      "auto.offset.reset": "smallest"})
    name = f"none_{uuid.uuid4().hex[:8]}"
    query = df.writeStream.format("memory").queryName(name).trigger(processingTime="200 milliseconds").start()
    try:
        wait_for(lambda: query.lastProgress is not None, timeout=120)  # it runs, with nothing to read yet
        assert query.isActive and memory_rows(spark, name) == []
        mirrored_topic(zk, bootstrap_servers, topic, 2)
        for p in range(2):
            produce(bootstrap_servers, topic, [f"{p}-{i}".encode() for i in range(30)], partition=p)
        wait_for(lambda: len(memory_rows(spark, name)) >= 30, timeout=60)
        # partition 1's offset znode holds no offset: skipped and left alone, as the connector does
        assert sorted(memory_rows(spark, name)) == [(0, i, f"0-{i}".encode()) for i in range(30)]
        assert zk.get(bad)[0] == b"not-an-offset"
        wait_for(lambda: committed(zk, group, topic) == {0: b"30", 1: b"not-an-offset"}, timeout=30)
        assert children(zk, f"/consumers/{group}/ids") == []  # not a member: only commits
        assert query.exception() is None
    finally:
        query.stop()


def test_bad_input_fails_load_in_one_line_naming_the_cause(spark, zk_chroot, zk):
    from pyspark.errors import AnalysisException

    base = {"zookeeper.connect": zk_chroot, "group.id": "g", "topics": "present"}
    zk.ensure_path("/brokers/topics/present")
    cases = [
        ({**base, "group.id": ""}, "option group.id is required"),
        ({**base, "maxOffsetsPerTrigger": "lots"}, "option maxOffsetsPerTrigger='lots': expected a whole number"),
        ({**base, "startingOffsets": "newest"}, "option startingOffsets='newest'"),
        ({**base, "topics": "present,absent"}, "option topics: topic 'absent' does not exist"),
        ({**base, "zookeeper.connect": "127.0.0.1:1", "zookeeper.connection.timeout.ms": "2000"},
         "ZooKeeper at 127.0.0.1:1 did not answer"),
    ]
    for options, cause in cases:
        with pytest.raises(AnalysisException) as caught:
            load(spark, options)
        lines = [line for line in str(caught.value).splitlines() if cause in line]
        assert lines, str(caught.value)
        assert lines[0].startswith("zkconsumer."), lines[0]  # the error's own line: type and message, no traceback
