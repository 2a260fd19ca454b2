"""An event line is checked against the catalogue (:mod:`zkconsumer.events.validation`), and an emitter that names
a declared event emits it at the declared level (:meth:`zkconsumer.log.EventLogger.emit`)."""

from __future__ import annotations

import logging

from structlog.testing import capture_logs

from zkconsumer.events import catalogue as ev
from zkconsumer.events.validation import problems, zkconsumer_lines
from zkconsumer.log import get_logger, reset_logging

COMPLETED = {"event": "rebalance.completed", "level": "info", "timestamp": "2026-01-02T03:04:05.000006Z",
             "consumer_id": "g_c1", "group": "g", "rebalance_id": 1, "attempts": 1, "duration_ms": 12.5,
             "owned": [{"topic": "t", "partition": 0, "thread": "g_c1-0"}]}


def test_a_line_as_declared_keeps_the_contract():
    assert problems(COMPLETED) == []
    assert problems({**COMPLETED, "duration_ms": 12}) == []  # a number without a fraction is still a number
    # a field of the table's bound context: every fetcher thread's event carries its fetcher and broker
    assert problems({"event": "fetcher.stopped", "thread": "f-0", "fetcher_id": 0, "broker_id": 1}) == []


def test_an_unknown_name_a_wrong_type_and_an_undeclared_field_are_each_named():
    assert problems({"event": "rebalance.finished"}) == ["unknown event 'rebalance.finished'"]
    assert problems({**COMPLETED, "attempts": "1"}) == [
        "rebalance.completed: field 'attempts' is str '1', declared integer"]
    assert problems({**COMPLETED, "attempts": True}) == [
        "rebalance.completed: field 'attempts' is bool True, declared integer"]
    assert problems({**COMPLETED, "owner": []}) == ["rebalance.completed: field 'owner' is not declared"]
    assert problems({**COMPLETED, "level": "warning"}) == ["rebalance.completed: level 'warning', declared info"]
    # a level the declaration says may vary
    assert problems({"event": "rebalance.claim", "level": "warning", "step": 8, "error": "RuntimeError: boom"}) == []


def test_an_event_emitted_by_two_components_accepts_either_one_s_fields():
    modern = {"event": "rebalance.listener_before_release", "step": 3, "attempt": 1, "duration_ms": 1.0,
              "revoke_ms": 100, "spent": True, "revoked": [], "kept": []}
    assert problems(modern) == []


def test_other_libraries_lines_are_left_out():
    kazoo = {"event": "Connecting to localhost:2181", "logger": "kazoo.client", "level": "info"}
    assert zkconsumer_lines([kazoo, COMPLETED]) == [COMPLETED]


def test_emit_uses_the_declared_level():
    reset_logging()
    try:
        with capture_logs() as captured:
            log = get_logger("zkconsumer.fetcher")
            log.emit(ev.FETCHER_STOP_TIMED_OUT, thread="f-0", waited_ms=1000)
            log.emit(ev.FETCHER_CHUNK_ENQUEUED, topic="t", partition=0, fetch_offset=0, messages=1)
        assert [(e["event"], e["log_level"]) for e in captured] == [
            ("fetcher.stop_timed_out", "warning"), ("fetcher.chunk_enqueued", "debug")]
    finally:
        reset_logging()


def test_emit_unconfigured_goes_to_the_standard_library_at_the_declared_level(caplog):
    reset_logging()
    with caplog.at_level(logging.WARNING, logger="zkconsumer.fetcher"):
        get_logger("zkconsumer.fetcher").emit(ev.FETCHER_STOP_TIMED_OUT, thread="f-0", waited_ms=1000)
        get_logger("zkconsumer.fetcher").emit(ev.FETCHER_CHUNK_ENQUEUED, topic="t", partition=0)  # debug: filtered
    assert [(r.levelno, r.event_dict["event"]) for r in caplog.records] == [
        (logging.WARNING, "fetcher.stop_timed_out")]
