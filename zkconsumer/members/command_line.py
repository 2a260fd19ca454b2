"""The command line both member processes share: whom they join and how they report, as options and as the argv
a starter builds for them (:func:`zkconsumer.members.legacy_member.command`,
:func:`zkconsumer.members.modern_member.command`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path


def member_parser(module: str, description: str, server: str, server_help: str,
                  strategies: Sequence[str]) -> argparse.ArgumentParser:
    """``--<server> --group --topic --consumer-id --strategy --session-timeout-ms --output --stop-at-stdin-eof``."""
    parser = argparse.ArgumentParser(prog=f"python -m {module}", description=description)
    parser.add_argument(f"--{server}", required=True, help=server_help)
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--consumer-id", required=True)
    parser.add_argument("--strategy", default="range", choices=strategies)
    parser.add_argument("--session-timeout-ms", type=int, default=6000)
    parser.add_argument("--output", help="append one line per message delivered to this file")
    parser.add_argument("--stop-at-stdin-eof", action="store_true",
                        help="leave the group when stdin closes: the member cannot outlive the process that "
                        "started it, whatever way that one ended")
    return parser


def member_argv(module: str, server: str, address: str, *, group: str, topic: str, consumer_id: str, strategy: str,
                session_timeout_ms: int, output: Path | None, stop_at_stdin_eof: bool) -> list[str]:
    """The argv of :func:`member_parser`'s options, run by this interpreter."""
    argv = [sys.executable, "-m", module, f"--{server}", address, "--group", group, "--topic", topic,
            "--consumer-id", consumer_id, "--strategy", strategy, "--session-timeout-ms", str(session_timeout_ms)]
    if output is not None:
        argv += ["--output", str(output)]
    if stop_at_stdin_eof:
        argv.append("--stop-at-stdin-eof")
    return argv
