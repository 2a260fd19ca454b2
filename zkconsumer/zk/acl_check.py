"""Reading the ACLs of the znodes we are about to write under, to refuse at start rather than mid-rebalance.

ZooKeeper's digest scheme takes any password (it only hashes it into an identity), so wrong credentials show only
as ``NoAuth`` at the first write, which for a consumer is the middle of its first rebalance. The connector reads
the ACLs of the group's directories once, at construction, and :func:`zkconsumer.security.missing_permissions`
decides. Directories that do not exist yet are fine: we will create them, with our own ACL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kazoo.client import KazooClient
from kazoo.security import ACL

from zkconsumer.errors import AuthenticationError
from zkconsumer.security import Permissions, ZkAuth, missing_permissions
from zkconsumer.zk import paths
from zkconsumer.zk.reads import value_or_none

#: what a member does in each of its group's directories: registers and leaves (ids), claims and releases
#: (owners and each topic under it), creates and updates offsets (offsets and each topic under it)
CREATE_DELETE = Permissions.CREATE | Permissions.DELETE


def group_needs(zk: KazooClient, group: str) -> dict[str, int]:
    """The group's existing directories a member writes under, with the permissions it needs there (both listings
    in one round trip: every member pays this at construction, while the group's other members may keep the server
    and the process busy)."""
    dirs = paths.GroupDirs(group)
    needed = {dirs.group_dir: Permissions.CREATE, dirs.registry_dir: CREATE_DELETE,
              dirs.owners_dir: CREATE_DELETE, dirs.offsets_dir: Permissions.CREATE}
    listings = {(parent, mask): zk.get_children_async(parent)
                for parent, mask in ((dirs.owners_dir, CREATE_DELETE), (dirs.offsets_dir, Permissions.CREATE))}
    for (parent, mask), call in listings.items():
        for topic in value_or_none(call) or ():
            needed[f"{parent}/{topic}"] = mask
    return needed


def read_acls(zk: KazooClient, paths_: Sequence[str]) -> dict[str, list[ACL]]:
    """ACL of each path that exists, all asked in one round trip."""
    calls = {path: zk.get_acls_async(path) for path in paths_}
    return {path: got[0] for path, call in calls.items() if (got := value_or_none(call)) is not None}


def verify_group_writable(zk: KazooClient, group: str, auth: ZkAuth | None, connect: str) -> None:
    """Raise :class:`AuthenticationError` when the group's ACLs surely refuse a permission a member needs."""
    needed: Mapping[str, int] = group_needs(zk, group)
    problems = missing_permissions(read_acls(zk, list(needed)), needed, auth.identity if auth else None)
    if problems:
        who = f"the identity of zookeeper.auth ({auth.describe()})" if auth else "a session without zookeeper.auth"
        raise AuthenticationError(
            f"ZooKeeper at {connect}: {who} may not write group {group}'s znodes ({'; '.join(problems[:3])}"
            f"{'; ...' if len(problems) > 3 else ''}): wrong credentials, or the group belongs to another identity"
        )
