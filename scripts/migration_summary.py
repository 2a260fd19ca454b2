"""The figures of ``zkconsumer migration compare`` runs that docs/migration-compare.md quotes, kept in the repository
beside the page (docs/data/migration-compare/), and the page's table made from them.

    .venv/bin/python scripts/migration_summary.py keep RUN_DIR --command "zkconsumer migration compare ..." \\
        [--load "start 0.5 2.9 4.0; end 5.2 4.0 4.3"] > docs/data/migration-compare/NAME.json
    .venv/bin/python scripts/migration_summary.py table docs/data/migration-compare/kafka-*.json \\
        --beside docs/data/migration-compare/front-*.json
    .venv/bin/python scripts/migration_summary.py move docs/data/migration-compare/move-*.json

``keep``: a run's ``report.json`` without its per-pause and per-member detail, with the command that produced it and
the machine's load while it ran. ``table``: per protocol, the median over the runs given of the partition-seconds
paused (in all, and in the scenario's restarts and crash), the partitions moved and the messages lost, at the
coordinator of the first runs and, with ``--beside``, at that of the others, side by side (Markdown). ``move``: runs
of the move from ZooKeeper (the shipped ``move`` scenarios), a row per run and target protocol: the downtime (in all
and at the cutover), the duplicates and the messages skipped.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

#: the per-protocol figures kept (report.json's names)
FIGURES = ("family", "kind", "produced", "delivered", "lost", "duplicates", "rebalances", "failed_attempts",
           "partition_seconds_paused", "max_pause_ms", "paused_partitions", "moved_partitions", "settle_ms", "error",
           "downtime_ms")
SCENE_FIGURES = ("partition_seconds_paused", "max_pause_ms", "moved_partitions", "settle_ms", "lost", "downtime_ms")


def summary(report: dict[str, Any], command: str, load: str | None) -> dict[str, Any]:
    identity = report.get("coordinator_identity") or {}
    return {
        "command": command,
        "load": load,
        "scenario": report.get("scenario"),
        "run_id": report.get("run_id"),
        "coordinator_software": report.get("coordinator_software"),
        "coordinator": identity.get("name"),
        "group_timeouts_ms": report.get("group_timeouts_ms"),
        "timeouts": report.get("timeouts"),
        "problems": report.get("problems"),
        "move": report.get("move"),
        "protocols": {
            name: {**{key: p.get(key) for key in FIGURES},
                   "scenes": {str(s["scene"]): {key: s.get(key) for key in SCENE_FIGURES} for s in p["scenes"]}}
            for name, p in report["protocols"].items()},
    }


def medians(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per protocol: the medians of its figures over ``runs`` (the scenes split as the default script's: scene 1 the
    six starting, the last the crash, the ones between the restarts)."""
    out: dict[str, dict[str, float]] = {}
    for name in runs[0]["protocols"]:
        per = [run["protocols"][name] for run in runs]
        scenes = [sorted(p["scenes"].items(), key=lambda kv: int(kv[0])) for p in per]
        out[name] = {
            "paused": statistics.median(p["partition_seconds_paused"] for p in per),
            "start": statistics.median(s[0][1]["partition_seconds_paused"] for s in scenes),
            "restarts": statistics.median(sum(v["partition_seconds_paused"] for _, v in s[1:-1]) for s in scenes),
            "crash": statistics.median(s[-1][1]["partition_seconds_paused"] for s in scenes),
            "moved": statistics.median(p["moved_partitions"] for p in per),
            "lost": sum(p["lost"] for p in per),
        }
    return out


def table(first: list[dict[str, Any]], beside: list[dict[str, Any]]) -> str:
    """The Markdown table of :func:`medians` at the first runs' coordinator, and at the others' beside them."""
    sides = [(first[0]["coordinator_software"], medians(first))]
    if beside:
        sides.append((beside[0]["coordinator_software"], medians(beside)))
    head = ["protocol"]
    for software, _ in sides:
        head += [f"{software}: in all", "start", "restarts", "crash", "moved", "lost"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in sides[0][1]:
        row = [name]
        for _, figures in sides:
            f = figures[name]
            row += [f"{f['paused']:.1f}", f"{f['start']:.1f}", f"{f['restarts']:.1f}", f"{f['crash']:.1f}",
                    f"{f['moved']:.0f}", f"{f['lost']}"]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def move_table(runs: list[dict[str, Any]]) -> str:
    """A row per run of the move and target protocol (Markdown): the scenario, the protocol, the coordinator, the
    downtime in all and at the cutover, the duplicates, the messages skipped; ordered so that a protocol's runs at
    each coordinator are side by side."""
    rows = []
    for run in runs:
        for order, (name, m) in enumerate((run.get("move") or {}).get("protocols", {}).items()):
            rows.append(((run["scenario"], order, run["coordinator_software"]),
                         f"| {run['scenario']} | {name} | {run['coordinator_software']} | {m['downtime_s']:.1f} | "
                         f"{m['cutover_downtime_s']:.1f} | {m['duplicates']} | {m['skipped']} |"))
    return "\n".join(["| scenario | target protocol | coordinator | downtime (s) | at the cutover (s) | duplicates | "
                      "skipped |", "|---|---|---|---|---|---|---|"] + [row for _, row in sorted(rows)])


def _read(paths: list[Path]) -> list[dict[str, Any]]:
    return [json.loads(path.read_text(encoding="utf-8")) for path in paths]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    actions = parser.add_subparsers(dest="action", required=True)
    keep = actions.add_parser("keep", help="a run's figures, to keep beside the page")
    keep.add_argument("run_dir", type=Path, help="the comparison's --output-dir")
    keep.add_argument("--command", required=True, help="the command that produced it")
    keep.add_argument("--load", default=None, help="the load averages at its start and end, in words")
    tab = actions.add_parser("table", help="the medians of kept runs, as the page's table")
    tab.add_argument("runs", type=Path, nargs="+", help="kept runs at one coordinator")
    tab.add_argument("--beside", type=Path, nargs="*", default=[], help="kept runs at another, side by side")
    moves = actions.add_parser("move", help="kept runs of the move from ZooKeeper, a row per target protocol")
    moves.add_argument("runs", type=Path, nargs="+", help="kept runs of a move scenario")
    args = parser.parse_args()
    if args.action == "keep":
        report = json.loads((args.run_dir / "report.json").read_text(encoding="utf-8"))
        json.dump(summary(report, args.command, args.load), sys.stdout, indent=1)
        print()
    elif args.action == "move":
        print(move_table(_read(args.runs)))
    else:
        print(table(_read(args.runs), _read(args.beside)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
