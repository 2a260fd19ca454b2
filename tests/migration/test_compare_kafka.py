"""The comparison with its modern groups at Apache Kafka 4.4's own group coordinator and its legacy group at ZooKeeper
through the bridge, as the pytest plugin runs it given a Kafka broker (``--zkconsumer-bootstrap-server``): a short
script of two members, one protocol of each kind. One KRaft node for the module (a JVM start is several seconds),
given the settings ``local up --broker kafka-4`` gives its broker, so that the run can give its KIP-848 group the
classic members' session as a group config."""

from __future__ import annotations

import html
import json

import pytest
from support import require_kafka
from time_scale import bounded

from zkconsumer.embedded.broker_kinds import KAFKA_SETTINGS
from zkconsumer.embedded.kafka_broker import LocalKafkaKRaft
from zkconsumer.embedded.servers import ServerOptions
from zkconsumer.migration.timeouts import GROUP_SESSION
from zkconsumer.scenarios.model import Action, Member, Production, Scenario, Scene, Topic
from zkconsumer.testing.migration import Migration

pytestmark = pytest.mark.migration
#: two members, each protocol's: one starts, the second joins, the first leaves
TWO_MEMBERS = Scenario("two", "Two members", "one joins, the first leaves", Topic("kafka", 2), Production(rate=20),
                       (Member("a"), Member("b")),
                       (Scene(1, "a starts", "", (Action("start", "a"),)),
                        Scene(2, "b joins", "", (Action("start", "b"),)),
                        Scene(3, "a leaves", "", (Action("stop", "a"),))))


@pytest.fixture(scope="module")
def kafka4(tmp_path_factory):
    require_kafka("kafka-4")
    with LocalKafkaKRaft(tmp_path_factory.mktemp("kafka-4"), overrides=KAFKA_SETTINGS) as broker:
        yield broker


def group_session(bootstrap: str, group: str) -> str | None:
    from confluent_kafka.admin import ConfigResource, ResourceType

    from zkconsumer.kafka.metadata import admin_client

    resource = ConfigResource(ResourceType.GROUP, group)
    admin = admin_client(bootstrap)  # kept: the future fails when the client is collected
    entries = admin.describe_configs([resource])[resource].result(bounded(10))
    return entries[GROUP_SESSION].value


@pytest.mark.timeout(300)
def test_a_comparison_at_kafka_names_its_coordinator_and_loses_nothing(zookeeper_connect, kafka4, tmp_path):
    migration = Migration(ServerOptions(zookeeper=zookeeper_connect, bootstrap=kafka4.bootstrap), tmp_path,
                          coordinator="broker")
    result = migration.compare(scenario=TWO_MEMBERS, protocols=["legacy-range", "range", "consumer-uniform"])
    result.assert_nothing_lost()
    assert all(o.produced > 0 and o.delivered == o.produced for o in result.protocols.values())
    # 1. every report names the coordinator that ran, with its version (no environment here: from its ApiVersions)
    report = json.loads(result.report.read_text())
    assert report["coordinator"] == "broker" and report["coordinator_software"] == "Apache Kafka 4.4"
    identity = report["coordinator_identity"]
    assert identity["name"].startswith(f"Apache Kafka 4.4's own group coordinator at {kafka4.bootstrap}")
    assert "ApiVersions" in identity["broker_software_source"]
    assert "Apache Kafka 4.4's own group coordinator" in html.unescape(result.page.read_text())
    assert result["consumer-uniform"].named == "consumer-uniform (at Apache Kafka 4.4)"  # the failures' name
    assert result["range"].coordinator == "Apache Kafka 4.4" and result["legacy-range"].coordinator is None
    # 2. Kafka ran the KIP-848 group (it is not left out at a broker's coordinator that runs it) on the classic
    # members' session, set as the group's config for the run and removed after it
    assert report["timeouts"]["consumer-uniform"]["session_timeout_ms"] == 4000
    assert report["group_timeouts_ms"] == {"consumer.session.timeout.ms": 4000, "consumer.heartbeat.interval.ms": 1110}
    assert report["protocols"]["consumer-uniform"]["rebalances"] >= 2
    assert group_session(kafka4.bootstrap, report["protocols"]["consumer-uniform"]["group"]) == "45000"
