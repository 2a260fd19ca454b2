"""Creating an ephemeral znode that must be ours: Kafka 0.9+'s ``ZKCheckedEphemeral``, plus waiting out stale nodes.

Two situations a registration must survive (a connection lost mid-create, a fast restart):

* after a connection loss, a retried create meets the node the first try already made (KAFKA-1387). A node whose
  ``ephemeralOwner`` is our session is that node, and the create has succeeded.
* after a fast restart with a fixed ``consumer.id``, the previous process's node lingers until its session
  expires. Kafka 0.10 failed outright and 0.8 slept a whole session timeout per try; here we watch the node and
  create ours the moment it goes, giving up (with an error naming the node and its owner) only after ``wait_s``.
"""

from __future__ import annotations

import threading
import time

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError

from zkconsumer.errors import ZkConsumerError
from zkconsumer.zk.client import session_id
from zkconsumer.zk.persistent import create_with_parents


class NodeHeldElsewhereError(ZkConsumerError):
    """The znode exists and belongs to another ZooKeeper session."""

    def __init__(self, path: str, owner_session: int, waited_s: float) -> None:
        self.path = path
        self.owner_session = owner_session
        super().__init__(
            f"znode {path} is held by ZooKeeper session {owner_session:#x} (another process, or a previous run with "
            f"the same consumer.id) and did not go away within {waited_s:g} s"
        )


def create_checked_ephemeral(zk: KazooClient, path: str, data: bytes, wait_s: float = 0.0,
                             on_wait=None) -> bool:
    """Create ``path`` (missing parents persistent, with empty data) as our ephemeral node; ``True`` if it was
    already ours.

    ``on_wait(owner_session)`` is called once if we have to wait for another session's node to disappear.
    """
    deadline = time.monotonic() + wait_s
    warned = False
    while True:
        try:
            # Kafka's createRecursive made the missing parents with an empty byte array, not ZkClient's null
            create_with_parents(zk, path, data, ephemeral=True, parent_data=b"")
            return False
        except NodeExistsError:
            pass
        gone = threading.Event()
        stat = zk.exists(path, watch=lambda event, gone=gone: gone.set())
        if stat is None:
            continue  # vanished between the create and the check
        if stat.ephemeralOwner == session_id(zk):
            current, _ = zk.get(path)
            if current != data:
                zk.set(path, data, version=stat.version)
            return True
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise NodeHeldElsewhereError(path, stat.ephemeralOwner, wait_s)
        if not warned and on_wait is not None:
            on_wait(stat.ephemeralOwner)
            warned = True
        gone.wait(remaining)
