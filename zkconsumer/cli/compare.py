"""``zkconsumer compare``: one scenario under several strategies, side by side.

This is the migration view: how the group's ZooKeeper-era assignment (legacy strategies, work per
thread) compares with what the modern assignors would do with the same members, and what a rebalance
would move. A table for people by default, ``--json`` for scripts.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable

from zkconsumer.assignors import NAMES
from zkconsumer.assignors.comparison import StrategyReport, compare, format_partitions
from zkconsumer.cli import COMMANDS, options
from zkconsumer.cli.assign import add_scenario_arguments, load_scenario
from zkconsumer.errors import UsageError
from zkconsumer.types import TopicPartition


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compare",
        help=COMMANDS["compare"],
        description="Run a JSON scenario (stdin or --input) under several strategies and compare per member "
        "partitions, spread, balance score, idle members and threads, and partitions moved relative to "
        "\"owned\"; for cooperative-sticky also the partitions revoked in the first rebalance and assigned "
        "in the follow-up; and, for every strategy, the same membership change lived eagerly (everything owned "
        "revoked first, then everything assigned), cooperatively (only what moves revoked, then assigned in a "
        "follow-up rebalance) or, for KIP-848's server-side consumer-uniform and consumer-range, by the consumer "
        "protocol's reconciliation (what moves revoked, then assigned; \"owned\" is the coordinator's current "
        "target assignment).",
    )
    add_scenario_arguments(parser)
    parser.add_argument(
        "--strategies", metavar="A,B,...", default=",".join(NAMES),
        help=f"comma-separated strategies (default: all: {','.join(NAMES)})",
    )
    options.add_json(parser, help="print JSON instead of a table")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    strategies = tuple(s.strip() for s in args.strategies.split(",") if s.strip())
    if not strategies:
        raise UsageError("--strategies names no strategy")
    unknown = [s for s in strategies if s not in NAMES]
    if unknown:
        raise UsageError(f"unknown strategy {unknown[0]!r} (known: {', '.join(NAMES)})")
    scenario = load_scenario(args)
    reports = compare(scenario.request, strategies, scenario.options)
    if all(r.error for r in reports):
        raise UsageError(reports[0].error or "no strategy could assign this scenario")
    print(json.dumps(to_json(reports)) if args.json else render_table(reports))
    return 0


def _pairs(partitions: Iterable[TopicPartition]) -> list[list]:
    return [[tp.topic, tp.partition] for tp in partitions]


def to_json(reports: tuple[StrategyReport, ...]) -> dict:
    strategies: dict[str, dict] = {}
    for r in reports:
        if r.error:
            strategies[r.strategy] = {"error": r.error}
            continue
        strategies[r.strategy] = {
            "family": r.family,
            "members": {
                v.member_id: {
                    "count": len(v.partitions),
                    "partitions": _pairs(v.partitions),
                    "threads": {t: _pairs(p) for t, p in v.threads.items()},
                }
                for v in r.members
            },
            "spread": {"members": r.member_spread, "threads": r.thread_spread},
            "balance_score": r.balance_score,
            "idle_members": list(r.idle_members),
            "idle_threads": list(r.idle_threads),
            "moved": r.moved,
            "cooperative": None if r.cooperative is None else {
                "rebalances": r.cooperative.rounds,
                "revoked_first_phase": [[tp.topic, tp.partition, m] for tp, m in r.cooperative.revoked],
                "assigned_second_phase": [[tp.topic, tp.partition, m] for tp, m in r.cooperative.assigned_later],
            },
            "rebalance": None if r.rebalance is None else {
                "protocol": r.rebalance.protocol,
                "rebalances": r.rebalance.rebalances,
                "revoked_first": [[tp.topic, tp.partition, m] for tp, m in r.rebalance.revoked_first],
                "assigned_after": [[tp.topic, tp.partition, m] for tp, m in r.rebalance.assigned_after],
                "kept_fetching": r.rebalance.kept_fetching,
            },
        }
    return {"strategies": strategies}


def render_table(reports: tuple[StrategyReport, ...]) -> str:
    ok = [r for r in reports if not r.error]
    lines = _columns(
        [["strategy", "family", "spread/member", "spread/thread", "balance score", "idle members",
          "idle threads", "moved"]]
        + [[r.strategy, r.family or "", str(r.member_spread), str(r.thread_spread), str(r.balance_score),
            str(len(r.idle_members)), str(len(r.idle_threads)), str(r.moved)] for r in ok]
    )
    lines += [f"{r.strategy}: {r.error}" for r in reports if r.error]
    if ok:
        members = [v.member_id for v in ok[0].members]
        lines += ["", "partitions per member"]
        lines += _columns(
            [["member", *[r.strategy for r in ok]]]
            + [[m, *[str(len(r.members[i].partitions)) for r in ok]] for i, m in enumerate(members)]
        )
    for r in ok:
        title = r.strategy
        if r.cooperative is not None:
            rounds = r.cooperative.rounds
            title += f" (final assignment, after {rounds} rebalance{'s' if rounds > 1 else ''})"
        lines += ["", title]
        rows = []
        for v in r.members:
            rows.append([f"  {v.member_id}", str(len(v.partitions)), format_partitions(v.partitions)])
            if r.family == "legacy":
                rows += [[f"    {t}", str(len(p)), format_partitions(p)] for t, p in v.threads.items()]
        lines += _columns(rows)
        if r.cooperative is not None:
            revoked = " ".join(f"{tp} ({m})" for tp, m in r.cooperative.revoked) or "none"
            later = " ".join(f"{tp} -> {m}" for tp, m in r.cooperative.assigned_later) or "none"
            lines += [f"  revoked in the first rebalance: {revoked}", f"  assigned in a follow-up rebalance: {later}"]
    outcomes = [r for r in ok if r.rebalance is not None]
    if outcomes:
        lines += ["", "the same membership change, eager vs cooperative vs consumer (KIP-848): what stops first, "
                  "what is assigned after it stopped, what is fetched throughout"]
        lines += _columns(
            [["strategy", "protocol", "rebalances", "revoked first", "assigned after", "kept fetching"]]
            + [[r.strategy, o.protocol, str(o.rebalances), str(len(o.revoked_first)), str(len(o.assigned_after)),
                str(o.kept_fetching)] for r in outcomes for o in (r.rebalance,) if o is not None]
        )
    return "\n".join(lines)


def _columns(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
