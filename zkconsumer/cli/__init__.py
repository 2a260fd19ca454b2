"""The ``zkconsumer`` command.

Each subcommand lives in a module of this package named after it and exposes
``register(subparsers)``, which adds its parser (its one-line help taken from ``COMMANDS``) and sets
``handler`` to a function ``(args) -> int``. Adding a command is adding a module here and its name and
one-line help to ``COMMANDS``.

Only the module of the command that runs is imported: ``assign`` and ``compare`` are pure Python and should
start as such, not pay for kazoo and confluent-kafka because ``consume`` needs them. So the command name is
parsed first against a parser that knows every command by name and help only (which is all ``zkconsumer
--help`` and a mistyped name need), then the whole command line again with that one command's real parser.

The terminal carries what the operator asked for: a command's output and its one-line errors. The events of a run
(fetchers started, offsets committed...) go to a log file, ``--log-file``, else ``$ZKCONSUMER_LOG_FILE``, else
``zkconsumer.log`` in the run directory (the virtual environment's ``var/zkconsumer``); warnings and errors
reach stderr too. ``--verbose``, ``--log-level`` or ``--log-json`` (or their environment variables) put the events on
stderr instead, as a library user's logging would.

A command that needs an extra that is not installed (``NEEDS``, or an optional module its run imports) fails with
one line naming the extra to install, exit status 2 like every usage error, before it has done any work.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
import sys
from collections.abc import Collection
from pathlib import Path
from typing import Any

from zkconsumer import __version__
from zkconsumer.embedded.run_dir import default_run_dir_and_origin
from zkconsumer.errors import MissingExtraError, ZkConsumerError, missing_extras
from zkconsumer.log import LOG_JSON_ENV, LOG_LEVEL_ENV, configure_logging

LOG_FILE_ENV = "ZKCONSUMER_LOG_FILE"

COMMANDS: dict[str, str] = {
    "local": "start, stop or inspect the embedded ZooKeeper + broker + bridge environment",
    "topics": "create, grow, describe or place topics (broker admin API, or ZooKeeper as kafka-topics.sh did)",
    "bridge": "mirror brokers, topics and leaders of any Kafka-protocol cluster into ZooKeeper",
    "demo": "watch the legacy rebalance: consumers join, die and a topic grows, narrated step by step",
    "assign": "assign partitions for a JSON scenario with one strategy",
    "compare": "compare strategies on a JSON scenario (spread, idle members, moves)",
    "consume": "the console consumer: join a group and print its messages",
    "produce": "the console producer: send each line of stdin or a file as a message, every delivery checked",
    "groups": "list, describe (offsets, lag, owners) and verify consumer groups",
    "offsets": "export or import groups' ZooKeeper offsets (ExportZkOffsets, ImportZkOffsets), or move a group's "
               "offsets between ZooKeeper and Kafka",
    "coordinator": "the broker-side view of a group: offsets partition, coordinator, members",
    "trace": "draw the rebalance timeline of a run from its JSON-line events (HTML/SVG, or text)",
    "snapshot": "read every consumer group into JSON lines (or make synthetic ones), for `analyze fleet`",
    "analyze": "Spark jobs over a fleet snapshot (fleet) or event logs (events): Parquet tables and a summary page",
    "migration": "compare the legacy ZooKeeper group with modern broker-side groups on one membership script",
    "simulate": "replay rebalances on a simulated clock: Kafka Connect's protocols, a consumer group's storm",
    "front": "the Kafka-protocol front of a broker: relays clients' requests, pointing them at itself",
}

#: The extras a command always needs, checked before it starts: the demo and the migration comparison would otherwise
#: fail at their end, when they write their page, and `analyze` once Spark has started.
NEEDS: dict[str, tuple[str, ...]] = {
    "demo": ("embedded", "pages"),
    "migration": ("pages",),
    "analyze": ("spark", "pages"),
}


def installed_version() -> str:
    """The version pip installed (a source tree that was never installed: the package's own)."""
    try:
        return importlib.metadata.version("zkconsumer")
    except importlib.metadata.PackageNotFoundError:
        return __version__


class _VersionAction(argparse.Action):
    """``--version``, reading the installed metadata only when asked."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="print the installed version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        print(f"zkconsumer {installed_version()}")
        parser.exit()


def build_parser(loaded: Collection[str] = ()) -> argparse.ArgumentParser:
    """The command line, with the real parsers of the commands in ``loaded`` and placeholders for the others.

    A placeholder has the command's name and help and accepts anything (``parse_known_args`` leaves what follows
    it, ``--help`` included, for the real parser), so the first pass only learns which command runs.
    """
    parser = argparse.ArgumentParser(
        prog="zkconsumer",
        description="Kafka's legacy ZooKeeper-coordinated high-level consumer, in Python.",
    )
    parser.add_argument("--version", action=_VersionAction)
    parser.add_argument(
        "--log-json", action="store_true", default=None,
        help="write events as JSON lines on stderr (also: ZKCONSUMER_LOG_JSON=1)",
    )
    parser.add_argument("--log-level", default=None,
                        help="write events from this level on stderr: debug, info, warning or error (also: "
                        "ZKCONSUMER_LOG_LEVEL; default: info to the log file, warnings on stderr)")
    parser.add_argument("--verbose", "-v", action="store_true", help="write events on stderr (--log-level info)")
    parser.add_argument("--log-file", metavar="FILE", type=Path, default=None,
                        help=f"where events go when not on stderr (default: ${LOG_FILE_ENV}, else "
                        f"{default_log_file()})")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS.items():
        if name in loaded:
            importlib.import_module(f"zkconsumer.cli.{name}").register(subparsers)
        else:
            subparsers.add_parser(name, help=summary, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    # First pass: `--help`, `--version`, no command or a mistyped one end here, with the output they always had.
    command = build_parser().parse_known_args(argv)[0].command
    try:
        parser = build_parser(loaded=[command] if command else [])
        args = parser.parse_args(argv)
        handler = getattr(args, "handler", None)
        if handler is None:
            parser.print_help()
            return 2
        missing = missing_extras(NEEDS.get(command, ()))
        if missing:
            raise MissingExtraError(missing)
        _configure_logging(args)
        return int(handler(args) or 0)
    except ModuleNotFoundError as exc:
        error = MissingExtraError.of(exc)
        if error is None:
            raise
        return _fail(command, error)
    except ZkConsumerError as exc:
        return _fail(command, exc)
    except (KeyboardInterrupt, SystemError) as exc:
        # A C extension that ran the interrupt's handler (SIGINT, or SIGTERM taken as Ctrl-C) inside a call and
        # returned as if nothing had been raised makes CPython raise SystemError from the interrupt: still one.
        if isinstance(exc, SystemError) and not isinstance(exc.__cause__, KeyboardInterrupt):
            raise
        print(f"zkconsumer {command}: interrupted", file=sys.stderr)
        return 130


def default_log_file() -> Path:
    """``$ZKCONSUMER_LOG_FILE``, else zkconsumer.log in the run directory (the virtual environment's, as ``local
    status`` says), beside the embedded environment's own logs."""
    if os.environ.get(LOG_FILE_ENV):
        return Path(os.environ[LOG_FILE_ENV])
    return default_run_dir_and_origin()[0] / "zkconsumer.log"


def _configure_logging(args: argparse.Namespace) -> None:
    """Events on stderr when asked for (a level, JSON, --verbose); else to the log file, warnings on stderr too. A
    log file that cannot be made costs the events below warning, never the command."""
    level = args.log_level or ("info" if args.verbose else None)
    asked = level or args.log_json or os.environ.get(LOG_LEVEL_ENV) or os.environ.get(LOG_JSON_ENV)
    if asked and args.log_file is None:
        configure_logging(json=args.log_json, level=level)
        return
    file = args.log_file or default_log_file()
    try:
        file.parent.mkdir(parents=True, exist_ok=True)
        writable = os.access(file if file.exists() else file.parent, os.W_OK) and not file.is_dir()
    except OSError:
        writable = False
    if not writable:
        print(f"warning: cannot write the log file {file}; only warnings are shown", file=sys.stderr)
        configure_logging(json=args.log_json, level="warning")
        return
    configure_logging(json=args.log_json, level=level, file=file)


def _fail(command: str, error: ZkConsumerError) -> int:
    print(f"zkconsumer {command}: {error}", file=sys.stderr)
    return error.exit_status
