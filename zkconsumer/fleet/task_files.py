"""A Spark task's own Parquet file of each table of a job, written from the Python worker with pyarrow.

A job whose Python tasks compute the rows of several tables writes them here instead of returning them to the JVM:
Spark's writer would convert every row, and several tables from one pass would need a cached copy and a pass per
table. A file per task and table, ``part-<partition>.parquet``, written under a hidden name (Spark's reader skips
names starting with ``.``) and renamed when complete: an attempt of the task run again replaces the file rather than
adding one, and a reader never sees half of one.

The tasks of one pass write into a directory of their own inside the job's staged output
(:mod:`zkconsumer.fleet.job_output`, so on a cluster it is on a file system every executor mounts), which the driver
makes (:func:`task_directory`) and, once every task is done, empties into the output (:func:`keep_tables`) or throws
away. An attempt still running after that (a speculative copy, say) finds its directory gone and fails, rather than
adding or replacing a file of a table already kept; the hidden file of an attempt that died without cleaning up is
removed, not kept.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from zkconsumer.fleet.row_schema import arrow_fields, arrow_structs

#: the Spark schema of what a task returns to the driver through ``mapInArrow``: one row, one JSON text (its counts
#: and a few rows at most, never its tables)
RESULT_DDL = "`result` string"


class TaskFiles:
    """The files of one task, one per ``(name, row dataclass)`` of ``tables``; a context manager that renames them
    into place when its block ends without an exception and removes them otherwise. ``partition`` names the files:
    the running task's by default."""

    def __init__(self, tables: Sequence[tuple[str, type]], directory: Path, partition: int | None = None) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if partition is None:
            partition = task_partition()
        self._pa = pa
        self._classes = dict(tables)
        self._final = {name: directory / name / f"part-{partition:05d}.parquet" for name in self._classes}
        self._hidden = {name: path.with_name(f".{path.stem}-{uuid.uuid4().hex[:8]}.tmp")
                        for name, path in self._final.items()}
        for path in self._hidden.values():
            path.parent.mkdir(exist_ok=True)
        self._writers = {name: pq.ParquetWriter(str(self._hidden[name]), pa.schema(arrow_fields(pa, cls)))
                         for name, cls in self._classes.items()}

    def write(self, name: str, rows: Sequence[Any]) -> None:
        """Append ``rows`` (instances of the table's dataclass) to the table ``name``."""
        if rows:
            self._writers[name].write_batch(self.batch(name, rows))

    def batch(self, name: str, rows: Sequence[Any]) -> Any:
        """``rows`` (instances of the table's dataclass) as an Arrow record batch of the table ``name``."""
        return self._pa.RecordBatch.from_struct_array(arrow_structs(self._pa, self._classes[name], rows))

    def write_table(self, name: str, table: Any) -> None:
        """Append the rows of an Arrow table (of the table's schema) to the table ``name``, as :meth:`write` does
        a batch: one row group."""
        if table.num_rows:
            self._writers[name].write_table(table)

    def __enter__(self) -> TaskFiles:
        return self

    def __exit__(self, kind: object, *_: object) -> None:
        for writer in self._writers.values():
            writer.close()
        for name, hidden in self._hidden.items():
            if kind is None:
                os.replace(hidden, self._final[name])
            else:
                hidden.unlink(missing_ok=True)


def task_partition() -> int:
    """The partition of the running Spark task (0 outside one, as in a test calling the task's function)."""
    from pyspark import TaskContext

    context = TaskContext.get()
    return context.partitionId() if context is not None else 0


def task_directory(output: Path) -> Path:
    """A new, hidden directory inside ``output`` for one pass of tasks to write their tables into."""
    directory = output / f".tasks-{uuid.uuid4().hex[:8]}"
    directory.mkdir()
    return directory


def keep_tables(directory: Path, tables: Sequence[tuple[str, type]], output: Path) -> None:
    """Move the tables the tasks wrote into ``directory`` to ``output`` (without any attempt's leftover hidden file;
    a table no task wrote is an empty directory), and remove ``directory``."""
    for name, _ in tables:
        table = directory / name
        table.mkdir(exist_ok=True)
        for leftover in table.glob(".*"):
            leftover.unlink()
        os.rename(table, output / name)
    shutil.rmtree(directory)


def read_table(spark: Any, directory: Path, cls: type) -> Any:
    """The table of rows ``cls`` the tasks wrote into ``directory``, as a Spark DataFrame of the schema they wrote it
    with: Spark need not read the files' footers for it (a job of its own) before the query that reads them."""
    import pyarrow as pa
    from pyspark.sql.pandas.types import from_arrow_schema

    schema = from_arrow_schema(pa.schema(arrow_fields(pa, cls)), prefer_timestamp_ntz=False)
    return spark.read.schema(schema).parquet(str(directory))


def task_result(value: Any) -> Any:
    """A task's result (anything JSON can carry) as the one-row Arrow batch its ``mapInArrow`` function yields."""
    import pyarrow as pa

    return pa.RecordBatch.from_arrays([pa.array([json.dumps(value)], type=pa.string())], names=["result"])


def collect_results(frame: Any, task: Callable[[Iterator[Any]], Iterator[Any]]) -> list[Any]:
    """Run ``task`` on every partition of the DataFrame ``frame``; the tasks' results, on the driver."""
    return [json.loads(row["result"]) for row in frame.mapInArrow(task, RESULT_DDL).collect()]
