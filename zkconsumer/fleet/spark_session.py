"""The Spark session of an ``analyze`` command (:mod:`zkconsumer.cli.analyze`) and of the fleet benchmark: started
for the length of the command with Spark's console noise off and its workers on this interpreter, stopped after it;
a local one maps Spark's classes from the class archive (:mod:`.class_archive`), or records it the first time.

PySpark is the ``spark`` extra, imported when a session starts: without it, one line naming the extra.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from zkconsumer.errors import MissingExtraError, UsageError
from zkconsumer.fleet.class_archive import ClassArchive, abandon, class_archive, finish

#: JVM options of a local session: the job runs for seconds to minutes in a JVM started for it, most of its work is
#: in the Python workers, and HotSpot's optimising compiler (C2) spent more CPU compiling Spark's code than it saved
#: (12 of the JVM's 23 CPU-seconds on the fleet benchmark, 18 of 43 on the events one); C1 alone compiles quickly.
#: Given as spark.driver.defaultJavaOptions, which Spark puts before spark.driver.extraJavaOptions: a user's own
#: extraJavaOptions (spark-defaults.conf, --conf) still apply, and win where they say otherwise.
LOCAL_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


@contextlib.contextmanager
def command_session(master: str, name: str, config: Mapping[str, str] | None = None) -> Iterator[Any]:
    """:func:`spark_session` for the length of a command, stopped after it. A local session that starts its own JVM
    maps Spark's classes from the class archive (:mod:`.class_archive`), or records it the first time:
    then the command waits, once, for the JVM to write it as it exits."""
    try:
        from pyspark import SparkContext
    except ModuleNotFoundError as exc:
        raise (MissingExtraError.of(exc) or exc) from None

    archive = class_archive() if master.startswith("local") and SparkContext._gateway is None else None
    try:
        spark = spark_session(master, name, config, archive)
    except UsageError:
        if archive is None:
            raise
        # a JVM that does not start with the archive's options: a runtime that cannot share classes, or an archive
        # it cannot map. Only once a JVM starts without it is the archive known to be the cause (no Java at all fails
        # both ways): then ours is removed, so that a later run records it again.
        spark = spark_session(master, name, config)
        if not archive.record:
            archive.path.unlink(missing_ok=True)
        archive = None
    gateway = SparkContext._gateway
    jvm: Any = getattr(gateway, "proc", None)  # the JVM's process (spark-class ends in exec), when this one started it
    recording = archive if archive is not None and archive.record and jvm is not None else None
    failed = True
    try:
        yield spark
        failed = False
    finally:
        spark.stop()
        if recording is not None:
            if not failed:
                print(f"zkconsumer: writing Spark's classes to {recording.path.parent} for faster starts (once)",
                      file=sys.stderr)
            _end_gateway(gateway, SparkContext)
            (abandon if failed else finish)(recording, jvm)


def _end_gateway(gateway: Any, context: Any) -> None:
    """Close the JVM's gateway; a later session in this process starts a JVM of its own."""
    gateway.shutdown()
    context._gateway = context._jvm = None


def spark_session(master: str, name: str, config: Mapping[str, str] | None = None,
                  archive: ClassArchive | None = None) -> Any:
    """A session for one command: Spark's console noise off, its workers on this interpreter (which has
    zkconsumer); on a cluster, PYSPARK_PYTHON set by the operator wins. ``config``: more Spark settings (the
    benchmark's local directory). ``archive``: the class archive a local JVM maps or records."""
    try:
        from pyspark.sql import SparkSession
    except ModuleNotFoundError as exc:
        raise (MissingExtraError.of(exc) or exc) from None
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (SparkSession.builder.master(master).appName(name)
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "8"))
    if master.startswith("local"):
        options = LOCAL_JAVA_OPTIONS if archive is None else f"{LOCAL_JAVA_OPTIONS} {archive.java_options}"
        # no web UI: it would live only as long as the command, which prints what the job found; it costs the
        # session's start 0.3-0.5 s on 2 cores
        builder = builder.config("spark.driver.defaultJavaOptions", options).config("spark.ui.enabled", "false")
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as exc:  # a bad master URL, no Java: Spark's error is pages long
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"cannot start Spark with master {master!r}: {first}") from None
    session.sparkContext.setLogLevel("ERROR")
    return session
