"""Small helpers shared by the tests (fixtures live in conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from time_scale import bounded, describe

from zkconsumer.embedded import kafka_artifacts
from zkconsumer.errors import EnvironmentSetupError
from zkconsumer.fleet.spark_session import LOCAL_JAVA_OPTIONS
from zkconsumer.testing.helpers import CHROOT_BASE  # noqa: F401 - every test's chroot lives under it
from zkconsumer.zk.persistent import delete_tree  # noqa: F401 - the tests' name for it

REPO = Path(__file__).resolve().parents[1]
SAMPLE_EVENTS = REPO / "tests" / "data" / "sample-events.jsonl"  # a recorded three-member run
#: the suite's own Spark JVMs (the Spark tests' session, the killed query's, the standalone cluster's, the Spark
#: example's): the commands' local sessions' options (C1 alone) and the serial collector, which took a small local
#: job's JVM 3-9% less CPU than G1 (benchmarks/spark_java_options.py: 0.97x and 0.91x in two runs). Not the commands'
#: default: a user's own -XX:+UseG1GC in extraJavaOptions would then stop the JVM from starting.
SPARK_JAVA_OPTIONS = f"{LOCAL_JAVA_OPTIONS} -XX:+UseSerialGC"


def wait_for(predicate: Callable[[], object], timeout: float = 15.0, interval: float = 0.05) -> object:
    """Poll until ``predicate`` returns something truthy; fail the test with its last value otherwise. ``timeout``
    is the figure for the reference machine: the wait lasts it times the suite's time scale, and ends before the
    test's own limit (tests/time_scale.py)."""
    limit = bounded(timeout)
    deadline = time.monotonic() + limit
    value = predicate()
    while not value:
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {limit:.1f} s ({timeout:g} s at {describe()}; last "
                                 f"value: {value!r})")
        time.sleep(interval)
        value = predicate()
    return value


def require_kafka(variant: str) -> None:
    """Skip the calling test (or fixture: the whole module) in one line naming what is missing, where Java or the
    variant's Apache Kafka artifacts are not installed (the bootstrap installs both: scripts/bootstrap.sh)."""
    try:
        kafka_artifacts.check_installed(variant)
    except EnvironmentSetupError as exc:
        pytest.skip(str(exc))


def zkconsumer_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60.0,
                   input: str | None = None) -> subprocess.CompletedProcess:
    """Run the real ``zkconsumer`` command in a child process, as a user would (``input``: its stdin); ``timeout``
    as :func:`wait_for`'s."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "zkconsumer", *args], capture_output=True, text=True, env=full_env,
        timeout=bounded(timeout),
        input=input,
    )


def produce(bootstrap: str, topic: str, values: list[bytes], partition: int | None = None,
            batch_each: bool = False, compression: str = "none") -> None:
    """Send ``values`` and wait for them to be acknowledged; ``batch_each`` flushes after every message (one
    message a batch)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0 if compression == "none" else 50,
                         "compression.type": compression})
    failures: list[str] = []

    def report(err, _msg) -> None:
        if err is not None:
            failures.append(str(err))

    for value in values:
        if partition is None:
            producer.produce(topic, value=value, on_delivery=report)
        else:
            producer.produce(topic, value=value, partition=partition, on_delivery=report)
        if batch_each:
            producer.flush(bounded(10))
    assert producer.flush(bounded(10)) == 0, "messages not delivered"
    assert not failures, failures


def poll_values(consumer, count: int, timeout: float = 30.0) -> list[bytes]:
    """Poll a confluent-kafka ``consumer`` until it has read ``count`` messages; their values, in order. ``timeout``
    as :func:`wait_for`'s."""
    values: list[bytes] = []

    def enough() -> bool:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            values.append(message.value())
        return len(values) >= count

    wait_for(enough, timeout=timeout)
    return values


def produce_batched(bootstrap: str, topic: str, partition: int, count: int, linger_ms: int = 5,
                    batch_messages: int = 10_000) -> None:
    """``count`` messages from an ordinary batching producer: they wait ``linger_ms`` and go in batches of up to
    ``batch_messages`` (a long linger makes one batch of many, the case Tansu's ListOffsets answers with 1)."""
    from confluent_kafka import Producer

    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": linger_ms, "batch.num.messages": batch_messages})
    for i in range(count):
        producer.produce(topic, value=f"m{i}".encode(), partition=partition)
    assert producer.flush(bounded(15)) == 0, "messages not delivered"


def mirrored_topic(zk, bootstrap: str, topic: str, partitions: int = 1) -> str:
    """Create ``topic`` on the broker and wait until the metadata bridge has mirrored all its partitions into
    ZooKeeper, where a legacy consumer looks for them."""
    from zkconsumer.kafka.topics import create_topic

    create_topic(bootstrap, topic, partitions)
    wait_for(lambda: zk.exists(f"/brokers/topics/{topic}/partitions/{partitions - 1}/state"))
    return topic


class RecordedConsumer:
    """A confluent-kafka consumer of one topic, its rebalance callbacks (``("assign" | "revoke" | "lost", partitions)``,
    in order) and the values it read: what a test compares across an event the group must not notice."""

    def __init__(self, config: dict[str, object], topic: str) -> None:
        from confluent_kafka import Consumer

        self.consumer = Consumer(config)
        self.calls: list[tuple[str, list[int]]] = []
        self.values: list[bytes] = []
        self.consumer.subscribe([topic], on_assign=self._call("assign"), on_revoke=self._call("revoke"),
                                on_lost=self._call("lost"))

    def _call(self, name: str):  # noqa: ANN202 - confluent-kafka's callback signature
        def record(consumer, partitions) -> None:  # noqa: ANN001
            self.calls.append((name, sorted(p.partition for p in partitions)))  # assigned by the client after it
        return record

    def poll(self, timeout: float = 0.2) -> None:
        """One poll: a message read is kept, an error other than a partition's end fails the test."""
        from confluent_kafka import KafkaError

        message = self.consumer.poll(timeout)
        if message is not None and message.error() is None:
            self.values.append(message.value())
        elif message is not None and message.error().code() != KafkaError._PARTITION_EOF:
            raise AssertionError(message.error())

    def poll_until(self, count: int) -> bool:
        self.poll()
        return len(self.values) >= count

    def assigned(self) -> list[int]:
        return sorted(p.partition for p in self.consumer.assignment())


CONNECTOR_GROUP = "group1"  # the group of connector_config


def connector_config(zk_connect: str, consumer_id: str, **extra):
    """A member of ``CONNECTOR_GROUP`` as Kafka's TestUtils.createConsumerProperties makes one, with shorter backoffs
    so the suite stays quick; ``extra`` properties override."""
    from zkconsumer.config import ConsumerConfig

    props = {
        "zookeeper.connect": zk_connect, "group.id": CONNECTOR_GROUP, "consumer.id": consumer_id,
        "auto.offset.reset": "smallest", "consumer.timeout.ms": 200, "rebalance.backoff.ms": 200,
        "auto.commit.interval.ms": 1000, "rebalance.max.retries": 4, "num.consumer.fetchers": 2,
        "refresh.leader.backoff.ms": 100,
    }
    props.update(extra)
    return ConsumerConfig(props)


def take(stream, count: int, timeout: float = 20.0) -> list:
    """Up to ``count`` messages from a stream whose consumer.timeout.ms is short; stops early only at ``timeout`` (as
    :func:`wait_for`'s)."""
    from zkconsumer.errors import ConsumerTimeoutException

    got: list = []
    deadline = time.monotonic() + bounded(timeout)
    while len(got) < count and time.monotonic() < deadline:
        try:
            for message in stream:
                got.append(message)
                if len(got) >= count:
                    break
        except ConsumerTimeoutException:
            continue
    return got


#: a scenario file (``demo --scenario FILE``): two members join one after the other, on a 2-partition topic
TWO_JOIN_SCENARIO = """
title = "Two join"
session_timeout_ms = 3000
[topic]
name = "class"
partitions = 2
[production]
rate = 10
[members.m1]
[members.m2]
[[scenes]]
title = "m1 starts"
actions = [{ start = "m1" }]
[[scenes]]
title = "m2 joins"
actions = [{ start = "m2" }]
"""


CHAOS = REPO / "benchmarks" / "chaos.py"


def chaos_run_held(report_path: Path, *args: str) -> dict:
    """benchmarks/chaos.py run with ``args``, its report written to ``report_path``: the run must end with its
    verdict ``chaos HELD``; its report."""
    import json

    run = subprocess.run([sys.executable, str(CHAOS), *args, "--report", str(report_path)], capture_output=True,
                         text=True, timeout=bounded(190))
    verdict = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr[-2000:]
    assert report_path.exists(), f"the run wrote no report (exit {run.returncode}): {run.stderr[-3000:]}"
    report = json.loads(report_path.read_text())
    assert run.returncode == 0, (verdict, report["violations"])
    assert verdict.startswith("chaos HELD")
    return report
