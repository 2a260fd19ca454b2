"""The wait before legacy members start: a topic's partitions visible in ZooKeeper, where the members read them."""

from __future__ import annotations

import time

from kazoo.client import KazooClient

from zkconsumer.errors import ServerUnavailableError, ZnodeMissingError
from zkconsumer.zk import cluster


def wait_for_topic(zk: KazooClient, topic: str, partitions: int, timeout: float = 15.0) -> None:
    """Until ZooKeeper shows ``topic`` with at least ``partitions`` partitions; ServerUnavailableError after
    ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if len(cluster.read_topic(zk, topic).partitions) >= partitions:
                return
        except ZnodeMissingError:
            pass
        if time.monotonic() > deadline:
            raise ServerUnavailableError(
                f"topic {topic} did not show {partitions} partitions in ZooKeeper within {timeout:g} s")
        time.sleep(0.1)
