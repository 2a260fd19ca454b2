"""Opening a client: a refused address fails at once, a silent one after the timeout, a live one connects."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from kazoo.exceptions import ConnectionLoss

from zkconsumer.embedded.process import free_port
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.zk.client import close_client, open_client, refusals, session_id


@pytest.fixture
def silent_address() -> Iterator[str]:
    """A port that accepts TCP connections (the kernel completes the handshake) and never says a word."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        yield f"127.0.0.1:{listener.getsockname()[1]}"


def test_a_refused_port_fails_at_once_with_one_line() -> None:
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    with pytest.raises(ServerUnavailableError) as failure:
        open_client(address, timeout=30)
    assert time.monotonic() - started < 5  # far from the 30 s a silent ensemble would get
    message = str(failure.value)
    assert "\n" not in message
    assert f"ZooKeeper at {address} did not answer: {address} refused the connection" in message


def test_every_host_must_refuse_for_the_quick_answer(silent_address) -> None:
    refused = f"127.0.0.1:{free_port()}"
    assert refusals(f"{refused},{refused}/chroot") == [f"{refused} refused the connection (nothing listens there)"]
    assert refusals(f"{refused},{silent_address}") == []  # kazoo may still reach the second host


def test_a_silent_host_still_gets_the_whole_timeout(silent_address) -> None:
    started = time.monotonic()
    with pytest.raises(ServerUnavailableError, match=rf"ZooKeeper at {silent_address} did not answer within 1.5 s"):
        open_client(silent_address, timeout=1.5)
    assert time.monotonic() - started >= 1.4


def test_a_live_ensemble_connects(zookeeper_connect) -> None:
    client = open_client(zookeeper_connect, timeout=5)
    try:
        assert client.connected and client.exists("/") is not None
    finally:
        close_client(client)


def test_the_session_id_of_a_client_without_a_session_is_a_connection_loss(zookeeper_connect):
    """As the bridge, the ownership writes and the checked ephemerals meet it when the connection drops between
    their reads and the id: an outage they wait out, not a TypeError that ends a thread."""
    client = open_client(zookeeper_connect)
    assert session_id(client) == client.client_id[0]
    close_client(client)
    with pytest.raises(ConnectionLoss):
        session_id(client)
