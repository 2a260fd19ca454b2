"""Apache Kafka from its own Maven artifacts: where the jars of each variant are and which version they are.

``scripts/bootstrap.sh`` (with ``test`` or ``kafka``) resolves ``scripts/kafka/<variant>/pom.xml`` with Maven's
``dependency:copy-dependencies`` into ``.kafka/<variant>/`` of the checkout, once, and writes ``.installed`` there
last; nothing is fetched while the project runs. ``ZKCONSUMER_KAFKA_DIR`` names another folder holding the variants
(an install outside a checkout). A variant that is not there is refused in one line naming the command that
installs it, so a test can skip with exactly that line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from zkconsumer.embedded.process import java_executable
from zkconsumer.errors import EnvironmentSetupError

KAFKA_DIR_ENV = "ZKCONSUMER_KAFKA_DIR"
#: the variants of scripts/kafka/: a Kafka 4.x broker (KRaft), a Kafka 3.9 broker (ZooKeeper mode), and the
#: original Scala consumer of Kafka 0.10.0.1 (kafka.consumer.ZookeeperConsumerConnector, kafka.tools.ConsoleConsumer)
KAFKA_VARIANTS: tuple[str, ...] = ("kafka-4", "kafka-3.9", "legacy-consumer")
INSTALLED_MARKER = ".installed"
INSTALL_COMMAND = "scripts/bootstrap.sh .venv kafka"
_KAFKA_JAR = re.compile(r"^kafka_2\.\d+-(?P<version>\d[\w.]*)\.jar$")


def kafka_dir() -> Path:
    """The folder holding one sub-folder per variant: ``ZKCONSUMER_KAFKA_DIR``, else ``.kafka`` of the checkout."""
    given = os.environ.get(KAFKA_DIR_ENV, "").strip()
    return Path(given) if given else Path(__file__).resolve().parents[2] / ".kafka"


def variant_dir(variant: str) -> Path:
    """The variant's folder of jars, once the bootstrap has resolved it completely."""
    if variant not in KAFKA_VARIANTS:
        raise EnvironmentSetupError(f"unknown Apache Kafka variant {variant!r}: one of {', '.join(KAFKA_VARIANTS)}")
    folder = kafka_dir() / variant
    if not (folder / INSTALLED_MARKER).is_file():
        raise EnvironmentSetupError(
            f"Apache Kafka {variant} is not installed (no {folder / INSTALLED_MARKER}): run {INSTALL_COMMAND}"
        )
    return folder


def jars(variant: str) -> list[Path]:
    return sorted((variant_dir(variant)).glob("*.jar"))


def classpath(variant: str) -> str:
    """The variant's jars joined into a Java class path."""
    return os.pathsep.join(str(jar) for jar in jars(variant))


def version(variant: str) -> str:
    """Kafka's version in the variant, as its core jar is named (``kafka_2.13-4.1.0.jar``: ``4.1.0``)."""
    for jar in jars(variant):
        match = _KAFKA_JAR.match(jar.name)
        if match:
            return match.group("version")
    raise EnvironmentSetupError(
        f"Apache Kafka {variant} in {variant_dir(variant)} has no kafka_2.x jar: run {INSTALL_COMMAND} again"
    )


def java_command() -> str:
    """The ``java`` that runs Kafka: ``$JAVA_HOME/bin/java``, else the one on PATH."""
    java = java_executable()
    if java is None:
        raise EnvironmentSetupError(
            "no Java runtime found (no java on PATH, JAVA_HOME unset): Apache Kafka needs Java 17+; "
            f"install it (Debian: apt-get install default-jre-headless) or run {INSTALL_COMMAND}"
        )
    return java


def check_installed(variant: str) -> None:
    """Refuse, in one line naming what is missing, unless Java and the variant's jars are both here."""
    java_command()
    variant_dir(variant)
