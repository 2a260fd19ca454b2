"""Options shared by several commands, declared once so that they are spelled, shown and read alike.

``--zookeeper`` and ``--bootstrap-server`` default to ``ZK_CONNECT`` / ``KAFKA_BOOTSTRAP`` and then to the
embedded environment started by ``zkconsumer local up``, so that after ``local up`` every command just works.
A command that resolves them otherwise (``demo`` plays in its own world unless given servers; ``groups describe``
asks the brokers registered in ZooKeeper) passes its own help text, says so there, and does not call
:func:`zookeeper` / :func:`bootstrap`.

``--zookeeper-auth SCHEME:CREDENTIALS`` (default ``$ZK_AUTH``) comes with ``--zookeeper``: the credentials of the
consumer's ``zookeeper.auth``, so that a tool can write where the group's ACL lets only its owner write (offsets
import, migrate). Prefer the environment variable: a command line is visible to every user of the machine. What a
tool creates gets the consumer's default ACL for credentials (the creator writes, everyone reads).

Every command that can print data for scripts does so on ``--json``; an older spelling of the same request
stays accepted as an alias (``consume --format json``).
"""

from __future__ import annotations

import argparse
import os

from zkconsumer.errors import UsageError
from zkconsumer.security import ZkAuth, parse_auth

ZK_AUTH_ENV = "ZK_AUTH"
ZOOKEEPER_HELP = "ZooKeeper connect string (default: $ZK_CONNECT, else the running `zkconsumer local` environment)"
BOOTSTRAP_HELP = "a broker of the cluster (default: $KAFKA_BOOTSTRAP, else the running `zkconsumer local` environment)"


def add_zookeeper(parser: argparse.ArgumentParser, help: str = ZOOKEEPER_HELP, auth: bool = True) -> None:
    parser.add_argument("--zookeeper", metavar="HOST:PORT[/CHROOT]", help=help)
    if auth:
        parser.add_argument("--zookeeper-auth", metavar="SCHEME:CREDENTIALS", default=None,
                            help=f"ZooKeeper credentials, e.g. digest:user:password (default: ${ZK_AUTH_ENV}; "
                            "prefer it, a command line is visible to others)")


def add_bootstrap(parser: argparse.ArgumentParser, help: str = BOOTSTRAP_HELP) -> None:
    parser.add_argument("--bootstrap-server", metavar="HOST:PORT", help=help)


def add_json(parser: argparse._ActionsContainer, help: str) -> None:
    """``--json``, the one spelling of "print data for scripts"; ``parser`` may be a mutually exclusive group
    holding an older spelling beside it."""
    parser.add_argument("--json", action="store_true", help=help)


def add_run_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--run-dir", default=None, metavar="DIR",
        help="the embedded environment's run directory (default: $ZKCONSUMER_RUN_DIR, else var/zkconsumer in the "
             "virtual environment, else ~/.local/state/zkconsumer)",
    )


def zookeeper(args: argparse.Namespace) -> str:
    return _resolve(args.zookeeper, "ZK_CONNECT", "zookeeper", "--zookeeper", args)


def zookeeper_auth(args: argparse.Namespace) -> ZkAuth | None:
    """``--zookeeper-auth``, else ``$ZK_AUTH``, else none; a malformed value is one line that does not repeat it."""
    given = getattr(args, "zookeeper_auth", None)
    flag = "--zookeeper-auth"
    if not given and os.environ.get(ZK_AUTH_ENV):
        given, flag = os.environ[ZK_AUTH_ENV], f"${ZK_AUTH_ENV}"
    if not given:
        return None
    try:
        return parse_auth(given)
    except ValueError as exc:
        raise UsageError(f"{flag}: {exc}") from None


def bootstrap(args: argparse.Namespace) -> str:
    return _resolve(args.bootstrap_server, "KAFKA_BOOTSTRAP", "bootstrap_servers", "--bootstrap-server", args)


def broker(args: argparse.Namespace) -> str:
    """As :func:`bootstrap`, but the running environment's broker itself, not the front clients are given."""
    return _resolve(args.bootstrap_server, "KAFKA_BOOTSTRAP", "broker", "--bootstrap-server", args)


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
