"""What a command says of a failure kazoo raised mid-command (zkconsumer.cli.zookeeper_session.zookeeper_failure):
one line naming the ensemble, whatever kazoo raised; `consume` and the operator tools say it the same way."""

from __future__ import annotations

import pytest
from kazoo.exceptions import ConnectionLoss, NoAuthError, NotEmptyError, SessionExpiredError
from kazoo.handlers.threading import KazooTimeoutError

from zkconsumer.cli.zookeeper_session import zookeeper_failure
from zkconsumer.errors import ServerUnavailableError, ZkConsumerError
from zkconsumer.zk.client import RequestTimeoutError

CONNECT = "zk1:2181/kafka"


@pytest.mark.parametrize(("raised", "kind", "said"), [
    (ConnectionLoss(), ServerUnavailableError,
     "lost the connection to ZooKeeper at zk1:2181/kafka (ConnectionLoss); nothing after that was done"),
    (SessionExpiredError(), ServerUnavailableError,
     "lost the connection to ZooKeeper at zk1:2181/kafka (SessionExpiredError); nothing after that was done"),
    (KazooTimeoutError(), ServerUnavailableError,
     "lost the connection to ZooKeeper at zk1:2181/kafka (KazooTimeoutError); nothing after that was done"),
    (NoAuthError(), ZkConsumerError, "ZooKeeper at zk1:2181/kafka refused access to a znode (NoAuth)"),
    (NotEmptyError(), ZkConsumerError, "ZooKeeper at zk1:2181/kafka failed: NotEmptyError"),
])
def test_every_failure_of_kazoo_is_one_line_naming_the_ensemble(raised, kind, said):
    error = zookeeper_failure(CONNECT, raised)
    assert isinstance(error, kind) and str(error) == said


def test_a_request_that_timed_out_keeps_its_own_line():
    timed_out = RequestTimeoutError("zk1:2181", 6.0)
    assert zookeeper_failure(CONNECT, timed_out) is timed_out
