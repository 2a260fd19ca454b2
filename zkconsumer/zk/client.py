"""Opening a kazoo client, with the failure a person can act on.

kazoo retries a dead ensemble forever by default; every command here instead gives up after the
connection timeout with a message naming the ensemble and how to get one.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

from kazoo.client import KazooClient
from kazoo.retry import KazooRetry

from zkconsumer.errors import ServerUnavailableError

DEFAULT_CONNECT_TIMEOUT = 6.0


_silent = logging.getLogger("zkconsumer.kazoo.probe")
_silent.addHandler(logging.NullHandler())
_silent.propagate = False


def open_client(
    connect: str, timeout: float = DEFAULT_CONNECT_TIMEOUT, retry_forever: bool = False, quiet: bool = False,
    session_timeout: float | None = None,
) -> KazooClient:
    """A started client; ``retry_forever`` keeps reconnecting after a later loss (long-running services),
    ``quiet`` silences kazoo's own connection warnings (probes, where failing is an answer). ``timeout`` bounds
    the first connection; the session timeout asked of the server defaults to it."""
    retry = KazooRetry(max_tries=-1, max_delay=2.0) if retry_forever else KazooRetry(max_tries=0)
    extra = {"logger": _silent} if quiet else {}
    client = KazooClient(hosts=connect, timeout=session_timeout or timeout, connection_retry=retry, **extra)
    try:
        client.start(timeout=timeout)
    except Exception as exc:  # kazoo raises its timeout, or a socket error, for an unreachable ensemble
        with contextlib.suppress(Exception):
            client.stop()
            client.close()
        raise ServerUnavailableError(
            f"ZooKeeper at {connect} did not answer within {timeout:g} s ({type(exc).__name__}); check the "
            f"address, or start the embedded environment with `zkconsumer local up`"
        ) from None
    return client


def close_client(client: KazooClient) -> None:
    with contextlib.suppress(Exception):
        client.stop()
    with contextlib.suppress(Exception):
        client.close()


@contextlib.contextmanager
def zookeeper(connect: str, timeout: float = DEFAULT_CONNECT_TIMEOUT, quiet: bool = False) -> Iterator[KazooClient]:
    client = open_client(connect, timeout, quiet=quiet)
    try:
        yield client
    finally:
        close_client(client)

