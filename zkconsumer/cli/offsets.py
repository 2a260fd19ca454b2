"""``zkconsumer offsets export|import``: ExportZkOffsets and ImportZkOffsets, in their file format.

* ``export``: ``/consumers/<g>/offsets/<t>/<p>:<offset>`` per partition (:mod:`zkconsumer.tools.export_zk_offsets`),
  for the given groups or all of them, to stdout or, written whole or not at all, to ``--output``. Offsets that
  cannot be read are warnings on stderr and left out. A running count goes to stderr: rewritten in place on a
  terminal, a line every 10,000 offsets otherwise.
* ``import``: checks every line of the file first (:mod:`zkconsumer.tools.zk_offsets_file`) and writes nothing if one
  is bad; then writes each group in one transaction (:mod:`zkconsumer.tools.import_zk_offsets`), warning about groups
  that have live members. Entries for a topic ZooKeeper does not know, a partition the topic does not have or an
  offset below -1 are refused, the first named, and nothing is written (``--force`` writes them anyway, with a
  warning each); a ZooKeeper with no topic registered at all is one warning. ``--dry-run`` shows each write and the
  value it would replace, and writes nothing.
* ``migrate``: copies one group's offsets from ZooKeeper to Kafka or back (:mod:`zkconsumer.tools.offsets_migration`),
  printing the plan (``--json``: as data). Refuses while the group is consumed (members in ``/consumers/<g>/ids``,
  or a broker-side group with members) unless ``--force``; a target already ahead is left alone unless ``--force``.
  Exits 1 naming what a store did not take.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.input_file import read_text
from zkconsumer.cli.output_file import written_whole
from zkconsumer.cli.zookeeper_session import zookeeper_session
from zkconsumer.errors import ServerUnavailableError
from zkconsumer.group.registry import list_groups, require_group
from zkconsumer.progress import Progress
from zkconsumer.tools.export_zk_offsets import export_group
from zkconsumer.tools.import_zk_offsets import by_group, import_offsets
from zkconsumer.tools.zk_offsets_file import format_lines, parse_offsets_file


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "offsets", help=COMMANDS["offsets"]
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export", help="write /consumers/<g>/offsets/<t>/<p>:<offset> lines",
        description="ExportZkOffsets: one line /consumers/<group>/offsets/<topic>/<partition>:<offset> per committed "
        "offset of the groups (default: every group).",
    )
    export.add_argument("--group", action="append", metavar="GROUP", help="a group to export (repeatable)")
    export.add_argument("--output", metavar="FILE", help="the file to write (default: stdout)")
    options.add_json(export, help="a JSON list of objects (group, topic, partition, offset) instead of the lines")
    imp = actions.add_parser(
        "import", help="write the offsets of an exported file to ZooKeeper",
        description="ImportZkOffsets: read PATH:OFFSET lines up to the end or the first empty line, check them all, "
        "then write them (one transaction per group). Stop the group's consumers first: their next commit would "
        "overwrite what is imported.",
    )
    imp.add_argument("--input", required=True, metavar="FILE", help="the offsets file ('-' for stdin)")
    imp.add_argument("--dry-run", action="store_true", help="show what would be written; write nothing")
    imp.add_argument("--force", action="store_true",
                     help="write entries for topics or partitions ZooKeeper does not know, or offsets below -1, "
                     "with a warning each (default: refuse them all)")
    options.add_json(imp, help="the writes (path, offset, current value) and the outcome as one JSON object")
    migrate = actions.add_parser(
        "migrate", help="copy a group's offsets from ZooKeeper to Kafka, or from Kafka to ZooKeeper",
        description="Copy the group's committed offsets to the other store and print the plan. Stop the group's "
        "consumers first: it refuses while members are registered in /consumers/<group>/ids or the broker-side "
        "group has members (--force to go on). A partition whose offset in the target is already higher is left "
        "alone and reported (--force writes the source's offset over it).",
    )
    migrate.add_argument("--group", required=True, help="the group whose offsets to copy")
    migrate.add_argument("--to", required=True, metavar="STORE", help="kafka or zookeeper (the source is the other)")
    migrate.add_argument("--dry-run", action="store_true", help="print the plan; write nothing")
    migrate.add_argument("--force", action="store_true",
                         help="go on although the group is consumed, and overwrite offsets the target has ahead")
    migrate.add_argument("--socket-timeout-ms", type=int, default=10000, metavar="MS",
                         help="how long to wait for each broker answer (default: %(default)s)")
    options.add_bootstrap(migrate, help="a broker of the cluster (default: the brokers registered in ZooKeeper)")
    options.add_json(migrate, help="the plan and the outcome as one JSON object")
    for sub in (export, imp, migrate):
        options.add_zookeeper(sub)
        options.add_run_dir(sub)
    export.set_defaults(handler=run_export)
    imp.set_defaults(handler=run_import)
    migrate.set_defaults(handler=run_migrate)


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


def run_export(args: argparse.Namespace) -> int:
    given = list(dict.fromkeys(args.group or []))
    with zookeeper_session(args) as zk:
        for group in given:
            require_group(zk, group)
        groups = given or list_groups(zk)
        with _output(args.output) as out:
            progress = Progress(sys.stderr)
            total = 0
            rows: list[dict[str, object]] = []
            try:
                for group in groups:
                    exported = export_group(zk, group, progress=progress.update)
                    progress.group_done(len(exported.entries))
                    for problem in exported.skipped:
                        warn(f"znode {problem.path} {problem.problem}; skipped")
                    if given and not exported.has_offsets:
                        warn(f"group {group} has no offsets (no znode /consumers/{group}/offsets)")
                    if args.json:
                        rows += [{"group": e.group, "topic": e.topic, "partition": e.partition, "offset": e.offset}
                                 for e in exported.entries]
                    else:
                        out.write(format_lines(exported.entries))
                    total += len(exported.entries)
            finally:
                progress.finish()
            if args.json:
                out.write(json.dumps(rows, indent=2) + "\n")
    if args.output:
        print(f"exported {total} offsets of {len(groups)} group{'s' if len(groups) != 1 else ''} to {args.output}")
    return 0


@contextlib.contextmanager
def _output(path: str | None):
    """stdout, or a file written whole: into a temporary file beside it, renamed over it only on success."""
    if path is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    with written_whole(path, prefix=".zkoffsets-") as f:
        yield f


def run_import(args: argparse.Namespace) -> int:
    entries = parse_offsets_file(read_text(args.input))
    if not entries:
        warn(f"{args.input} holds no offsets; nothing to write")
        if args.json:
            print(json.dumps({"dry_run": args.dry_run, "offsets": 0, "groups": [], "writes": [], "created": 0,
                              "updated": 0}))
        return 0
    groups = by_group(entries)
    plural = "s" if len(groups) != 1 else ""
    with zookeeper_session(args) as zk:
        done = import_offsets(zk, entries, force=args.force, dry_run=args.dry_run, plan=args.json, warn=warn)
    if args.json:
        writes, result = done.writes or [], done.result
        print(json.dumps({
            "dry_run": args.dry_run, "offsets": len(entries), "groups": list(groups),
            "writes": [{"path": w.entry.path, "offset": w.entry.offset, "current": w.current} for w in writes],
            "created": 0 if result is None else result.created, "updated": 0 if result is None else result.updated,
        }, indent=2))
        return 0
    if done.result is None:
        for write in done.writes or []:
            if write.creates:
                print(f"would create {write.entry.line()}")
            else:
                print(f"would set {write.entry.line()} (now {write.current})")
        print(f"dry run: {len(entries)} offsets of {len(groups)} group{plural}; nothing written")
        return 0
    print(f"imported {len(entries)} offsets of {len(groups)} group{plural} "
          f"({done.result.created} created, {done.result.updated} updated)")
    return 0


def run_migrate(args: argparse.Namespace) -> int:
    from zkconsumer.group.kafka_offset_store import registered_addresses
    from zkconsumer.kafka.group_offsets import GroupOffsetsClient
    from zkconsumer.tools import offsets_migration as migration

    target = migration.check_store(args.to)
    group = migration.check_legacy_group(args.group)
    timeout = max(args.socket_timeout_ms, 1) / 1000
    with zookeeper_session(args) as zk:
        bootstrap = args.bootstrap_server or ",".join(registered_addresses(zk))
        if not bootstrap:
            raise ServerUnavailableError("no --bootstrap-server given and no broker is registered in ZooKeeper "
                                         "(/brokers/ids)")

        def consumed(who: str, refused: bool) -> None:
            verb = "would refuse" if args.dry_run and not args.force else ("refuses" if refused else "goes on")
            warn(f"group {group} is being consumed: {who}; migrate {verb}" + ("" if args.force else " without --force"))

        migrated = migration.migrate(zk, GroupOffsetsClient(bootstrap, timeout), bootstrap, group, target,
                                     force=args.force, dry_run=args.dry_run, timeout=timeout, consumed=consumed)
    source, rows, refused, written = migrated.source, migrated.rows, migrated.refused, migrated.written
    kept = [r for r in rows if r.action == migration.KEEP]
    if args.json:
        print(json.dumps({"group": group, "from": source, "to": target, "dry_run": args.dry_run,
                          "refused": refused, "rows": migration.rows_json(rows), "written": written}, indent=2))
    else:
        for line in migration.format_plan(rows, source, target):
            print(line)
        if not refused:
            done = "dry run: nothing written" if args.dry_run else f"{written} offsets written to {target}"
            print(f"{done}; {len(kept)} left alone (the target is ahead)" if kept else done)
    if refused:
        raise migration.MigrationRefusedError(
            f"group {group} is being consumed ({'; '.join(migrated.consumers)}); stop its consumers or use --force; "
            f"nothing written")
    if not rows:
        warn(f"group {group} has no offsets in {source}; nothing to migrate")
    return 0
