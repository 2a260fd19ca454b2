"""``zkconsumer offsets export|import``: ExportZkOffsets and ImportZkOffsets, in their file format.

* ``export``: ``/consumers/<g>/offsets/<t>/<p>:<offset>`` per partition (:mod:`zkconsumer.tools.export_zk_offsets`),
  for the given groups or all of them, to stdout or, written whole or not at all, to ``--output``. Offsets that
  cannot be read are warnings on stderr and left out. A running count goes to stderr: rewritten in place on a
  terminal, a line every 10,000 offsets otherwise.
* ``import``: checks every line of the file first (:mod:`zkconsumer.tools.zk_offsets_file`) and writes nothing if one
  is bad; then writes each group in one transaction (:mod:`zkconsumer.tools.import_zk_offsets`), warning about groups
  that have live members. ``--dry-run`` shows each write and the value it would replace, and writes nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.input_file import read_text
from zkconsumer.cli.output_file import written_whole
from zkconsumer.cli.zookeeper_session import zookeeper_session
from zkconsumer.group.registry import list_groups, live_members, require_group
from zkconsumer.progress import Progress
from zkconsumer.tools.export_zk_offsets import export_group
from zkconsumer.tools.import_zk_offsets import apply_import, by_group, plan_import
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
    imp = actions.add_parser(
        "import", help="write the offsets of an exported file to ZooKeeper",
        description="ImportZkOffsets: read PATH:OFFSET lines up to the end or the first empty line, check them all, "
        "then write them (one transaction per group). Stop the group's consumers first: their next commit would "
        "overwrite what is imported.",
    )
    imp.add_argument("--input", required=True, metavar="FILE", help="the offsets file ('-' for stdin)")
    imp.add_argument("--dry-run", action="store_true", help="show what would be written; write nothing")
    for sub in (export, imp):
        options.add_zookeeper(sub)
        options.add_run_dir(sub)
    export.set_defaults(handler=run_export)
    imp.set_defaults(handler=run_import)


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
            try:
                for group in groups:
                    exported = export_group(zk, group, progress=progress.update)
                    progress.group_done(len(exported.entries))
                    for problem in exported.skipped:
                        warn(f"znode {problem.path} {problem.problem}; skipped")
                    if given and not exported.has_offsets:
                        warn(f"group {group} has no offsets (no znode /consumers/{group}/offsets)")
                    out.write(format_lines(exported.entries))
                    total += len(exported.entries)
            finally:
                progress.finish()
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
        return 0
    groups = by_group(entries)
    plural = "s" if len(groups) != 1 else ""
    with zookeeper_session(args) as zk:
        for group in groups:
            members = live_members(zk, group)
            if members:
                shown = ", ".join(members[:3]) + (", ..." if len(members) > 3 else "")
                warn(f"group {group} has {len(members)} live member{'s' if len(members) != 1 else ''} ({shown}); "
                     f"their next commit may overwrite the imported offsets")
        if args.dry_run:
            for write in plan_import(zk, entries):
                if write.creates:
                    print(f"would create {write.entry.line()}")
                else:
                    print(f"would set {write.entry.line()} (now {write.current})")
            print(f"dry run: {len(entries)} offsets of {len(groups)} group{plural}; nothing written")
            return 0
        result = apply_import(zk, entries)
    print(f"imported {len(entries)} offsets of {len(groups)} group{plural} "
          f"({result.created} created, {result.updated} updated)")
    return 0
