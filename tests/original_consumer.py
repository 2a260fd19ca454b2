"""Kafka's own ZooKeeper-era console consumer as a process: ``kafka.tools.ConsoleConsumer --zookeeper`` of Kafka
0.10.0.1, whose group member is the Scala ``kafka.consumer.ZookeeperConsumerConnector`` zkconsumer reimplements, run
from the ``legacy-consumer`` artifacts the bootstrap installs (:mod:`zkconsumer.embedded.kafka_artifacts`).

What the tool does with its settings, read from its bytecode and seen running: ``--topic T`` subscribes through
``createMessageStreamsByFilter(Whitelist(T), 1)``, so the member registers the pattern ``white_list`` with one
stream; ``auto.offset.reset`` is always overwritten (``smallest`` with ``--from-beginning``, else ``largest``), and
``--from-beginning`` refuses to start when ``/consumers/<group>/offsets`` exists. It prints each message's value on a
line, flushed (``System.out`` is an autoflushing ``PrintStream``), so a SIGKILL loses nothing already printed.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from time_scale import bounded

from zkconsumer.embedded import kafka_artifacts

VARIANT = "legacy-consumer"
#: a client of a few partitions: a small heap, and no optimizing compiler (half the CPU a JVM start takes)
JVM_OPTIONS = ("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")
#: Kafka's log at WARN on stderr (the tool ships no log4j configuration: without one, log4j prints only its own
#: warning that it has none)
LOG4J = ("log4j.rootLogger=WARN, stderr\n"
         "log4j.appender.stderr=org.apache.log4j.ConsoleAppender\n"
         "log4j.appender.stderr.Target=System.err\n"
         "log4j.appender.stderr.layout=org.apache.log4j.PatternLayout\n"
         "log4j.appender.stderr.layout.ConversionPattern=[%d] %p %m (%c)%n\n")


@dataclass
class OriginalConsoleConsumer:
    """One running ConsoleConsumer: its process, the file its values go to, the file its log goes to."""

    process: subprocess.Popen
    output: Path
    log: Path

    def values(self) -> list[str]:
        return self.output.read_text().splitlines() if self.output.exists() else []

    def kill(self) -> None:
        """SIGKILL: nothing committed, the ZooKeeper session left to expire."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(bounded(10))

    def stop(self) -> int:
        """SIGTERM: the tool's shutdown hook shuts the connector down (commit, session closed); its exit status."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(bounded(20))
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait(bounded(10))

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:]) if self.log.exists() else ""


def start(workdir: Path, name: str, *, zookeeper: str, topic: str, group: str, properties: Mapping[str, object],
          from_beginning: bool = False) -> OriginalConsoleConsumer:
    """Start the tool as a member of ``group`` reading ``topic``; ``properties`` go to its ``--consumer.config``."""
    kafka_artifacts.check_installed(VARIANT)
    workdir.mkdir(parents=True, exist_ok=True)
    config = workdir / f"{name}.properties"
    config.write_text("".join(f"{key}={value}\n" for key, value in {"group.id": group, **properties}.items()))
    log4j = workdir / "log4j.properties"
    log4j.write_text(LOG4J)
    output, log = workdir / f"{name}.out", workdir / f"{name}.log"
    command = [kafka_artifacts.java_command(), *JVM_OPTIONS, f"-Dlog4j.configuration={log4j.as_uri()}",
               "-cp", kafka_artifacts.classpath(VARIANT), "kafka.tools.ConsoleConsumer",
               "--zookeeper", zookeeper, "--topic", topic, "--consumer.config", str(config),
               *(["--from-beginning"] if from_beginning else [])]
    with output.open("wb") as out, log.open("wb") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    return OriginalConsoleConsumer(process, output, log)
