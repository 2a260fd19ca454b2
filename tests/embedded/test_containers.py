"""The container pass of ``make test`` (``scripts/containers.sh test``): the session's ZooKeeper is a container of
the configured image, started through testcontainers, and the compose file's ZooKeeper service starts and the
project's tools reach it.

Without a container engine these are skipped, except in that pass (``ZKCONSUMER_CONTAINER_PASS=1``), where a
missing engine or tool fails them: the pass must never pass on the local server by mistake."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from support import REPO, wait_for, zkconsumer_cli
from time_scale import bounded

from zkconsumer.embedded import docker
from zkconsumer.embedded.process import free_port
from zkconsumer.embedded.zookeeper import ruok, zookeeper_image
from zkconsumer.zk.client import zookeeper

pytestmark = pytest.mark.servers

IN_CONTAINER_PASS = os.environ.get("ZKCONSUMER_CONTAINER_PASS") == "1"
COMPOSE_FILE = REPO / "docker" / "docker-compose.yml"


def require(condition: bool, missing: str) -> None:
    if condition:
        return
    if IN_CONTAINER_PASS:
        pytest.fail(f"the container pass has {missing}")
    pytest.skip(f"{missing} (make test runs this in its container pass: scripts/containers.sh)")


def same_image(tags: list[str], image: str) -> bool:
    """podman names a local image ``localhost/NAME``, Docker a pulled one ``NAME`` or ``docker.io/library/NAME``."""
    wanted = image.removeprefix("localhost/")
    return any(tag == wanted or tag.endswith("/" + wanted) for tag in tags)


def test_the_session_zookeeper_is_a_container_of_the_configured_image(zookeeper_connect):
    # In the pass the engine is asked below; asking available() again would only add a second way to fail.
    require(IN_CONTAINER_PASS or docker.available("zookeeper"), "no container engine (DOCKER_HOST, or Docker)")
    import docker as docker_sdk

    port = zookeeper_connect.rsplit(":", 1)[1]
    client = docker_sdk.from_env()
    try:
        serving = [
            container for container in client.containers.list()
            if any(binding.get("HostPort") == port for binding in container.ports.get("2181/tcp") or [])
        ]
        assert len(serving) == 1, f"no single running container publishes ZooKeeper's port {port}: {serving}"
        assert same_image(serving[0].image.tags, zookeeper_image()), serving[0].image.tags
    finally:
        client.close()
    with zookeeper(zookeeper_connect) as zk:
        assert zk.command(b"srvr").startswith("Zookeeper version: 3.8.")


def test_a_server_ruled_out_of_containers_is_local_while_the_engine_answers(bootstrap_servers, monkeypatch):
    require(docker.available("zookeeper"), "no container engine (DOCKER_HOST, or Docker)")
    monkeypatch.setenv(docker.NO_DOCKER_ENV, "kafka")
    assert not docker.available("kafka")
    import docker as docker_sdk

    port = bootstrap_servers.rsplit(":", 1)[1]
    client = docker_sdk.from_env()
    try:  # the session's broker too, which the pass keeps local (the Kafka image cannot be pulled there)
        assert not [c for c in client.containers.list() if any(
            binding.get("HostPort") == port for bindings in c.ports.values() for binding in bindings or [])]
    finally:
        client.close()


def compose_command() -> str | None:
    return shutil.which("podman-compose") or shutil.which("podman-compose", path=str(Path(sys.executable).parent))


def compose(command: str, project: str, *args: str, env: dict[str, str],
            file: Path = COMPOSE_FILE) -> subprocess.CompletedProcess:
    result = subprocess.run([command, "-p", project, "-f", str(file), *args],
                            capture_output=True, text=True, env=env, timeout=bounded(120))
    assert result.returncode == 0, f"podman-compose {' '.join(args)}: {result.stderr or result.stdout}"
    return result


@pytest.mark.timeout(340)  # its waits, summed: 120 s for `up`, 60 s for the server, 120 s for `down`
def test_the_compose_files_zookeeper_service_starts_and_the_tools_reach_it(tmp_path):
    if not IN_CONTAINER_PASS:  # it starts its own container: once, in the pass, not in every run
        pytest.skip("the compose check runs in make test's container pass (scripts/containers.sh test)")
    command = compose_command()
    require(command is not None and shutil.which("podman") is not None, "no podman-compose or no podman")
    assert command is not None
    port = free_port()
    project = f"zkconsumer-compose-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "ZKCONSUMER_ZOOKEEPER_IMAGE": zookeeper_image(), "ZKCONSUMER_ZOOKEEPER_PORT": str(port)}
    connect = f"127.0.0.1:{port}"
    compose(command, project, "up", "-d", "zookeeper", env=env)
    try:
        wait_for(lambda: ruok(connect, timeout=1.0), timeout=60, interval=0.3)
        offsets = tmp_path / "offsets.txt"
        offsets.write_text("/consumers/compose-check/offsets/orders/0:42\n")
        imported = zkconsumer_cli("offsets", "import", "--zookeeper", connect, "--input", str(offsets))
        assert imported.returncode == 0, imported.stderr
        listed = zkconsumer_cli("groups", "list", "--zookeeper", connect)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.split() == ["compose-check"]
        exported = zkconsumer_cli("offsets", "export", "--zookeeper", connect)
        assert exported.stdout.splitlines() == ["/consumers/compose-check/offsets/orders/0:42"], exported.stderr
    finally:
        compose(command, project, "down", env=env)
    assert not ruok(connect, timeout=0.5)
