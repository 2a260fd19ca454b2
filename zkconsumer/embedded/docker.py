"""The Docker path of the launchers, through testcontainers, with the images of ``docker/docker-compose.yml``.

Used only when a Docker-compatible engine answers (a Docker engine, or podman's API service that
``scripts/containers.sh`` starts: ``DOCKER_HOST`` names it) and ``ZKCONSUMER_NO_DOCKER`` does not rule it out
for that server. ``ZKCONSUMER_NO_DOCKER`` is ``1`` for every server, or a comma-separated list of the servers
that must not come from a container (``kafka``: ZooKeeper in a container beside the local Tansu broker, which
is what the container pass of ``make test`` runs, the Kafka image being unavailable there). testcontainers is a
test extra, so it is imported here lazily.

Its events (``docker.*``) are declared once in :mod:`zkconsumer.events.embedded` and listed on the events page
(``docs/events.md``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from zkconsumer.errors import EnvironmentSetupError
from zkconsumer.events import catalogue as ev
from zkconsumer.log import get_logger

NO_DOCKER_ENV = "ZKCONSUMER_NO_DOCKER"
SERVERS = ("zookeeper", "kafka")
_ALL = {"1", "true", "yes", "all"}


def ruled_out() -> frozenset[str]:
    """The servers ``ZKCONSUMER_NO_DOCKER`` keeps out of containers."""
    value = os.environ.get(NO_DOCKER_ENV, "").strip().lower()
    if value in {"", "0", "false", "no"}:
        return frozenset()
    if value in _ALL:
        return frozenset(SERVERS)
    names = frozenset(name.strip() for name in value.split(",") if name.strip())
    unknown = sorted(names - set(SERVERS))
    if unknown:
        raise EnvironmentSetupError(
            f"{NO_DOCKER_ENV}={os.environ[NO_DOCKER_ENV]!r} names no server {', '.join(unknown)}: "
            f"use 1 for all, or a comma-separated list of {', '.join(SERVERS)}"
        )
    return names


def available(server: str) -> bool:
    """Whether ``server`` (one of ``SERVERS``) is to come from a container: allowed, and an engine answers."""
    if server in ruled_out():
        return False
    try:
        from testcontainers.core.container import DockerContainer  # noqa: F401

        import docker
    except ImportError:
        return False
    try:
        # podman's API service can take seconds to answer on a busy machine
        client = docker.from_env(timeout=10)  # type: ignore[attr-defined]
        client.ping()
        client.close()
    except Exception:  # no engine, no socket, no permission: all mean "not available"
        return False
    return True


@contextlib.contextmanager
def _logged(server: str, image: str, address: str) -> Iterator[str]:
    log = get_logger("zkconsumer.docker").bind(server=server, image=image)
    log.emit(ev.DOCKER_CONTAINER_STARTED, address=address)
    try:
        yield address
    finally:
        log.emit(ev.DOCKER_CONTAINER_STOPPED)


@contextlib.contextmanager
def zookeeper_container(image: str) -> Iterator[str]:
    from testcontainers.core.container import DockerContainer

    # Both the official image and the project's own (docker/zookeeper) log this line once the port is open.
    ready_line = "binding to port"
    container = DockerContainer(image).with_exposed_ports(2181).with_env("ZOO_4LW_COMMANDS_WHITELIST", "*")
    try:  # testcontainers' wait strategies, where it has them (its log-polling function is deprecated there)
        from testcontainers.core.wait_strategies import LogMessageWaitStrategy

        container.waiting_for(LogMessageWaitStrategy(ready_line).with_startup_timeout(60).with_poll_interval(0.2))
        wait = None
    except ImportError:
        from testcontainers.core.waiting_utils import wait_for_logs

        wait = wait_for_logs
    with container:
        if wait is not None:
            wait(container, ready_line, timeout=60, interval=0.2)
        address = f"{container.get_container_host_ip()}:{container.get_exposed_port(2181)}"
        with _logged("zookeeper", image, address):
            yield address


@contextlib.contextmanager
def kafka_container(image: str) -> Iterator[str]:
    from testcontainers.kafka import KafkaContainer

    with KafkaContainer(image) as kafka, _logged("kafka", image, kafka.get_bootstrap_server()) as bootstrap:
        yield bootstrap
