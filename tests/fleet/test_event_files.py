"""Which files ``analyze events`` reads under a directory: the event files at any depth, not the files beside them."""

from __future__ import annotations

from migration_layout import NOT_EVENTS, migration_output

from zkconsumer.fleet.event_files import SNIFF_LINES, find_event_files


def test_a_migration_comparison_reads_its_events_and_names_the_rest(tmp_path):
    top = migration_output(tmp_path / "compare")

    found = find_event_files([str(top)])

    assert [str(p.relative_to(top)) for p in found.read] == ["legacy-range/events.jsonl"]
    assert sorted(str(p.relative_to(top)) for p in found.skipped) == sorted(NOT_EVENTS)  # each once, empty ones not


def test_a_file_given_by_name_is_read_and_a_late_first_event_is_not_searched_for(tmp_path):
    noise = tmp_path / "noise.txt"
    noise.write_text("not an event\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    event = '{"event": "e", "timestamp": "2026-01-01T00:00:00Z"}\n'
    (logs / "starts-with-output.log").write_text("starting...\n" * 3 + event)
    (logs / "late.log").write_text("x\n" * SNIFF_LINES + event)

    found = find_event_files([str(noise), str(logs)])

    assert found.read == (noise, logs / "starts-with-output.log")
    assert found.skipped == (logs / "late.log",)
