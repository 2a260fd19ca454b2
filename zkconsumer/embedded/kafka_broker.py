"""Apache Kafka itself as a local broker, run from its Maven artifacts (:mod:`.kafka_artifacts`).

Two shapes, each one process on free loopback ports with its data in its own working directory:

- :class:`LocalKafkaKRaft`, Kafka 4.x (``kafka-4``): one node that is both broker and controller, its quorum the
  static ``controller.quorum.voters`` of itself, so its log directory is formatted by ``kafka.tools.StorageTool
  format`` without ``--standalone``; formatted once, so the same directory restarts with its topics and groups.
  Its group coordinator is Kafka's own (the classic protocol and KIP-848's ``consumer`` protocol); it registers in no
  ZooKeeper, which is what the bridge is for.
- :class:`LocalKafkaZooKeeperMode`, Kafka 3.9 (``kafka-3.9``): a ZooKeeper-mode broker, ``zookeeper.connect`` the
  ensemble with a chroot of its own, its one listener named ``PLAINTEXT`` (the endpoint a ZooKeeper-era consumer
  reads from ``/brokers/ids``), registered there by Kafka itself.

Both are Kafka's defaults but for what one node needs (the internal topics' replication factors and minimum ISR at 1)
and what the caller adds (``overrides``: ``local up`` gives Kafka the short classic sessions it gives the front). A
broker is ready when a Metadata request lists it (a KRaft broker is listed once unfenced). Kafka's logging goes to
``kafka.log`` in the working directory, at INFO, through the binding the variant's pom adds.
"""

from __future__ import annotations

import base64
import subprocess
import uuid
from pathlib import Path

from zkconsumer.embedded import kafka_artifacts
from zkconsumer.embedded.process import LOOPBACK, LocalServer, free_port
from zkconsumer.errors import EnvironmentSetupError, ServerUnavailableError
from zkconsumer.kafka.metadata import admin_client, fetch_metadata

#: what one node needs to run the internal topics Kafka creates (their defaults want 3 replicas, 2 in sync)
SINGLE_NODE = {
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
}
#: the same for Kafka 4.x's share groups (KIP-932), whose state topic Kafka 3.9 does not know
SINGLE_NODE_SHARE = {
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
}
#: a small machine runs several JVMs at once (ZooKeeper, Kafka, the original consumer): Kafka's own 1 GiB heap and
#: G1 collector are for a server of its own. The client compiler only (TieredStopAtLevel=1) halves the CPU a start
#: takes (3.8-4.1 s against 6.8-7.1 s measured here for a KRaft node), and a node serving a few test groups never
#: needs the optimizing compiler's code.
JVM_OPTIONS = ("-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")
FORMAT_TIMEOUT_S = 120.0
NODE_ID = 1


def _cluster_id() -> str:
    """A KRaft cluster id as Kafka's ``Uuid.randomUuid`` makes them: 16 random bytes, base64url without padding, and
    not starting with ``-`` (it would read as an option on a command line)."""
    while True:
        text = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
        if not text.startswith("-"):
            return text


def _properties(settings: dict[str, str]) -> str:
    return "".join(f"{name}={value}\n" for name, value in settings.items())


class LocalKafka(LocalServer):
    """What both shapes share: the JVM, the class path of the variant, the logging, the readiness probe."""

    variant = ""
    what = "Kafka broker"
    start_timeout = 90.0  # a JVM start on a busy small machine: Kafka's own start is several seconds of it
    stop_timeout = 15.0  # a controlled shutdown; SIGKILL after it

    def __init__(self, workdir: Path, port: int | None = None, overrides: dict[str, str] | None = None) -> None:
        kafka_artifacts.check_installed(self.variant)  # refused in one line before anything is written or started
        super().__init__(workdir, port)
        self.overrides = dict(overrides or {})

    @property
    def version(self) -> str:
        return kafka_artifacts.version(self.variant)

    @property
    def description(self) -> str:
        """What a report names: ``Apache Kafka 4.1.0``."""
        return f"Apache Kafka {self.version}"

    @property
    def config_path(self) -> Path:
        return self.workdir / "server.properties"

    @property
    def data_dir(self) -> Path:
        return self.workdir / "data"

    @property
    def bootstrap(self) -> str:
        return self.address

    def settings(self) -> dict[str, str]:
        raise NotImplementedError

    def logging_options(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(_properties({**self.settings(), **self.overrides}))

    def java(self, main_class: str, *args: str) -> list[str]:
        return [kafka_artifacts.java_command(), *JVM_OPTIONS, *self.logging_options(),
                f"-Dkafka.logs.dir={self.workdir}", "-cp", kafka_artifacts.classpath(self.variant), main_class, *args]

    def argv(self) -> list[str]:
        return self.java("kafka.Kafka", str(self.config_path))

    def ready(self) -> bool:
        try:
            snapshot = fetch_metadata(admin_client(self.address), self.address, timeout=1.0)
        except ServerUnavailableError:
            return False
        return bool(snapshot.brokers)


class LocalKafkaKRaft(LocalKafka):
    """A Kafka 4.x node, broker and controller in one process (KRaft)."""

    variant = "kafka-4"

    def __init__(self, workdir: Path, port: int | None = None, controller_port: int | None = None,
                 overrides: dict[str, str] | None = None, format_options: tuple[str, ...] = ()) -> None:
        super().__init__(workdir, port, overrides)
        self.controller_port = controller_port or free_port()
        # more of ``kafka-storage format``'s options: ``--add-scram SCRAM-SHA-256=[name=alice,password=...]`` creates
        # a SCRAM user before the first start, as KIP-900 lets a KRaft cluster bootstrap its credentials
        self.format_options = format_options

    def settings(self) -> dict[str, str]:
        controller = f"{LOOPBACK}:{self.controller_port}"
        return {
            "process.roles": "broker,controller",
            "node.id": str(NODE_ID),
            "controller.quorum.voters": f"{NODE_ID}@{controller}",
            "listeners": f"PLAINTEXT://{self.address},CONTROLLER://{controller}",
            "advertised.listeners": f"PLAINTEXT://{self.address}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
            "controller.listener.names": "CONTROLLER",
            "inter.broker.listener.name": "PLAINTEXT",
            "log.dirs": str(self.data_dir),
            **SINGLE_NODE,
            **SINGLE_NODE_SHARE,
        }

    def logging_options(self) -> list[str]:
        config = self.workdir / "log4j2.properties"
        config.write_text(_LOG4J2)
        return [f"-Dlog4j2.configurationFile={config}"]

    def prepare(self) -> None:
        super().prepare()
        if not (self.data_dir / "meta.properties").exists():
            self._format()

    def _format(self) -> None:
        """Give the log directory its cluster id and the quorum's first record, as ``kafka-storage.sh format``."""
        argv = self.java("kafka.tools.StorageTool", "format", "-t", _cluster_id(), "-c", str(self.config_path),
                         *self.format_options)
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=FORMAT_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise EnvironmentSetupError(
                f"formatting {self.data_dir} for Kafka took over {FORMAT_TIMEOUT_S:.0f} s") from None
        if done.returncode != 0:
            raise EnvironmentSetupError(f"formatting {self.data_dir} for Kafka failed (status {done.returncode}): "
                                        f"{(done.stdout + done.stderr).strip()[-800:]}")


class LocalKafkaZooKeeperMode(LocalKafka):
    """A Kafka 3.9 broker in ZooKeeper mode, registered under ``zookeeper_connect`` (a chroot of its own)."""

    variant = "kafka-3.9"

    def __init__(self, workdir: Path, zookeeper_connect: str, port: int | None = None, broker_id: int = 0,
                 overrides: dict[str, str] | None = None) -> None:
        super().__init__(workdir, port, overrides)
        self.zookeeper_connect = zookeeper_connect
        self.broker_id = broker_id

    def settings(self) -> dict[str, str]:
        return {
            "broker.id": str(self.broker_id),
            "zookeeper.connect": self.zookeeper_connect,
            "listeners": f"PLAINTEXT://{self.address}",
            "advertised.listeners": f"PLAINTEXT://{self.address}",
            "log.dirs": str(self.data_dir),
            **SINGLE_NODE,
        }

    def logging_options(self) -> list[str]:
        config = self.workdir / "log4j.properties"
        config.write_text(_LOG4J)
        return [f"-Dlog4j.configuration=file:{config}"]


_PATTERN = "[%d] %p %m (%c)%n"
#: Kafka 4.x logs through log4j 2: everything at INFO to standard output, which the launcher writes to kafka.log
_LOG4J2 = f"""status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = {_PATTERN}
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
"""
#: Kafka 3.9 through reload4j (log4j 1.2's API): the same
_LOG4J = f"""log4j.rootLogger=INFO, out
log4j.appender.out=org.apache.log4j.ConsoleAppender
log4j.appender.out.layout=org.apache.log4j.PatternLayout
log4j.appender.out.layout.ConversionPattern={_PATTERN}
"""
