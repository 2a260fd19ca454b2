"""What the benchmarks share: the servers of a run, the machine's description, the process's memory.

Imported by the benchmark scripts as a sibling module (``python benchmarks/x.py`` puts this folder first on the
path), never by the package.
"""

from __future__ import annotations

import os
import platform
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, NamedTuple


class Servers(NamedTuple):
    zookeeper: str  # the server's root
    connect: str  # this run's chroot under it, where the bridge registers the broker
    bootstrap: str  # what clients are given: the front in front of the broker, as in the embedded environment
    broker: str  # the broker itself (the same as ``bootstrap`` with front=False or KAFKA_BOOTSTRAP)


@contextmanager
def servers(workdir: Path, front: bool = True) -> Iterator[Servers]:
    """ZooKeeper (a chroot of this run), the broker with the front in front of it (unless ``front`` is false), and
    the bridge that registers in that chroot the broker as clients are told to reach it."""
    from zkconsumer.bridge.metadata_bridge import MetadataBridge
    from zkconsumer.embedded.front import front_options
    from zkconsumer.embedded.servers import SESSION, ServerOptions, provide_servers
    from zkconsumer.zk.client import zookeeper as zk_client

    with ExitStack() as stack:
        provided = stack.enter_context(provide_servers(ServerOptions(embedded=SESSION, workdir=workdir, front=front,
                                                                     front_options=front_options())))
        zookeeper, bootstrap = provided.zookeeper, provided.bootstrap
        chroot = f"/zkconsumer-bench-{uuid.uuid4().hex[:8]}"
        with zk_client(zookeeper) as root:
            root.ensure_path(chroot)
        connect = f"{zookeeper}{chroot}"
        stack.enter_context(MetadataBridge(connect, bootstrap, interval_ms=250).running())
        yield Servers(zookeeper, connect, bootstrap, provided.broker)


def wait_for_topic(connect: str, topic: str, partitions: int, timeout: float = 30.0) -> None:
    """Until the bridge shows the topic with all its partitions in ZooKeeper (the consumer reads them there)."""
    from zkconsumer.zk.client import zookeeper as zk_client
    from zkconsumer.zk.cluster import wait_for_topic as wait

    with zk_client(connect) as client:
        wait(client, topic, partitions, timeout)


def wait_for_brokers(zk: Any, timeout: float = 30.0) -> None:
    """Until a broker is registered in ``/brokers/ids`` (the bridge mirrors it there); a RuntimeError after
    ``timeout`` seconds."""
    from zkconsumer.zk import paths
    from zkconsumer.zk.reads import children

    deadline = time.monotonic() + timeout
    while not children(zk, paths.BROKER_IDS_PATH):
        if time.monotonic() > deadline:
            raise RuntimeError(f"no broker registered in {paths.BROKER_IDS_PATH} within {timeout:.0f} s")
        time.sleep(0.1)


def machine() -> str:
    """CPU model and core count where Linux says them, else what ``platform`` knows."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} cores, {platform.system()} {platform.release()}"


def memory_kib(field: str = "VmRSS", pid: int | str = "self") -> int:
    """A memory line of ``/proc/<pid>/status`` in KiB (Linux): ``VmRSS`` now, ``VmHWM`` the most it ever had; -1
    where there is none."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    except OSError:
        pass
    return -1
