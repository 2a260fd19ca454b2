"""Persistent parent znodes as Kafka's ZooKeeper clients left them: null data, or empty bytes above a registration.

Kafka created most parent directories through ZkClient's ``createPersistent(path, createParents = true)``, which
sends null data (length -1 on the wire, no bytes at all); a reader of such a node gets null back, and tools
written against Kafka's layout (kafka-node, kafka-manager, zkCli) see exactly that. kazoo's ``ensure_path`` and
``create(makepath=True)`` write empty bytes instead, which reads back as ``b""``. Every parent this package
creates goes through :func:`ensure_path` (or :func:`create_with_parents`, or a :class:`~zkconsumer.zk.
batched_transaction.Create` without data in a multi-op), so ZooKeeper holds what a Kafka cluster would have left.
The exception is Kafka's own: the parents of an ephemeral registration made by ``ZKCheckedEphemeral`` (0.9+:
``/consumers/<group>`` and ``/consumers/<group>/ids`` when a member registers first) are created with an empty byte
array, as Kafka 0.10.0.1's console consumer leaves them (``createRecursive``; tests/consumer/
test_original_consumer.py reads both); ``parent_data=b""`` asks for that.
Znodes with content (registrations, offsets, topic JSON) are written by their owners as before.

:func:`ensure_broker_paths` is a ZooKeeper-mode broker's first act at start-up (``ZkUtils.setupCommonPaths``):
the persistent paths other clients expect to find, ``/consumers`` among them.
"""

from __future__ import annotations

import contextlib
import posixpath
from collections.abc import Sequence
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from zkconsumer.security import shared_acl
from zkconsumer.zk import paths


def ensure_path(zk: KazooClient, path: str, acl: Sequence[Any] | None = None, data: bytes | None = None) -> None:
    """Create ``path`` and every missing ancestor as persistent znodes with ``data`` (null by default); existing ones
    are left as they are (a node another client creates meanwhile is no error). ``acl`` applies to each node created
    (the client's default ACL when ``None``), as ZkClient gave the parents the ACL of the path asked for."""
    if path in ("", "/") or zk.exists(path) is not None:
        return
    ensure_path(zk, posixpath.dirname(path), acl, data)
    with contextlib.suppress(NodeExistsError):
        zk.create(path, data, acl=acl)


def create_with_parents(zk: KazooClient, path: str, value: bytes, ephemeral: bool = False,
                        acl: Sequence[Any] | None = None, parent_data: bytes | None = None) -> str:
    """``zk.create(path, value)``, first creating the missing parents (with ``parent_data``, null by default) when
    there are any."""
    try:
        return zk.create(path, value, acl=acl, ephemeral=ephemeral)
    except NoNodeError:
        ensure_path(zk, posixpath.dirname(path), acl, parent_data)
        return zk.create(path, value, acl=acl, ephemeral=ephemeral)


def ensure_broker_paths(zk: KazooClient) -> list[str]:
    """Create what of :data:`~zkconsumer.zk.paths.BROKER_PERSISTENT_PATHS` is missing, as a broker does when it
    starts; the paths created, in order. ``/consumers`` is open to everyone (every group creates its directory
    under it), the others get the client's default ACL, as Kafka's ``makeSurePersistentPathExists`` gave them."""
    created = []
    for path in paths.BROKER_PERSISTENT_PATHS:
        if zk.exists(path) is None:
            ensure_path(zk, path, shared_acl() if path == paths.CONSUMERS_PATH else None)
            created.append(path)
    return created


def delete_tree(zk: KazooClient, root: str) -> None:
    """Delete ``root`` and everything under it in few round trips: kazoo's recursive delete sends one request per
    znode, which for a 20,000-znode group takes half a minute. Children are listed a level at a time with every
    request in flight, then deleted deepest first in multi-ops under ZooKeeper's request limit; should something
    change meanwhile, kazoo's recursive delete finishes the job."""
    from zkconsumer.zk import batched_transaction as batched

    levels: list[list[str]] = [[root]]
    while levels[-1]:
        calls = [(path, zk.get_children_async(path)) for path in levels[-1]]
        below: list[str] = []
        for path, call in calls:
            try:
                below += [f"{path.rstrip('/')}/{child}" for child in call.get()]
            except NoNodeError:
                continue
        levels.append(below)
    ops = [batched.Delete(path) for level in reversed(levels) for path in level]
    for batch in batched.plan_for(zk, ops, batched.DEFAULT_MULTI_MAX_BYTES):
        if batched.failed(batched.commit_async(zk, batch).get()):
            zk.delete(root, recursive=True)
            return
