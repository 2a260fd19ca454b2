"""The ensemble launcher's own contract (zkconsumer.embedded.ensemble): its configuration, its bad input in one line,
and a server started twice refused. The ensemble at work is in tests/ensemble."""

from __future__ import annotations

import pytest

from zkconsumer.embedded.ensemble import LocalEnsemble
from zkconsumer.errors import EnvironmentSetupError


def test_each_server_reaches_a_peer_where_peer_ports_say_and_binds_its_own(tmp_path):
    ensemble = LocalEnsemble(tmp_path, 3, client_ports=[2181, 2182, 2183], peer_ports={(1, 3): (1111, 2222)})
    own = {s.sid: f"server.{s.sid}=127.0.0.1:{s.quorum_port}:{s.election_port}" for s in ensemble.servers}
    assert ensemble.peer_lines(1).splitlines() == [own[1], own[2], "server.3=127.0.0.1:1111:2222"]
    assert ensemble.peer_lines(3).splitlines() == [own[1], own[2], own[3]]
    assert ensemble.connect == "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183"
    assert all(s.pid is None for s in ensemble.servers)  # nothing started


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"size": 0}, "a ZooKeeper ensemble needs at least one server, not 0"),
    ({"size": 3, "client_ports": [2181]}, "1 client ports given for an ensemble of 3 servers"),
])
def test_bad_sizes_are_one_line(tmp_path, kwargs, message):
    with pytest.raises(EnvironmentSetupError) as raised:
        LocalEnsemble(tmp_path, **kwargs)
    assert str(raised.value) == message


def test_an_unknown_server_is_named_with_the_ones_there_are(tmp_path):
    with pytest.raises(EnvironmentSetupError) as raised:
        LocalEnsemble(tmp_path, 3).kill_server(4)
    assert str(raised.value) == "the ensemble has no server 4 (its servers: 1, 2, 3)"


def test_a_running_server_is_not_started_twice(zookeeper_ensemble):
    server = zookeeper_ensemble.servers[0]
    with pytest.raises(EnvironmentSetupError, match=f"ZooKeeper server 1 is running already \\(pid {server.pid}\\)"):
        zookeeper_ensemble.start_server(1)
    assert zookeeper_ensemble.server(1).pid == server.pid
