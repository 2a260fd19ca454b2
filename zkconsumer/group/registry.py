"""Which consumer groups ZooKeeper holds (``/consumers/<group>``) and who is live in one of them.

The operator tools start here: a group exists when its directory does (Kafka never deletes it, so a group whose
members all left still exists, with its offsets); its live members are the ephemeral children of ``ids``.
"""

from __future__ import annotations

from kazoo.client import KazooClient

from zkconsumer.errors import ZkConsumerError
from zkconsumer.zk import paths
from zkconsumer.zk.reads import children


class GroupNotFoundError(ZkConsumerError):
    """The group has no directory under ``/consumers``."""

    def __init__(self, group: str) -> None:
        self.group = group
        super().__init__(f"consumer group {group!r} does not exist (no znode {paths.GroupDirs(group).group_dir})")


def list_groups(zk: KazooClient) -> list[str]:
    """Children of ``/consumers``, sorted; none when the directory itself is missing."""
    return children(zk, paths.CONSUMERS_PATH)


def require_group(zk: KazooClient, group: str) -> None:
    if not group or "/" in group or zk.exists(paths.GroupDirs(group).group_dir) is None:
        raise GroupNotFoundError(group)


def live_members(zk: KazooClient, group: str) -> list[str]:
    """The consumer ids registered in ``/consumers/<group>/ids``, sorted (none if the directory is missing)."""
    return children(zk, paths.GroupDirs(group).registry_dir)
