"""The front as a child process on a free loopback port: what the embedded environment and the test fixtures start.

``python -m zkconsumer.front`` is started with ``--port 0``: the front takes a free port itself and writes it to a
file once it listens, so no port is chosen here and lost to another program before the front binds it. It is ready
when it answers ApiVersions, which it relays to the broker: a ready front has a broker behind it. Its events are
JSON lines in ``front.log`` of the working directory, the file the comparison and ``zkconsumer trace`` can read.
The child runs in its own session, so a terminal's Ctrl-C reaches the caller, which stops it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from zkconsumer.errors import EnvironmentSetupError
from zkconsumer.front.client import answers_api_versions
from zkconsumer.front.config import LOOPBACK

START_TIMEOUT = 30.0
STOP_TIMEOUT = 5.0  # how long SIGTERM may take before SIGKILL


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
        self.process: subprocess.Popen[bytes] | None = None

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
                "--port", "0", "--port-file", str(self.port_file), *self.options]

    def start(self, timeout: float = START_TIMEOUT) -> FrontProcess:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port_file.unlink(missing_ok=True)
        env = {**os.environ, "ZKCONSUMER_LOG_JSON": "1"}
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(self.argv(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            env=env, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not self._ready():
            if self.process.poll() is not None:
                raise EnvironmentSetupError(f"the front exited while starting (status {self.process.returncode}); "
                                            f"last lines of {self.log_path}:\n{self._log_tail()}")
            if time.monotonic() > deadline:
                self.stop()
                raise EnvironmentSetupError(f"the front did not answer ApiVersions within {timeout:.0f} s; last lines "
                                            f"of {self.log_path}:\n{self._log_tail()}")
            time.sleep(0.05)
        return self

    def _ready(self) -> bool:
        if self.port is None:
            try:
                self.port = int(self.port_file.read_text(encoding="ascii"))
            except (OSError, ValueError):
                return False
        return answers_api_versions(self.address)

    def _log_tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM, then SIGKILL after ``timeout``; nothing when it is not running."""
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def __enter__(self) -> FrontProcess:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_front(bootstrap: str, workdir: Path, **settings: object) -> FrontProcess:
    """A started :class:`FrontProcess` (stop it, or use it in ``with``)."""
    return FrontProcess(bootstrap, workdir, **settings).start()  # type: ignore[arg-type]
