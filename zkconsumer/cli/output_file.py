"""An output file written whole or not at all, for every command that writes one.

A command that fails halfway (a lost ZooKeeper session during an export, a full disk) must not leave half a
file where a whole one was, or was expected: the text goes to a temporary file beside the target, which is
renamed over it only once everything was written. The file gets the usual 0644, not mkstemp's 0600.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import TextIO

from zkconsumer.errors import UsageError


@contextlib.contextmanager
def written_whole(path: str, prefix: str = ".zkconsumer-") -> Iterator[TextIO]:
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=prefix, dir=directory)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            yield f
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
