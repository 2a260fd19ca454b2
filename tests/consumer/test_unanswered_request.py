"""A rebalance whose ZooKeeper stops answering: the request of a step that is queued while kazoo reconnects fails
at the session timeout (the named error of :mod:`zkconsumer.zk.client`), which fails the attempt; the next attempt
runs once the server answers again, and the rebalance completes. The server is one of the test's own, paused with
SIGSTOP before the first step of the first attempt and continued before the second."""

from __future__ import annotations

import contextlib
import threading

import pytest
from structlog.testing import capture_logs
from support import CONNECTOR_GROUP as GROUP
from support import connector_config, wait_for
from time_scale import bounded
from zk.test_client import MARGIN_S, SESSION_S, own_zookeeper, paused

from zkconsumer.consumer.step_gate import StepContext
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.events.rebalance_steps import RebalanceStep

__all__ = ["own_zookeeper"]  # the fixture, imported

pytestmark = pytest.mark.servers


def test_a_step_whose_request_goes_unanswered_fails_the_attempt_and_the_next_one_completes(own_zookeeper):
    connect = own_zookeeper.address
    pause = contextlib.ExitStack()
    config = connector_config(connect, "paused", **{"zookeeper.session.timeout.ms": int(SESSION_S * 1000),
                                                    "rebalance.max.retries": 10})
    connectors: list[ZookeeperConsumerConnector] = []

    def gate(step: RebalanceStep, context: StepContext) -> None:
        if step.name != "read_cluster" or context.rebalance_id != 1:
            return
        if context.attempt == 1:
            pause.enter_context(paused(own_zookeeper))
            # kazoo has dropped the silent connection: the step's request waits in its queue for a new one
            wait_for(lambda: not connectors[0].zk.connected, timeout=SESSION_S + MARGIN_S)
        else:
            pause.close()

    with pause, capture_logs() as events:
        connectors.append(ZookeeperConsumerConnector(config, step_gate=gate))
        joined = threading.Thread(target=connectors[0].create_message_streams, args=({"t": 1},), daemon=True)
        try:
            joined.start()
            joined.join(bounded(30))
            assert not joined.is_alive(), "the first rebalance did not end"
        finally:
            pause.close()
            connectors[0].shutdown()
    mine = [e for e in events if e.get("consumer_id") == f"{GROUP}_paused" and e.get("rebalance_id") == 1]
    expected = (f"RequestTimeoutError: ZooKeeper at {connect} did not answer a request within 2 s (the session "
                f"timeout): the server is overloaded, paused or cut off")
    step = next(e for e in mine if e["event"] == "rebalance.read_cluster")
    assert (step["attempt"], step["log_level"], step["error"]) == (1, "warning", expected)
    failed = next(e for e in mine if e["event"] == "rebalance.attempt_failed")
    assert (failed["attempt"], failed["reason"]) == (1, expected)
    completed = next(e for e in mine if e["event"] == "rebalance.completed")
    assert completed["attempts"] >= 2
