"""Apache Kafka's artifacts as the bootstrap resolves them: the versions the poms name, and a missing variant refused
in one line naming the command that installs it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support import REPO, require_kafka

from zkconsumer.embedded import kafka_artifacts
from zkconsumer.errors import EnvironmentSetupError


def _pom_version(variant: str) -> str:
    pom = (REPO / "scripts" / "kafka" / variant / "pom.xml").read_text()
    found = re.search(r"<artifactId>kafka_2\.\d+</artifactId>\s*<version>([^<]+)</version>", pom)
    assert found, f"{variant}'s pom names no kafka_2.x artifact"
    return found.group(1)


@pytest.mark.parametrize("variant", kafka_artifacts.KAFKA_VARIANTS)
def test_each_variant_is_the_version_its_pom_names(variant):
    require_kafka(variant)
    assert kafka_artifacts.version(variant) == _pom_version(variant)
    jars = kafka_artifacts.classpath(variant).split(":")
    assert all(Path(jar).is_file() for jar in jars)
    # the logging binding the poms add (Kafka's own POMs leave it out): without it the broker logs nothing
    assert any(re.search(r"(log4j-slf4j-impl|slf4j-reload4j|slf4j-log4j12)-", jar) for jar in jars)


@pytest.mark.parametrize(("variant", "line"), [("kafka-4", "4."), ("kafka-3.9", "3.9."),
                                             ("legacy-consumer", "0.10.0.1")])  # the version zkconsumer follows
def test_each_pom_names_its_kafka_line(variant, line):
    assert _pom_version(variant).startswith(line)


def test_a_missing_variant_names_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv(kafka_artifacts.KAFKA_DIR_ENV, str(tmp_path))
    (tmp_path / "kafka-4").mkdir()  # a resolution that did not finish: no marker
    with pytest.raises(EnvironmentSetupError) as raised:
        kafka_artifacts.classpath("kafka-4")
    message = str(raised.value)
    assert "\n" not in message and "kafka-4" in message and kafka_artifacts.INSTALL_COMMAND in message

