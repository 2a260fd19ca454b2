"""Opening a client: a refused address fails at once, a silent one after the timeout, a live one connects; and a
request to a server that stops answering fails within the session timeout."""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from kazoo.exceptions import ConnectionLoss
from support import wait_for
from time_scale import scaled

from zkconsumer.embedded.process import free_port
from zkconsumer.embedded.zookeeper import LocalZooKeeper
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.zk.client import RequestTimeoutError, close_client, open_client, refusals, session_id
from zkconsumer.zk.reads import value_or_none

#: the session timeout of the clients of the paused server: the bound of each of their requests
SESSION_S = 2.0
#: how late past its bound a request may fail (on the reference machine: scaled)
MARGIN_S = 1.5


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
    assert time.monotonic() - started < scaled(5)  # far from the 30 s a silent ensemble would get
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
    client = open_client(zookeeper_connect, timeout=scaled(5))
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


@pytest.fixture
def own_zookeeper(tmp_path) -> Iterator[LocalZooKeeper]:
    """A ZooKeeper server of the test's own, which it may pause: the session's one serves other tests meanwhile."""
    server = LocalZooKeeper(tmp_path / "zookeeper")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@contextlib.contextmanager
def paused(server: LocalZooKeeper) -> Iterator[None]:
    """The server's process stopped (SIGSTOP) for the block: its port still accepts connections (the kernel completes
    the handshake), nothing answers on them. The block begins once every thread of it has stopped (the signal is
    delivered to each in turn: one still running may answer a request meanwhile). Continued (SIGCONT) whatever the
    block raises."""
    assert server.record is not None
    pid = server.record.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        wait_for(lambda: all(_stopped(task) for task in Path(f"/proc/{pid}/task").iterdir()))
        yield
    finally:
        os.kill(server.record.pid, signal.SIGCONT)


def _stopped(task: Path) -> bool:
    try:
        state = task.joinpath("stat").read_text().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return True  # a thread that has ended answers nothing
    return state in ("T", "t")


def timed(call: Callable[[], object], within: float) -> tuple[float, BaseException | None]:
    """How long ``call`` took and what it raised; it runs on a thread of its own, so that a call that never returns
    fails the test after ``within`` seconds rather than hanging it."""
    outcome: list[tuple[float, BaseException | None]] = []

    def run() -> None:
        started = time.monotonic()
        try:
            call()
        except BaseException as exc:  # what the call raised is the result
            outcome.append((time.monotonic() - started, exc))
        else:
            outcome.append((time.monotonic() - started, None))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(within)
    assert outcome, f"still waiting after {within} s"
    return outcome[0]


@pytest.mark.servers
def test_a_request_to_a_paused_server_fails_within_the_session_timeout(own_zookeeper):
    """A request sent before the server stopped is failed by kazoo once its pings go unanswered (two thirds of the
    session timeout); one made while kazoo reconnects would wait for a connection for ever, and fails with the named
    error at the session timeout instead: a synchronous read and a read of an async result alike. A read on kazoo's
    callback thread (a watch's, as a DataWatch reads again when the connection drops) waits for the connection."""
    connect = own_zookeeper.address
    late = SESSION_S + scaled(MARGIN_S)
    client = open_client(connect, timeout=5, session_timeout=SESSION_S, retry_forever=True, quiet=True)
    reread: list[BaseException | None] = []

    def read_again(_event) -> None:  # kazoo calls it on its callback thread when the connection drops
        try:
            client.get("/a")
        except Exception as exc:  # what the read ended with is the result
            reread.append(exc)
        else:
            reread.append(None)

    try:
        client.ensure_path("/a")
        client.exists("/a", watch=read_again)
        with paused(own_zookeeper):
            elapsed, error = timed(lambda: client.get("/a"), late)
            assert isinstance(error, ConnectionLoss) and elapsed < late
            wait_for(lambda: not client.connected, timeout=SESSION_S + MARGIN_S)  # reconnecting, to a silent port
            for read in (lambda: client.get("/a"), lambda: value_or_none(client.get_async("/a"))):
                elapsed, error = timed(read, late)
                assert isinstance(error, RequestTimeoutError), error
                assert SESSION_S - 0.1 <= elapsed < late
                assert isinstance(error, ServerUnavailableError) and isinstance(error, ConnectionLoss)
                assert str(error) == (f"ZooKeeper at {connect} did not answer a request within 2 s (the session "
                                      f"timeout): the server is overloaded, paused or cut off")
            assert reread == []  # longer than the bound: the callback thread's read still waits
        # once the server answers again, so does the client (on a new session: the old one expired meanwhile)
        wait_for(lambda: client.connected, timeout=15)
        wait_for(lambda: reread)
        assert not isinstance(reread[0], RequestTimeoutError)  # it ended with the connection (the session expired)
        assert client.retry(client.exists, "/a") is not None
    finally:
        close_client(client)


def test_the_handlers_select_answers_as_kazoos_own():
    """The connection thread's select (``poll_select``) gives kazoo's ``selector_select``'s answer: readable, writable,
    both (readable wins), a hang-up, nothing within the timeout; and its errors for a closed socket or descriptor."""
    from kazoo.handlers.utils import selector_select

    from zkconsumer.zk.client import poll_select

    quiet, quiet_peer = socket.socketpair()
    talking, talking_peer = socket.socketpair()
    hung_up, gone = socket.socketpair()
    closed, _closed_peer = socket.socketpair()
    with quiet, quiet_peer, talking, talking_peer, hung_up, _closed_peer:
        talking_peer.sendall(b"x")
        gone.close()
        cases = [([quiet, talking], [], 0.05), ([], [quiet], 0.05), ([talking], [talking], 0.05),
                 ([quiet], [], 0.01), ([hung_up], [], 0.05), ([], [hung_up], 0.05), ([quiet.fileno()], [], 0)]
        for rlist, wlist, timeout in cases:
            assert poll_select(rlist, wlist, [], timeout) == selector_select(rlist, wlist, [], timeout)
        assert poll_select([quiet, talking], [], [], 0.05) == ([talking], [], [])
        assert poll_select([], [quiet], [], 0.05) == ([], [quiet], [])
        closed.close()
        descriptor = resource.getrlimit(resource.RLIMIT_NOFILE)[0]  # above every descriptor the process may open
        for select_ in (poll_select, selector_select):
            with pytest.raises(TypeError):
                select_([closed], [], [], 0.05)
            with pytest.raises(ValueError):
                select_([descriptor], [], [], 0.05)
