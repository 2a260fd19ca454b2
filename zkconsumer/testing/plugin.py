"""The pytest plugin (entry point ``pytest11: zkconsumer``): options and fixtures for migration comparison tests.

Importing it imports pytest and the standard library only; a fixture imports what it needs when a test asks for it,
and nothing starts before then. Every server and process a fixture started is stopped when its scope ends, also when
a test fails or the run is interrupted (Ctrl-C ends the session through pytest's own teardown).

Session fixtures (one set per pytest-xdist worker; :mod:`zkconsumer.embedded.servers` provides them, as it provides
the comparison's and the demo's):

- ``zkconsumer_zookeeper``: the ZooKeeper connect string: ``--zkconsumer-zookeeper`` (a user's ensemble, checked as a
  client reaches it), else ``ZK_CONNECT``, else a container when a Docker-compatible engine answers (Docker, or
  podman's API service named by ``DOCKER_HOST``; ``ZKCONSUMER_NO_DOCKER`` rules it out), else a local server;
- ``zkconsumer_kafka``: the broker's addresses (``.bootstrap``, what clients are given: the front; ``.broker``: the
  broker itself): ``--zkconsumer-bootstrap-server`` (an existing cluster: its own coordinator, no front), else
  ``KAFKA_BOOTSTRAP`` (no front either), else the embedded Tansu broker with the project's front before it;
  ``zkconsumer_bootstrap``: ``zkconsumer_kafka.bootstrap``;
- ``zkconsumer_group_coordinator``: ``front`` (the front's own coordinators, classic and KIP-848) or ``broker``;
  override it to choose.

Per test, isolated from every other test and worker (a chroot, unique names):

- ``zkconsumer_names``: :class:`~zkconsumer.testing.helpers.Names` (``.topic()``, ``.group()``);
- ``zkconsumer_chroot``: a connect string with a fresh chroot, deleted after the test;
- ``zkconsumer_cluster``: that chroot mirroring the broker as a ZooKeeper-mode cluster (legacy members need it);
- ``zkconsumer_topics``: ``.create(partitions=1)`` returns a new topic's name, visible to legacy members;
- ``zkconsumer_produce``: ``produce(topic, values_or_count, keys=..., partition=..., rate=...)``;
- ``zkconsumer_group``: ``group(name)`` reads a legacy group's owners, offsets and members;
- ``zkconsumer_legacy_members``: ``.start(group, topic, in_process=True, handle=...)``; each left at the end;
- ``migration``: ``migration.compare(app=..., scenario=..., protocols=[...])`` (:mod:`zkconsumer.testing.migration`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from zkconsumer.embedded.front import BrokerAddresses
    from zkconsumer.testing.helpers import GroupState, LegacyMembers, Names, Sent, Topics
    from zkconsumer.testing.migration import Migration


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("zkconsumer", "zkconsumer: servers for migration comparison tests")
    group.addoption("--zkconsumer-zookeeper", default=None, metavar="HOST:PORT",
                    help="use this ZooKeeper instead of a container or a local server")
    group.addoption("--zkconsumer-bootstrap-server", default=None, metavar="HOST:PORT",
                    help="use this broker (an existing cluster, its own group coordinator) instead of the embedded one")


@pytest.fixture(scope="session")
def zkconsumer_zookeeper(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from zkconsumer.embedded.servers import SESSION, ServerOptions, zookeeper_server

    given = request.config.getoption("zkconsumer_zookeeper")
    options = ServerOptions(zookeeper=given, embedded=SESSION, workdir=tmp_path_factory.mktemp("servers"),
                            zookeeper_option="--zkconsumer-zookeeper")
    with zookeeper_server(options) as connect:
        yield connect


@pytest.fixture(scope="session")
def zkconsumer_group_coordinator() -> str:
    return "front"


@pytest.fixture(scope="session")
def zkconsumer_kafka(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                     zkconsumer_group_coordinator: str) -> Iterator[BrokerAddresses]:
    from zkconsumer.embedded.front import front_options
    from zkconsumer.embedded.servers import SESSION, ServerOptions, kafka_server

    given = request.config.getoption("zkconsumer_bootstrap_server")  # a user's cluster, its own coordinator
    options = ServerOptions(bootstrap=given, embedded=SESSION, workdir=tmp_path_factory.mktemp("servers"),
                            front=not given, front_options=front_options(zkconsumer_group_coordinator))
    with kafka_server(options) as addresses:
        yield addresses


@pytest.fixture(scope="session")
def zkconsumer_bootstrap(zkconsumer_kafka: BrokerAddresses) -> str:
    return zkconsumer_kafka.bootstrap


@pytest.fixture
def zkconsumer_names(request: pytest.FixtureRequest) -> Names:
    from zkconsumer.testing.helpers import Names

    return Names.for_test(request.node.name)


@pytest.fixture
def zkconsumer_chroot(zkconsumer_zookeeper: str, request: pytest.FixtureRequest) -> Iterator[str]:
    from zkconsumer.testing.helpers import chroot

    with chroot(zkconsumer_zookeeper, request.node.name) as connect:
        yield connect


@pytest.fixture
def zkconsumer_cluster(zkconsumer_chroot: str, zkconsumer_bootstrap: str) -> Iterator[str]:
    from zkconsumer.testing.helpers import mirrored

    with mirrored(zkconsumer_chroot, zkconsumer_bootstrap) as connect:
        yield connect


@pytest.fixture
def zkconsumer_topics(zkconsumer_bootstrap: str, zkconsumer_names: Names, zkconsumer_cluster: str) -> Topics:
    from zkconsumer.testing.helpers import Topics

    return Topics(zkconsumer_bootstrap, zkconsumer_names, zkconsumer_cluster)


@pytest.fixture
def zkconsumer_produce(zkconsumer_bootstrap: str) -> Callable[..., list[Sent]]:
    from zkconsumer.testing.helpers import produce

    def send(topic: str, values: Any, **options: Any) -> list[Sent]:
        return produce(zkconsumer_bootstrap, topic, values, **options)

    return send


@pytest.fixture
def zkconsumer_group(zkconsumer_cluster: str) -> Callable[[str], GroupState]:
    from zkconsumer.testing.helpers import read_group

    return lambda group: read_group(zkconsumer_cluster, group)


@pytest.fixture
def zkconsumer_legacy_members(zkconsumer_cluster: str, tmp_path_factory: pytest.TempPathFactory,
                              ) -> Iterator[LegacyMembers]:
    from zkconsumer.testing.helpers import LegacyMembers

    members = LegacyMembers(zkconsumer_cluster, tmp_path_factory.mktemp("members"))
    try:
        yield members
    finally:
        members.stop_all()


@pytest.fixture
def migration(zkconsumer_zookeeper: str, zkconsumer_kafka: BrokerAddresses,
              tmp_path_factory: pytest.TempPathFactory) -> Migration:
    from zkconsumer.embedded.servers import ServerOptions
    from zkconsumer.testing.migration import Migration

    workdir = tmp_path_factory.mktemp("migration")
    if zkconsumer_kafka.fronted:  # the embedded broker: the run's own front before it, its groups' timeouts set
        return Migration(ServerOptions(zookeeper=zkconsumer_zookeeper, bootstrap=zkconsumer_kafka.broker, front=True),
                         workdir)
    # a user's cluster: its own coordinator
    return Migration(ServerOptions(zookeeper=zkconsumer_zookeeper, bootstrap=zkconsumer_kafka.bootstrap), workdir,
                     coordinator="broker")
