"""The class archive of a local Spark session's JVM: Spark's classes mapped from a file instead of loaded afresh.

A local ``analyze`` command starts a JVM of its own every time, and much of its start is that JVM finding, reading
and verifying the thousands of classes of Spark, Hadoop and Scala it needs before the job's first task: on 2 cores
about half of the session's start-up and of the planning before the first job (3.9 s and 2.4 s, against 2.0 s and
0.9 s with the archive, for a million events). HotSpot can write the classes a run loaded into a class-data-sharing
archive when that JVM exits (``-XX:ArchiveClassesAtExit``) and map them from it in later JVMs
(``-XX:SharedArchiveFile``): the first local session records one, every later one maps it.

* **Where.** ``$ZKCONSUMER_SPARK_CLASS_ARCHIVE`` names the directory, or ``off`` turns this off; otherwise
  ``$XDG_CACHE_HOME/zkconsumer`` (``~/.cache/zkconsumer``). An archive is about 150 MB, one per Java runtime and
  PySpark install; one no session has mapped for :data:`UNUSED_S` is removed when a new one is written.
* **Once.** Recording costs the first run some seconds: the JVM writes the archive as it exits, and the command waits
  for it, so that the file is renamed into place whole (written under a name of its own, it is never read half
  done, and two first runs at once each write their own).
* **Safe when stale.** The JVM checks an archive before it maps it: one written by another JVM build, or for another
  class path (a user's extra jars), is not used and Spark runs as it would without it. The archive's name carries a
  digest of the Java runtime's and PySpark's files, so an upgrade of either records a new one. The JVM's own
  messages about the archive (which classes it skips, a mismatch) are turned off: they are not the user's concern.
* **Not on clusters**: a cluster's driver and executors are started as the cluster is configured.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ARCHIVE_ENV = "ZKCONSUMER_SPARK_CLASS_ARCHIVE"
OFF = "off"
PREFIX = "spark-classes-"
SUFFIX = ".jsa"
PARTIAL = ".partial"
#: the JVM's unified-logging messages about class data sharing, all of them
QUIET = "-Xlog:cds*=off"
EXIT_WAIT_S = 300.0  # for the recording JVM to write the archive and exit (about 8 s for Spark's classes on 2 cores)
STALE_PARTIAL_S = 3600.0  # a partial archive this old belongs to a run that died: it is removed
UNUSED_S = 30 * 86400.0  # an archive no session has mapped for this long is removed (an older Java or PySpark's)


@dataclass(frozen=True, slots=True)
class ClassArchive:
    """What a local session does with the archive: map ``path`` (``record`` False), or write it (``record`` True:
    ``path`` is then a partial file of this process's, renamed by :func:`finish` once the JVM has written it whole)."""

    path: Path
    record: bool

    @property
    def java_options(self) -> str:
        if self.record:
            return f"{QUIET} -XX:ArchiveClassesAtExit={self.path}"
        return f"{QUIET} -XX:SharedArchiveFile={self.path}"


def archive_directory(env: Mapping[str, str]) -> Path | None:
    """The directory of the archives, or None when ``env`` turns them off. Pure."""
    given = env.get(ARCHIVE_ENV, "").strip()
    if given.lower() == OFF:
        return None
    if given:
        return Path(given).expanduser()
    cache = env.get("XDG_CACHE_HOME", "").strip()
    if cache:
        return Path(cache) / "zkconsumer"
    home = env.get("HOME", "").strip()
    return Path(home) / ".cache" / "zkconsumer" if home else None


def archive_stem(identity: bytes) -> str:
    """The start of the archive's file name for ``identity`` (what the archive depends on). Pure."""
    return PREFIX + hashlib.sha256(identity).hexdigest()[:16]


def archive_path(partial: Path, size: int) -> Path:
    """Where the archive recorded into ``partial`` goes: named for its size, which a JVM must find whole (it maps
    the file, and dies of a bus error reading past the end of a short one). Pure."""
    return partial.with_name(f"{partial.name.split('.')[0]}.{size}{SUFFIX}")


def whole(path: Path, size: int) -> bool:
    """Whether ``path``, of ``size`` bytes, is an archive as :func:`finish` wrote it. Pure."""
    parts = path.name.split(".")
    return len(parts) == 3 and f".{parts[2]}" == SUFFIX and parts[1] == str(size) and size > 0


def plan(directory: Path, stem: str, found: Path | None, pid: int) -> ClassArchive | None:
    """Map the archive ``found``, else record one under a name of this process's; None for a path the JVM's option
    string could not carry (Spark splits it at white space, and reads quotes). Pure."""
    path = found if found is not None else directory / f"{stem}.{pid}{PARTIAL}"
    if any(c.isspace() or c in "\"'\\" for c in str(path)):
        return None
    return ClassArchive(path, record=found is None)


def class_archive(env: Mapping[str, str] | None = None) -> ClassArchive | None:
    """The archive of this machine's Java and PySpark: to map, or to record (the directory made); None when off, when
    there is no Java to start, or when the directory cannot be made."""
    env = os.environ if env is None else env
    directory = archive_directory(env)
    identity = _identity(env)
    if directory is None or identity is None:
        return None
    stem = archive_stem(identity)
    found = None
    for candidate in directory.glob(f"{stem}.*{SUFFIX}"):
        with contextlib.suppress(OSError):
            if whole(candidate, candidate.stat().st_size):
                found = candidate
                os.utime(candidate)  # in use: see UNUSED_S
                break
    if found is None:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
    return plan(directory, stem, found, os.getpid())


def finish(archive: ClassArchive, jvm: subprocess.Popen[bytes]) -> bool:
    """After a recording session has stopped: end its JVM (its stdin closed, as when Python exits), wait for it to
    write the archive, and rename the archive into place; archives of ours unused for long are removed. True when
    the archive is in place. A JVM that failed leaves nothing behind; one still writing at the deadline finishes its
    partial file, which a later recording removes."""
    assert archive.record
    with contextlib.suppress(OSError, ValueError):
        if jvm.stdin is not None:
            jvm.stdin.close()
    try:
        status = jvm.wait(EXIT_WAIT_S)
    except subprocess.TimeoutExpired:
        return False
    partial = archive.path
    size = partial.stat().st_size if partial.is_file() else 0
    if status != 0 or size == 0:
        partial.unlink(missing_ok=True)
        return False
    final = archive_path(partial, size)
    os.replace(partial, final)
    _remove_old(final)
    return True


def _remove_old(kept: Path) -> None:
    now = time.time()
    for found in kept.parent.glob(PREFIX + "*"):
        with contextlib.suppress(OSError):
            stat = found.stat()
            age, size = now - stat.st_mtime, stat.st_size
            if (found.name.endswith(SUFFIX) and found != kept and (age > UNUSED_S or not whole(found, size))
                    or found.name.endswith(PARTIAL) and age > STALE_PARTIAL_S):
                found.unlink()


def _identity(env: Mapping[str, str]) -> bytes | None:
    """What an archive depends on: the Java runtime Spark will start (as ``spark-class`` finds it: ``JAVA_HOME``,
    else ``java`` on the path) and PySpark's jars, by path, size and modification time."""
    java_home = env.get("JAVA_HOME", "").strip()
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java", path=env.get("PATH"))
    if not java or not os.path.isfile(java):
        return None
    try:
        import pyspark
    except ImportError:
        return None
    runtime = Path(os.path.realpath(java)).parent.parent
    files = [Path(os.path.realpath(java)), *sorted(runtime.glob("lib/server/*")),
             *sorted((Path(pyspark.__file__).parent / "jars").glob("*.jar"))]
    digest = hashlib.sha256(pyspark.__version__.encode())
    for file in files:
        with contextlib.suppress(OSError):
            stat = file.stat()
            digest.update(f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.digest()
