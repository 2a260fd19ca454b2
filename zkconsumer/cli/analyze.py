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
import sys

from zkconsumer.cli import COMMANDS

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
    from zkconsumer.fleet.spark_session import command_session

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
    from zkconsumer.fleet.spark_session import command_session

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
