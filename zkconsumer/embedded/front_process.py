"""The front as a child process on a free loopback port: what the embedded environment and the test fixtures start.

``python -m zkconsumer.front`` is started with ``--port 0``: the front takes a free port itself and writes it to a
file once it listens, so no port is chosen here and lost to another program before the front binds it. It is ready
when it answers ApiVersions, which it relays to the broker: a ready front has a broker behind it. Its events are
JSON lines in ``front.log`` of the working directory, the file the comparison and ``zkconsumer trace`` can read.
The child runs in its own session (:func:`~zkconsumer.embedded.process.spawn`, as every server the project starts), so
a terminal's Ctrl-C reaches the caller, which stops it; whatever interrupts :meth:`FrontProcess.start` stops it too,
since no caller holds it yet.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from zkconsumer.embedded.process import LOOPBACK, ProcessRecord, spawn, wait_until_ready
from zkconsumer.errors import EnvironmentSetupError

START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0  # how long SIGTERM may take before SIGKILL
#: what the front's process is given beyond its parent's environment: its events as JSON lines, for its readers
ENVIRONMENT = {"ZKCONSUMER_LOG_JSON": "1"}
PORT_OPTION = "--port"


def on_port(argv: list[str] | tuple[str, ...], port: int) -> list[str]:
    """A front's command line (:meth:`FrontProcess.argv`) listening on ``port`` instead of the one it names: how a
    front started on a free port is started again where its clients know it (``local up`` healing its run
    directory)."""
    pinned = list(argv)
    if PORT_OPTION in pinned[:-1]:
        pinned[pinned.index(PORT_OPTION) + 1] = str(port)
    else:  # the last of an option given twice is the one taken: an added one pins it all the same
        pinned += [PORT_OPTION, str(port)]
    return pinned


class FrontProcess:
    """A front relaying to ``bootstrap``, started by :meth:`start` (or ``with``), stopped by :meth:`stop`.

    ``options`` are more command-line options of the front (``--advertised-host``...).
    """

    def __init__(self, bootstrap: str, workdir: Path, host: str = LOOPBACK, options: tuple[str, ...] = ()) -> None:
        self.bootstrap = bootstrap
        self.workdir = Path(workdir)
        self.host = host
        self.options = options
        self.port: int | None = None
        #: the running front, as the embedded environment records it; ``None`` when it is not started
        self.record: ProcessRecord | None = None
        self.process: subprocess.Popen[bytes] | None = None
        #: the port a restart keeps, where its clients know it (None: any free port)
        self.pinned: int | None = None

    @property
    def address(self) -> str:
        if self.port is None:
            raise EnvironmentSetupError("the front is not started")
        return f"{self.host}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / "front.log"

    @property
    def port_file(self) -> Path:
        return self.workdir / "front.port"

    def argv(self) -> list[str]:
        return [sys.executable, "-m", "zkconsumer.front", "--bootstrap-server", self.bootstrap, "--host", self.host,
                PORT_OPTION, str(self.pinned or 0), "--port-file", str(self.port_file), *self.options]

    def restart(self, timeout: float = START_TIMEOUT) -> None:
        """Stopped (SIGTERM, as :meth:`stop`) and started again on the same port: a coordinator's restart, its
        clients reconnecting where they knew it."""
        self.pinned = self.port
        self.stop()
        self.start(timeout)

    def start(self, timeout: float = START_TIMEOUT) -> FrontProcess:
        """Start the front and wait until it answers; on any failure or interruption the child is stopped before the
        exception goes on, as no caller holds it yet to stop it."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = None  # the port a new front writes, never a previous one's
        self.port_file.unlink(missing_ok=True)
        env = {**os.environ, **ENVIRONMENT}
        self.record, self.process = spawn(self.argv(), self.log_path, env=env)
        try:
            wait_until_ready(self.record, self.process, self._ready, "the front", timeout, STOP_TIMEOUT)
        except BaseException:
            self.stop()
            raise
        return self

    def _ready(self) -> bool:
        from zkconsumer.front.proxy.client import (
            answers_api_versions,  # the front's wire needs the embedded extra's kio
        )

        if self.port is None:
            try:
                self.port = int(self.port_file.read_text(encoding="ascii"))
            except (OSError, ValueError):
                return False
        return answers_api_versions(self.address)

    @property
    def pid(self) -> int | None:
        return None if self.record is None else self.record.pid

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM to the front's process group, then SIGKILL after ``timeout``; nothing when it is not running."""
        record, process = self.record, self.process
        self.record, self.process, self.port = None, None, None
        if record is not None:
            record.stop(timeout)
        if process is not None:
            process.poll()  # the exit status the stop reaped, so the dropped handle knows its child ended

    def __enter__(self) -> FrontProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
