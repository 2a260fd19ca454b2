"""``zkconsumer front``: in the foreground it says where it listens, serves, and stops cleanly on SIGTERM; a port in
use is one line and a failure exit status."""

from __future__ import annotations

import signal
import socket
import subprocess
import sys

from kio.schema.errors import ErrorCode
from support import wait_for, zkconsumer_cli
from time_scale import bounded

from zkconsumer.front.proxy.client import api_versions_request, exchange


def test_the_command_serves_in_the_foreground_and_stops_on_sigterm(bootstrap_servers, tmp_path):
    port_file = tmp_path / "front.port"
    process = subprocess.Popen(
        [sys.executable, "-m", "zkconsumer", "--log-json", "front", "--bootstrap-server", bootstrap_servers,
         "--port-file", str(port_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(port_file.exists, timeout=30)
        address = f"127.0.0.1:{int(port_file.read_text())}"
        assert exchange(address, api_versions_request()).error_code == ErrorCode.none
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=bounded(30))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0
    assert out.startswith(f"front listening on 127.0.0.1:{address.rsplit(':', 1)[1]} (clients told {address}), "
                          f"relaying to {bootstrap_servers}")
    assert '"event": "front.started"' in err and '"event": "front.stopped"' in err


def test_a_port_in_use_is_one_line(bootstrap_servers):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = zkconsumer_cli("front", "--bootstrap-server", bootstrap_servers, "--port", str(port))
    assert done.returncode != 0
    assert done.stderr.splitlines() == [
        f"zkconsumer front: cannot listen on 127.0.0.1:{port}: Address already in use"]
