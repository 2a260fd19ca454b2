"""A real ZooKeeper: the ensemble in ``ZK_CONNECT``, a Docker container, or a local server process.

The container runs ``zookeeper:3.8`` unless ``ZKCONSUMER_ZOOKEEPER_IMAGE`` names another image.

The local server is run from an installed distribution: the Debian package ``zookeeper``
(``/usr/share/java/zookeeper.jar``, whose manifest carries its class path) or a tarball named by
``ZOOKEEPER_HOME``. It gets a free loopback port and its own data directory, and is ready when it
answers ``imok`` to the ``ruok`` four-letter word.
"""

from __future__ import annotations

import os
import shlex
from contextlib import AbstractContextManager
from pathlib import Path

from kazoo.exceptions import KazooException

from zkconsumer.embedded import docker
from zkconsumer.embedded.process import LOOPBACK, LocalServer, java_executable
from zkconsumer.embedded.provider import provide
from zkconsumer.errors import EnvironmentSetupError, ServerUnavailableError
from zkconsumer.zk.client import zookeeper

ZK_CONNECT_ENV = "ZK_CONNECT"
ZOOKEEPER_IMAGE = "zookeeper:3.8"
#: another image for the Docker path, such as the project's own ``zkconsumer/zookeeper:3.8-debian``
#: (built by scripts/containers.sh where the official image cannot be pulled)
ZOOKEEPER_IMAGE_ENV = "ZKCONSUMER_ZOOKEEPER_IMAGE"
DEBIAN_JAR = Path("/usr/share/java/zookeeper.jar")
#: Debian's SLF4J backend that prints to stderr (the server's log file): without a backend on its class path, the
#: Debian jar's server logs nothing, and one that exits while starting (a port taken, say) says nothing of why
DEBIAN_SIMPLE_LOGGER = Path("/usr/share/java/slf4j-simple.jar")
MAIN_CLASS = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

_INSTALL_HINT = (
    "install a ZooKeeper distribution (Debian/Ubuntu: apt-get install zookeeper; elsewhere unpack the "
    "ZooKeeper 3.8 tarball and set ZOOKEEPER_HOME), start a Docker engine, or set ZK_CONNECT=host:port"
)


def find_java() -> str:
    java = java_executable()
    if java is None:
        raise EnvironmentSetupError(
            "no Java runtime found (no java on PATH, JAVA_HOME unset): a local ZooKeeper server needs one; "
            "install Java 11+ (Debian: apt-get install default-jre-headless) or set ZK_CONNECT"
        )
    return java


def find_classpath() -> str:
    home = os.environ.get("ZOOKEEPER_HOME")
    if home:
        lib = Path(home) / "lib"
        if not lib.is_dir():
            raise EnvironmentSetupError(f"ZOOKEEPER_HOME={home} has no lib/ directory: is it a ZooKeeper distribution?")
        return f"{lib}/*"
    if DEBIAN_JAR.exists():
        return f"{DEBIAN_JAR}:{DEBIAN_SIMPLE_LOGGER}" if DEBIAN_SIMPLE_LOGGER.exists() else str(DEBIAN_JAR)
    raise EnvironmentSetupError(f"no ZooKeeper distribution found: {_INSTALL_HINT}")


def ruok(connect: str, timeout: float = 2.0) -> bool:
    """Connect and ask ``ruok``; the answer ``imok`` means the server serves requests."""
    try:
        with zookeeper(connect, timeout, quiet=True) as client:
            return client.command(b"ruok") == "imok"
    except (ServerUnavailableError, OSError, KazooException):
        return False


#: the environment variable of the server's JVM flags (ZooKeeper's own name, read by its zkServer.sh)
SERVER_JVMFLAGS = "SERVER_JVMFLAGS"


class LocalZooKeeper(LocalServer):
    """A standalone ZooKeeper server process with its own data directory."""

    what = "ZooKeeper server"

    def prepare(self) -> None:
        data_dir = self.workdir / "data"
        data_dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(
            "\n".join(
                [
                    "tickTime=500",
                    "initLimit=10",
                    "syncLimit=5",
                    f"dataDir={data_dir}",
                    f"clientPort={self.port}",
                    f"clientPortAddress={LOOPBACK}",
                    "maxClientCnxns=0",
                    # Sessions as short as 1 s, so tests can expire one quickly.
                    "minSessionTimeout=1000",
                    "maxSessionTimeout=60000",
                    "admin.enableServer=false",
                    "4lw.commands.whitelist=ruok,srvr,stat,mntr,cons,wchs,envi,conf",
                    "",
                ]
            )
        )

    @property
    def config_path(self) -> Path:
        return self.workdir / "zoo.cfg"

    def argv(self) -> list[str]:
        return [
            find_java(),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            # the server's own JVM flags, as ZooKeeper's zkServer.sh takes them: the test suite gives C1 alone
            # (cheaper to start and to serve a few requests: 0.33 CPU-s instead of 0.5), while a group of twenty
            # members joining a 10,000-partition topic (benchmarks/user_group_join.py) wants C2's throughput
            *shlex.split(os.environ.get(SERVER_JVMFLAGS, "")),
            "-Dzookeeper.jmx.log4j.disable=true",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",  # its errors only (DEBIAN_SIMPLE_LOGGER)
            f"-Dzookeeper.log.dir={self.workdir}",
            "-cp",
            find_classpath(),
            MAIN_CLASS,
            str(self.config_path),
        ]

    def ready(self) -> bool:
        return ruok(self.address, timeout=1.0)

    @property
    def connect(self) -> str:
        return self.address


def _check_external(connect: str) -> None:
    with zookeeper(connect):  # fails with a clear message when the ensemble does not answer
        pass


def zookeeper_image() -> str:
    return os.environ.get(ZOOKEEPER_IMAGE_ENV, "").strip() or ZOOKEEPER_IMAGE


def provide_zookeeper(workdir: Path) -> AbstractContextManager[str]:
    """A ZooKeeper connect string: ``ZK_CONNECT``, else a Docker container, else a local server."""
    return provide(
        "zookeeper", ZK_CONNECT_ENV, _check_external, lambda: docker.zookeeper_container(zookeeper_image()),
        lambda: LocalZooKeeper(workdir),
    )
