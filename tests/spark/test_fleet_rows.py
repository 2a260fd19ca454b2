"""The Arrow columns the jobs' tasks build from row dataclasses, and the Parquet files a task writes of them. No
Spark session: pyarrow only."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from zkconsumer.fleet.analysis import GroupRow, StrategyRow
from zkconsumer.fleet.row_schema import arrow_structs
from zkconsumer.fleet.task_files import TaskFiles, keep_tables, task_directory

ROW = StrategyRow("g", "sticky", "modern", 1, 2, 0, 3, None, 1, None)
OTHER = StrategyRow("h", "range", "modern", 0, 0, 1, 0, None, 1, None)
TABLES = (("strategies", StrategyRow), ("groups", GroupRow))


def test_structs_keep_values_and_null_rows():
    array = arrow_structs(pa, StrategyRow, [ROW, None])
    assert array.to_pylist()[1] is None
    assert array.to_pylist()[0] == {"group": "g", "strategy": "sticky", "family": "modern", "spread": 1,
                                    "thread_spread": 2, "idle_members": 0, "moved_partitions": 3,
                                    "revoked_first": None, "rounds": 1, "error": None}


def test_a_task_writes_a_file_per_table_once_complete(tmp_path):
    with TaskFiles(TABLES, tmp_path, 3) as files:
        files.write("strategies", [ROW])
        files.write("strategies", [OTHER])
        assert list((tmp_path / "strategies").iterdir())[0].name.startswith(".")  # hidden until complete
    assert sorted(p.name for p in tmp_path.iterdir()) == ["groups", "strategies"]
    assert [p.name for p in (tmp_path / "strategies").iterdir()] == ["part-00003.parquet"]
    assert pq.read_table(tmp_path / "strategies" / "part-00003.parquet").column("group").to_pylist() == ["g", "h"]
    groups = pq.read_table(tmp_path / "groups" / "part-00003.parquet")  # no rows, the table's columns
    assert (groups.num_rows, groups.column_names[:2]) == (0, ["group", "members"])

    with TaskFiles(TABLES, tmp_path, 3) as files:  # the task run again: its file replaced, not a second one
        files.write("strategies", [OTHER])
    assert [p.name for p in (tmp_path / "strategies").iterdir()] == ["part-00003.parquet"]
    assert pq.read_table(tmp_path / "strategies" / "part-00003.parquet").num_rows == 1


def test_a_failed_task_leaves_no_file(tmp_path):
    with pytest.raises(RuntimeError), TaskFiles(TABLES, tmp_path, 0) as files:
        files.write("strategies", [ROW])
        raise RuntimeError("the analysis failed")
    assert [p for d in tmp_path.iterdir() for p in d.iterdir()] == []


def test_a_pass_of_tasks_is_kept_whole_and_a_late_attempt_cannot_add_to_it(tmp_path):
    tables = task_directory(tmp_path)
    assert tables.name.startswith(".")
    with TaskFiles(TABLES, tables, 0) as files:
        files.write("strategies", [ROW])
    (tables / "strategies" / ".part-00001-dead.tmp").write_bytes(b"an attempt that died")
    keep_tables(tables, TABLES, tmp_path)

    assert sorted(p.name for p in tmp_path.iterdir()) == ["groups", "strategies"]
    assert [p.name for p in (tmp_path / "strategies").iterdir()] == ["part-00000.parquet"]
    with pytest.raises(FileNotFoundError):  # a speculative attempt still running: its directory is gone
        TaskFiles(TABLES, tables, 0)


def test_a_table_no_task_wrote_is_kept_empty(tmp_path):
    keep_tables(task_directory(tmp_path), TABLES, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["groups", "strategies"]
    assert list((tmp_path / "groups").iterdir()) == []
