"""The connector's step gate (:mod:`zkconsumer.consumer.step_gate`), the teaching hook ``demo --step`` holds a member
with, against the real ZooKeeper and broker: called before each numbered step in the steps' order, with the attempt
it belongs to; the step waits for it (no event, no owner znode yet); and kazoo's threads are not held meanwhile, so
the group's watch still fires and is handled by the next rebalance."""

from __future__ import annotations

import threading

from consumer.test_connector import owners as owners_of
from consumer.test_partition_ownership import InvariantsAtSteps
from structlog.testing import capture_logs
from support import CONNECTOR_GROUP as GROUP
from support import connector_config as config
from support import mirrored_topic, wait_for
from time_scale import bounded

from zkconsumer import create_connector
from zkconsumer.consumer.step_gate import StepContext
from zkconsumer.consumer.zookeeper_consumer_connector import ZookeeperConsumerConnector
from zkconsumer.events.rebalance_steps import RebalanceStep


def test_a_step_gate_holds_the_step_while_the_session_and_its_watches_go_on(zk, kafka_zk, bootstrap_servers,
                                                                             topic_name):
    topic = mirrored_topic(zk, bootstrap_servers, topic_name, 2)
    owners = f"/consumers/{GROUP}/owners/{topic}"
    seen: list[tuple[str, StepContext]] = []
    at_claim, go = threading.Event(), threading.Event()
    invariants = InvariantsAtSteps()

    def gate(step: RebalanceStep, context: StepContext) -> None:
        invariants(step, context)
        seen.append((step.name, context))
        if step.name == "claim" and not at_claim.is_set():
            at_claim.set()
            assert go.wait(bounded(20))

    with capture_logs() as events:
        held = ZookeeperConsumerConnector(config(kafka_zk, "held"), step_gate=gate)
        invariants.connector = held
        joined = threading.Thread(target=held.create_message_streams, args=({topic: 1},), daemon=True)
        joined.start()
        try:
            assert at_claim.wait(bounded(15))
            names = [e["event"] for e in events if e.get("consumer_id") == f"{GROUP}_held"]
            assert "rebalance.build_registry" in names and "rebalance.claim" not in names
            assert [name for name, _ in seen] == ["read_cluster", "stop_fetchers", "commit_offsets", "release",
                                                  "assign", "fetch_offsets", "build_registry", "claim"]
            assert {context for _, context in seen} == {StepContext(f"{GROUP}_held", 1, 1)}
            assert not zk.exists(owners) or zk.get_children(owners) == []
            # while the attempt waits, another member joins: the held member's watch fires all the same
            with create_connector(config(kafka_zk, "other")) as other:
                other.create_message_streams({topic: 1})
                wait_for(lambda: any(e["event"] == "rebalance.triggered" and e["consumer_id"] == f"{GROUP}_held"
                                     for e in events))
                assert not any(e["event"] == "rebalance.claim" and e["consumer_id"] == f"{GROUP}_held"
                               for e in events)
                go.set()
                joined.join(bounded(20))
                assert not joined.is_alive()
                # the change seen while held is handled: each member owns its share
                wait_for(lambda: sorted(owner for _, owner in owners_of(zk, topic))
                         == [f"{GROUP}_held-0", f"{GROUP}_other-0"])
                # the ownership invariants held before every step of its attempts so far
                assert invariants.checked.count("release") >= 2 and invariants.violations == []
        finally:
            go.set()
            held.shutdown()
