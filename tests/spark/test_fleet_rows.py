"""The Arrow columns the jobs' tasks build from row dataclasses, null rows and null lists included (an error line
of a snapshot has no group row and no strategies). No Spark session: pyarrow only."""

from __future__ import annotations

import pyarrow as pa

from zkconsumer.fleet.analysis import StrategyRow
from zkconsumer.spark.row_schema import arrow_lists, arrow_structs

ROW = StrategyRow("g", "sticky", "modern", 1, 2, 0, 3, None, 1, None)


def test_structs_keep_values_and_null_rows():
    array = arrow_structs(pa, StrategyRow, [ROW, None])
    assert array.to_pylist()[1] is None
    assert array.to_pylist()[0] == {"group": "g", "strategy": "sticky", "family": "modern", "spread": 1,
                                    "thread_spread": 2, "idle_members": 0, "moved_partitions": 3,
                                    "revoked_first": None, "rounds": 1, "error": None}


def test_lists_keep_each_group_and_null_lists():
    other = StrategyRow("h", "range", "modern", 0, 0, 1, 0, None, 1, None)
    lists = arrow_lists(pa, StrategyRow, [[ROW, other], None, [], [other]]).to_pylist()
    assert [None if x is None else [r["group"] for r in x] for x in lists] == [["g", "h"], None, [], ["h"]]
