"""The session's servers for the plugin's fixtures: ZooKeeper and the broker, each from the first that applies.

ZooKeeper: ``--zkconsumer-zookeeper HOST:PORT`` (an ensemble of the user's, used as it is), else ``ZK_CONNECT``,
else a container through testcontainers when a Docker-compatible engine answers (Docker, or podman's API service
named by ``DOCKER_HOST``; ``ZKCONSUMER_NO_DOCKER`` rules it out), else a local server from an installed ZooKeeper
distribution (:mod:`zkconsumer.embedded.zookeeper`). The broker: ``--zkconsumer-bootstrap-server`` (an existing
cluster: its own group coordinator, no front), else ``KAFKA_BOOTSTRAP``, else the embedded Tansu broker with the
project's front before it (:mod:`zkconsumer.embedded.front`), whose coordinator runs the classic and KIP-848 groups.
Servers the session started stop when it ends, whatever ended it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from zkconsumer.embedded.front import BrokerAddresses, provide_addresses
from zkconsumer.embedded.zookeeper import provide_zookeeper
from zkconsumer.errors import ServerUnavailableError, ZkConsumerError
from zkconsumer.zk.client import require_chroot
from zkconsumer.zk.client import zookeeper as zookeeper_client


@contextlib.contextmanager
def zookeeper(workdir: Path, given: str | None = None) -> Iterator[str]:
    """A ZooKeeper connect string (see the module's docstring for the order)."""
    if given:
        try:  # as a client reaches it: a user's ensemble may answer no four-letter word but srvr (3.5.3 and later)
            with zookeeper_client(given, quiet=True) as client:
                require_chroot(client, given)
        except ZkConsumerError as error:
            raise ServerUnavailableError(f"--zkconsumer-zookeeper {given}: {error}") from None
        yield given
        return
    with provide_zookeeper(workdir) as connect:
        yield connect


@contextlib.contextmanager
def kafka(workdir: Path, given: str | None = None, group_coordinator: str = "front") -> Iterator[BrokerAddresses]:
    """The broker's addresses (see the module's docstring); ``group_coordinator`` as the front takes it: ``front``,
    its own coordinator, or ``broker``, relayed to the broker's."""
    if given:
        yield BrokerAddresses(given, given)
        return
    with provide_addresses(workdir, group_coordinator=group_coordinator) as addresses:
        yield addresses
