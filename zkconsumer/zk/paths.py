"""The ZooKeeper layout Kafka's ZooKeeper-mode brokers, controller and legacy consumer share.

Pure string functions (Kafka's ``ZkUtils`` path helpers, ``ZKGroupDirs`` and ``ZKGroupTopicDirs``), so that
every module, test and tool builds a path the same way and nothing hand-concatenates one.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

CONSUMERS_PATH = "/consumers"
BROKERS_PATH = "/brokers"
BROKER_IDS_PATH = "/brokers/ids"
BROKER_TOPICS_PATH = "/brokers/topics"
CONTROLLER_PATH = "/controller"
CONTROLLER_EPOCH_PATH = "/controller_epoch"
TOPIC_CONFIG_PATH = "/config/topics"
CLIENT_CONFIG_PATH = "/config/clients"
CONFIG_CHANGES_PATH = "/config/changes"
DELETE_TOPICS_PATH = "/admin/delete_topics"
BROKER_SEQUENCE_ID_PATH = "/brokers/seqid"
ISR_CHANGE_NOTIFICATION_PATH = "/isr_change_notification"

#: Kafka 0.10's ``ZkUtils.persistentZkPaths``: what every broker makes sure exists when it starts, so that clients
#: may assume them (kafka-node's consumer registers under ``/consumers`` without creating it).
BROKER_PERSISTENT_PATHS = (
    CONSUMERS_PATH,
    BROKER_IDS_PATH,
    BROKER_TOPICS_PATH,
    CONFIG_CHANGES_PATH,
    TOPIC_CONFIG_PATH,
    CLIENT_CONFIG_PATH,
    DELETE_TOPICS_PATH,
    BROKER_SEQUENCE_ID_PATH,
    ISR_CHANGE_NOTIFICATION_PATH,
)


def broker_path(broker_id: int) -> str:
    return f"{BROKER_IDS_PATH}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{BROKER_TOPICS_PATH}/{topic}"


def topic_partitions_path(topic: str) -> str:
    return f"{topic_path(topic)}/partitions"


def partition_path(topic: str, partition: int) -> str:
    return f"{topic_partitions_path(topic)}/{partition}"


def partition_state_path(topic: str, partition: int) -> str:
    return f"{partition_path(topic, partition)}/state"


def topic_config_path(topic: str) -> str:
    return f"{TOPIC_CONFIG_PATH}/{topic}"


@dataclass(frozen=True)
class GroupDirs:
    """Kafka's ``ZKGroupDirs``: the directories of one consumer group."""

    group: str

    @property
    def group_dir(self) -> str:
        return f"{CONSUMERS_PATH}/{self.group}"

    @property
    def registry_dir(self) -> str:
        return f"{self.group_dir}/ids"

    @property
    def offsets_dir(self) -> str:
        return f"{self.group_dir}/offsets"

    @property
    def owners_dir(self) -> str:
        return f"{self.group_dir}/owners"

    def consumer_path(self, consumer_id: str) -> str:
        return f"{self.registry_dir}/{consumer_id}"

    def topic_dirs(self, topic: str) -> GroupTopicDirs:
        return GroupTopicDirs(self.group, topic)


@dataclass(frozen=True)
class GroupTopicDirs(GroupDirs):
    """Kafka's ``ZKGroupTopicDirs``: a group's offset and owner directories for one topic."""

    topic: str = ""

    @property
    def offset_dir(self) -> str:
        return f"{self.offsets_dir}/{self.topic}"

    @property
    def owner_dir(self) -> str:
        return f"{self.owners_dir}/{self.topic}"

    def offset_path(self, partition: int) -> str:
        return f"{self.offset_dir}/{partition}"

    def owner_path(self, partition: int) -> str:
        return f"{self.owner_dir}/{partition}"


@functools.lru_cache(maxsize=1024)
def partition_paths(group: str, topic: str) -> tuple[str, str]:
    """The offset and owner directories of ``group``'s ``topic``, made once: a rebalance builds the paths of thousands
    of partitions, and a :class:`GroupTopicDirs` made for each (four strings put together) costs three times the
    path itself."""
    dirs = GroupTopicDirs(group, topic)
    return dirs.offset_dir, dirs.owner_dir


def offset_path(group: str, topic: str, partition: int) -> str:
    """``GroupTopicDirs(group, topic).offset_path(partition)``, for one of many partitions."""
    return f"{partition_paths(group, topic)[0]}/{partition}"


def owner_path(group: str, topic: str, partition: int) -> str:
    """``GroupTopicDirs(group, topic).owner_path(partition)``, for one of many partitions."""
    return f"{partition_paths(group, topic)[1]}/{partition}"
