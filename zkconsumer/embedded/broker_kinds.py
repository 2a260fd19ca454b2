"""The broker ``zkconsumer local up --broker KIND`` runs, and what each kind needs around it.

- ``tansu`` (the default): the Tansu binary on memory storage (:mod:`.broker`), with the front in front of it for a
  group coordinator of Kafka's shape and the bridge mirroring it into ZooKeeper for the legacy members.
- ``kafka-4``: Apache Kafka 4.x, one KRaft node (:class:`~.kafka_broker.LocalKafkaKRaft`); Kafka is its own group
  coordinator, classic and KIP-848, so no front; the bridge shows it in ZooKeeper for the legacy members.
- ``kafka-3.9``: Apache Kafka 3.9 in ZooKeeper mode (:class:`~.kafka_broker.LocalKafkaZooKeeperMode`) at the root of
  the environment's ZooKeeper, where it registers itself and keeps its topics as a ZooKeeper-era cluster does: no
  bridge, and no front.

The Kafka brokers get the one setting the front gets below Kafka's defaults
(:data:`~.front.SHORT_CLASSIC_SESSIONS`: ``group.min.session.timeout.ms`` 1000), so that the same classic members
are accepted whichever coordinator runs; and lower bounds of the KIP-848 groups' session and heartbeat
(:data:`CONSUMER_GROUP_BOUNDS`), their values still Kafka's, so that a group may be given shorter ones as a group
config (``consumer.session.timeout.ms``: the migration comparison gives its KIP-848 groups the classic members'
session, as it gives its own front's). A Kafka broker keeps its log in the run directory across ``down`` and
``up``, so a run directory keeps the kind it was first started with (the file ``broker-kind`` there): another kind
is refused rather than run on the other's data, and ``up`` without ``--broker`` starts the kind recorded.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.embedded import kafka_artifacts
from zkconsumer.embedded.broker import LocalTansu, tansu_binary
from zkconsumer.embedded.front import SHORT_CLASSIC_SESSIONS, SHORT_SETTINGS_NOTE
from zkconsumer.embedded.kafka_broker import LocalKafka, LocalKafkaKRaft, LocalKafkaZooKeeperMode
from zkconsumer.errors import EnvironmentSetupError, UsageError

TANSU, KAFKA_4, KAFKA_3_9 = "tansu", "kafka-4", "kafka-3.9"
DEFAULT_BROKER = TANSU
KIND_FILE = "broker-kind"
#: the bounds a KIP-848 group's own session and heartbeat may take (Kafka's: 45000 and 5000 at least)
CONSUMER_GROUP_BOUNDS = {"group.consumer.min.session.timeout.ms": "1000",
                         "group.consumer.min.heartbeat.interval.ms": "100"}
#: ``group.min.session.timeout.ms`` as the front is given it (:data:`~.front.SHORT_CLASSIC_SESSIONS`), and the
#: KIP-848 groups' bounds
KAFKA_SETTINGS = {"group.min.session.timeout.ms": SHORT_CLASSIC_SESSIONS[1], **CONSUMER_GROUP_BOUNDS}
#: :data:`KAFKA_SETTINGS` as ``local up`` says them
KAFKA_SETTINGS_NOTE = (f"{SHORT_SETTINGS_NOTE}, group.consumer.min.session.timeout.ms 1000 and "
                       f"group.consumer.min.heartbeat.interval.ms 100 (Kafka's: 45000, 5000)")


@dataclass(frozen=True)
class BrokerKind:
    name: str
    #: the front goes in front of it: Tansu's own group coordinator is not Kafka's; Kafka is its own
    fronted: bool
    #: the bridge mirrors it into ZooKeeper; a ZooKeeper-mode Kafka registers itself there
    bridged: bool
    #: how long its SIGTERM may take before SIGKILL (a Kafka broker shuts down in a controlled way)
    stop_timeout: float
    help: str


KINDS: dict[str, BrokerKind] = {
    TANSU: BrokerKind(TANSU, True, True, LocalTansu.stop_timeout,
                      "Tansu on memory storage, the front its group coordinator (the default)"),
    KAFKA_4: BrokerKind(KAFKA_4, False, True, LocalKafka.stop_timeout,
                        "Apache Kafka 4.x (KRaft), its own group coordinator, shown in ZooKeeper by the bridge"),
    KAFKA_3_9: BrokerKind(KAFKA_3_9, False, False, LocalKafka.stop_timeout,
                          "Apache Kafka 3.9 in ZooKeeper mode, registered in ZooKeeper by itself"),
}
BROKER_KINDS = tuple(KINDS)


def choose(run_dir: Path, asked: str | None) -> BrokerKind:
    """The kind to start in ``run_dir``: the one asked for, else the one it was first started with, else Tansu;
    refused when it is not the recorded one."""
    if asked is not None and asked not in KINDS:
        raise UsageError(f"unknown broker {asked!r}: one of {', '.join(BROKER_KINDS)}")
    recorded = recorded_kind(run_dir)
    if asked is not None and recorded is not None and asked != recorded:
        raise UsageError(
            f"the run directory {run_dir} holds a {recorded} environment's data; start it with --broker {recorded}, "
            f"or give another --run-dir for a {asked} one"
        )
    return KINDS[asked or recorded or DEFAULT_BROKER]


def recorded_kind(run_dir: Path) -> str | None:
    try:
        text = (run_dir / KIND_FILE).read_text().strip()
    except FileNotFoundError:
        return None
    return text if text in KINDS else None


def record_kind(run_dir: Path, kind: BrokerKind) -> None:
    (run_dir / KIND_FILE).write_text(kind.name + "\n")


def check_installed(kind: BrokerKind) -> None:
    """Refuse a broker that cannot start here before anything else starts, in one line naming what is missing."""
    if kind.name == TANSU:
        tansu_binary()
    else:
        kafka_artifacts.check_installed(kind.name)


def broker_server(kind: BrokerKind, workdir: Path, port: int | None, zookeeper: str) -> LocalTansu | LocalKafka:
    """The broker of ``kind``, not started; ``zookeeper`` is the connect string a ZooKeeper-mode Kafka registers at."""
    if kind.name == KAFKA_4:
        return LocalKafkaKRaft(workdir, port, overrides=KAFKA_SETTINGS)
    if kind.name == KAFKA_3_9:
        return LocalKafkaZooKeeperMode(workdir, zookeeper, port, overrides=KAFKA_SETTINGS)
    return LocalTansu(workdir, port)


def software(broker: LocalTansu | LocalKafka) -> str:
    """What runs, for ``local status`` and the reports: ``Apache Kafka 4.1.0``, ``Tansu 0.6.0``."""
    if isinstance(broker, LocalKafka):
        return broker.description
    try:
        done = subprocess.run([tansu_binary(), "--version"], capture_output=True, text=True, timeout=10.0,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired, EnvironmentSetupError):
        return "Tansu"
    words = done.stdout.split()
    return f"Tansu {words[1]}" if len(words) >= 2 and words[0].lower() == "tansu" else "Tansu"
