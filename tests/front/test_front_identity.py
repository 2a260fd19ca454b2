"""The front says who it is and what its coordinators run (DescribeConfigs of a broker resource, as a Kafka broker
answers it), which :func:`zkconsumer.kafka.coordinator_identity.identify` reads from the front and from the broker
behind it; and a topic held smaller in the front's Metadata grows for modern groups, classic and KIP-848, as after
CreatePartitions on Kafka: real confluent-kafka consumers take the new partitions."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, KafkaError
from kio.schema.describe_configs.v4.request import DescribeConfigsRequest, DescribeConfigsResource
from kio.static.primitive import i8
from support import produce
from time_scale import bounded

from zkconsumer.embedded.front import SHORT_CLASSIC_SESSIONS, consumer_group_options
from zkconsumer.embedded.front_process import FrontProcess
from zkconsumer.front.proxy.client import exchange
from zkconsumer.kafka.coordinator_identity import identify
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.kafka.topics import FRONT_CONFIG, TopicCommandError, create_topic, show_partitions

#: KIP-848 groups that take a grown topic within about a second (the coordinator's heartbeat interval)
OPTIONS = (*SHORT_CLASSIC_SESSIONS, *consumer_group_options(session_timeout_ms=10_000, heartbeat_interval_ms=1000))


@pytest.fixture(scope="module")
def front(broker_bootstrap, tmp_path_factory) -> Iterator[FrontProcess]:
    with FrontProcess(broker_bootstrap, tmp_path_factory.mktemp("front"), options=OPTIONS) as process:
        yield process


def test_the_front_names_itself_and_the_settings_its_coordinators_run(front, broker_bootstrap):
    found = identify(front.address, timeout=bounded(10))
    assert found.kind == "front" and found.front is not None and found.front.startswith("zkconsumer")
    assert found.settings == {
        "group.initial.rebalance.delay.ms": "3000", "group.min.session.timeout.ms": "1000",
        "group.max.session.timeout.ms": "1800000", "group.consumer.session.timeout.ms": "10000",
        "group.consumer.min.session.timeout.ms": "10000", "group.consumer.max.session.timeout.ms": "60000",
        "group.consumer.heartbeat.interval.ms": "1000", "group.consumer.min.heartbeat.interval.ms": "1000",
        "group.consumer.max.heartbeat.interval.ms": "15000", "group.consumer.assignors": "uniform,range"}
    broker = identify(broker_bootstrap, timeout=bounded(10))
    assert (broker.kind, broker.front, broker.holds_topics, found.holds_topics) == ("broker", None, False, True)
    assert broker.cluster_id and broker.cluster_id == found.cluster_id  # the front relays the broker's cluster
    assert broker.settings == {}  # Tansu reports no group settings
    assert broker.name == f"the broker at {broker_bootstrap} (cluster {broker.cluster_id}; not this project's front)"
    assert found.name.startswith(f"the front at {front.address} (zkconsumer")


def test_a_front_relaying_the_group_apis_names_the_broker_s_coordinator(broker_bootstrap, tmp_path):
    with FrontProcess(broker_bootstrap, tmp_path / "relaying", options=("--group-coordinator", "broker")) as front:
        address = front.address
        found = identify(address, timeout=bounded(10))
    assert (found.kind, found.settings) == ("broker", {})
    assert found.front is not None and found.front.endswith(", group APIs relayed to the broker's coordinator")
    assert found.name.startswith(f"the broker's own coordinator, through the front at {address} (zkconsumer")


def test_keys_asked_by_name_are_the_only_ones_answered(front):
    asked = ("group.consumer.session.timeout.ms", FRONT_CONFIG)
    answer = exchange(front.address, DescribeConfigsRequest(resources=(DescribeConfigsResource(
        resource_type=i8(4), resource_name="0", configuration_keys=asked),), include_synonyms=False,
        include_documentation=False))
    (result,) = answer.results
    assert {c.name: (c.value, c.read_only, c.config_source) for c in result.configs} == {
        "group.consumer.session.timeout.ms": ("10000", True, 4),  # given: STATIC_BROKER_CONFIG
        FRONT_CONFIG: (identify(front.address).front, True, 4)}


def test_a_hold_that_is_not_a_count_is_refused_and_changes_nothing(front, topic_name):
    create_topic(front.address, topic_name, 3)
    with pytest.raises(TopicCommandError, match="must be a count of partitions of at least 1, not '0'"):
        show_partitions(front.address, topic_name, 0, timeout=bounded(10))
    assert len(fetch_metadata(admin_client(front.address), front.address).topics[topic_name].partitions) == 3


def _consume_partitions(consumers: dict[str, Consumer], wanted: set[int], seen: dict[str, set[int]],
                        timeout: float) -> None:
    """Poll every consumer until each has read a message of every partition in ``wanted`` (or the time is up)."""
    deadline = time.monotonic() + bounded(timeout)
    while time.monotonic() < deadline and any(not wanted <= seen[name] for name in consumers):
        for name, consumer in consumers.items():
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                seen[name].add(message.partition())
            elif message is not None and message.error().code() != KafkaError._PARTITION_EOF:
                raise AssertionError(message.error())


@pytest.mark.timeout(120)  # its waits: 40 s, 40 s
def test_a_held_topic_grows_for_classic_and_kip_848_groups(front, broker_bootstrap, topic_name):
    create_topic(front.address, topic_name, 4)  # at its final size
    show_partitions(front.address, topic_name, 2, timeout=bounded(10))
    assert len(fetch_metadata(admin_client(front.address), front.address).topics[topic_name].partitions) == 2
    assert len(fetch_metadata(admin_client(broker_bootstrap), broker_bootstrap).topics[topic_name].partitions) == 4
    for partition in range(4):  # at the broker: a producer of the front's metadata sees two partitions only
        produce(broker_bootstrap, topic_name, [f"m{partition}-{i}".encode() for i in range(3)], partition=partition)
    common = {"bootstrap.servers": front.address, "auto.offset.reset": "earliest", "enable.auto.commit": False,
              "topic.metadata.refresh.interval.ms": 1000}  # a classic member sees a topic grow at its next refresh
    consumers = {
        "cooperative-sticky": Consumer({**common, "group.id": f"held-c-{uuid.uuid4().hex[:6]}",
                                        "partition.assignment.strategy": "cooperative-sticky",
                                        "session.timeout.ms": 6000}),
        "consumer": Consumer({**common, "group.id": f"held-k-{uuid.uuid4().hex[:6]}", "group.protocol": "consumer"}),
    }
    seen: dict[str, set[int]] = {name: set() for name in consumers}
    try:
        for consumer in consumers.values():
            consumer.subscribe([topic_name])
        _consume_partitions(consumers, {0, 1}, seen, timeout=40)
        assert seen == {"cooperative-sticky": {0, 1}, "consumer": {0, 1}}  # nothing of the held partitions
        assert {name: {tp.partition for tp in c.assignment()} for name, c in consumers.items()} == {
            "cooperative-sticky": {0, 1}, "consumer": {0, 1}}
        show_partitions(front.address, topic_name, 4, timeout=bounded(10))
        _consume_partitions(consumers, {0, 1, 2, 3}, seen, timeout=40)
        assert seen == {"cooperative-sticky": {0, 1, 2, 3}, "consumer": {0, 1, 2, 3}}
        assert {name: {tp.partition for tp in c.assignment()} for name, c in consumers.items()} == {
            "cooperative-sticky": {0, 1, 2, 3}, "consumer": {0, 1, 2, 3}}
    finally:
        for consumer in consumers.values():
            consumer.close()
