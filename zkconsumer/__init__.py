"""zkconsumer: Kafka's legacy ZooKeeper-coordinated high-level consumer, reimplemented in Python.

The public API mirrors the legacy roles (``Consumer.create``, ``createMessageStreams``...) in snake_case.
"""

from zkconsumer.assignors.model import TopicPartition
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
from zkconsumer.group.topic_count import Blacklist, ConsumerThreadId, Whitelist

__version__ = "0.1.0"

__all__ = [
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
