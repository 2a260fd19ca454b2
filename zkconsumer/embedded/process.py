"""A server process the project starts, waits for and stops: the shared part of every local launcher.

Servers run in their own session (process group) so that ``zkconsumer local up`` can leave them running
after it exits and ``down`` can stop exactly them: a :class:`ProcessRecord` keeps the pid with the exact
command line, and a pid whose command line no longer matches (reused by another program) is never signalled.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from zkconsumer.errors import EnvironmentSetupError

LOOPBACK = "127.0.0.1"
REAP_WAIT_S = 5.0  # how long a stop waits for its own exited child to be reapable


def java_executable() -> str | None:
    """The ``java`` to run a JVM server with: ``$JAVA_HOME/bin/java``, else the one on PATH; None: neither."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").exists():
        return str(Path(java_home) / "bin" / "java")
    return shutil.which("java")


def free_port(host: str = LOOPBACK) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def port_in_use(port: int, host: str = LOOPBACK) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


def check_port_free(port: int, what: str, host: str = LOOPBACK) -> None:
    if port_in_use(port, host):
        raise EnvironmentSetupError(
            f"port {host}:{port} for {what} is already in use by another program; "
            f"choose another port or stop that program"
        )


@dataclass(frozen=True)
class ProcessRecord:
    """A started process, as saved in a run directory's state file."""

    pid: int
    argv: tuple[str, ...]
    log: str

    def is_alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return False
        cmdline = Path(f"/proc/{self.pid}/cmdline")
        if cmdline.exists():
            try:
                argv = tuple(a for a in cmdline.read_bytes().decode(errors="replace").split("\0") if a)
            except OSError:
                return False
            return argv == self.argv
        return True

    def stop(self, timeout: float = 10.0) -> bool:
        """Stop the process group; ``False`` when it was not running (or the pid now belongs to another)."""
        if not self.is_alive():
            return False
        _signal_group(self.pid, signal.SIGTERM)
        _signal_group(self.pid, signal.SIGCONT)  # a stopped process (SIGSTOP, a debugger) acts on SIGTERM once resumed
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.is_alive() or _reaped(self.pid):
                _wait_reaped(self.pid, REAP_WAIT_S)
                return True
            time.sleep(0.05)
        _signal_group(self.pid, signal.SIGKILL)
        for _ in range(100):
            if not self.is_alive() or _reaped(self.pid):
                break
            time.sleep(0.05)
        _wait_reaped(self.pid, REAP_WAIT_S)
        return True


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _wait_reaped(pid: int, timeout: float) -> None:
    """Reap our own child once it has exited. A process that is exiting has given up its command line before the
    kernel makes it a zombie, so "not alive" by its command line can come before there is anything to reap; a child
    left unreaped would stay a zombie for the rest of the run. Not our child: nothing to do."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return
        if done == pid or time.monotonic() >= deadline:
            return
        time.sleep(0.02)


def _reaped(pid: int) -> bool:
    """Reap our own exited child (a zombie still answers ``kill 0``); other processes are not ours to wait."""
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return False
    return done == pid


def log_tail(path: str | Path, lines: int = 15) -> str:
    try:
        text = Path(path).read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def spawn(
    argv: Sequence[str], log_path: Path, env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[ProcessRecord, subprocess.Popen]:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
                cwd=cwd,
            )
        except OSError as exc:
            raise EnvironmentSetupError(f"cannot start {argv[0]}: {exc}") from None
    return ProcessRecord(proc.pid, tuple(argv), str(log_path)), proc


def wait_until_ready(
    record: ProcessRecord,
    proc: subprocess.Popen,
    ready: Callable[[], bool],
    what: str,
    timeout: float,
    stop_timeout: float = 10.0,
) -> None:
    """Poll ``ready`` until it holds; fail early, with the log's tail, when the process exits. Whatever ends the wait
    other than readiness (the timeout, an error of ``ready``, an interrupt) stops the process first: its caller has
    no record of it yet, so nothing else would."""
    try:
        _wait(record, proc, ready, what, timeout)
    except BaseException:
        record.stop(stop_timeout)
        raise


def _wait(record: ProcessRecord, proc: subprocess.Popen, ready: Callable[[], bool], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            raise EnvironmentSetupError(
                f"{what} exited while starting (status {proc.returncode}); last lines of {record.log}:\n"
                f"{log_tail(record.log)}"
            )
        if ready():
            return
        if time.monotonic() > deadline:
            raise EnvironmentSetupError(
                f"{what} did not become ready within {timeout:.0f} s; last lines of {record.log}:\n"
                f"{log_tail(record.log)}"
            )
        time.sleep(0.1)


class LocalServer:
    """A server process on a loopback port, with its own working directory; subclasses say how to run and probe it."""

    what = "server"
    start_timeout = 30.0
    stop_timeout = 10.0  # how long a SIGTERM may take before SIGKILL

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        self.workdir = Path(workdir)
        self.port = port or free_port()
        self.record: ProcessRecord | None = None

    def argv(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        """Write whatever the server needs on disk before it starts."""

    def environment(self) -> dict[str, str] | None:
        """The process's whole environment, for a server configured through it; None: this one's."""
        return None

    def ready(self) -> bool:
        raise NotImplementedError

    @property
    def address(self) -> str:
        return f"{LOOPBACK}:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / f"{self.what.split()[0].lower()}.log"

    def start(self) -> ProcessRecord:
        check_port_free(self.port, self.what)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.prepare()
        self.record, proc = spawn(self.argv(), self.log_path, env=self.environment(), cwd=self.workdir)
        wait_until_ready(self.record, proc, self.ready, f"{self.what} on {self.address}", self.start_timeout,
                         self.stop_timeout)
        return self.record

    def stop(self) -> None:
        if self.record is not None:
            self.record.stop(self.stop_timeout)
            self.record = None

    def __enter__(self) -> LocalServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
