"""The Docker path of the launchers, through testcontainers, with the images of ``docker/docker-compose.yml``.

Used only when a Docker engine answers (and ``ZKCONSUMER_NO_DOCKER`` is not set); testcontainers is a test
extra, so it is imported here lazily.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

NO_DOCKER_ENV = "ZKCONSUMER_NO_DOCKER"


def available() -> bool:
    if os.environ.get(NO_DOCKER_ENV, "").strip() not in {"", "0"}:
        return False
    try:
        from testcontainers.core.container import DockerContainer  # noqa: F401

        import docker
    except ImportError:
        return False
    try:
        client = docker.from_env(timeout=3)  # type: ignore[attr-defined]
        client.ping()
        client.close()
    except Exception:  # no engine, no socket, no permission: all mean "not available"
        return False
    return True


@contextlib.contextmanager
def zookeeper_container(image: str) -> Iterator[str]:
    from testcontainers.core.container import DockerContainer
    from testcontainers.core.waiting_utils import wait_for_logs

    container = DockerContainer(image).with_exposed_ports(2181).with_env("ZOO_4LW_COMMANDS_WHITELIST", "*")
    with container:
        wait_for_logs(container, "binding to port", timeout=60)
        yield f"{container.get_container_host_ip()}:{container.get_exposed_port(2181)}"


@contextlib.contextmanager
def kafka_container(image: str) -> Iterator[str]:
    from testcontainers.kafka import KafkaContainer

    with KafkaContainer(image) as kafka:
        yield kafka.get_bootstrap_server()
