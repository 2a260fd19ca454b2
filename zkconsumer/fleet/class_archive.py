"""The class archive of a local Spark session's JVM: Spark's classes mapped from a file instead of loaded afresh.

A local ``analyze`` command starts a JVM of its own every time, and much of its start is that JVM finding, reading
and verifying the thousands of classes of Spark, Hadoop and Scala it needs before the job's first task: on 2 cores
about 40% of the session's start-up and a sixth of the job's time on a million events (``benchmarks/fleet.py`` runs
it both ways). HotSpot can write the classes a run loaded into a class-data-sharing
archive when that JVM exits (``-XX:ArchiveClassesAtExit``) and map them from it in later JVMs
(``-XX:SharedArchiveFile``): the first local session records one, every later one maps it.

* **Where.** ``$ZKCONSUMER_SPARK_CLASS_ARCHIVE`` names the directory, or ``off`` (``0``, ``false``, ``no``) turns
  this off; otherwise
  ``$XDG_CACHE_HOME/zkconsumer`` (``~/.cache/zkconsumer``). An archive is about 150 MB, one per Java runtime and
  PySpark install; one no session has mapped for :data:`UNUSED_S` is removed by a later command.
* **Once.** Recording costs the first run some seconds: the JVM writes the archive as it exits, and the command waits
  for it, so that the file is renamed into place whole (written under a name of its own, it is never read half
  done, and two first runs at once each write their own). A run whose job fails records nothing. A Java runtime
  without the JDK's own class archive (``lib/server/classes.jsa``: a trimmed runtime) cannot record one and is
  left alone; and should the JVM not start with the archive's options at all, the session is started again
  without them (an archive it could not map is removed, to be recorded again).
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
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

ARCHIVE_ENV = "ZKCONSUMER_SPARK_CLASS_ARCHIVE"
OFF = frozenset({"off", "0", "false", "no"})
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
    if given.lower() in OFF:
        return None
    if given:
        return Path(given).expanduser().absolute()
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


def plan(directory: Path, stem: str, found: Path | None, token: str, can_record: bool) -> ClassArchive | None:
    """Map the archive ``found``, else record one under a name of this run's own (``token``: no dot), if the runtime
    ``can_record``; None for a path the JVM's option could not carry (Spark splits it at white space and reads quotes;
    HotSpot reads a colon as between two archives). Pure."""
    if found is None and not can_record:
        return None
    path = found if found is not None else directory / f"{stem}.{token}{PARTIAL}"
    if any(c.isspace() or c in "\"'\\:" for c in str(path)):
        return None
    return ClassArchive(path, record=found is None)


def class_archive(env: Mapping[str, str] | None = None) -> ClassArchive | None:
    """The archive of this machine's Java and PySpark: to map, or to record (the directory made); None when off, when
    there is no Java to start, or when the directory cannot be made."""
    env = os.environ if env is None else env
    directory = archive_directory(env)
    runtime = _java_runtime(env)
    if directory is None or runtime is None:
        return None
    stem = archive_stem(_identity(env, runtime))
    _remove_old(directory, None)
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
    can_record = any((runtime / "lib" / "server" / name).is_file() for name in ("classes.jsa", "classes_nocoops.jsa"))
    return plan(directory, stem, found, f"{os.getpid()}-{secrets.token_hex(4)}", can_record)


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
    try:
        size = partial.stat().st_size if partial.is_file() else 0
        if status == 0 and size > 0:
            final = archive_path(partial, size)
            os.replace(partial, final)
            _remove_old(final.parent, final)
            return True
    except OSError:  # the directory changed under us: the command's own work is done, the archive is only a speed-up
        pass
    with contextlib.suppress(OSError):
        partial.unlink(missing_ok=True)
    return False


def abandon(archive: ClassArchive, jvm: subprocess.Popen[bytes]) -> None:
    """A recording session whose job failed: its JVM killed (its archive would hold what a failed run loaded) and its
    partial file removed."""
    with contextlib.suppress(OSError):
        jvm.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        jvm.wait(EXIT_WAIT_S)
    archive.path.unlink(missing_ok=True)


def _remove_old(directory: Path, kept: Path | None) -> None:
    """Our files no run will map: archives not whole, others of ``kept``'s stem (two first runs at once), archives
    unused for long, and partial files of runs that died."""
    now = time.time()
    stem = kept.name.split(".")[0] if kept is not None else None
    for found in directory.glob(PREFIX + "*"):
        with contextlib.suppress(OSError):
            stat = found.stat()
            age, size = now - stat.st_mtime, stat.st_size
            if found.name.endswith(SUFFIX) and found != kept:
                stale = age > UNUSED_S or not whole(found, size) or found.name.split(".")[0] == stem
            else:
                stale = found.name.endswith(PARTIAL) and age > STALE_PARTIAL_S
            if stale:
                found.unlink()


def _java_runtime(env: Mapping[str, str]) -> Path | None:
    """The Java runtime Spark will start, as ``spark-class`` finds it: ``JAVA_HOME``, else ``java`` on the path."""
    java_home = env.get("JAVA_HOME", "").strip()
    java = str(Path(java_home) / "bin" / "java") if java_home else shutil.which("java", path=env.get("PATH"))
    if not java or not os.path.isfile(java):
        return None
    return Path(os.path.realpath(java)).parent.parent


#: settings that change the JVM's class path or its options (a user's jars, configuration, a heap of 32 GB or more)
_SETTINGS = ("SPARK_HOME", "SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS")


def _spark_home(find: Callable[[], str]) -> str:
    try:
        return find()
    except SystemExit:  # PySpark's search prints and exits when it finds no Spark: its own directory then
        import pyspark

        return str(Path(pyspark.__file__).parent)


def _identity(env: Mapping[str, str], runtime: Path) -> bytes:
    """What an archive depends on: the Java runtime, the jars Spark will run (``SPARK_HOME``'s, else PySpark's own)
    by path, size and modification time, and the settings that change the class path or the JVM's options. A change
    of any records a new archive: the JVM would refuse the old one silently, every time."""
    import pyspark
    from pyspark.find_spark_home import _find_spark_home

    digest = hashlib.sha256(pyspark.__version__.encode())
    for name in _SETTINGS:
        digest.update(f"{name}={env.get(name, '')}\n".encode())
    spark_home = Path(env.get("SPARK_HOME", "").strip() or _spark_home(_find_spark_home))
    files = [runtime / "bin" / "java", *sorted(runtime.glob("lib/server/*")), *sorted(spark_home.glob("jars/*.jar")),
             *sorted(spark_home.glob("conf/*"))]
    for file in files:
        with contextlib.suppress(OSError):
            stat = file.stat()
            digest.update(f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.digest()
