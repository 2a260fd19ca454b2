"""The service's Java consumer (java/OrdersConsumer.java), compiled once per session against kafka-clients, for the
test that runs it as the members of a modern group.

Where the jars come from: ``KAFKA_CLIENTS_CLASSPATH`` (your build's class path, as ``mvn
dependency:build-classpath`` prints it), else the Kafka 4 artifacts zkconsumer installs for its own use
(``scripts/bootstrap.sh .venv kafka``, in ``ZKCONSUMER_KAFKA_DIR``). Without a JDK or the jars, the Java test is
skipped, saying which is missing.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "java" / "OrdersConsumer.java"
#: what the consumer needs of Kafka's artifacts: the client, its logging API and its compression codecs; no logging
#: backend (log4j without a configuration would print the client's errors on stdout, among the reports)
CLIENT_JARS = ("kafka-clients-", "slf4j-api-", "lz4-java-", "snappy-java-", "zstd-jni-")


def kafka_clients_classpath() -> str:
    given = os.environ.get("KAFKA_CLIENTS_CLASSPATH")
    if given:
        return given
    from zkconsumer.embedded import kafka_artifacts
    from zkconsumer.errors import EnvironmentSetupError

    try:
        jars = [j for j in kafka_artifacts.jars("kafka-4") if j.name.startswith(CLIENT_JARS)]
    except EnvironmentSetupError as exc:
        pytest.skip(f"no kafka-clients jars for the Java consumer (set KAFKA_CLIENTS_CLASSPATH): {exc}")
    return ":".join(map(str, jars))


@pytest.fixture(scope="session")
def java_consumer(tmp_path_factory) -> list[str]:
    """The command that runs the Java consumer, compiled into a session directory."""
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("no JDK on the PATH (javac and java): the Java consumer is compiled here")
    classpath = kafka_clients_classpath()
    classes = tmp_path_factory.mktemp("orders-consumer")
    subprocess.run([javac, "-cp", classpath, "-d", str(classes), str(SOURCE)], check=True, timeout=120)
    return [java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", f"{classes}:{classpath}", "OrdersConsumer"]
