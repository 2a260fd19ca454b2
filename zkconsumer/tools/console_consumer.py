"""The console consumer (``kafka-console-consumer.sh --zookeeper``) as a group member: the checks before it joins,
its streams, and the loop that prints what they hand out (``zkconsumer consume``, :mod:`zkconsumer.cli.consume`, runs
them and stops them on a signal).

The loop prints each message the moment a stream hands it out: a stream advances its consumed offset then, so what is
committed is exactly what was printed, and a stop ends the loop between two messages, never halfway through one.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from kazoo.exceptions import NotEmptyError

from zkconsumer.config import ConsumerConfig
from zkconsumer.consumer.consumer_iterator import MessageAndMetadata
from zkconsumer.consumer.kafka_stream import KafkaStream
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.errors import ConsumerTimeoutException, ZkConsumerError
from zkconsumer.group.topic_count import Blacklist, Whitelist, parse_topic_streams
from zkconsumer.zk import paths
from zkconsumer.zk.client import require_chroot, zookeeper


@dataclass(frozen=True)
class Subscription:
    """What to read: ``topic`` (``TOPIC[:STREAMS]``), or every topic ``whitelist`` matches, or every one
    ``blacklist`` does not, with ``streams`` streams."""

    topic: str | None = None
    whitelist: str | None = None
    blacklist: str | None = None
    streams: int = 1


def streams(connector: ZookeeperConsumerConnector, subscription: Subscription) -> list[KafkaStream]:
    """Join the group with the subscription's streams."""
    if subscription.topic:
        topic, count = parse_topic_streams(subscription.topic)
        return connector.create_message_streams({topic: count})[topic]
    topic_filter = (Whitelist(subscription.whitelist) if subscription.whitelist
                    else Blacklist(subscription.blacklist or ""))
    return connector.create_message_streams_by_filter(topic_filter, subscription.streams)


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("utf-8", errors="replace")


def render(message: MessageAndMetadata, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({"topic": message.topic, "partition": message.partition, "offset": message.offset,
                           "key": _text(message.raw_key), "value": _text(message.raw_message)})
    return _text(message.raw_message) or ""


class TopicNotFoundError(ZkConsumerError):
    pass


class PreviousOffsetsError(ZkConsumerError):
    pass


def check_start(config: ConsumerConfig, subscription: Subscription, from_beginning: bool,
                delete_offsets: bool) -> None:
    """Before the connector starts: a named topic must exist (only a filter waits for topics to appear; the old tool
    waited silently), and ``--from-beginning`` with a group that committed offsets is refused unless
    ``--delete-consumer-offsets`` deletes them first, as Kafka 0.10's console consumer did."""
    timeout = config.zookeeper_connection_timeout_ms / 1000
    with zookeeper(config.zookeeper_connect, timeout=timeout, quiet=True, auth=config.zookeeper_auth) as zk:
        require_chroot(zk, config.zookeeper_connect)
        if subscription.topic:
            topic = parse_topic_streams(subscription.topic)[0]
            if not zk.exists(paths.topic_path(topic)):
                raise TopicNotFoundError(
                    f"topic {topic!r} does not exist (no znode {paths.topic_path(topic)} at "
                    f"{config.zookeeper_connect}); create it first, or use --whitelist to wait for it")
        dirs = paths.GroupDirs(config.group_id)
        if delete_offsets:
            if zk.exists(dirs.registry_dir) and zk.get_children(dirs.registry_dir):
                raise PreviousOffsetsError(
                    f"group {config.group_id} has live members ({dirs.registry_dir}); --delete-consumer-offsets "
                    f"deletes nothing of a running group")
            try:
                if zk.exists(dirs.group_dir):
                    zk.delete(dirs.group_dir, recursive=True)
            except NotEmptyError:
                raise PreviousOffsetsError(
                    f"group {config.group_id} got a member while its directory was being deleted; start again "
                    f"once it has left") from None
        elif from_beginning and zk.exists(dirs.offsets_dir):
            raise PreviousOffsetsError(
                f"Found previous offset information for this group {config.group_id}. Please use "
                f"--delete-consumer-offsets to delete previous offsets metadata")


class Count:
    """Messages printed so far (read by the command once the loop has ended, however it ended)."""

    value = 0


def consume(connector: ZookeeperConsumerConnector, subscription: Subscription, emit: Callable[[str], None], fmt: str,
            max_messages: int | None, idle_ms: int | None, stop: threading.Event, processed: Count) -> None:
    """Join, then print messages until ``stop``, ``--max-messages`` or ``--timeout-ms``. A signal ends the loop between
    two messages, never halfway through printing one: a message the stream handed out is committed, so it must also
    have been printed and counted."""
    joined = streams(connector, subscription)
    # One thread takes from every stream in turn: a stream advances its consumed offset when it hands a message
    # out, so printing right there keeps the committed offset exactly at what was printed.
    idle_since = time.monotonic()
    while not stop.is_set() and (max_messages is None or processed.value < max_messages):
        got = False
        for stream in joined:
            try:
                message = next(iter(stream))
            except (ConsumerTimeoutException, StopIteration):
                continue
            emit(render(message, fmt))
            processed.value += 1
            got = True
            if stop.is_set() or (max_messages is not None and processed.value >= max_messages):
                break
        if got:
            idle_since = time.monotonic()
        elif idle_ms is not None and (time.monotonic() - idle_since) * 1000 >= idle_ms:
            break
