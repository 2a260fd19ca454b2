"""A consumer group as ZooKeeper holds it: its members' subscriptions and the partitions of their topics.

This is the edge the rebalance (and the operator tools) read the group through; it reads with async calls,
so a group of hundreds of members costs one round trip per kind of znode rather than one per member. A znode
another tool wrote badly never fails the read: the member or topic is left out and listed in ``malformed``,
so the caller can report it by path and carry on, as the group's other members do.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from kazoo.client import KazooClient

from zkconsumer.errors import ZnodeFormatError
from zkconsumer.group.topic_count import TopicCount, parse_registration
from zkconsumer.zk import paths
from zkconsumer.zk.cluster import parse_topic
from zkconsumer.zk.reads import children, value_or_none


@dataclass(frozen=True, slots=True)
class MalformedZnode:
    path: str
    problem: str


@dataclass(frozen=True)
class GroupSnapshot:
    """One reading of the group: what every consumer of the group computes its share from."""

    group: str
    members: Mapping[str, TopicCount]  # consumer id -> subscription, ids in string order
    topics: tuple[str, ...]  # children of /brokers/topics, for expanding wildcard subscriptions
    partitions: Mapping[str, tuple[int, ...]]  # every subscribed topic -> partition ids ascending (none if absent)
    malformed: tuple[MalformedZnode, ...] = field(default=())

    def streams_per_member(self, exclude_internal: bool) -> dict[str, dict[str, int]]:
        """Each member's topic -> stream count, wildcards expanded against this snapshot's topic list."""
        return {cid: tc.streams_per_topic(list(self.topics), exclude_internal) for cid, tc in self.members.items()}


def read_group_snapshot(zk: KazooClient, group: str, exclude_internal: bool = True,
                        extra_topics: Iterable[str] = ()) -> GroupSnapshot:
    """The group's members and the partitions of their topics and of ``extra_topics``. The topics known beforehand
    (``extra_topics``: a member's own static subscription) are asked for with the members' listing, so that a
    rebalance reads its group in two round trips rather than three."""
    dirs = paths.GroupDirs(group)
    malformed: list[MalformedZnode] = []
    wanted = set(extra_topics)
    early = {t: zk.get_async(paths.topic_path(t)) for t in sorted(wanted)}
    ids = children(zk, dirs.registry_dir)
    pending = {cid: zk.get_async(dirs.consumer_path(cid)) for cid in ids}
    topics_call = zk.get_children_async(paths.BROKER_TOPICS_PATH)
    members: dict[str, TopicCount] = {}
    for cid, call in pending.items():
        got = value_or_none(call)
        if got is None:
            continue  # left the group while we read it
        try:
            members[cid] = parse_registration(cid, got[0], dirs.consumer_path(cid))
        except ZnodeFormatError as exc:
            malformed.append(MalformedZnode(exc.path, exc.problem))
    all_topics = tuple(sorted(value_or_none(topics_call) or []))
    for tc in members.values():
        wanted.update(tc.streams_per_topic(list(all_topics), exclude_internal))
    partitions, bad = read_partitions(zk, sorted(wanted), early)
    malformed.extend(bad)
    return GroupSnapshot(group, MappingProxyType(members), all_topics, MappingProxyType(partitions), tuple(malformed))


def read_partitions(zk: KazooClient, topics: list[str], sent: Mapping[str, Any] | None = None,
                    ) -> tuple[dict[str, tuple[int, ...]], list[MalformedZnode]]:
    """``getPartitionsForTopics``: a missing topic has no partitions; so has a malformed one, reported. ``sent``:
    topic -> the async read of its znode, for those already asked for."""
    sent = sent or {}
    calls = {t: sent[t] if t in sent else zk.get_async(paths.topic_path(t)) for t in topics}
    partitions: dict[str, tuple[int, ...]] = {}
    malformed: list[MalformedZnode] = []
    for topic, call in calls.items():
        got = value_or_none(call)
        if got is None:
            partitions[topic] = ()
            continue
        try:
            partitions[topic] = _partition_ids(topic, got[0])
        except ZnodeFormatError as exc:
            malformed.append(MalformedZnode(exc.path, exc.problem))
            partitions[topic] = ()
    return partitions, malformed


#: the last content read of each topic znode and its partition ids: one entry a topic, however many topics a
#: wildcard subscription follows (a fixed-size cache thrashes past its size; this one holds what the process read)
_PARSED: dict[str, tuple[bytes | None, tuple[int, ...]]] = {}


def _partition_ids(topic: str, data: bytes | None) -> tuple[int, ...]:
    """A topic znode's partition ids, parsed once per content (a malformed one is not kept, and raises each time):
    every attempt of a rebalance reads the same bytes again, and checking the replica lists of 10,000 partitions
    takes some 16 ms."""
    known = _PARSED.get(topic)
    if known is not None and known[0] == data:
        return known[1]
    ids = tuple(parse_topic(topic, data).partitions)
    _PARSED[topic] = (data, ids)
    return ids
