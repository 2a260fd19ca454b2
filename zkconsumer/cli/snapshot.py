"""``zkconsumer snapshot``: every consumer group of an ensemble as JSON lines, the input of ``analyze fleet``.

One line per group (:mod:`zkconsumer.fleet.snapshot` has the format): registrations, owners, offsets, partition
counts, where the offsets live, malformed znodes (recorded, never fatal). Groups are read with kazoo's async calls,
many at once on one session (:mod:`zkconsumer.fleet.read`), with a count on stderr (:mod:`zkconsumer.progress`).
``--groups REGEX`` keeps the groups whose whole name matches.

``--synthetic N --seed S`` writes N made-up groups instead, with no server (:mod:`zkconsumer.fleet.synthetic`
documents the distributions), for benchmarks and tests.

The file is written whole or not at all (:mod:`zkconsumer.cli.output_file`).
"""

from __future__ import annotations

import argparse
import re
import sys

from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.output_file import written_whole
from zkconsumer.errors import UsageError


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "snapshot", help=COMMANDS["snapshot"],
        description="Read every consumer group (registrations, owners, offsets, partition counts) into one JSON "
        "line each, for `zkconsumer analyze fleet`.",
    )
    parser.add_argument("--output", required=True, metavar="FILE.jsonl", help="the file to write")
    parser.add_argument("--groups", metavar="REGEX", help="only the groups whose whole name matches")
    options.add_zookeeper(parser)
    options.add_run_dir(parser)
    options.add_bootstrap(parser, help="also ask this broker's cluster whether each group has offsets in Kafka "
                          "(offsets_storage kafka or both); without it, only ZooKeeper's offsets are seen")
    parser.add_argument("--synthetic", type=int, metavar="N",
                        help="write N synthetic groups instead of reading ZooKeeper (no server needed)")
    parser.add_argument("--seed", type=int, default=0, help="the synthetic groups' random seed (default: 0)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    pattern = None
    if args.groups is not None:
        try:
            pattern = re.compile(args.groups)
        except re.error as exc:
            raise UsageError(f"--groups {args.groups!r} is not a valid regex ({exc})") from None
    if args.synthetic is not None:
        return _synthetic(args, pattern)
    return _from_zookeeper(args, pattern)


def _synthetic(args: argparse.Namespace, pattern: re.Pattern[str] | None) -> int:
    from zkconsumer.fleet.snapshot import encode
    from zkconsumer.fleet.synthetic import synthetic_groups

    if args.synthetic < 0:
        raise UsageError(f"--synthetic must be 0 or more, not {args.synthetic}")
    written = 0
    with written_whole(args.output) as out:
        for record in synthetic_groups(args.synthetic, args.seed):
            if pattern is None or pattern.fullmatch(record.group):
                out.write(encode(record) + "\n")
                written += 1
    print(f"wrote {written} synthetic groups to {args.output}", file=sys.stderr)
    return 0


def _from_zookeeper(args: argparse.Namespace, pattern: re.Pattern[str] | None) -> int:
    from zkconsumer.cli.zookeeper_session import zookeeper_session
    from zkconsumer.fleet.read import read_snapshot
    from zkconsumer.fleet.snapshot import encode
    from zkconsumer.group.registry import list_groups
    from zkconsumer.progress import Progress

    written = malformed = inconsistent = 0
    with zookeeper_session(args) as zk, written_whole(args.output) as out:
        groups = [g for g in list_groups(zk) if pattern is None or pattern.fullmatch(g)]
        progress = Progress(sys.stderr, every=1000, noun=f"of {len(groups)} groups", verb="read")
        for record in read_snapshot(zk, groups, args.bootstrap_server, progress.update):
            out.write(encode(record) + "\n")
            written += 1
            malformed += len(record.malformed)
            inconsistent += not record.consistent
        progress.finish()
    notes = [f"{malformed} malformed znodes recorded"] if malformed else []
    if inconsistent:
        notes.append(f"{inconsistent} groups changed while read")
    extra = f" ({', '.join(notes)})" if notes else ""
    print(f"wrote {written} groups to {args.output}{extra}", file=sys.stderr)
    return 0
