"""The output directory of a Spark job, complete or absent: never half of one that looks whole.

The job writes into a hidden directory beside ``DIR`` (same file system, so the final rename is atomic) and renames
it to ``DIR`` only once every table and the page are written; a failure, an interrupt or a bad input found late
removes it. An existing ``DIR`` is refused before any work: a fleet's analysis is not merged into an old one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

from zkconsumer.errors import UsageError


def check_output(output: str | os.PathLike[str]) -> Path:
    """``output`` as an absolute path; UsageError when it exists or its parent does not."""
    path = Path(output).absolute()
    if path.exists():
        raise UsageError(f"output directory {output} already exists; remove it or choose another")
    if not path.parent.is_dir():
        raise UsageError(f"cannot write {output}: {path.parent} is not a directory")
    return path


@contextlib.contextmanager
def staged_directory(output: str | os.PathLike[str]) -> Iterator[Path]:
    """A fresh directory to write into, renamed to ``output`` when the block ends without an exception."""
    final = check_output(output)
    staging = final.parent / f".{final.name}.partial-{uuid.uuid4().hex[:8]}"
    try:
        staging.mkdir()
    except OSError as exc:
        raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
    try:
        yield staging
        try:
            os.rename(staging, final)
        except OSError as exc:
            raise UsageError(f"cannot write {output}: {exc.strerror or exc}") from None
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)


def check_inputs(paths: list[str], what: str) -> None:
    """Every input exists and can be read; UsageError naming the first that cannot (Spark's own error is a page of
    Java stack)."""
    if not paths:
        raise UsageError(f"no {what} given")
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise UsageError(f"{what} {given} does not exist")
        if not os.access(path, os.R_OK) or (path.is_dir() and not os.access(path, os.X_OK)):
            raise UsageError(f"{what} {given} cannot be read (permission denied)")
        if path.is_file():
            try:
                with open(path, "rb") as f:
                    f.read(1)
            except OSError as exc:
                raise UsageError(f"{what} {given} cannot be read ({exc.strerror or exc})") from None


def input_files(path: Path) -> list[Path]:
    """The files Spark reads for ``path``: itself, or those under it that Hadoop does not skip as hidden."""
    if path.is_file():
        return [path]
    return [p for p in path.rglob("*") if p.is_file() and not p.name.startswith((".", "_"))]
