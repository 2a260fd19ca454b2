"""The plugin's ``--zkconsumer-zookeeper``: an ensemble of the user's is checked as a client would reach it (a
session, and its chroot), not by the four-letter words its operators may have disabled."""

from __future__ import annotations

import socket

import pytest

from zkconsumer.embedded.servers import SESSION, ServerOptions, zookeeper_server
from zkconsumer.errors import ServerUnavailableError, ZkConsumerError


def zookeeper(workdir, given):
    """The plugin's ZooKeeper, as its ``zkconsumer_zookeeper`` fixture asks for it."""
    return zookeeper_server(ServerOptions(zookeeper=given, embedded=SESSION, workdir=workdir,
                                          zookeeper_option="--zkconsumer-zookeeper"))


def test_a_given_ensemble_is_used_as_it_is(zookeeper_connect, tmp_path):
    with zookeeper(tmp_path, given=zookeeper_connect) as connect:
        assert connect == zookeeper_connect


def test_a_given_chroot_that_is_missing_is_one_line_naming_the_option(zookeeper_connect, tmp_path):
    given = f"{zookeeper_connect.split('/', 1)[0]}/no-such-chroot-here"
    with pytest.raises(ServerUnavailableError) as raised, zookeeper(tmp_path, given=given):
        pass
    message = str(raised.value)
    assert message.startswith(f"--zkconsumer-zookeeper {given}: ") and "\n" not in message
    assert "no-such-chroot-here" in message.split(": ", 1)[1]


def test_a_given_address_where_nothing_listens_is_one_line(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ZkConsumerError) as raised, zookeeper(tmp_path, given=f"127.0.0.1:{port}"):
        pass
    assert str(raised.value).startswith(f"--zkconsumer-zookeeper 127.0.0.1:{port}: ")
    assert "\n" not in str(raised.value)
