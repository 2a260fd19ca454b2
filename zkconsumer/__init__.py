"""zkconsumer: Kafka's legacy ZooKeeper-coordinated high-level consumer, reimplemented in Python.

The public API mirrors the legacy roles (``Consumer.create``, ``createMessageStreams``...) in snake_case.

Its names are imported on first use (PEP 562): ``import zkconsumer`` costs nothing, so the pure parts (the
assignors, the trace tools) do not load kazoo and confluent-kafka that only the connector needs.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

#: public name -> the module that defines it
_EXPORTS = {
    "Blacklist": "zkconsumer.group.topic_count",
    "ConsumerConfig": "zkconsumer.config",
    "ConsumerRebalanceFailedException": "zkconsumer.errors",
    "ConsumerRebalanceListener": "zkconsumer.consumer.rebalance_listener",
    "ConsumerThreadId": "zkconsumer.types",
    "ConsumerTimeoutException": "zkconsumer.errors",
    "InvalidConfigError": "zkconsumer.config",
    "KafkaStream": "zkconsumer.consumer.kafka_stream",
    "MessageAndMetadata": "zkconsumer.consumer.consumer_iterator",
    "MessageSizeTooLargeException": "zkconsumer.errors",
    "MessageStreamsExistException": "zkconsumer.errors",
    "TopicPartition": "zkconsumer.types",
    "Whitelist": "zkconsumer.group.topic_count",
    "ZookeeperConsumerConnector": "zkconsumer.consumer.zookeeper_consumer_connector",
    "create_connector": "zkconsumer.consumer.zookeeper_consumer_connector",
}

__all__ = [  # the names of _EXPORTS (a test keeps the two equal)
    "Blacklist",
    "ConsumerConfig",
    "ConsumerRebalanceFailedException",
    "ConsumerRebalanceListener",
    "ConsumerThreadId",
    "ConsumerTimeoutException",
    "InvalidConfigError",
    "KafkaStream",
    "MessageAndMetadata",
    "MessageSizeTooLargeException",
    "MessageStreamsExistException",
    "TopicPartition",
    "Whitelist",
    "ZookeeperConsumerConnector",
    "create_connector",
]

if TYPE_CHECKING:  # what type checkers and editors see; at run time __getattr__ below does the importing
    from zkconsumer.config import ConsumerConfig, InvalidConfigError
    from zkconsumer.consumer.consumer_iterator import MessageAndMetadata
    from zkconsumer.consumer.kafka_stream import KafkaStream
    from zkconsumer.consumer.rebalance_listener import ConsumerRebalanceListener
    from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector, create_connector
    from zkconsumer.errors import (
        ConsumerRebalanceFailedException,
        ConsumerTimeoutException,
        MessageSizeTooLargeException,
        MessageStreamsExistException,
    )
    from zkconsumer.group.topic_count import Blacklist, Whitelist
    from zkconsumer.types import ConsumerThreadId, TopicPartition


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'zkconsumer' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
