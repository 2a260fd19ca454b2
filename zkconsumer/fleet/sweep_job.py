"""``zkconsumer simulate sweep``: a grid of storm simulations (:mod:`zkconsumer.storm.sweep`) run by Spark, one
simulation per task, into a table of Parquet and a page of curves.

The driver makes the points (plain JSON: a scenario file travels as its text, so an executor needs nothing but
zkconsumer) and hands Spark one slice per point, the costliest first so that the longest start first. Each task runs
its simulation, writes its row as its own Parquet file of ``runs`` (:mod:`zkconsumer.fleet.task_files`) and returns
it, a few numbers, to the driver, which draws the page from them. The same job runs on ``local[*]`` and on a cluster
master; on a cluster, the output directory must be on a file system every executor mounts, as for ``analyze``.
Nothing is left behind on a failure (:mod:`zkconsumer.fleet.job_output`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from zkconsumer.errors import UsageError
from zkconsumer.fleet.job_output import check_output, staged_directory
from zkconsumer.fleet.task_files import TaskFiles, keep_tables, task_directory
from zkconsumer.storm.rendering import sweep_page
from zkconsumer.storm.simulation import DEFAULT_SETTLE_LIMIT_S
from zkconsumer.storm.sweep import SweepPoint, SweepRow, row_order, run_point

TABLES: tuple[tuple[str, type], ...] = (("runs", SweepRow),)
PAGE = "sweep.html"


def sweep_task(tables: str, settle_limit_s: float) -> Callable[[Iterator[str]], Iterator[str]]:
    """The task of ``mapPartitions``: its points (one, as the job slices them) simulated, their rows written under
    ``tables`` and returned as JSON."""

    def run(points: Iterator[str]) -> Iterator[str]:
        rows = [run_point(SweepPoint.from_json(point), settle_limit_s) for point in points]
        with TaskFiles(TABLES, Path(tables)) as files:
            files.write("runs", rows)
        yield from (json.dumps(asdict(row)) for row in rows)

    return run


def run_sweep_job(spark: Any, points: Sequence[SweepPoint], output: str, meta: str,
                  settle_limit_s: float = DEFAULT_SETTLE_LIMIT_S) -> list[SweepRow]:
    """Simulate every point into ``output`` (a directory that must not exist): ``runs`` (Parquet) and the page."""
    check_output(output)
    if not points:
        raise UsageError("the sweep has no point to simulate")
    with staged_directory(output) as staging:
        tables = task_directory(staging)
        found = (spark.sparkContext.parallelize([p.to_json() for p in points], len(points))
                 .mapPartitions(sweep_task(str(tables), settle_limit_s)).collect())
        keep_tables(tables, TABLES, staging)
        rows = sorted((SweepRow(**json.loads(text)) for text in found), key=row_order)
        (staging / PAGE).write_text(sweep_page(rows, meta), encoding="utf-8")
    return rows
