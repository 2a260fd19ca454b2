"""Options shared by several commands, declared once so that they are spelled, shown and read alike.

``--zookeeper`` and ``--bootstrap-server`` default to ``ZK_CONNECT`` / ``KAFKA_BOOTSTRAP`` and then to the
embedded environment started by ``zkconsumer local up``, so that after ``local up`` every command just works.
A command that resolves them otherwise (``demo`` plays in its own world unless given servers; ``groups describe``
asks the brokers registered in ZooKeeper) passes its own help text, says so there, and does not call
:func:`zookeeper` / :func:`bootstrap`.

Every command that can print data for scripts does so on ``--json``; an older spelling of the same request
stays accepted as an alias (``consume --format json``).
"""

from __future__ import annotations

import argparse
import os

from zkconsumer.errors import UsageError

ZOOKEEPER_HELP = "ZooKeeper connect string (default: $ZK_CONNECT, else the running `zkconsumer local` environment)"
BOOTSTRAP_HELP = "a broker of the cluster (default: $KAFKA_BOOTSTRAP, else the running `zkconsumer local` environment)"


def add_zookeeper(parser: argparse.ArgumentParser, help: str = ZOOKEEPER_HELP) -> None:
    parser.add_argument("--zookeeper", metavar="HOST:PORT[/CHROOT]", help=help)


def add_bootstrap(parser: argparse.ArgumentParser, help: str = BOOTSTRAP_HELP) -> None:
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT", help=help)


def add_json(parser: argparse._ActionsContainer, help: str) -> None:
    """``--json``, the one spelling of "print data for scripts"; ``parser`` may be a mutually exclusive group
    holding an older spelling beside it."""
    parser.add_argument("--json", action="store_true", help=help)


def add_run_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run-dir", default=None, metavar="DIR",
        help="the embedded environment's run directory (default: $ZKCONSUMER_RUN_DIR or ~/.local/state/zkconsumer)",
    )


def zookeeper(args: argparse.Namespace) -> str:
    return _resolve(args.zookeeper, "ZK_CONNECT", "zookeeper", "--zookeeper", args)


def bootstrap(args: argparse.Namespace) -> str:
    return _resolve(args.bootstrap_server, "KAFKA_BOOTSTRAP", "bootstrap_servers", "--bootstrap-server", args)


def _resolve(given: str | None, env: str, key: str, flag: str, args: argparse.Namespace) -> str:
    if given:
        return given
    if os.environ.get(env):
        return os.environ[env]
    from zkconsumer.embedded.environment import LocalEnvironment

    running = LocalEnvironment(getattr(args, "run_dir", None)).endpoints()
    if running is not None:
        return running[key]
    raise UsageError(f"no {flag} given, ${env} is not set and no `zkconsumer local` environment is running")
