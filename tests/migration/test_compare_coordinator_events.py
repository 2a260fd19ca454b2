"""The front's coordinator events for a protocol's group join that protocol's events, so its timeline has the
coordinator's lane; nothing else the front logged does."""

from __future__ import annotations

import json

from zkconsumer.migration.run import ProtocolRun, merge_coordinator_events
from zkconsumer.migration.scenes import parse_protocols
from zkconsumer.trace.timeline import build_timeline, read_events


def line(event: str, **fields: object) -> str:
    return json.dumps({"event": event, "timestamp": "2026-11-25T17:00:00.000Z", **fields})


def test_only_the_group_s_coordinator_events_are_added_after_the_members_own(tmp_path):
    (protocol,) = parse_protocols("range")
    run = ProtocolRun(protocol, "t", "migration-range-abc123", tmp_path / "range", 2)
    run.directory.mkdir()
    own = line("demo.member_started", consumer_id="migration-range-abc123_m1", pid=1)
    run.events_path.write_text(own + "\n")
    ours = [line("front.group.member_joined", group=run.group, member_id="m-1", at_ms=1),
            line("front.group.round_completed", group=run.group, generation=1, members=["m-1"], at_ms=2)]
    log = tmp_path / "front.log"
    log.write_text("\n".join([
        line("front.started", listen="127.0.0.1:1", advertised="127.0.0.1:1", local_apis=[11]),
        ours[0],
        line("front.group.member_joined", group="migration-cooperative-sticky-abc123", member_id="m-2", at_ms=1),
        line("front.connection_opened", group=run.group),  # the front's own, not the coordinator's
        "Traceback (most recent call last): migration-range-abc123",
        ours[1],
    ]) + "\n")
    assert merge_coordinator_events(run, log) == 2
    assert run.events_path.read_text().splitlines() == [own, *ours]
    events = read_events(run.events_path.read_text().splitlines()).events
    assert [c.group for c in build_timeline(events).coordinators] == [run.group]


def test_a_missing_front_log_adds_nothing(tmp_path):
    (protocol,) = parse_protocols("range")
    run = ProtocolRun(protocol, "t", "g", tmp_path / "range", 2)
    assert merge_coordinator_events(run, tmp_path / "none.log") == 0
    assert not run.events_path.exists()
