"""Real servers for every test: one ZooKeeper and one Kafka-protocol broker per session, from the project's pytest
plugin (:mod:`zkconsumer.testing.plugin`, whose fixtures the names here hand to the tests) and so from its launchers
(``ZK_CONNECT`` / ``KAFKA_BOOTSTRAP``, else Docker, else a local ZooKeeper distribution and the Tansu binary).
Clients bootstrap through the front in front of the session's broker (``bootstrap_servers``), as they
do in the embedded environment; ``broker_bootstrap`` is the broker itself, for the tests that need its own group
coordinator or measure the front (the same address when ``KAFKA_BOOTSTRAP`` names a broker: no front is put in front
of a user's Kafka). The session's front answers the group APIs with its own coordinator; with
``ZKCONSUMER_TEST_GROUP_COORDINATOR=broker`` it relays them to the broker's instead. Tests that write znodes get a
chroot of their own, so they never see each other's nodes."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import time_scale
from kazoo.client import KazooClient
from suite_order import LONG_MODULES, unit_of, unlisted

import zkconsumer.log
from zkconsumer.embedded.ensemble import DEFAULT_SIZE, LocalEnsemble
from zkconsumer.embedded.front import BrokerAddresses
from zkconsumer.embedded.kafka_broker import LocalKafkaZooKeeperMode
from zkconsumer.embedded.zookeeper import SERVER_JVMFLAGS
from zkconsumer.testing.helpers import chroot
from zkconsumer.zk.client import close_client, open_client

#: fixtures that start (or hand out) a real server: a test using any of them, even indirectly, is a ``servers`` test
SERVER_FIXTURES = frozenset({"zookeeper_connect", "kafka_addresses", "zookeeper_ensemble", "zkconsumer_zookeeper",
                             "zkconsumer_kafka", "kafka_zookeeper_mode"})


def pytest_configure(config: pytest.Config) -> None:
    time_scale.factor()  # calibrated here, before xdist starts its workers: they inherit it through the environment
    # the suite's ZooKeeper servers on C1 alone (embedded/zookeeper.py): dozens of short-lived servers, each serving
    # little, cost a third less CPU; and without an fsync per write (its transaction log still written: a server
    # killed keeps it, only the machine's crash would lose it), so that no write waits on the disk; set beforehand,
    # what is given is used
    os.environ.setdefault(SERVER_JVMFLAGS, "-XX:TieredStopAtLevel=1 -Dzookeeper.forceSync=no")


def pytest_report_header(config: pytest.Config) -> str:
    return f"zkconsumer: {time_scale.describe()}"


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object | None:
    """With ``--dist loadgroup`` (scripts/run_tests.sh): a test module's tests to one worker, as ``loadfile`` does, and
    the modules that share a costly server (:data:`suite_order.SHARED_SERVERS`) to one worker together. The
    xdist_group marks ``loadgroup`` reads cannot do it under pytest 9 (xdist 3.8 renames the node ids that pytest 9
    no longer reads), so the unit is told the scheduler directly."""
    if config.getoption("dist", None) != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedServerScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return SharedServerScheduling(config, log)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that needs ZooKeeper or the broker, so that ``pytest -m "not servers and not browser"``
    runs the pure half in seconds. Tests that start servers without these fixtures carry the mark themselves.
    Every test's own limit (its ``timeout`` mark, else pytest-timeout's default) is scaled to this machine.
    The modules of :data:`LONG_MODULES` go first. A module that uses a costly shared server without being listed
    with the others that do (:data:`suite_order.SHARED_SERVERS`) fails the run in one line."""
    rank = {module: number for number, module in enumerate(LONG_MODULES)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))  # stable: the rest as collected
    uses: dict[str, set[str]] = {}
    for item in items:
        uses.setdefault(item.nodeid.split("::", 1)[0], set()).update(getattr(item, "fixturenames", ()))
    for problem in unlisted(uses):
        raise pytest.UsageError(problem)
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.servers)
        limit = _time_limit(item)
        if limit:
            item.add_marker(pytest.mark.timeout(time_scale.scaled(limit)), append=False)


def _time_limit(item: pytest.Item) -> float | None:
    """The test's limit as written: its own ``timeout`` mark, else the command line's or pyproject's."""
    marker = item.get_closest_marker("timeout")
    if marker is not None:
        given = marker.args[0] if marker.args else marker.kwargs.get("timeout")
        return float(given) if given else None
    given = item.config.getoption("timeout", None) or item.config.getini("timeout")
    return float(given) if given else None


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item) -> None:
    """Inner waits (support.wait_for, time_scale.bounded) end before the test's own limit, which pytest-timeout
    counts from here (setup, call and teardown)."""
    time_scale.set_test_deadline(_time_limit(item))


@pytest.fixture(autouse=True)
def fresh_logging() -> Iterator[None]:
    """The CLI tests run ``main()`` in-process, which binds the log handlers to pytest's captured stderr of that
    test; once pytest closes it, every later event would fail. Each test starts unconfigured, as a fresh process."""
    yield
    zkconsumer.log.reset_logging()


@pytest.fixture(scope="session", autouse=True)
def cli_log_file(tmp_path_factory) -> Iterator[None]:
    """The command lines the tests run (in-process or as processes) write their events to the session's own log file,
    not to the checkout's run directory, where a user's environment keeps its log."""
    if os.environ.get("ZKCONSUMER_LOG_FILE"):
        yield
        return
    os.environ["ZKCONSUMER_LOG_FILE"] = str(tmp_path_factory.mktemp("cli-log") / "zkconsumer.log")
    yield
    del os.environ["ZKCONSUMER_LOG_FILE"]


@pytest.fixture(scope="session")
def zookeeper_connect(zkconsumer_zookeeper) -> str:
    return zkconsumer_zookeeper


@pytest.fixture(scope="session")
def zookeeper_ensemble(tmp_path_factory) -> Iterator[LocalEnsemble]:
    """Three local ZooKeeper servers in one ensemble (the installed distribution), for the failover tests: a test that
    stops or kills a server starts it again before it ends, so the next finds the whole ensemble."""
    with LocalEnsemble(tmp_path_factory.mktemp("ensemble"), DEFAULT_SIZE) as ensemble:
        yield ensemble


@pytest.fixture(scope="session")
def zkconsumer_group_coordinator(zkconsumer_group_coordinator: str) -> str:
    """The plugin's choice (its option, ini setting or ``ZKCONSUMER_COORDINATOR``), unless
    ``ZKCONSUMER_TEST_GROUP_COORDINATOR`` says otherwise: the session's front answers the group APIs with its own
    coordinator, or relays them to the broker's with ``broker``."""
    return os.environ.get("ZKCONSUMER_TEST_GROUP_COORDINATOR") or zkconsumer_group_coordinator


@pytest.fixture(scope="session")
def kafka_addresses(zkconsumer_kafka) -> BrokerAddresses:
    return zkconsumer_kafka


@pytest.fixture(scope="session")
def bootstrap_servers(kafka_addresses) -> str:
    """What clients bootstrap from: the front in front of the session's broker."""
    return kafka_addresses.bootstrap


@pytest.fixture(scope="session")
def broker_bootstrap(kafka_addresses) -> str:
    """The session's broker itself: its own group coordinator, no front."""
    return kafka_addresses.broker


@pytest.fixture(scope="session")
def kafka_zookeeper_mode(zookeeper_connect, tmp_path_factory) -> Iterator[LocalKafkaZooKeeperMode]:
    """A Kafka 3.9 broker in ZooKeeper mode, registered in a chroot of its own of the session's ZooKeeper (no bridge,
    no front), started by the first test that asks for it; those tests skip in one line naming what is missing where
    Java or the artifacts are not installed."""
    from support import require_kafka

    require_kafka("kafka-3.9")
    with chroot(zookeeper_connect, "kafka-3.9") as connect, \
            LocalKafkaZooKeeperMode(tmp_path_factory.mktemp("kafka-3.9"), connect) as broker:
        yield broker


@pytest.fixture
def zk_chroot(zkconsumer_chroot) -> str:
    """A connect string with a fresh chroot, created for this test and deleted after it."""
    return zkconsumer_chroot


@pytest.fixture
def zk(zk_chroot) -> Iterator[KazooClient]:
    client = open_client(zk_chroot)
    yield client
    close_client(client)


@pytest.fixture
def topic_name(zkconsumer_names) -> str:
    """A topic name no other test uses (the broker is shared by the session)."""
    return zkconsumer_names.topic()


@pytest.fixture
def kafka_zk(zkconsumer_cluster) -> str:
    """A chroot that looks like a ZooKeeper-mode Kafka cluster: the bridge keeps mirroring the broker into it
    (``/brokers/ids``, ``/brokers/topics`` with partition states), as it does in the local environment."""
    return zkconsumer_cluster
