"""The front's options and its foreground run, shared by ``zkconsumer front`` and ``python -m zkconsumer.front`` (what
the launcher starts)."""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
from pathlib import Path

from zkconsumer.errors import EnvironmentSetupError
from zkconsumer.front.config import LOOPBACK, FrontConfig
from zkconsumer.front.handlers import LocalApis
from zkconsumer.front.server import FrontServer


def add_front_options(parser: argparse.ArgumentParser) -> None:
    """Every option but the broker's address, which each command resolves its own way."""
    parser.add_argument("--host", default=LOOPBACK, help="the address to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=0, help="the port to listen on (default: a free one, printed)")
    parser.add_argument("--advertised-host", default=None, metavar="HOST",
                        help="the host clients are told to connect to (default: --host)")
    parser.add_argument("--advertised-port", type=int, default=None, metavar="PORT",
                        help="the port clients are told to connect to (default: the port listened on)")
    parser.add_argument("--connect-timeout-ms", type=int, default=10_000, metavar="MS",
                        help="how long connecting to the broker may take (default: %(default)s)")
    parser.add_argument("--port-file", default=None, metavar="PATH",
                        help="write the port listened on to PATH once listening (for a launcher)")


def config_of(args: argparse.Namespace, bootstrap: str) -> FrontConfig:
    return FrontConfig.of(bootstrap, host=args.host, port=args.port, advertised_host=args.advertised_host,
                          advertised_port=args.advertised_port, connect_timeout=max(args.connect_timeout_ms, 1) / 1000)


def run_front(config: FrontConfig, port_file: str | None = None, local: LocalApis | None = None,
              announce: bool = False) -> int:
    """Serve until SIGINT or SIGTERM. ``announce`` prints where the front listens, for a person at a terminal.

    :raises EnvironmentSetupError: the port cannot be listened on.
    """
    return asyncio.run(_serve(config, port_file, local, announce))


async def _serve(config: FrontConfig, port_file: str | None, local: LocalApis | None, announce: bool) -> int:
    server = FrontServer(config, local)
    try:
        await server.start()
    except OSError as exc:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        raise EnvironmentSetupError(f"cannot listen on {config.host}:{config.port}: {reason}") from None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    if port_file:
        _write_atomically(Path(port_file), f"{server.port}\n")
    if announce:
        print(f"front listening on {config.host}:{server.port} (clients told {server.advertised.address}), "
              f"relaying to {','.join(config.bootstrap)}; Ctrl-C stops it", flush=True)
    try:
        await stop.wait()
    finally:
        await server.close()
    return 0


def _write_atomically(path: Path, text: str) -> None:
    """A reader polling for ``path`` sees it whole or not at all."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(text, encoding="ascii")
    temporary.replace(path)
