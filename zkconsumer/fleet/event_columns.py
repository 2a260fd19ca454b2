"""The figures of members whose events have the regular shape, computed over columns: what ``analyze events``' tasks
run in place of :func:`zkconsumer.fleet.events.member_figures` for every member where the result is the same, so that
no Python code runs per line (but a long one's check, below).

What the events mean is the timeline's table (:mod:`zkconsumer.trace.roles`): the roles this module computes
(:data:`COMPUTED`), those that change no rebalance, the steps a pause begins and ends with, and the fields the figures
are made of with their types, from which the schema is made. A task's lines (a run per member, in file order) are
parsed by Arrow's JSON reader with that schema, and every figure of :mod:`zkconsumer.fleet.events` is computed with
array operations, a Python step per rebalance at most. That is only the timeline's answer for events it can read one
way; a member is *regular*, and computed here, when every one of its lines:

* parses with the schema (a field of another type, a duplicate key, a line that is not one JSON object fail the
  member), holds no ``\\u`` escape (a key can be spelled with one) and no ``"error"`` (a failed step; present even as
  ``null``, which the reader cannot tell from missing), begins with ``{`` (Arrow skips a byte-order mark that
  Python's json refuses), is read by Python's json too when longer than :data:`LONG_LINE` characters, and has no
  integer field at or below -2**62 (the columns' nulls);
* carries the consumer id it was grouped under, an ``event`` of a computed role or of one that changes no rebalance
  (a role in ``LANE_ONLY``, or none and a name that cannot matter: see ``UNKNOWN_MAY_MATTER``), and a timestamp as the
  connector writes it (``2026-11-21T21:12:00.928083Z``, from 1970 on);
* in timestamp order, makes runs of one ``rebalance_id`` each (a different id per run), each begun by its started
  event and ended by its completed one if it has one, with attempts from 1 and finite durations.

Every other member (and the lines of no consumer) is left to :func:`~zkconsumer.fleet.events.member_figures`, which
the caller runs on its lines: the tables do not depend on which way a member went. Times are computed as the
timeline computes them (floats, seconds since the member's first moment), so the rows agree to the bit.

Pure: Arrow arrays in, rows and Arrow tables out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from zkconsumer.events.rebalance_steps import STEPS, RebalanceStep
from zkconsumer.fleet.events import MemberRow, RebalanceRow, StepRow
from zkconsumer.fleet.pages import DURATION_BUCKETS
from zkconsumer.fleet.row_schema import arrow_fields
from zkconsumer.trace.roles import (
    ASSIGN,
    CLAIM,
    ERROR,
    FIELDS,
    LANE_ONLY,
    PAUSE_BEGINS,
    PAUSE_ENDS,
    ROLES,
    UNKNOWN_MAY_MATTER,
    Kind,
    Role,
)

#: a timestamp as the connector writes it, from 1970 on (earlier ones, other zones: the timeline's own parsing)
TIMESTAMP_PATTERN = (r"^(19[7-9]\d|[2-9]\d{3})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d"
                     r"(\.\d{1,6})?Z$")
MAX_DURATION_MS = 1e11  # a longer step is left to the timeline (its block could reach back before the year 1)
MAX_ATTEMPT = 1 << 20
MAX_SPAN_US = 1 << 48  # a member's events over more microseconds than this: floats no longer hold them exactly
_STARTED, _STEP, _ATTEMPT_FAILED, _COMPLETED = 0, 1, 2, 3
#: the roles computed here, as the codes of the ``kind`` column
COMPUTED = {Role.STARTED: _STARTED, Role.STEP: _STEP, Role.ATTEMPT_FAILED: _ATTEMPT_FAILED, Role.COMPLETED: _COMPLETED}
_LANE_ONLY, _OTHER_ROLE, _NO_ROLE = -1, -2, -3
_KINDS = {name: COMPUTED.get(role, _LANE_ONLY if role in LANE_ONLY else _OTHER_ROLE) for name, role in ROLES.items()}
_STEP_INDEX = {step.event: index for index, step in enumerate(STEPS)}
_INTEGERS = tuple(f.name for f in FIELDS if f.kind is Kind.INTEGER)
_BOUNDS = [bound for _, bound in DURATION_BUCKETS]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def event_schema(pa: Any) -> Any:
    """The fields the figures read (:data:`zkconsumer.trace.roles.FIELDS`), in the types the timeline reads them."""
    types = {Kind.TEXT: pa.string(), Kind.INTEGER: pa.int64(), Kind.NUMBER: pa.float64(),
             Kind.TEXTS: pa.list_(pa.string()),
             Kind.PARTITIONS: pa.list_(pa.struct([("topic", pa.string()), ("partition", pa.int64())]))}
    return pa.schema([(f.name, types[f.kind]) for f in FIELDS])


@dataclass(frozen=True, slots=True)
class ColumnMember:
    """A regular member's figures: its row, its steps per duration bucket, the start times (seconds since the epoch)
    of its rebalances with a finished stop-the-world, and where its rows are in :class:`ColumnFigures`' tables
    (``(start, stop)``: the rows of a member are together, the members in the order given)."""

    member: MemberRow
    buckets: tuple[int, ...]
    stopped: tuple[float, ...]
    rebalance_rows: tuple[int, int]
    step_rows: tuple[int, int]


@dataclass(frozen=True, slots=True)
class ColumnFigures:
    """What :func:`column_figures` made of a task's lines: the regular members (by consumer id) with their
    ``rebalances`` and ``steps`` rows as Arrow tables (the schemas of :class:`RebalanceRow` and :class:`StepRow`);
    the members it left to the timeline are the others."""

    members: dict[str, ColumnMember]
    rebalances: Any
    steps: Any


@dataclass(slots=True)
class _Lines:
    """A task's lines as columns, a row per line (see :func:`_read`); ``good``: per member, still regular."""

    parsed: Any  # the fields of event_schema
    member_of: Any
    good: Any
    key_column: Any
    kind: Any  # the codes of COMPUTED, _LANE_ONLY, _OTHER_ROLE or _NO_ROLE
    ts_us: Any  # microseconds since the epoch (0 on the lines of members no longer good)
    duration: Any  # NaN for none
    rid: Any  # the integers: the smallest int64 for none
    attempt: Any
    attempts: Any


@dataclass(frozen=True, slots=True)
class _Runs:
    """The regular members' rebalances: ``rows`` (lines, in the timeline's order) made of runs, each from
    ``run_starts[r]`` (an index into ``rows``) to the next, and a value per run of each figure."""

    rows: Any
    run_starts: Any
    member: Any
    completed: Any
    completed_row: Any  # the line of each completed run's completed event
    start: Any  # seconds since the member's origin
    ended: Any
    attempts: Any
    failed: Any
    conflicts: Any
    members: Any  # -1: no assign listed them
    stop_ms: Any
    has_gap: Any


def column_figures(keys: Sequence[str | None], starts: Any, lines: Any) -> ColumnFigures:
    """The figures of the regular members among ``lines`` (an Arrow string array, each member's lines together and
    in file order); member ``i`` is ``keys[i]`` (the consumer id its lines were grouped by, ``None`` for none), its
    lines from ``starts[i]`` (a sequence of ints) to the next start."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    # 1. The lines as columns; a member with a line the columns could read otherwise than the timeline is left to it.
    read = _read(pa, pc, keys, starts, lines)
    member_of, kind, ts_us = read.member_of, read.kind, read.ts_us

    # 2. The timeline's order (timestamp, then line) and each member's first moment.
    order = np.lexsort((np.arange(len(lines)), ts_us, member_of))
    is_step = kind == _STEP
    clipped = np.where(is_step & (read.duration > 0), read.duration, 0.0)  # a step's block, in ms
    block = ts_us - np.rint(np.minimum(clipped, MAX_DURATION_MS) * 1000.0).astype(np.int64)
    origin_us = _origins(ts_us, block, clipped, is_step, member_of, read.good, len(keys))
    spans = np.zeros(len(keys), dtype=np.int64)
    np.maximum.at(spans, member_of, ts_us - origin_us[member_of])
    read.good &= spans < MAX_SPAN_US

    # 3. The rebalances: the computed rows of the good members, in order, in runs of one id each.
    rows = order[(kind >= 0)[order] & read.good[member_of[order]]]
    read.good = _check_runs(rows, kind, read.rid, member_of, read.good)
    step_index = _lookup(pc, read.parsed.column("event"), _STEP_INDEX, -1)
    runs = _runs(pc, read, rows[read.good[member_of[rows]]], origin_us, clipped, step_index)

    # 4. The tables, and what each member adds up to.
    groups = _groups(read.parsed.column("group"), order, member_of, len(keys))
    table, moved = _rebalance_table(pa, pc, keys, groups, read, runs, origin_us)
    step_rows = runs.rows[step_index[runs.rows] >= 0]
    steps = _step_table(pa, read, step_rows, groups, clipped, step_index)
    members = _members(keys, groups, read, runs, table, moved, read.member_of[step_rows], clipped[step_rows])
    return ColumnFigures(members, pa.table(table, schema=pa.schema(arrow_fields(pa, RebalanceRow))), steps)


def _read(pa: Any, pc: Any, keys: Sequence[str | None], starts: Any, lines: Any) -> _Lines:
    """The lines parsed and checked: the rules of the module's docstring, the roles and fields from the timeline's
    table."""
    import numpy as np

    n = len(lines)
    bounds = np.append(np.asarray(starts, dtype=np.int64), n)
    member_of = np.repeat(np.arange(len(keys)), np.diff(bounds))
    good = np.array([key is not None for key in keys], dtype=bool)
    parsed = _parse(pa, pc, lines, bounds, good)

    event = parsed.column("event")
    kind = _lookup(pc, event, _KINDS, _NO_ROLE)
    # an event no rebalance is made of: a fetcher's, the member's connection, its commits, its shutdown...
    unknown_matters = pc.starts_with(event, UNKNOWN_MAY_MATTER[0])
    for prefix in UNKNOWN_MAY_MATTER[1:]:
        unknown_matters = pc.or_(unknown_matters, pc.starts_with(event, prefix))
    other = (kind == _LANE_ONLY) | ((kind == _NO_ROLE) & pc.fill_null(pc.and_(
        pc.greater(pc.utf8_length(event), 0), pc.invert(unknown_matters)), False).to_numpy(zero_copy_only=False))
    key_column = pa.array(keys, pa.string()).take(pa.array(member_of))
    ts_text = parsed.column("timestamp")
    ts_ok = pc.fill_null(pc.match_substring_regex(ts_text, TIMESTAMP_PATTERN), False)
    row_ok = (
        pc.fill_null(pc.equal(parsed.column("consumer_id"), key_column), False).to_numpy(zero_copy_only=False)
        & ((kind >= 0) | other)
        & ts_ok.to_numpy(zero_copy_only=False)
        & ~_contains(pa, pc, lines, b"\\u")
        & ~_contains(pa, pc, lines, f'"{ERROR}"'.encode())
        # a byte-order mark or anything before the object: Arrow skips a mark, Python's json does not
        & pc.starts_with(lines, "{").to_numpy(zero_copy_only=False)
        & _python_reads_long_lines(pc, lines)
    )
    good[member_of[~row_ok]] = False
    ts_us = np.zeros(n, dtype=np.int64)
    usable = row_ok & good[member_of]
    ts_us[usable] = _timestamps(pa, pc, ts_text.filter(pa.array(usable)), good, member_of[usable])

    duration = _floats(parsed.column("duration_ms"))
    rid = _ints(parsed.column("rebalance_id"))
    attempt = _ints(parsed.column("attempt"))
    attempts = _ints(parsed.column("attempts"))
    # the field checks of the rows the rebalances are built from
    bad = (kind >= 0) & (rid < -(1 << 62))
    for column in _INTEGERS:  # a value the checks would take for a null
        bad |= pc.fill_null(pc.less_equal(parsed.column(column), -(1 << 62)), False).to_numpy(zero_copy_only=False)
    bad |= ((kind == _STEP) | (kind == _ATTEMPT_FAILED)) & ((attempt < 1) | (attempt > MAX_ATTEMPT))
    bad |= ~np.isnan(duration) & ~(np.abs(duration) < MAX_DURATION_MS)
    bad |= (kind == _COMPLETED) & ((attempts > MAX_ATTEMPT) | ((attempts < 0) & (attempts > -(1 << 62))))
    good[member_of[bad]] = False
    return _Lines(parsed, member_of, good, key_column, kind, ts_us, duration, rid, attempt, attempts)


def _runs(pc: Any, read: _Lines, rows: Any, origin_us: Any, clipped: Any, step_index: Any) -> _Runs:
    """Each run's figures, as the timeline's rebalance has them: its start (its started event or its earliest step's
    start), its attempts (distinct numbers of its steps, failures and the one that completed), its failed ones, its
    claims' conflicts, its last assign's members, and its pause from the start of its first PAUSE_BEGINS step to the
    end of the PAUSE_ENDS of the attempt that completed (else to its completed event)."""
    import numpy as np

    attempt = read.attempt[rows]
    seconds = (read.ts_us[rows] - origin_us[read.member_of[rows]]) / 1e6
    k = read.kind[rows]
    step_start = seconds - clipped[rows] / 1000.0
    run_starts = np.flatnonzero(k == _STARTED)
    runs = len(run_starts)
    run_of = np.cumsum(k == _STARTED) - 1
    run_ends = np.append(run_starts[1:], len(rows))
    run_member = read.member_of[rows][run_starts] if runs else np.zeros(0, dtype=np.int64)
    last_kind = k[run_ends - 1] if runs else np.zeros(0, dtype=np.int64)
    completed = last_kind == _COMPLETED
    completed_row = rows[run_ends[completed] - 1]
    step_attempt = np.where(k == _STEP, attempt, 0)
    max_step_attempt = np.maximum(_reduce(np.maximum, step_attempt, run_starts, 0), 1)
    run_completed_attempt = np.zeros(runs, dtype=np.int64)
    given = read.attempts[completed_row]
    run_completed_attempt[completed] = np.where(given > 0, given, max_step_attempt[completed])

    start = _reduce(np.minimum, np.where(k == _STARTED, seconds, np.where(k == _STEP, step_start, np.inf)),
                    run_starts, np.inf)
    ended = _reduce(np.maximum, seconds, run_starts, -np.inf)  # a completed run ends with its completed event
    row_step = step_index[rows]
    attempt_rows = (k == _STEP) | (k == _ATTEMPT_FAILED)
    attempts_count = _distinct_per_run(np.concatenate([run_of[attempt_rows], np.flatnonzero(completed)]),
                                       np.concatenate([attempt[attempt_rows], run_completed_attempt[completed]]),
                                       runs)
    failed = k == _ATTEMPT_FAILED
    failed_count = _distinct_per_run(run_of[failed], attempt[failed], runs)
    conflict_lengths = _lengths(pc, read.parsed.column("conflicts"))[rows]
    conflicts = _reduce(np.add, np.where(row_step == _index(CLAIM), conflict_lengths, 0), run_starts, 0)
    last_assign = _reduce(np.maximum, np.where(row_step == _index(ASSIGN), np.arange(len(rows)), -1), run_starts, -1)
    member_lengths = _lengths(pc, read.parsed.column("members"), missing=-1)[rows]
    members = np.where(last_assign >= 0, member_lengths[np.maximum(last_assign, 0)], -1) if runs else last_assign
    stop_start = _reduce(np.minimum, np.where(row_step == _index(PAUSE_BEGINS), step_start, np.inf), run_starts,
                         np.inf)
    restart = (row_step == _index(PAUSE_ENDS)) & (attempt == run_completed_attempt[run_of])
    restart_end = _reduce(np.maximum, np.where(restart, seconds, -np.inf), run_starts, -np.inf)
    gap_end = np.where(restart_end > -np.inf, restart_end, ended)
    return _Runs(rows, run_starts, run_member, completed, completed_row, start, ended, attempts_count, failed_count,
                 conflicts, members, (gap_end - stop_start) * 1000.0, completed & (stop_start < np.inf))


def _rebalance_table(pa: Any, pc: Any, keys: Sequence[str | None], groups: list[str | None], read: _Lines,
                     runs: _Runs, origin_us: Any) -> tuple[dict[str, list[Any]], list[int | None]]:
    """The columns of the ``rebalances`` table (a row per run) and each run's partitions moved (``None`` unless
    completed): what it owns after it and did not after the member's previous completed one."""
    import numpy as np

    rows, run_starts = runs.rows, runs.run_starts
    run_ends = np.append(run_starts[1:], len(rows))
    causes = read.parsed.column("cause").take(pa.array(rows[run_starts])).to_pylist()
    durations = read.duration[rows[run_ends - 1]] if len(run_starts) else np.zeros(0)
    owned = _owned(pa, pc, read.parsed.column("owned"), runs.completed_row)
    origins = [None if not g else _EPOCH + timedelta(microseconds=int(o)) for g, o in zip(read.good, origin_us,
                                                                                          strict=True)]
    rid_runs = read.rid[rows[run_starts]]
    table: dict[str, list[Any]] = {f.name: [] for f in arrow_fields(pa, RebalanceRow)}
    completed_index = np.cumsum(runs.completed) - 1
    previous: dict[int, set[tuple[str, int]]] = {}
    moved_list: list[int | None] = []
    for run in range(len(run_starts)):
        m = int(runs.member[run])
        origin = origins[m]
        assert origin is not None
        done = bool(runs.completed[run])
        moved = released = size = None
        if done:
            now = owned[int(completed_index[run])]
            before = previous.get(m, set())
            moved, released, size = len(now - before), len(before - now), len(now)
            previous[m] = now
        moved_list.append(moved)
        count = int(runs.attempts[run])
        table["consumer_id"].append(keys[m])
        table["group"].append(groups[m])
        table["rebalance_id"].append(int(rid_runs[run]))
        table["cause"].append(causes[run])
        table["outcome"].append("completed" if done else "unfinished")
        table["started_at"].append(origin + timedelta(seconds=float(runs.start[run])))
        table["ended_at"].append(origin + timedelta(seconds=float(runs.ended[run])))
        table["duration_ms"].append(float(durations[run]) if done and not np.isnan(durations[run]) else None)
        table["members"].append(int(runs.members[run]) if runs.members[run] >= 0 else None)
        table["attempts"].append(count)
        table["failed_attempts"].append(int(runs.failed[run]))
        table["retries"].append(max(count - 1, 0))
        table["conflicts"].append(int(runs.conflicts[run]))
        table["stop_the_world_ms"].append(float(runs.stop_ms[run]) if runs.has_gap[run] else None)
        table["partitions_owned"].append(size)
        table["partitions_moved"].append(moved)
        table["partitions_released"].append(released)
    return table, moved_list


def _step_table(pa: Any, read: _Lines, step_rows: Any, groups: list[str | None], clipped: Any,
                step_index: Any) -> Any:
    """The ``steps`` table: a row per step of the runs (``step_rows``), in order."""
    import numpy as np

    step_member = read.member_of[step_rows]
    indexes = pa.array(step_index[step_rows])
    return pa.table({
        "consumer_id": read.key_column.take(pa.array(step_rows)),
        "group": pa.array(groups, pa.string()).take(pa.array(step_member)),
        "rebalance_id": read.rid[step_rows],
        "attempt": read.attempt[step_rows],
        "step": pa.array([step.name for step in STEPS]).take(indexes),
        "step_number": pa.array([step.number for step in STEPS], pa.int64()).take(indexes),
        "duration_ms": clipped[step_rows],
        "failed": np.zeros(len(step_rows), dtype=bool),
        "ended_at": pa.array(read.ts_us[step_rows], pa.timestamp("us", tz="UTC")),
    }, schema=pa.schema(arrow_fields(pa, StepRow)))


def _members(keys: Sequence[str | None], groups: list[str | None], read: _Lines, runs: _Runs,
             table: dict[str, list[Any]], moved: list[int | None], step_member: Any,
             step_durations: Any) -> dict[str, ColumnMember]:
    """Each good member's row (sums over its runs), its steps per duration bucket, the starts of its rebalances with
    a finished pause, and where its rows are."""
    import numpy as np

    members = len(keys)
    per_member: dict[int, list[int]] = {}
    for run, m in enumerate(runs.member.tolist()):
        per_member.setdefault(m, []).append(run)
    bucket = np.minimum(np.searchsorted(_BOUNDS, step_durations, side="right"), len(_BOUNDS) - 1)
    buckets = np.zeros((members, len(_BOUNDS)), dtype=np.int64)
    np.add.at(buckets, (step_member, bucket), 1)
    events = np.bincount(read.member_of, minlength=members)
    step_bounds = (np.searchsorted(step_member, np.arange(members), side="left"),
                   np.searchsorted(step_member, np.arange(members), side="right"))
    found: dict[str, ColumnMember] = {}
    for m in np.flatnonzero(read.good).tolist():
        key = keys[m]
        assert key is not None
        mine = per_member.get(m, [])
        gaps = [float(runs.stop_ms[run]) for run in mine if runs.has_gap[run]]
        stopped = tuple(table["started_at"][run].timestamp() for run in mine if runs.has_gap[run])
        found[key] = ColumnMember(MemberRow(
            consumer_id=key,
            group=groups[m],
            rebalances=len(mine),
            completed=sum(1 for run in mine if runs.completed[run]),
            attempts=sum(table["attempts"][run] for run in mine),
            failed_attempts=sum(table["failed_attempts"][run] for run in mine),
            conflicts=sum(table["conflicts"][run] for run in mine),
            stop_the_world_ms=sum(gaps),
            longest_stop_ms=max(gaps, default=None),
            partitions_moved=sum(moved[run] or 0 for run in mine),
            events=int(events[m]),
        ), tuple(int(b) for b in buckets[m]), stopped, (mine[0], mine[-1] + 1) if mine else (0, 0),
            (int(step_bounds[0][m]), int(step_bounds[1][m])))
    return found


def grouped_column_figures(groups: Mapping[str | None, Sequence[str]]) -> ColumnFigures:
    """:func:`column_figures` of lines already grouped by consumer id (``None``: no member's), as a one-process
    caller has them."""
    import pyarrow as pa

    keys = sorted(groups, key=lambda k: k or "")
    starts: list[int] = []
    lines: list[str] = []
    for key in keys:
        starts.append(len(lines))
        lines += groups[key]
    return column_figures(keys, starts, pa.array(lines, pa.string()))


def _index(step: RebalanceStep) -> int:
    return STEPS.index(step)


def _parse(pa: Any, pc: Any, lines: Any, bounds: Any, good: Any) -> Any:
    """The lines parsed with :func:`event_schema`, a row per line; a member whose lines do not parse (as a whole,
    one row each) gets rows of nulls and is no longer ``good``."""
    import numpy as np
    import pyarrow.json as pj

    schema = event_schema(pa)
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")

    def parse(chunk: Any) -> Any:
        text = pc.binary_join_element_wise(chunk, "", "\n")  # each line and its end, one after another in memory
        offsets = np.frombuffer(text.buffers()[1], dtype=np.int64 if pa.types.is_large_string(text.type)
                                else np.int32)[text.offset:text.offset + len(text) + 1]
        data = (text.buffers()[2].slice(int(offsets[0]), int(offsets[-1] - offsets[0])) if len(text)
                else pa.py_buffer(b""))
        table = pj.read_json(pa.BufferReader(data), parse_options=options,
                             read_options=pj.ReadOptions(use_threads=False, block_size=max(len(data), 1 << 20)))
        if table.num_rows != len(chunk):
            raise ValueError("not one object a line")
        return table.cast(schema).combine_chunks()

    try:
        return parse(lines)
    except (pa.ArrowInvalid, ValueError):
        pass
    parts = []
    for index in range(len(bounds) - 1):
        chunk = lines.slice(int(bounds[index]), int(bounds[index + 1] - bounds[index]))
        try:
            parts.append(parse(chunk) if good[index] else None)
        except (pa.ArrowInvalid, ValueError):
            parts.append(None)
        if parts[-1] is None:
            good[index] = False
            parts[-1] = pa.table({f.name: pa.nulls(len(chunk), f.type) for f in schema}, schema=schema)
    return pa.concat_tables(parts).combine_chunks() if parts else schema.empty_table()


def _timestamps(pa: Any, pc: Any, text: Any, good: Any, member_of: Any) -> Any:
    """Microseconds since the epoch of regular timestamp texts; a member with an impossible date (February 30) is no
    longer ``good`` (its rows get 0)."""
    import numpy as np

    def cast(values: Any) -> Any:
        stamps = pc.cast(values, pa.timestamp("us", tz="UTC"))
        days = pc.cast(pc.utf8_slice_codeunits(values, 8, 10), pa.int64())
        if not pc.all(pc.equal(pc.day(stamps), days)).as_py():
            raise ValueError("a day the month does not have")
        return stamps.cast(pa.int64()).to_numpy(zero_copy_only=False)

    try:
        return cast(text)
    except (pa.ArrowInvalid, ValueError):
        pass
    found = np.zeros(len(text), dtype=np.int64)
    for m in np.unique(member_of):
        where = np.flatnonzero(member_of == m)
        try:
            found[where] = cast(text.take(pa.array(where)))
        except (pa.ArrowInvalid, ValueError):
            good[m] = False
    return found


def _origins(ts_us: Any, block: Any, clipped: Any, is_step: Any, member_of: Any, good: Any, members: int) -> Any:
    """Each member's first moment, as the timeline takes it: its earliest event, or a step's start (its timestamp less
    its duration, rounded to the microsecond by ``timedelta``) where earlier. Found with integer arithmetic, then
    the few candidates within a microsecond of it computed as the timeline does."""
    import numpy as np

    approx = np.full(members, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(approx, member_of, block)
    near = np.flatnonzero(good[member_of] & (block <= approx[member_of] + 2))
    origins = approx.copy()
    exact: dict[int, int] = {}
    for row in near:
        m = int(member_of[row])
        value = int(ts_us[row])
        if is_step[row]:
            moment = _EPOCH + timedelta(microseconds=value) - timedelta(milliseconds=float(clipped[row]))
            value = (moment - _EPOCH) // timedelta(microseconds=1)
        exact[m] = min(exact.get(m, value), value)
    for m, value in exact.items():
        origins[m] = value
    return origins


def _check_runs(rows: Any, kind: Any, rid: Any, member_of: Any, good: Any) -> Any:
    """``good`` without the members whose rebalance events (``rows``, in order) are not runs of one id each, begun by
    ``rebalance.started``, ended by ``rebalance.completed`` if at all, every id once."""
    import numpy as np

    good = good.copy()
    if not len(rows):
        return good
    k, ids, mem = kind[rows], rid[rows], member_of[rows]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = mem[1:] != mem[:-1]
    bad = first & (k != _STARTED)
    run_of = np.maximum(np.cumsum(k == _STARTED) - 1, 0)
    starts = np.flatnonzero(k == _STARTED)
    if len(starts):
        bad |= ids != ids[starts][run_of]
        bad |= mem != mem[starts][run_of]
        ends_run = np.ones(len(rows), dtype=bool)
        ends_run[:-1] = (k[1:] == _STARTED) | (mem[1:] != mem[:-1])
        bad |= (k == _COMPLETED) & ~ends_run
        pairs = np.lexsort((ids[starts], mem[starts]))
        same = (mem[starts][pairs][1:] == mem[starts][pairs][:-1]) & (ids[starts][pairs][1:] == ids[starts][pairs][:-1])
        good[mem[starts][pairs][1:][same]] = False
    good[mem[bad]] = False
    return good


def _reduce(op: Any, values: Any, starts: Any, empty: Any) -> Any:
    import numpy as np

    if not len(starts):
        return np.zeros(0, dtype=np.asarray(values).dtype) + empty
    return op.reduceat(values, starts)


def _distinct_per_run(runs: Any, values: Any, count: int) -> Any:
    import numpy as np

    if not len(runs):
        return np.zeros(count, dtype=np.int64)
    pairs = np.unique(np.stack([runs, values]), axis=1)
    return np.bincount(pairs[0], minlength=count)


def _lookup(pc: Any, column: Any, codes: dict[str, int], missing: int) -> Any:
    import numpy as np
    import pyarrow as pa

    names = list(codes)
    index = pc.index_in(column, value_set=pa.array(names)).to_numpy(zero_copy_only=False)
    values = np.array([codes[name] for name in names] + [missing], dtype=np.int64)
    return values[np.where(np.isnan(index), len(names), index).astype(np.int64)]


def _contains(pa: Any, pc: Any, lines: Any, needle: bytes) -> Any:
    """True for each line (an Arrow string array without nulls) that holds ``needle``: the lines' bytes searched as
    one text (``bytes.find``, which skips through it far faster than a match per line), each occurrence credited to
    the line it lies within (not one across two lines). Occurrences are rare in a connector's lines; past one in 64
    lines the lines are matched one by one instead, so that no input makes a Python step per line."""
    import numpy as np

    if isinstance(lines, pa.Array) and not (pa.types.is_string(lines.type) or pa.types.is_large_string(lines.type)):
        lines = lines.cast(pa.large_string())  # a view's strings are not offsets into one buffer, as read below
    if not isinstance(lines, pa.Array) or len(lines) == 0 or lines.null_count:
        return pc.fill_null(pc.match_substring(lines, needle.decode()), False).to_numpy(zero_copy_only=False)
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64 if pa.types.is_large_string(lines.type)
                            else np.int32)[lines.offset:lines.offset + len(lines) + 1].astype(np.int64)
    data = lines.buffers()[2]
    text = b"" if data is None else data.slice(int(offsets[0]), int(offsets[-1] - offsets[0])).to_pybytes()
    limit = len(lines) // 64 + 16
    found: list[int] = []
    at = text.find(needle)
    while at >= 0:
        found.append(at)
        if len(found) > limit:
            return pc.match_substring(lines, needle.decode()).to_numpy(zero_copy_only=False)
        at = text.find(needle, at + 1)
    starts = np.asarray(found, dtype=np.int64) + offsets[0]
    line = np.searchsorted(offsets, starts, side="right") - 1
    holds = np.zeros(len(lines), dtype=bool)
    holds[line[starts + len(needle) <= offsets[line + 1]]] = True
    return holds


LONG_LINE = 1900
"""Characters beyond which a line is also read by Python's json before the columns take it: nesting a thousand
levels deep, or an integer of thousands of digits, needs at least that many, and Python's parser refuses both
(recursion, digit limit) where Arrow's reads them."""


def _python_reads_long_lines(pc: Any, lines: Any) -> Any:
    """True for each line shorter than :data:`LONG_LINE`, or that Python's json reads."""
    import json

    import numpy as np

    long = pc.greater(pc.utf8_length(lines), LONG_LINE).to_numpy(zero_copy_only=False)
    ok = np.ones(len(lines), dtype=bool)
    for index in np.flatnonzero(long):
        try:
            json.loads(lines[int(index)].as_py())
        except (ValueError, RecursionError):
            ok[index] = False
    return ok


def _ints(column: Any) -> Any:
    """An int64 column with its nulls as the smallest int64 (below every check's range)."""
    import numpy as np

    return column.fill_null(np.iinfo(np.int64).min).to_numpy(zero_copy_only=False).astype(np.int64)


def _floats(column: Any) -> Any:
    return column.to_numpy(zero_copy_only=False).astype("float64")  # nulls become NaN


def _lengths(pc: Any, column: Any, missing: int = 0) -> Any:
    import numpy as np

    return pc.fill_null(pc.list_value_length(column), missing).to_numpy(zero_copy_only=False).astype(np.int64)


def _owned(pa: Any, pc: Any, column: Any, rows: Any) -> list[set[tuple[str, int]]]:
    """The partitions of ``rebalance.completed``'s ``owned`` on each of ``rows`` (entries without a topic or a
    partition left out, as the timeline does)."""
    picked = column.take(pa.array(rows, pa.int64()))
    offsets = pc.fill_null(pc.list_value_length(picked), 0).to_pylist()
    flat = pc.list_flatten(picked)
    topics = pc.struct_field(flat, "topic").to_pylist()
    partitions = pc.struct_field(flat, "partition").to_pylist()
    found, at = [], 0
    for length in offsets:
        found.append({(t, p) for t, p in zip(topics[at:at + length], partitions[at:at + length], strict=True)
                      if t is not None and p is not None})
        at += length
    return found


def _groups(column: Any, order: Any, member_of: Any, members: int) -> list[str | None]:
    """Each member's group: the first its events name, in timestamp order."""
    import numpy as np
    import pyarrow as pa

    named = np.asarray(column.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    rows = order[named[order]]
    firsts, at = np.unique(member_of[rows], return_index=True)
    found: list[str | None] = [None] * members
    for m, value in zip(firsts.tolist(), column.take(pa.array(rows[at], pa.int64())).to_pylist(), strict=True):
        found[m] = value
    return found
