"""Kafka's ``VerifyConsumerRebalance``: after a rebalance, is every partition owned by a current thread of the group?

For every topic the group's members subscribe to (wildcards expanded against ``/brokers/topics`` with internal
topics included, as the tool did) and each of its partitions, the owner znode must exist and hold one of the
thread ids the members have for that topic. Problems are phrased as the tool logged them:

* ``No owners for any partitions for topic T``
* ``No owner for partition [T,P]``
* ``Owner X for partition [T,P] is not a valid member of consumer group G``

and a member registration or topic znode that cannot be parsed is a problem too (``Malformed znode PATH: ...``):
the tool would have failed on it. Unlike the tool, a missing owner is reported once, not twice, and a subscribed
topic that does not exist (no partitions to own) is not a failure.

``check_ownership`` is the pure rule; ``verify_rebalance`` reads the group and applies it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from zkconsumer.group.registry import require_group
from zkconsumer.group.snapshot import read_group_snapshot
from zkconsumer.zk import paths
from zkconsumer.zk.reads import children

SUCCESS = "Rebalance operation successful !"
FAILURE = "Rebalance operation failed !"


@dataclass(frozen=True)
class RebalanceCheck:
    group: str
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def verdict(self) -> str:
        return SUCCESS if self.ok else FAILURE


def check_ownership(group: str, threads: Mapping[str, Sequence[str]], partitions: Mapping[str, Sequence[int]],
                    owners: Mapping[str, Mapping[int, str]]) -> list[str]:
    """Problems with ``owners`` (topic -> partition -> owner znode data) given each subscribed topic's thread ids
    (``threads``) and partitions; topics in order, partitions ascending."""
    problems = []
    for topic in sorted(threads):
        topic_partitions = sorted(partitions.get(topic, ()))
        if not topic_partitions:
            continue
        topic_owners = owners.get(topic, {})
        if not topic_owners:
            problems.append(f"No owners for any partitions for topic {topic}")
        valid = set(threads[topic])
        for partition in topic_partitions:
            owner = topic_owners.get(partition)
            if not owner:
                problems.append(f"No owner for partition [{topic},{partition}]")
            elif owner not in valid:
                problems.append(
                    f"Owner {owner} for partition [{topic},{partition}] is not a valid member of consumer group {group}"
                )
    return problems


def verify_rebalance(zk: KazooClient, group: str) -> RebalanceCheck:
    """Read the group and check its ownership; raises GroupNotFoundError for a group ZooKeeper does not have."""
    require_group(zk, group)
    snapshot = read_group_snapshot(zk, group, exclude_internal=False)
    threads: dict[str, list[str]] = {}
    for member in snapshot.members.values():
        for topic, ids in member.thread_ids_per_topic(list(snapshot.topics), exclude_internal=False).items():
            threads.setdefault(topic, []).extend(ids)
    owners = {topic: read_owners(zk, group, topic) for topic in sorted(threads)}
    problems = [f"Malformed znode {m.path}: {m.problem}" for m in snapshot.malformed]
    problems += check_ownership(group, threads, snapshot.partitions, owners)
    return RebalanceCheck(group, tuple(problems))


def read_owners(zk: KazooClient, group: str, topic: str) -> dict[int, str]:
    """Partition -> owner znode data for one topic of the group (children that are not partition ids ignored)."""
    dirs = paths.GroupTopicDirs(group, topic)
    calls = {int(c): zk.get_async(dirs.owner_path(int(c))) for c in children(zk, dirs.owner_dir) if c.isdigit()}
    owners = {}
    for partition, call in sorted(calls.items()):
        try:
            owners[partition] = (call.get()[0] or b"").decode("utf-8", "replace")
        except NoNodeError:
            continue
    return owners
