"""The pytest plugin (entry point ``pytest11: zkconsumer``): options and fixtures for migration comparison tests.

Importing it imports pytest and the standard library only; a fixture imports what it needs when a test asks for it,
and nothing starts before then. Every server and process a fixture started is stopped when its scope ends, also when
a test fails or the run is interrupted (Ctrl-C ends the session through pytest's own teardown).

Where the session's servers come from, each chosen by its command-line option, else its ini setting, else its
environment variable (:mod:`zkconsumer.testing.settings`): ``--zkconsumer-zookeeper`` / ``zkconsumer_zookeeper`` /
``ZK_CONNECT``, ``--zkconsumer-bootstrap-server`` / ``zkconsumer_bootstrap_server`` / ``KAFKA_BOOTSTRAP``,
``--zkconsumer-coordinator`` / ``zkconsumer_coordinator`` / ``ZKCONSUMER_COORDINATOR`` (``front`` or ``broker``) and
``--zkconsumer-client-config`` / ``zkconsumer_client_config`` / ``ZKCONSUMER_CLIENT_CONFIG`` (a file of librdkafka
properties every client and member of a given broker takes: :mod:`zkconsumer.kafka.client_config`). The report
header names them and the coordinator with its version, without starting anything.

Session fixtures (one set per pytest-xdist worker; :mod:`zkconsumer.embedded.servers` provides them, as it provides
the comparison's and the demo's):

- ``zkconsumer_zookeeper``: the ZooKeeper connect string: the one chosen (a user's ensemble, checked as a client
  reaches it), else a container when a Docker-compatible engine answers (Docker, or podman's API service named by
  ``DOCKER_HOST``; ``ZKCONSUMER_NO_DOCKER`` rules it out), else a local server;
- ``zkconsumer_kafka``: the broker's addresses (``.bootstrap``, what clients are given: the front; ``.broker``: the
  broker itself): the one chosen (an existing cluster: its own coordinator, no front unless the front is chosen;
  ``KAFKA_BOOTSTRAP``: never a front), else the embedded Tansu broker with the project's front before it;
  ``zkconsumer_bootstrap``: ``zkconsumer_kafka.bootstrap``;
- ``zkconsumer_group_coordinator``: ``front`` (the front's own coordinators, classic and KIP-848) or ``broker``, as
  chosen.

Per test, isolated from every other test and worker (a chroot, unique names):

- ``zkconsumer_names``: :class:`~zkconsumer.testing.helpers.Names` (``.topic()``, ``.group()``);
- ``zkconsumer_chroot``: a connect string with a fresh chroot, deleted after the test;
- ``zkconsumer_cluster``: that chroot mirroring the broker as a ZooKeeper-mode cluster (legacy members need it);
- ``zkconsumer_topics``: ``.create(partitions=1)`` returns a new topic's name, visible to legacy members;
- ``zkconsumer_produce``: ``produce(topic, values_or_count, keys=..., partition=..., rate=...)``;
- ``zkconsumer_group``: ``group(name)`` reads a legacy group's owners, offsets and members;
- ``zkconsumer_legacy_members``: ``.start(group, topic, in_process=True, handle=...)``; each left at the end;
- ``zkconsumer_migration``: ``zkconsumer_migration.compare(app=..., scenario=..., protocols=[...])``
  (:mod:`zkconsumer.testing.migration`), the modern groups at the coordinator chosen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from pathlib import Path

    from zkconsumer.embedded.front import BrokerAddresses
    from zkconsumer.testing.helpers import GroupState, LegacyMembers, Names, Sent, Topics
    from zkconsumer.testing.migration import Migration
    from zkconsumer.testing.settings import PluginSettings

#: how long the report header waits for a given broker to name its software
HEADER_TIMEOUT_S = 2.0
_SETTINGS = pytest.StashKey["PluginSettings"]()


def pytest_addoption(parser: pytest.Parser) -> None:
    from zkconsumer.testing.settings import SETTINGS

    group = parser.getgroup("zkconsumer", "zkconsumer: servers for migration comparison tests")
    for setting in SETTINGS:
        env = f" (ini {setting.ini}; environment {setting.env})" if setting.env else f" (ini {setting.ini})"
        group.addoption(setting.option, default=None, metavar=setting.metavar, dest=setting.dest,
                        help=setting.help + env)
        parser.addini(setting.ini, help=f"{setting.help} ({setting.option} wins over it)", default=None)


def pytest_configure(config: pytest.Config) -> None:
    """The session's choices read once, a bad one refused in one line; client settings given by option or ini are
    put in the environment, where every client of this process and every member process reads them
    (:mod:`zkconsumer.kafka.client_config`)."""
    import os

    from zkconsumer.testing.settings import CLIENT_CONFIG, BadSetting

    try:
        chosen = _settings(config)
    except BadSetting as exc:
        raise pytest.UsageError(str(exc)) from None
    config.stash[_SETTINGS] = chosen
    client = chosen.client_config
    if client.given and client.value is not None:
        path = _resolved(config, client.value, client.source)
        _check_client_config(path, client.source)
        if CLIENT_CONFIG.env:
            os.environ[CLIENT_CONFIG.env] = str(path)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Which servers and group coordinator the session runs on, without starting any: a given broker whose own
    coordinator runs the groups is asked what software it runs (a Kafka broker's ApiVersions name its release)."""
    from importlib.metadata import PackageNotFoundError, version

    from zkconsumer.testing.settings import BROKER, header

    chosen = config.stash.get(_SETTINGS, None) or _settings(config)
    try:
        ours = version("zkconsumer")
    except PackageNotFoundError:
        ours = "(version unknown)"
    software = None
    if chosen.coordinator.value == BROKER and chosen.bootstrap.value:
        from zkconsumer.embedded.broker_software import broker_software

        found = broker_software(chosen.bootstrap.value, timeout=HEADER_TIMEOUT_S)
        software = found.name if found is not None else "not named by its ApiVersions"
    return header(chosen, ours, software)


def _settings(config: pytest.Config) -> PluginSettings:
    import os

    from zkconsumer.testing.settings import read

    return read(lambda dest: config.getoption(dest, None), lambda name: config.getini(name), os.environ)


def _resolved(config: pytest.Config, value: str, source: str | None) -> Path:
    """A path as given: from the command line, relative to the current directory; from the ini file, to its
    directory (pytest's ``rootpath`` where there is none)."""
    from pathlib import Path

    path = Path(value).expanduser()
    if path.is_absolute() or (source or "").startswith("--"):
        return path.resolve()
    base = config.inipath.parent if config.inipath is not None else config.rootpath
    return (base / path).resolve()


def _check_client_config(path: Path, source: str | None) -> None:
    from zkconsumer.errors import UsageError
    from zkconsumer.kafka.client_config import read_properties

    try:
        read_properties(path)
    except UsageError as exc:
        raise pytest.UsageError(f"{source}: {exc}") from None


def _chosen(request: pytest.FixtureRequest) -> PluginSettings:
    return request.config.stash.get(_SETTINGS, None) or _settings(request.config)


@pytest.fixture(scope="session")
def zkconsumer_zookeeper(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from zkconsumer.embedded.servers import SESSION, ServerOptions, zookeeper_server

    given = _chosen(request).zookeeper
    options = ServerOptions(zookeeper=given.value if given.given else None, embedded=SESSION,
                            workdir=tmp_path_factory.mktemp("servers"), zookeeper_option=given.source or "")
    with zookeeper_server(options) as connect:
        yield connect


@pytest.fixture(scope="session")
def zkconsumer_group_coordinator(request: pytest.FixtureRequest) -> str:
    """``front`` or ``broker``, as chosen (``--zkconsumer-coordinator``, ini ``zkconsumer_coordinator``,
    ``ZKCONSUMER_COORDINATOR``; default: ``front`` on the embedded broker, ``broker`` on one given)."""
    return _chosen(request).coordinator.value or "front"


@pytest.fixture(scope="session")
def zkconsumer_kafka(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
                     zkconsumer_group_coordinator: str) -> Iterator[BrokerAddresses]:
    from zkconsumer.embedded.front import front_options
    from zkconsumer.embedded.servers import SESSION, ServerOptions, kafka_server

    given = _chosen(request).bootstrap
    bootstrap = given.value if given.given else None
    # the embedded broker always gets the front (relaying the group APIs where the broker's coordinator is chosen);
    # a broker given gets one only where the front's own coordinator is chosen
    front = not bootstrap or zkconsumer_group_coordinator == "front"
    options = ServerOptions(bootstrap=bootstrap, embedded=SESSION, workdir=tmp_path_factory.mktemp("servers"),
                            front=front, front_options=front_options(zkconsumer_group_coordinator))
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
def zkconsumer_migration(zkconsumer_zookeeper: str, zkconsumer_kafka: BrokerAddresses,
                         zkconsumer_group_coordinator: str, tmp_path_factory: pytest.TempPathFactory) -> Migration:
    from zkconsumer.embedded.servers import ServerOptions
    from zkconsumer.testing.migration import Migration

    workdir = tmp_path_factory.mktemp("migration")
    if zkconsumer_group_coordinator == "front":  # the run's own front before the broker, its groups' timeouts set
        return Migration(ServerOptions(zookeeper=zkconsumer_zookeeper, bootstrap=zkconsumer_kafka.broker, front=True),
                         workdir, coordinator="front")
    # the broker's own coordinator: a user's cluster, or the embedded broker reached directly
    return Migration(ServerOptions(zookeeper=zkconsumer_zookeeper, bootstrap=zkconsumer_kafka.broker), workdir,
                     coordinator="broker")
