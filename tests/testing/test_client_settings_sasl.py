"""Client settings through the plugin against a broker that asks for them: a Kafka 4 node whose client listener is
SASL_PLAINTEXT with SCRAM-SHA-256 (its user created by ``kafka-storage format --add-scram``), given to a team's
suite as its ini file would (``zkconsumer_bootstrap_server``, ``zkconsumer_client_config``). The producer, the admin
calls, the bridge and every member, legacy and modern, authenticate with the file's settings; a client without them
is refused. The team's suite runs in a pytest of its own (``pytester``), on this session's ZooKeeper."""

from __future__ import annotations

import pytest
from support import require_kafka
from time_scale import bounded

from zkconsumer.embedded.broker_kinds import KAFKA_SETTINGS
from zkconsumer.embedded.kafka_broker import LocalKafkaKRaft
from zkconsumer.embedded.process import LOOPBACK, free_port
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.kafka.coordinator_identity import identify

pytest_plugins = ["pytester"]
pytestmark = [pytest.mark.migration, pytest.mark.timeout(400)]

USER, SECRET = "migration-tests", "scram-secret-for-tests"
CLIENT_PROPERTIES = f"""# the cluster's client settings
security.protocol=SASL_PLAINTEXT
sasl.mechanism=SCRAM-SHA-256
sasl.username={USER}
sasl.password={SECRET}
"""
TEAM_TEST = """
from zkconsumer.scenarios.model import Action, Member, Production, Scenario, Scene, Topic

TWO = Scenario("two", "Two members", "one joins, the first leaves", Topic("sasl", 2), Production(rate=20),
               (Member("a"), Member("b")),
               (Scene(1, "a starts", "", (Action("start", "a"),)), Scene(2, "b joins", "", (Action("start", "b"),)),
                Scene(3, "a leaves", "", (Action("stop", "a"),))))


def test_the_move_at_a_sasl_cluster(zkconsumer_migration):
    result = zkconsumer_migration.compare(scenario=TWO, protocols=["legacy-range", "range", "consumer-uniform"])
    result.assert_nothing_lost()
    result.assert_committed_equals_consumed()
    assert all(o.produced > 0 for o in result.protocols.values())
    assert result["range"].coordinator.startswith("Apache Kafka 4.")
"""


@pytest.fixture(scope="module")
def scram_kafka(tmp_path_factory):
    """One KRaft node: PLAINTEXT between its own parts, SASL_PLAINTEXT (SCRAM-SHA-256) for clients."""
    require_kafka("kafka-4")
    sasl = f"{LOOPBACK}:{free_port()}"
    workdir = tmp_path_factory.mktemp("kafka-scram")
    broker = LocalKafkaKRaft(workdir, overrides=KAFKA_SETTINGS,
                             format_options=("--add-scram", f"SCRAM-SHA-256=[name={USER},password={SECRET}]"))
    controller = f"{LOOPBACK}:{broker.controller_port}"
    broker.overrides.update({
        "listeners": f"PLAINTEXT://{broker.address},SASL_PLAINTEXT://{sasl},CONTROLLER://{controller}",
        "advertised.listeners": f"PLAINTEXT://{broker.address},SASL_PLAINTEXT://{sasl}",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256",
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config":
            "org.apache.kafka.common.security.scram.ScramLoginModule required;",
    })
    with broker:
        yield sasl


def test_a_client_without_the_settings_is_refused(scram_kafka):
    with pytest.raises(ServerUnavailableError):
        identify(scram_kafka, timeout=bounded(3))


def test_a_team_s_suite_given_a_sasl_cluster_and_its_client_settings_runs_the_comparison(
        scram_kafka, zookeeper_connect, pytester):
    pytester.makefile(".properties", client=CLIENT_PROPERTIES)
    pytester.makeini(f"[pytest]\nzkconsumer_zookeeper = {zookeeper_connect}\n"
                     f"zkconsumer_bootstrap_server = {scram_kafka}\nzkconsumer_client_config = client.properties\n")
    pytester.makepyfile(test_team=TEAM_TEST)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:randomly", timeout=bounded(300))
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["zkconsumer: group coordinator broker (default): the broker's own, Apache Kafka 4.*",
                                 "zkconsumer: client settings from client.properties (ini zkconsumer_client_config)*"])
    assert SECRET not in result.stdout.str() + result.stderr.str()
