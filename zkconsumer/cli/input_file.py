"""The input file of a command, read whole: a path, or ``-`` (or none given) for stdin, as every command reads.

A file that cannot be read is the command's one-line error, never a traceback.
"""

from __future__ import annotations

import sys

from zkconsumer.errors import UsageError


def read_text(path: str | None) -> str:
    if path is None or path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {path}: not UTF-8 text") from None
