"""The streaming source's offsets and plans, pure: JSON layout and round trip, batch planning (first positions, a
regained partition resuming at the group's offset, the rate limit), ranges and their splitting, what a commit
writes. No Spark session here."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from zkconsumer.spark.offsets import (
    FROM_KEY,
    OffsetFormatError,
    OffsetRange,
    SourceOffset,
    batch_ranges,
    plan_batch,
    plan_commit,
    rate_limit,
    split_ranges,
)
from zkconsumer.types import TopicPartition

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
T10 = TopicPartition("t", 10)


def test_json_is_the_kafka_layout_with_string_partitions_in_a_fixed_order():
    offset = SourceOffset({U0: 7, T10: 3, T1: 5, T0: 1}, {T1: 2})
    text = json.dumps(offset.to_json())
    assert text == '{"@from": {"t": {"1": 2}}, "t": {"0": 1, "1": 5, "10": 3}, "u": {"0": 7}}'
    # built in any order, the same offset serialises the same (Spark compares the strings)
    assert json.dumps(SourceOffset({T0: 1, T1: 5, T10: 3, U0: 7}, {T1: 2}).to_json()) == text
    assert SourceOffset.from_json(json.loads(text)) == offset
    assert json.dumps(SourceOffset({T0: 4}).to_json()) == '{"t": {"0": 4}}'  # no @from when nothing jumped


@pytest.mark.parametrize("bad", [
    [1, 2], {"t": [0]}, {"t": {"x": 1}}, {"t": {"0": -1}}, {"t": {"0": "5"}}, {"t": {"0": True}}, {FROM_KEY: 3},
])
def test_an_offset_this_source_did_not_write_is_refused(bad):
    with pytest.raises(OffsetFormatError):
        SourceOffset.from_json(bad)


def test_a_batch_reads_each_partition_to_its_log_end_and_keeps_others_where_they_are():
    start = SourceOffset({T0: 10, T1: 20, U0: 5})
    plan = plan_batch(start, {T0: 15, T1: 20})  # u-0 not owned now
    assert plan.end.positions == {T0: 15, T1: 20, U0: 5}
    assert plan.end.begins == {}
    assert (plan.available, plan.planned, plan.limited) == (5, 5, False)
    assert batch_ranges(start, plan.end) == [OffsetRange("t", 0, 10, 15)]


def test_nothing_new_gives_the_start_back():
    start = SourceOffset({T0: 10})
    plan = plan_batch(start, {T0: 10})
    assert plan.end.same_positions(start)
    assert batch_ranges(start, plan.end) == []


def test_a_partition_seen_for_the_first_time_begins_at_its_first_position_written_in_the_end():
    start = SourceOffset({T0: 10})
    plan = plan_batch(start, {T0: 12, T1: 50}, first_positions={T1: 40})
    assert plan.end.positions == {T0: 12, T1: 50}
    assert plan.end.begins == {T1: 40}
    assert batch_ranges(start, plan.end) == [OffsetRange("t", 0, 10, 12), OffsetRange("t", 1, 40, 50)]
    # Spark replays the batch from (start, end) alone, e.g. after a restart: the same ranges
    replay = SourceOffset.from_json(json.loads(json.dumps(plan.end.to_json())))
    assert batch_ranges(SourceOffset.from_json(start.to_json()), replay) == batch_ranges(start, plan.end)
    # and the next batch begins at the end's positions, whatever @from said
    follow = plan_batch(plan.end, {T0: 12, T1: 55})
    assert batch_ranges(plan.end, follow.end) == [OffsetRange("t", 1, 50, 55)]


def test_a_partition_without_log_end_or_first_position_is_not_read():
    start = SourceOffset({T0: 10})
    plan = plan_batch(start, {T1: 50})  # t-0: end unknown; t-1: no first position
    assert plan.end.positions == {T0: 10}
    assert plan.end.same_positions(start)


def test_a_regained_partition_resumes_at_the_group_offset_only_when_it_is_ahead():
    start = SourceOffset({T0: 100, T1: 100, U0: 100})
    plan = plan_batch(start, {T0: 600, T1: 600, U0: 600}, committed={T0: 500, T1: 80, U0: 700})
    # t-0: the other member consumed 100..500: begin there; t-1: the group is behind us: never go back;
    # u-0: a committed offset past the log end (a recreated topic) is ignored
    assert plan.end.begins == {T0: 500}
    assert plan.resumed == {T0: (100, 500)}
    assert batch_ranges(start, plan.end) == [
        OffsetRange("t", 0, 500, 600), OffsetRange("t", 1, 100, 600), OffsetRange("u", 0, 100, 600)]


def test_a_log_behind_the_position_reads_nothing_and_keeps_the_position():
    start = SourceOffset({T0: 100})
    plan = plan_batch(start, {T0: 40})
    assert plan.behind == {T0: (100, 40)}
    assert plan.end.positions == {T0: 100}


def test_a_log_behind_the_position_with_a_reset_position_is_read_from_there_and_replays_the_same():
    start = SourceOffset({T0: 100, T1: 100})
    plan = plan_batch(start, {T0: 40, T1: 40}, resets={T0: 0, T1: 41})  # t-1's reset is past its end: not used
    assert plan.reset == {T0: (100, 0)} and plan.behind == {T1: (100, 40)}
    assert plan.end.positions == {T0: 40, T1: 100} and plan.end.begins == {T0: 0}
    replay = SourceOffset.from_json(json.loads(json.dumps(plan.end.to_json())))
    assert batch_ranges(start, replay) == [OffsetRange("t", 0, 0, 40)]
    # largest: the log's end; nothing to read, the position moves there
    plan = plan_batch(start, {T0: 40}, resets={T0: 40})
    assert plan.reset == {T0: (100, 40)} and plan.end.positions == {T0: 40, T1: 100}
    assert batch_ranges(start, plan.end) == []


def test_the_rate_limit_is_shared_in_proportion_and_exact():
    start = SourceOffset({T0: 0, T1: 0, U0: 0})
    plan = plan_batch(start, {T0: 900, T1: 90, U0: 10}, max_offsets=100)
    assert plan.planned == 100 and plan.available == 1000 and plan.limited
    assert plan.end.positions == {T0: 90, T1: 9, U0: 1}


@given(st.dictionaries(st.sampled_from([T0, T1, T10, U0]), st.integers(0, 10_000), min_size=1),
       st.integers(1, 20_000))
def test_rate_limit_takes_min_of_limit_and_available_never_more_than_waits(waiting, limit):
    take = rate_limit(waiting, limit)
    assert sum(take.values()) == min(limit, sum(waiting.values()))
    assert all(0 <= take[tp] <= waiting[tp] for tp in waiting)


def test_large_ranges_are_split_and_min_pieces_is_reached_by_halving_the_largest():
    ranges = [OffsetRange("t", 0, 0, 250), OffsetRange("t", 1, 0, 10)]
    assert split_ranges(ranges, max_size=100) == [
        OffsetRange("t", 0, 0, 83), OffsetRange("t", 0, 83, 166), OffsetRange("t", 0, 166, 250),
        OffsetRange("t", 1, 0, 10)]
    pieces = split_ranges([OffsetRange("t", 0, 0, 10), OffsetRange("t", 1, 0, 1)], max_size=100, min_pieces=4)
    assert pieces == [OffsetRange("t", 0, 0, 2), OffsetRange("t", 0, 2, 5), OffsetRange("t", 0, 5, 10),
                      OffsetRange("t", 1, 0, 1)]
    # a single offset cannot be cut: min_pieces is a wish, not a loop for ever
    assert split_ranges([OffsetRange("t", 0, 0, 1)], min_pieces=5) == [OffsetRange("t", 0, 0, 1)]


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 1000), st.integers(1, 5000)), max_size=4,
                unique_by=lambda x: x[0]),
       st.integers(1, 3000), st.one_of(st.none(), st.integers(1, 12)))
def test_split_ranges_cover_exactly_the_ranges(specs, max_size, min_pieces):
    ranges = [OffsetRange("t", p, b, b + n) for p, b, n in specs]
    pieces = split_ranges(ranges, max_size=max_size, min_pieces=min_pieces)
    for r in ranges:
        mine = [x for x in pieces if x.partition == r.partition]
        assert mine[0].begin == r.begin and mine[-1].end == r.end
        assert all(a.end == b.begin for a, b in zip(mine, mine[1:], strict=False))
        assert all(x.size <= max_size for x in mine)


def test_a_commit_writes_owned_partitions_forward_only():
    positions = {T0: 50, T1: 50, T10: 50, U0: 50}
    plan = plan_commit(positions, owned={T0, T1, T10}, committed={T0: 40, T1: 60, T10: 50})
    assert plan.write == {T0: 50}
    assert plan.not_owned == (U0,)
    assert plan.not_ahead == {T1: (50, 60)}
    assert plan_commit({T0: 0}, owned={T0}, committed={}).write == {T0: 0}  # never committed: -1
