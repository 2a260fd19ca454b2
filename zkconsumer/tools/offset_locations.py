"""Where each group's committed offsets live: ZooKeeper (offset znodes), Kafka (``__consumer_offsets``), both (a
group migrating with dual commit, or one migrated whose znodes were left behind), or none.

``groups list --bootstrap-server`` shows it beside each group, so that an operator sees which groups still commit
to ZooKeeper before turning dual commit off, and which ones can be moved to the Java consumer. One OffsetFetch per
group (for all its partitions) and a listing of its offset znodes, all pipelined.
"""

from __future__ import annotations

from collections.abc import Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.kafka.group_offsets import GroupOffsetsClient
from zkconsumer.zk import paths

ZOOKEEPER, KAFKA, BOTH, NONE = "zookeeper", "kafka", "both", "none"


def location(in_zookeeper: bool, in_kafka: bool) -> str:
    if in_zookeeper and in_kafka:
        return BOTH
    return ZOOKEEPER if in_zookeeper else KAFKA if in_kafka else NONE


def zookeeper_has_offsets(zk: KazooClient, groups: Sequence[str]) -> dict[str, bool]:
    """Whether each group has at least one offset znode (``/consumers/<g>/offsets/<t>/<p>``)."""
    topic_lists = {g: zk.get_children_async(paths.GroupDirs(g).offsets_dir) for g in groups}
    partition_lists: dict[str, list] = {g: [] for g in groups}
    for group, call in topic_lists.items():
        try:
            topics = call.get()
        except NoNodeError:
            continue
        partition_lists[group] = [zk.get_children_async(paths.GroupTopicDirs(group, t).offset_dir) for t in topics]
    found = {}
    for group, calls in partition_lists.items():
        found[group] = False
        for call in calls:
            try:
                if call.get():
                    found[group] = True
            except NoNodeError:
                continue
    return found


def offset_locations(zk: KazooClient, bootstrap: str, groups: Sequence[str], timeout: float = 10.0) -> dict[str, str]:
    """``zookeeper``, ``kafka``, ``both`` or ``none`` for each group; Kafka not answering is an error."""
    in_zookeeper = zookeeper_has_offsets(zk, groups)
    client = GroupOffsetsClient(bootstrap, timeout)
    result = {}
    for group in groups:
        answer = client.fetch(group)
        in_kafka = any(offset >= 0 for offset in answer.offsets.values())
        result[group] = location(in_zookeeper[group], in_kafka)
    return result
