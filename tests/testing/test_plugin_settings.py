"""The plugin's choices as a team's suite makes them: the servers, the coordinator and the client settings by
command-line option, ini setting or environment (option over ini over environment), the report header that names
them without starting anything, one line for a bad choice, and the fixture's name that leaves ``migration`` to the
team. Each run is pytest's own (``pytester``), in a directory of its own; none starts a server."""

from __future__ import annotations

import pytest

from zkconsumer import __version__

pytest_plugins = ["pytester"]

ENVIRONMENT = ("ZK_CONNECT", "KAFKA_BOOTSTRAP", "ZKCONSUMER_COORDINATOR", "ZKCONSUMER_CLIENT_CONFIG")
#: a broker address where nothing listens: the header asks it what it runs and gets no answer
NOBODY = "127.0.0.1:1"

COORDINATOR_TEST = """
def test_coordinator(zkconsumer_group_coordinator):
    print("coordinator:", zkconsumer_group_coordinator)
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)


def header(result) -> list[str]:
    return [line for line in result.outlines if line.startswith("zkconsumer: ") and "time scale" not in line]


def test_with_nothing_chosen_the_header_names_the_embedded_servers_and_the_front_without_starting_them(pytester):
    pytester.makepyfile(test_nothing="def test_nothing():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert header(result) == [
        "zkconsumer: ZooKeeper embedded (a container, else a local server), started on first use; broker embedded "
        "Tansu broker, started on first use",
        f"zkconsumer: group coordinator front (default): the front's own, zkconsumer {__version__}"]


def test_the_option_wins_over_the_ini_setting_which_wins_over_the_environment(pytester, monkeypatch):
    pytester.makeini("[pytest]\nzkconsumer_zookeeper = zk-from-ini:2181\nzkconsumer_coordinator = broker\n")
    pytester.makepyfile(test_choice=COORDINATOR_TEST)
    monkeypatch.setenv("ZK_CONNECT", "zk-from-env:2181")
    monkeypatch.setenv("ZKCONSUMER_COORDINATOR", "front")
    by_ini = pytester.runpytest("-s", "-p", "no:cacheprovider")
    by_ini.assert_outcomes(passed=1)
    by_ini.stdout.fnmatch_lines(["*coordinator: broker*"])
    assert header(by_ini) == [
        "zkconsumer: ZooKeeper zk-from-ini:2181 (ini zkconsumer_zookeeper); broker embedded Tansu broker, started on "
        "first use",
        "zkconsumer: group coordinator broker (ini zkconsumer_coordinator): the embedded Tansu broker's own"]
    by_option = pytester.runpytest("-s", "-p", "no:cacheprovider", "--zkconsumer-zookeeper", "zk-from-option:2181",
                                   "--zkconsumer-coordinator", "front")
    by_option.assert_outcomes(passed=1)
    by_option.stdout.fnmatch_lines(["*coordinator: front*"])
    assert header(by_option)[0].startswith("zkconsumer: ZooKeeper zk-from-option:2181 (--zkconsumer-zookeeper); ")
    assert header(by_option)[1].startswith("zkconsumer: group coordinator front (--zkconsumer-coordinator): ")
    pytester.makeini("[pytest]\n")
    by_environment = pytester.runpytest("-s", "-p", "no:cacheprovider")
    by_environment.stdout.fnmatch_lines(["*coordinator: front*"])
    assert header(by_environment)[0].startswith("zkconsumer: ZooKeeper zk-from-env:2181 (ZK_CONNECT); ")
    assert header(by_environment)[1].startswith("zkconsumer: group coordinator front (ZKCONSUMER_COORDINATOR): ")


def test_a_broker_given_runs_the_groups_at_its_own_coordinator_named_as_it_answers(pytester):
    pytester.makeini(f"[pytest]\nzkconsumer_bootstrap_server = {NOBODY}\n")
    pytester.makepyfile(test_choice=COORDINATOR_TEST)
    result = pytester.runpytest("-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*coordinator: broker*"])
    assert header(result)[1] == ("zkconsumer: group coordinator broker (default): the broker's own, not named by its "
                                 "ApiVersions")


@pytest.mark.parametrize(("ini", "args", "line"), [
    ("", ("--zkconsumer-coordinator", "kafka"),
     "--zkconsumer-coordinator 'kafka': expected one of front, broker"),
    ("zkconsumer_client_config = client.properties\n", (),
     "ini zkconsumer_client_config: client settings are for a broker given (--zkconsumer-bootstrap-server, ini "
     "zkconsumer_bootstrap_server or KAFKA_BOOTSTRAP); the embedded broker takes plain connections"),
    (f"zkconsumer_client_config = client.properties\nzkconsumer_bootstrap_server = {NOBODY}\n",
     ("--zkconsumer-coordinator", "front"),
     "--zkconsumer-coordinator front: the front cannot stand before a broker reached with client settings (ini "
     "zkconsumer_client_config); use the broker's own coordinator"),
    (f"zkconsumer_client_config = missing.properties\nzkconsumer_bootstrap_server = {NOBODY}\n", (),
     "ini zkconsumer_client_config: client settings {dir}/missing.properties: No such file or directory"),
    (f"zkconsumer_client_config = client.properties\nzkconsumer_bootstrap_server = {NOBODY}\n", (),
     "ini zkconsumer_client_config: client settings {dir}/client.properties line 2: expected KEY=VALUE"),
])
def test_a_bad_choice_is_one_line_before_any_test_runs(pytester, ini, args, line):
    pytester.makeini(f"[pytest]\n{ini}")
    pytester.makefile(".properties", client="security.protocol=SASL_PLAINTEXT\nsecret-without-a-key\n")
    pytester.makepyfile(test_choice=COORDINATOR_TEST)
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [entry for entry in result.errlines if entry.strip()]
    assert errors == [f"ERROR: {line.format(dir=pytester.path)}"], result.errlines
    assert "secret" not in result.stderr.str()


def test_client_settings_reach_every_client_and_member_of_a_broker_given(pytester):
    """Through the environment every process of the session inherits: the admin client, the producer and a member
    process started by a test all take them (an unknown property, refused by librdkafka, proves each took them)."""
    pytester.makeini(f"[pytest]\nzkconsumer_client_config = conf/client.properties\n"
                     f"zkconsumer_bootstrap_server = {NOBODY}\n")
    (pytester.path / "conf").mkdir()
    (pytester.path / "conf" / "client.properties").write_text("# the cluster's\nno.such.property = 1\n")
    pytester.makepyfile(test_clients=f"""
import os, subprocess, sys
import pytest
from confluent_kafka import KafkaException

def test_clients(zkconsumer_group_coordinator):
    assert os.environ["ZKCONSUMER_CLIENT_CONFIG"] == {str(pytester.path / "conf" / "client.properties")!r}
    from zkconsumer.kafka.metadata import admin_client
    from zkconsumer.testing.helpers import produce
    with pytest.raises(KafkaException, match="no.such.property"):
        admin_client("{NOBODY}")
    with pytest.raises(KafkaException, match="no.such.property"):
        produce("{NOBODY}", "topic", 1)
    member = subprocess.run([sys.executable, "-m", "zkconsumer.members.modern_member", "--bootstrap", "{NOBODY}",
                             "--group", "g", "--topic", "t", "--consumer-id", "m1"],
                            capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert member.returncode != 0 and "no.such.property" in member.stderr, member.stderr[-2000:]
""")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    assert header(result)[2] == ("zkconsumer: client settings from conf/client.properties (ini "
                                 "zkconsumer_client_config), given to every client and member")


def test_the_fixture_leaves_the_name_migration_to_the_team(pytester):
    pytester.makeconftest("import pytest\n\n@pytest.fixture\ndef migration():\n    return 'the team s own'\n")
    pytester.makepyfile(test_names="""
def test_names(migration):
    assert migration == "the team s own"
""")
    result = pytester.runpytest("-p", "no:cacheprovider", "--fixtures")
    result.stdout.fnmatch_lines(["zkconsumer_migration*"])
    ran = pytester.runpytest("-p", "no:cacheprovider")
    ran.assert_outcomes(passed=1)
