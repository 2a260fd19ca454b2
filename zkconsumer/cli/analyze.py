"""``zkconsumer analyze fleet|events``: the Spark jobs over a fleet, as commands.

* ``fleet SNAPSHOT... --output DIR``: per group of a ``zkconsumer snapshot``, the legacy assignment against the
  owners found and what the modern strategies would change (:mod:`zkconsumer.fleet.fleet_job`): Parquet
  ``DIR/groups`` and ``DIR/strategies``, and ``DIR/summary.html``.
* ``events PATH... --output DIR``: per rebalance, step and member of JSON-line event files (any ``--log-json`` run,
  the demo, the migration comparison; :mod:`zkconsumer.fleet.events_job`): Parquet ``DIR/rebalances``,
  ``DIR/steps``, ``DIR/members``, and ``DIR/summary.html``.

``--master URL`` is Spark's master: ``local[*]`` (the default: every core of this machine), ``local[2]``, or a
cluster's (``spark://host:7077``, ``yarn``) to run the same job there; the executors need zkconsumer installed, and
``DIR`` on a file system they all mount (each task writes its own Parquet files into it, the driver the page).
``DIR`` must not exist; it appears whole when the job succeeded and not at all otherwise.

PySpark is the ``spark`` extra: without it the command says so in one line. This module imports nothing of Spark
until the command runs, so ``zkconsumer --help`` does not need it.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Iterator, Mapping
from typing import Any

from zkconsumer.cli import COMMANDS
from zkconsumer.cli.class_archive import ClassArchive, abandon, class_archive, finish
from zkconsumer.errors import MissingExtraError, UsageError

DEFAULT_MASTER = "local[*]"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("analyze", help=COMMANDS["analyze"],
                                   description="Spark jobs writing Parquet tables and a self-contained summary page.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    fleet = actions.add_parser(
        "fleet", help="per group: the legacy assignment against the owners, and what modern strategies would change",
        description="Per group of a snapshot: partitions unowned, owned by dead members or owned twice; what range, "
        "roundrobin, sticky and cooperative-sticky would assign (spread, idle members, partitions moved, revoked "
        "first); where the offsets live. Writes DIR/groups, DIR/strategies (Parquet) and DIR/summary.html.",
    )
    fleet.add_argument("inputs", nargs="+", metavar="SNAPSHOT", help="files written by `zkconsumer snapshot`")
    events = actions.add_parser(
        "events", help="per rebalance, step and member of JSON-line event files",
        description="Attempts, conflicts, retries, step durations, stop-the-world and partitions moved per "
        "rebalance; totals per member. Writes DIR/rebalances, DIR/steps, DIR/members (Parquet) and "
        "DIR/summary.html. Directories are searched at every depth; a file found there whose first lines are not "
        "events is skipped and named. Lines that are not events are counted and skipped.",
    )
    events.add_argument("inputs", nargs="+", metavar="PATH", help="event files or directories of them (--log-json)")
    for sub in (fleet, events):
        sub.add_argument("--output", required=True, metavar="DIR", help="the directory to write (must not exist)")
        sub.add_argument("--master", default=DEFAULT_MASTER, metavar="URL",
                         help="Spark master (default: %(default)s, every core here; e.g. local[2], spark://host:7077)")
    fleet.set_defaults(handler=run_fleet)
    events.set_defaults(handler=run_events)


def run_fleet(args: argparse.Namespace) -> int:
    from zkconsumer.fleet.job_output import check_inputs, check_output

    check_inputs(args.inputs, "snapshot")
    check_output(args.output)
    with command_session(args.master, "zkconsumer analyze fleet") as spark:
        from zkconsumer.fleet.fleet_job import run_fleet_job

        summary = run_fleet_job(spark, args.inputs, args.output)
    t = summary.totals
    broken = f", {t.broken_lines} broken lines skipped" if t.broken_lines else ""
    print(f"analysed {t.groups} groups ({t.needing_attention} needing attention{broken}) into {args.output}",
          file=sys.stderr)
    return 0


def run_events(args: argparse.Namespace) -> int:
    from zkconsumer.fleet.job_output import check_inputs, check_output

    check_inputs(args.inputs, "events path")
    check_output(args.output)
    with command_session(args.master, "zkconsumer analyze events") as spark:
        from zkconsumer.fleet.events_job import run_events_job

        summary = run_events_job(spark, args.inputs, args.output)
    if summary.skipped_files:
        print(f"skipped {len(summary.skipped_files)} files without events: {', '.join(summary.skipped_files)}",
              file=sys.stderr)
    t = summary.totals
    broken = f", {t.broken_lines} broken lines skipped" if t.broken_lines else ""
    print(f"analysed {t.rebalances} rebalances of {t.members} members ({t.events} events{broken}) into "
          f"{args.output}", file=sys.stderr)
    return 0


#: JVM options of a local session: the job runs for seconds to minutes in a JVM started for it, most of its work is
#: in the Python workers, and HotSpot's optimising compiler (C2) spent more CPU compiling Spark's code than it saved
#: (12 of the JVM's 23 CPU-seconds on the fleet benchmark, 18 of 43 on the events one); C1 alone compiles quickly.
#: Given as spark.driver.defaultJavaOptions, which Spark puts before spark.driver.extraJavaOptions: a user's own
#: extraJavaOptions (spark-defaults.conf, --conf) still apply, and win where they say otherwise.
LOCAL_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


@contextlib.contextmanager
def command_session(master: str, name: str, config: Mapping[str, str] | None = None) -> Iterator[Any]:
    """:func:`spark_session` for the length of a command, stopped after it. A local session that starts its own JVM
    maps Spark's classes from the class archive (:mod:`zkconsumer.cli.class_archive`), or records it the first time:
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
        # it cannot map (ours: removed, so that a later run records it again)
        if not archive.record:
            archive.path.unlink(missing_ok=True)
        archive = None
        spark = spark_session(master, name, config)
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
