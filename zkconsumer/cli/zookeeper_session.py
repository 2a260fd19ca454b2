"""A ZooKeeper session for one operator command, whose failures are one line each.

:func:`zkconsumer.zk.client.zookeeper` already makes an unreachable ensemble a clear error; this also turns what
kazoo raises later (the connection lost mid-command, a refused ACL, an operation timing out) into a
:class:`~zkconsumer.errors.ZkConsumerError` naming the ensemble, so that no tool ends in a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator

from kazoo.client import KazooClient
from kazoo.exceptions import (
    ConnectionLoss,
    KazooException,
    NoAuthError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError

from zkconsumer.cli import options
from zkconsumer.errors import ServerUnavailableError, ZkConsumerError
from zkconsumer.security import default_acl
from zkconsumer.zk import client as zkclient


@contextlib.contextmanager
def zookeeper_session(args: argparse.Namespace) -> Iterator[KazooClient]:
    connect = options.zookeeper(args)
    auth = options.zookeeper_auth(args)
    try:
        with zkclient.zookeeper(connect, quiet=True, auth=auth, acl=default_acl(auth, None)) as zk:
            zkclient.require_chroot(zk, connect)
            yield zk
    except (KazooException, KazooTimeoutError) as exc:
        raise zookeeper_failure(connect, exc) from None


def zookeeper_failure(connect: str, exc: KazooException | KazooTimeoutError) -> ZkConsumerError:
    """What a command says of a failure kazoo raised while it worked with ZooKeeper at ``connect``: one line."""
    if isinstance(exc, zkclient.RequestTimeoutError):
        return exc  # already one line naming the ensemble and the bound
    if isinstance(exc, (ConnectionLoss, SessionExpiredError, OperationTimeoutError, KazooTimeoutError)):
        return ServerUnavailableError(
            f"lost the connection to ZooKeeper at {connect} ({type(exc).__name__}); nothing after that was done")
    if isinstance(exc, NoAuthError):
        return ZkConsumerError(f"ZooKeeper at {connect} refused access to a znode (NoAuth)")
    return ZkConsumerError(f"ZooKeeper at {connect} failed: {type(exc).__name__} {exc}".rstrip())
