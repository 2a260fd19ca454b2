"""The compose file's ensemble (docker/docker-compose.ensemble.yml): three services of the configured ZooKeeper image
form one quorum, the tools write through a connect string that lists them all, and the group's data survives its
leader's container being killed. Run in `make test`'s container pass (scripts/containers.sh test) only: it starts
containers of its own."""

from __future__ import annotations

import os
import shutil
import uuid

import pytest
from support import REPO, wait_for, zkconsumer_cli
from test_containers import IN_CONTAINER_PASS, compose, compose_command, require

from zkconsumer.embedded.ensemble import server_mode
from zkconsumer.embedded.process import free_port
from zkconsumer.embedded.zookeeper import zookeeper_image

pytestmark = pytest.mark.servers

ENSEMBLE_FILE = REPO / "docker" / "docker-compose.ensemble.yml"


# Its waits, summed: 120 s for `up`, 90 s for the quorum, 120 s for `kill`, 60 s for the election, 120 s for `down`.
@pytest.mark.timeout(570)
def test_the_compose_files_ensemble_forms_a_quorum_and_survives_its_leader_killed(tmp_path):
    if not IN_CONTAINER_PASS:
        pytest.skip("the compose ensemble runs in make test's container pass (scripts/containers.sh test)")
    command = compose_command()
    require(command is not None and shutil.which("podman") is not None, "no podman-compose or no podman")
    assert command is not None
    ports = {sid: (free_port(), free_port(), free_port()) for sid in (1, 2, 3)}
    env = {**os.environ, "ZKCONSUMER_ZOOKEEPER_IMAGE": zookeeper_image()}
    for sid, (client, quorum, election) in ports.items():
        env[f"ZKCONSUMER_ZOOKEEPER_PORT_{sid}"] = str(client)
        env[f"ZKCONSUMER_ZOOKEEPER_QUORUM_PORT_{sid}"] = str(quorum)
        env[f"ZKCONSUMER_ZOOKEEPER_ELECTION_PORT_{sid}"] = str(election)
    addresses = {sid: f"127.0.0.1:{client}" for sid, (client, _, _) in ports.items()}
    connect = ",".join(addresses.values())
    project = f"zkconsumer-ensemble-{uuid.uuid4().hex[:8]}"

    def modes() -> list[str]:
        return sorted(server_mode(address) for address in addresses.values())

    compose(command, project, "up", "-d", env=env, file=ENSEMBLE_FILE)
    try:
        wait_for(lambda: modes() == ["follower", "follower", "leader"], timeout=90, interval=0.3)
        offsets = tmp_path / "offsets.txt"
        offsets.write_text("/consumers/ensemble-check/offsets/orders/0:42\n")
        imported = zkconsumer_cli("offsets", "import", "--zookeeper", connect, "--input", str(offsets))
        assert imported.returncode == 0, imported.stderr

        leader = next(sid for sid, address in addresses.items() if server_mode(address) == "leader")
        compose(command, project, "kill", f"zookeeper-{leader}", env=env, file=ENSEMBLE_FILE)
        survivors = [address for sid, address in addresses.items() if sid != leader]
        wait_for(lambda: sorted(server_mode(a) for a in survivors) == ["follower", "leader"], timeout=60, interval=0.3)
        for address in survivors:  # each survivor holds the offset written before the kill
            exported = zkconsumer_cli("offsets", "export", "--zookeeper", address)
            assert exported.stdout.splitlines() == ["/consumers/ensemble-check/offsets/orders/0:42"], exported.stderr
        listed = zkconsumer_cli("groups", "list", "--zookeeper", connect)
        assert listed.returncode == 0 and listed.stdout.split() == ["ensemble-check"], listed.stderr
    finally:
        compose(command, project, "down", env=env, file=ENSEMBLE_FILE)
    assert all(server_mode(address) == "down" for address in addresses.values())
