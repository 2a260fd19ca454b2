"""A topic just created or grown through the broker, waited for in the ZooKeeper of a ``zkconsumer local``
environment: the legacy consumer reads topics there, so a ``consume`` run right after ``topics create`` or ``alter``
finds it (as after Kafka 0.10's ``kafka-topics.sh``, which wrote ZooKeeper itself) once the environment's metadata
bridge has written it. Another broker's ZooKeeper is not ours to wait on."""

from __future__ import annotations

from pathlib import Path

from kazoo.exceptions import KazooException

from zkconsumer.embedded.environment import LocalEnvironment
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.zk.client import zookeeper
from zkconsumer.zk.cluster import wait_for_topic

BRIDGE_WAIT_S = 15.0
"""How long ``topics create`` and ``alter`` wait for the bridge to write a topic into ZooKeeper."""


def wait_until_bridged(run_dir: Path | str | None, bootstrap: str, name: str, partitions: int,
                       timeout: float = BRIDGE_WAIT_S) -> str | None:
    """Return once the environment's bridge has written topic ``name`` with ``partitions`` into its ZooKeeper, when
    ``bootstrap`` is that environment's broker (or front); a warning, one line, when it has not within ``timeout``
    or ZooKeeper did not answer: the topic is there at the broker either way."""
    running = LocalEnvironment(run_dir).endpoints()
    if running is None or bootstrap not in (running["bootstrap_servers"], running["broker"]):
        return None
    address = running["zookeeper"]
    try:
        with zookeeper(address, quiet=True) as zk:
            try:
                wait_for_topic(zk, name, partitions, timeout=timeout)
            except ServerUnavailableError:
                return (f"the broker has topic {name}, but the metadata bridge has not written it into ZooKeeper at "
                        f"{address} within {timeout:g} s: a legacy consumer sees it once it has")
    except (ServerUnavailableError, KazooException) as e:
        return (f"the broker has topic {name}, but ZooKeeper at {address} did not answer ({type(e).__name__}): a "
                f"legacy consumer sees it once the bridge has written it there")
    return None
