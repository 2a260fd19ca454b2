"""Creating and growing topics through the broker's admin API (the bridge then mirrors them into ZooKeeper)."""

from __future__ import annotations

import time

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import NewPartitions, NewTopic

from zkconsumer.errors import ServerUnavailableError, UsageError, ZkConsumerError
from zkconsumer.kafka.metadata import admin_client, fetch_metadata
from zkconsumer.kafka.topic_names import validate_topic_name

#: the topic config that tells the front (:mod:`~zkconsumer.front.proxy`) to show a topic's first N partitions
#: only, set with IncrementalAlterConfigs: partition growth played on a broker without CreatePartitions. Not Kafka's: a
#: Kafka broker refuses it
SHOWN_PARTITIONS_CONFIG = "zkconsumer.front.partitions.shown"
#: the broker config the front adds to its DescribeConfigs answer, naming itself; no Kafka broker has it
FRONT_CONFIG = "zkconsumer.front"


class TopicCommandError(ZkConsumerError):
    pass


def validate(name: str, partitions: int) -> None:
    validate_topic_name(name)
    if partitions < 1:
        raise UsageError(f"--partitions must be at least 1, got {partitions}")


def _result(future, bootstrap: str, timeout: float) -> None:
    try:
        future.result(timeout=timeout)
    except KafkaException as exc:
        error: KafkaError = exc.args[0]
        if error.code() == KafkaError._UNSUPPORTED_FEATURE:
            raise TopicCommandError(
                f"the broker at {bootstrap} does not support this request ({error.str()}); Tansu, the embedded "
                f"broker, does not implement CreatePartitions: create the topic with the partitions it needs"
            ) from None
        if error.code() in (KafkaError._TRANSPORT, KafkaError._TIMED_OUT, KafkaError._ALL_BROKERS_DOWN):
            raise ServerUnavailableError(f"no broker answered at {bootstrap}: {error.str()}") from None
        raise TopicCommandError(error.str()) from None
    except TimeoutError:
        raise ServerUnavailableError(f"no broker answered at {bootstrap} within {timeout:g} s") from None


def _wait_for_partitions(admin, bootstrap: str, name: str, partitions: int, timeout: float) -> None:
    """The admin answer can precede the metadata; return once the metadata shows the new count."""
    deadline = time.monotonic() + timeout
    while True:
        topic = fetch_metadata(admin, bootstrap, timeout).topics.get(name)
        if topic is not None and len(topic.partitions) >= partitions:
            return
        if time.monotonic() > deadline:
            shown = "no such topic" if topic is None else f"{len(topic.partitions)} partitions"
            raise TopicCommandError(
                f"the broker at {bootstrap} accepted the request for topic {name!r}, but its metadata still "
                f"shows {shown} after {timeout:g} s, not {partitions}"
            )
        time.sleep(0.1)


def create_topic(
    bootstrap: str, name: str, partitions: int, replication_factor: int = 1, timeout: float = 10.0,
    if_not_exists: bool = False,
) -> bool:
    """Create ``name``; with ``if_not_exists`` a topic of that name already there is left as it is (kafka-topics.sh's
    ``--if-not-exists``). True if this call created it."""
    validate(name, partitions)
    admin = admin_client(bootstrap)
    existing = fetch_metadata(admin, bootstrap, timeout).topics  # a clear error when nothing answers
    if if_not_exists and name in existing:
        return False
    futures = admin.create_topics([NewTopic(name, partitions, replication_factor)], operation_timeout=timeout)
    _result(futures[name], bootstrap, timeout)
    _wait_for_partitions(admin, bootstrap, name, partitions, timeout)
    return True


def alter_partitions(bootstrap: str, name: str, partitions: int, timeout: float = 10.0) -> None:
    validate(name, partitions)
    admin = admin_client(bootstrap)
    current = fetch_metadata(admin, bootstrap, timeout).topics.get(name)
    if current is None:
        raise TopicCommandError(f"topic {name!r} does not exist at {bootstrap}")
    if partitions <= len(current.partitions):
        raise UsageError(
            f"topic {name!r} has {len(current.partitions)} partitions; Kafka can only add partitions, "
            f"so --partitions must be more than that"
        )
    futures = admin.create_partitions([NewPartitions(name, partitions)], operation_timeout=timeout)
    _result(futures[name], bootstrap, timeout)
    _wait_for_partitions(admin, bootstrap, name, partitions, timeout)


def show_partitions(bootstrap: str, name: str, partitions: int | None, timeout: float = 10.0) -> None:
    """Have the front at ``bootstrap`` show the first ``partitions`` of topic ``name`` (``None``: all of them), and
    wait until its metadata does: ``name`` created at its final size and held smaller, then grown, where the broker
    cannot add partitions (:data:`SHOWN_PARTITIONS_CONFIG`). A broker that is not the front refuses it
    (:class:`TopicCommandError`).

    :raises TopicCommandError:
    :raises ServerUnavailableError:
    """
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    admin = admin_client(bootstrap)
    operation = AlterConfigOpType.DELETE if partitions is None else AlterConfigOpType.SET
    entry = ConfigEntry(SHOWN_PARTITIONS_CONFIG, None if partitions is None else str(partitions),
                        incremental_operation=operation)
    futures = admin.incremental_alter_configs([ConfigResource(ResourceType.TOPIC, name, incremental_configs=[entry])],
                                              request_timeout=timeout)
    _result(next(iter(futures.values())), bootstrap, timeout)
    deadline = time.monotonic() + timeout
    while True:
        topic = fetch_metadata(admin, bootstrap, timeout).topics.get(name)
        if topic is not None and (partitions is None or len(topic.partitions) == partitions):
            return
        if time.monotonic() > deadline:
            raise TopicCommandError(f"the front at {bootstrap} took the hold of topic {name!r}, but its metadata "
                                    f"does not show {partitions} partitions after {timeout:g} s")
        time.sleep(0.1)
