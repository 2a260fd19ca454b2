"""docs/storm.md's generated tables, made again from the data committed in ``benchmarks/data/storm/``.

Run: ``.venv/bin/python benchmarks/storm_tables.py`` rewrites every region of docs/storm.md between
``<!-- generated: NAME -->`` and ``<!-- /generated: NAME -->``; ``--check`` writes nothing and fails with a diff when
the page differs from what the data give (``tests/storm/test_storm_tables.py`` runs it); ``--predict`` first simulates
the fleet-size points again into ``predictions.json``, for after a change of the model (half an hour and more: a
thousand legacy members thrash for the whole simulated ten minutes, ``SETTLE_LIMIT_S``).

The regions:

- ``example``: ``zkconsumer simulate storm --members 10 --partitions 1000``, as it prints;
- ``parameters``: every parameter of the model, its default and its source, and its value in the calibration runs;
- ``agreement``: the calibration record's every run beside the model's prediction of it (:func:`calibration.replay`:
  what was measured and what was fitted from records not kept as given, ``rebalance_cpu_ms`` fitted again);
- ``validation``: the fresh runs taken after the model was frozen (``validation-*.json``, each a record the
  calibration harness wrote), predicted with the calibration record's fit (:func:`calibration.validate`);
- ``large``: real large groups (``large-*.json``, ``benchmarks/storm_large_group.py --out``) beside the model's
  predictions of them, made again;
- ``fleet`` and ``sweep``: the model's predictions at fleet sizes, from ``predictions.json``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from zkconsumer.cli.simulate import render_storm
from zkconsumer.storm import calibration as cal
from zkconsumer.storm.parameters import StormParameters
from zkconsumer.storm.rendering import (
    agreement_markdown,
    agreement_summary,
    fleet_markdown,
    marked_regions,
    parameter_markdown,
    replace_region,
    sweep_markdown,
    validation_markdown,
    validation_summary,
)
from zkconsumer.storm.simulation import DEFAULT_PROTOCOLS, simulate, storm_scenario
from zkconsumer.storm.sweep import SweepPoint, SweepRow, grid, run_point

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "benchmarks" / "data" / "storm"
DOC = ROOT / "docs" / "storm.md"
#: the calibration record the page shows
RECORD = DATA / "calibration-2026-12-02T1354Z.json"
PREDICTIONS = DATA / "predictions.json"
#: the fresh runs taken after the model was frozen, never used to change it
VALIDATION = "validation-*.json"
#: real large groups (``benchmarks/storm_large_group.py --out``)
LARGE = "large-*.json"
FLEET_SIZES = ((10, 1_000), (100, 10_000), (300, 30_000), (1_000, 100_000))
SWEEP_MEMBERS = (10, 30, 100, 300, 1_000)
SWEEP_PARTITIONS = (1_000, 10_000, 100_000)
EXAMPLE = ("10", "1000")
#: how long a fleet-size point may take to settle, simulated: ten minutes, where ``simulate storm`` waits an hour by
#: default (the points that thrash run to the limit, and an hour of a thousand members costs an hour of CPU)
SETTLE_LIMIT_S = 600.0


def large_prediction(fitted: StormParameters, real: dict[str, Any], settle_limit_s: float) -> cal.Figures:
    """A real large group's run (``benchmarks/storm_large_group.py``) predicted by the model with its calibration's
    parameters (``fitted``): legacy at Kafka's defaults, a new group, the run's servers, the members sharing one
    process's CPU; modern at the defaults, the members starting as far apart as the run measured."""
    protocol = real.get("protocol", "legacy-range")
    spec = cal.RunSpec(protocol, cal.AT_ONCE, real["members"], real["partitions"], "large",
                       start_interval_ms=real.get("start_interval_ms"))
    parameters = fitted
    if protocol == "legacy-range":
        parameters = replace(parameters, zookeeper_servers=real["servers"], offsets_committed=False,
                             members_share_one_cpu=True)
    else:
        parameters = cal.run_settings(spec, parameters)
    return cal.predict(spec, parameters, settle_limit_s)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}"


def large_markdown(record: cal.CalibrationRecord) -> str:
    """The real large groups beside the model's predictions of them: the legacy groups, then the modern ones."""
    runs = sorted((json.loads(path.read_text(encoding="utf-8")) for path in DATA.glob(LARGE)),
                  key=lambda doc: (doc["real"].get("protocol", "legacy-range"), doc["real"]["partitions"],
                                   doc["real"]["members"]))
    if not runs:
        return "No real large group has been run yet."
    legacy = ["| members x partitions, servers | time to stable s: real / model | ZK requests: real / model | first "
              "rebalances raised | the members' process: CPU s, threads, memory MB | load average (1 min) before, "
              "after | run |", "|---|---|---|---|---|---|---|"]
    modern = ["| protocol | members x partitions | time to stable s: real / model | partition-s paused: real / model | "
              "Kafka's CPU s | the members' process: CPU s, threads, memory MB | load average (1 min) before, after | "
              "run |", "|---|---|---|---|---|---|---|---|"]
    fitted = cal.calibrate(record).parameters  # once: each fit simulates the calibration runs again
    for doc in runs:
        real = doc["real"]
        model = large_prediction(fitted, real, doc["max_seconds"])
        times = f"{_seconds(real['time_to_stable_s'])} / {_seconds(model.time_to_stable_s)}"
        threads = "-" if real["threads"] is None else f"{real['threads']:,}"
        process = f"{real['cpu_s']:,.1f}, {threads}, {real['max_rss_mb']:,}"
        load = f"{real['load_before'][0]:.1f}, {real['load_after'][0]:.1f}"
        if real.get("protocol", "legacy-range") == "legacy-range":
            legacy.append(f"| {real['members']:,} x {real['partitions']:,}, {real['servers']} | {times} | "
                          f"{real['zookeeper_requests']:,} / {model.zookeeper_requests:,} | "
                          f"{real['first_rebalances_raised']} | {process} | {load} | {doc['started']} |")
        else:
            modern.append(f"| {real['protocol']} | {real['members']:,} x {real['partitions']:,} | {times} | "
                          f"{real['partition_seconds_paused']:,.0f} / {model.partition_seconds_paused:,.0f} | "
                          f"{real['broker_cpu_s']:,.1f} | {process} | {load} | {doc['started']} |")
    tables = [t for t in (legacy, modern) if len(t) > 2]
    return "\n\n".join("\n".join(t) for t in tables)


def fleet_points() -> list[SweepPoint]:
    """The sweep's grid and the fleet table's sizes, at the model's defaults."""
    points = grid(SWEEP_MEMBERS, SWEEP_PARTITIONS, DEFAULT_PROTOCOLS)
    have = {(p.members, p.partitions) for p in points}
    points += [SweepPoint("storm", protocol, m, n) for m, n in FLEET_SIZES if (m, n) not in have
               for protocol in DEFAULT_PROTOCOLS]
    return points


def predict(path: Path = PREDICTIONS) -> None:
    rows = []
    for point in sorted(fleet_points(), key=SweepPoint.cost):
        started = time.monotonic()
        rows.append(run_point(point, SETTLE_LIMIT_S))
        print(f"{point.protocol:20} {point.members:6,} x {point.partitions:7,}: "
              f"{rows[-1].time_to_stable_s} s ({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
    doc = {"command": "benchmarks/storm_tables.py --predict", "settle_limit_s": SETTLE_LIMIT_S,
           "rows": [asdict(r) for r in sorted(rows, key=lambda r: (r.protocol, r.partitions, r.members))]}
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")


def load_predictions(path: Path = PREDICTIONS) -> tuple[list[SweepRow], float]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    return [SweepRow(**row) for row in doc["rows"]], float(doc["settle_limit_s"])


def regions() -> dict[str, str]:
    """Every generated region's body, from the committed data and the model."""
    record = cal.load_record(RECORD.read_text(encoding="utf-8"))
    replayed = cal.replay(record)
    legacy = next(r.spec for r in record.runs if r.spec.legacy)
    in_runs = cal.run_settings(legacy, replayed.calibration.parameters)
    left_out = "\n" + "".join(f"\n- {name}: left out, {why}." for name, why in record.left_out.items())
    rows, limit_s = load_predictions()
    fresh = [cal.load_record(path.read_text(encoding="utf-8")) for path in sorted(DATA.glob(VALIDATION))]
    validation = ("No fresh run has been taken yet." if not fresh else
                  "The fresh runs: " + ", ".join(f"`{p.relative_to(ROOT)}`" for p in sorted(DATA.glob(VALIDATION)))
                  + ".\n\n" + validation_markdown(frozen := cal.validate(record, fresh)) + "\n\n"
                  + validation_summary(frozen, cal.validate(record, fresh, own_machine=True)))
    members, partitions = EXAMPLE
    example = render_storm(simulate(storm_scenario(int(members), int(partitions))))
    return {
        "example": f"```\n$ zkconsumer simulate storm --members {members} --partitions {partitions}\n{example}\n```",
        "parameters": parameter_markdown(StormParameters(), in_runs, replayed.calibration,
                                         {f.name for f in record.measured}),
        "agreement": (f"The record: `{RECORD.relative_to(ROOT)}`, the run of {record.started} "
                      f"(`{record.command}`). {record.provenance}\n\n"
                      + agreement_markdown(list(replayed.rows)) + "\n\n" + agreement_summary(replayed.rows)
                      + left_out),
        "validation": validation,
        "large": large_markdown(record),
        "fleet": fleet_markdown(rows, FLEET_SIZES, DEFAULT_PROTOCOLS, limit_s),
        "sweep": sweep_markdown([r for r in rows if r.members in SWEEP_MEMBERS and r.partitions in SWEEP_PARTITIONS],
                                DEFAULT_PROTOCOLS),
    }


def regenerated(text: str) -> str:
    bodies = regions()
    names = marked_regions(text)
    if sorted(names) != sorted(bodies):
        raise SystemExit(f"{DOC.relative_to(ROOT)}: generated regions {names}, expected {sorted(bodies)}")
    for name in names:
        text = replace_region(text, name, bodies[name])
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; fail with a diff if the page differs")
    parser.add_argument("--predict", action="store_true",
                        help="simulate the fleet-size points again into predictions.json first (slow)")
    args = parser.parse_args()
    if args.predict:
        predict()
    text = DOC.read_text(encoding="utf-8")
    new = regenerated(text)
    if args.check:
        if new != text:
            sys.stdout.writelines(difflib.unified_diff(text.splitlines(keepends=True), new.splitlines(keepends=True),
                                                       "docs/storm.md", "generated"))
            raise SystemExit(1)
        return
    if new != text:
        DOC.write_text(new, encoding="utf-8")
        print(f"rewrote {DOC.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
